"""The JSON records made a column at a time (``to_json``, issue 12: JSON of many claims within 3x of the standard
json module) are the records made one claim at a time (``claim_record``), and the number formatting's memo never
changes a text."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from audit import formatting as fmt
from audit.api import LoadError, check, check_records
from audit.reading import bundled_corpus_path
from audit.records import claim_record, findings_by_row, to_json
from audit.rounding import round_value

# PaLM 540B as Chowdhery et al. 2022 report it (Sec. 4, Table 21): two TPU v4 pods of 3072 chips, 6144 in all,
# in two phases (a run with phases is written with its phases' own records).
PALM = {"id": "palm", "params": "540B", "tokens": "780B", "hardware": "TPU v4", "precision": "bf16",
        "mfu": "46.2%", "phases": [{"chips": 6144, "wall_clock_days": "1200 hours"},
                                   {"chips": 3072, "wall_clock_days": "336 hours"}]}
# A GPU-days figure written as GPU-hours (the slip the README's example shows): findings with explanations.
SLIP = {"id": "llama-65b-slip", "params": "65.2B", "tokens": "1.4T", "hardware": "A100 80GB", "chips": 2048,
        "wall_clock_days": 21, "chip_hours": 1_022_362 / 24}


@pytest.mark.parametrize("which", ["corpus", "phases"])
def test_every_claims_record_is_its_record_made_alone(which):
    result = check([str(bundled_corpus_path())]) if which == "corpus" else check_records([PALM, SLIP, {"id": "x"}])
    doc = to_json(result)
    grouped = findings_by_row(result)
    assert len(doc["claims"]) == len(result)
    for row, record in enumerate(doc["claims"]):
        alone = claim_record(result, row, grouped.get(row, []))
        assert json.dumps(record, sort_keys=False) == json.dumps(alone, sort_keys=False)
    if which == "phases":
        assert [p["id"] for p in doc["claims"][0]["phases"]] == ["palm/phase-1", "palm/phase-2"]
        # 6144 chips x 1200 h and 3072 x 336 h (Chowdhery et al. 2022, Table 21)
        assert doc["claims"][0]["phases"][0]["quantities"]["chip_hours"]["value"] == 6144 * 1200
        assert any(f["explanations"] for f in doc["claims"][1]["findings"])


def test_rounded_values_in_the_records_are_rounded_to_12_digits():
    doc = to_json(check_records([SLIP]))
    hours = doc["claims"][0]["quantities"]["chip_hours"]
    assert hours["value"] == 42598.4166667  # 1,022,362 / 24 = 42598.41666..., 12 significant digits
    assert hours["display"] == "42,598 h"


def test_the_formatting_memo_never_changes_a_text():
    # Equal keys that are written differently: 0.0 and -0.0; an int and its float; NaN (never equal to itself).
    assert fmt.sig(0.0) == "0.0" and fmt.sig(-0.0) == "-0.0" and fmt.sig(0.0) == "0.0"
    assert fmt.sig(3) == fmt.sig(3.0) == fmt.sig(np.float64(3.0)) == "3"
    assert fmt.sig(math.nan) == "nan" and fmt.sig(math.nan) == "nan"
    # The same value to different digits, and in different functions.
    assert fmt.sig(2.6625e13, 4) == "2.662e13" and fmt.sig(2.6625e13) == "2.66e13"
    assert fmt.sci(3.14159e23) == "3.14e23" and fmt.sci(3.14159e23, 4) == "3.142e23"
    assert fmt.count(175e9) == "175B" and fmt.count(1_022_362) == "1.022M" and fmt.count(999.5) == "999.5"
    for _ in range(2):  # the second time from the memo
        assert fmt.sig(1 / 3, 4) == "0.3333" and fmt.count(65.2e9) == "65.2B" and fmt.sci(6e23) == "6e23"


def test_the_formatting_rounds_as_round_value_does():
    # 0.1 + 0.2 = 0.30000000000000004, rounded to 12 digits first: 0.3, whose 17 digits are 0.29999999999999999
    assert round_value(0.1 + 0.2) == 0.3
    assert fmt.sig(0.1 + 0.2, 17) == "0.29999999999999999" and fmt.sci(0.1 + 0.2, 17) == "2.9999999999999999e-1"


# ---------------------------------------------------------------------------------- the documented contract

ROOT = Path(__file__).resolve().parent.parent
BAD = ROOT / "tests" / "data" / "bad"


def _report_inputs() -> list[Path]:
    """Every input the test corpora audit (not the files that stop the run): hostile rows, phases, invalid values,
    Parquet and spreadsheet cells, bounds."""
    expected = json.loads((BAD / "expected.json").read_text(encoding="utf-8"))["files"]
    bad = [BAD / name for name, e in sorted(expected.items()) if e["exit"] != 2 and (BAD / name).is_file()]
    mine = [p for p in sorted((ROOT / "tests" / "data").iterdir()) if p.suffix in (".json", ".jsonl", ".csv")]
    return [bundled_corpus_path(), ROOT / "reports" / "example-claims.json", *mine, *bad]


def _floats(o):
    if isinstance(o, dict):
        for v in o.values():
            yield from _floats(v)
    elif isinstance(o, list):
        for v in o:
            yield from _floats(v)
    elif isinstance(o, float):
        yield o


def test_every_json_report_follows_its_schema_with_every_row_and_rounded_numbers():
    import jsonschema

    from audit.report.json_out import render
    from audit.resources import schema_path

    schema = json.loads(schema_path("report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    expected = json.loads((BAD / "expected.json").read_text(encoding="utf-8"))["files"]
    results = []
    for path in _report_inputs():
        try:
            results.append((path.name, check([str(path)])))
        except LoadError:  # a file that stops the run (exit 2) makes no report
            assert path.parent != BAD, path
    results.append(("phases", check_records([PALM, SLIP, {"id": "x"}])))
    # Two upper bounds give a derived figure that is a bound (Snowflake Arctic's form): "bound" is in the contract.
    results.append(("bounds", check_records([{"id": "b", "params": "480B", "active_params": "17B", "tokens": "3.5T",
                                              "hardware": "H100", "chip_hours": "< 504000", "chips": "<= 1000"}])))
    assert len(results) > 40
    for name, result in results:
        doc = json.loads(render(result))  # the text --format json writes
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        assert not errors, (name, errors[:3])
        if name in expected:
            assert len(doc["claims"]) == expected[name]["claims"], name
        assert len(doc["claims"]) == doc["summary"]["claims"] == len(result)
        assert sum(doc["summary"]["status"].values()) == len(doc["claims"])
        for x in _floats(doc):
            assert x == round_value(x), (name, x)  # 12 significant digits at most


def test_the_report_schema_is_printed_by_the_schema_command():
    from click.testing import CliRunner

    from audit.cli import cli

    out = CliRunner().invoke(cli, ["schema", "report"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["title"].startswith("train-audit JSON report")
