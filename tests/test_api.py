"""The library facade (audit/api.py): files, records and estimates give read-only results built once."""

from __future__ import annotations

import dataclasses
import doctest
import math

import pytest

import audit.api
from audit.api import check_records, estimate, estimate_json, to_json


def test_docstring_example_runs():
    assert doctest.testmod(audit.api).failed == 0


def test_a_compute_budget_is_split_as_given_values_not_patched_afterwards():
    # Hoffmann et al. 2022: about 20 tokens per parameter; C = 6 N (20 N) -> N = sqrt(1e24 / 120) = 91.29B.
    result = estimate({"compute_flops": "1e24"})
    q = estimate_json(result)["quantities"]
    assert q["params"]["value"] == pytest.approx(math.sqrt(1e24 / 120), rel=1e-11)
    assert q["tokens"]["value"] == pytest.approx(20 * math.sqrt(1e24 / 120), rel=1e-11)
    assert q["params"]["source"] == q["tokens"]["source"] == "derived"
    assert "compute-optimal split" in q["params"]["how"]
    # The split used 6ND itself: C001 does not then check the compute against it.
    assert [f for f in estimate_json(result)["findings"] if f["rule"] == "C001"] == []


def test_results_are_read_only():
    result = check_records([{"id": "x", "params": "7B", "tokens": "1T"}])
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.status = None  # type: ignore[misc]


def test_records_and_files_give_the_same_json(tmp_path):
    import json

    record = {"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": "3640 PF-days"}
    path = tmp_path / "c.json"
    path.write_text(json.dumps([record]))
    from_file = to_json(audit.api.check([str(path)]))["claims"][0]
    from_records = to_json(check_records([record]))["claims"][0]
    assert from_file["findings"] == from_records["findings"]
    assert from_file["quantities"] == from_records["quantities"]


def test_missing_values_mean_not_stated_in_records_as_in_a_frame():
    """``DataFrame.to_dict("records")`` gives NaN for a missing text and pd.NA or NaT for a nullable column: each
    made a claim invalid ("a number is not an accepted value") in check_records while check_frame read it as not
    stated. Both read every one as not stated; a frame's integer ids upcast to floats stay integers ("1", not "1.0")."""
    import numpy as np
    import pandas as pd

    from audit.api import check_frame, check_records

    frame = pd.DataFrame({"id": [1.0, np.nan, 3.0], "params": ["65.2B", pd.NA, "7B"], "tokens": ["1.4T"] * 3,
                          "hardware": ["V100", np.nan, pd.NaT]})
    framed, recorded = check_frame(frame), check_records(frame.to_dict("records"))
    assert list(framed.status) == list(recorded.status)
    assert "invalid" not in set(recorded.status)
    assert list(framed.claims.info["id"])[0::2] == ["1", "3"]  # a number column: its whole numbers, as Parquet's
    assert list(recorded.claims.info["id"])[0::2] == ["1.0", "3.0"]  # numbers as objects keep their text, as JSON's


def test_pandas_copy_on_write_gives_the_same_audit():
    """pandas's Copy-on-Write (an option in pandas 2, the default in pandas 3) lends read-only arrays: an in-place
    write into one (notes.per_distinct's mask) made every audit fail with "output array is read-only" in a
    notebook that had switched it on. The bundled corpus audits the same either way."""
    import pandas as pd

    from audit.api import check, to_json

    plain = to_json(check())
    with pd.option_context("mode.copy_on_write", True):
        cow = to_json(check())
    assert cow == plain and plain["summary"]["status"]["pass"] == plain["summary"]["claims"]


def test_one_path_alone_is_one_file_and_wrong_arguments_say_so():
    """check("runs.csv") read the text as a sequence of one-character paths ("/: is a folder, not a file");
    render(result, "pdf") was a bare KeyError; check_records(a DataFrame) made each column name an invalid claim."""
    from pathlib import Path

    import pandas as pd

    from audit.api import check, check_records, render
    from conftest import DATA

    one = check(str(DATA / "gpt3_175b.json"))
    assert len(one) == len(check(Path(DATA / "gpt3_175b.json"))) == len(check([str(DATA / "gpt3_175b.json")]))
    with pytest.raises(ValueError, match="no report format 'pdf'; the formats are .*json"):
        render(one, "pdf")
    with pytest.raises(TypeError, match="check_frame audits a DataFrame"):
        check_records(pd.DataFrame({"id": ["a"]}))
