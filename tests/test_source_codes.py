"""Sources as codes (audit.state.SOURCES): the engine keeps where each value came from as int8 codes, the result's
``source`` frame is categorical over them, and texts are made only where words are (``AuditResult.cell``) or
tables are written (from the codes: the same cells and dictionaries as from the texts)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit.api import check_records
from audit.report import table
from audit.state import CATALOG, CLAIMED, DERIVED, NO_SOURCE, SOURCES, source_code, source_texts


def test_codes_and_texts_round_trip():
    codes = np.array([NO_SOURCE, CLAIMED, DERIVED, CATALOG], dtype=np.int8)
    texts = source_texts(codes)
    assert texts.tolist() == [None, "claimed", "derived", "catalog"]
    assert [source_code(t) for t in texts] == codes.tolist()
    assert list(SOURCES) == ["claimed", "derived", "catalog"]


def test_result_sources_read_as_texts_with_none_where_none():
    result = check_records([{"id": "a", "params": 175e9, "tokens": 300e9, "compute_flops": 3.14e23},
                            {"id": "b", "params": 7e9, "tokens": 2e12}])
    assert isinstance(result.source["params"].dtype, pd.CategoricalDtype)
    assert (result.source["params"] == "claimed").all()
    assert result.cell("source", 1, "compute_flops") == "derived"
    assert result.cell("source", 0, "compute_flops") == "claimed"
    assert result.cell("source", 0, "chips") is None  # not NaN: words and JSON say "no source"
    assert result.column("source", "chips").dtype == object


@pytest.mark.parametrize("probs", [[1, 0, 0, 0], [0.2, 0.3, 0.3, 0.2], [0, 0, 0, 1], [0.5, 0, 0.5, 0]])
@pytest.mark.parametrize("n", [0, 1, 7, 5000])
def test_dictionary_from_codes_is_the_dictionary_of_the_texts(n, probs):
    """The claims table's source columns: an Arrow dictionary made from the codes equals the one made by
    factorizing the texts (each text once, in the order of first appearance, None missing)."""
    texts = np.array([None, *SOURCES], dtype=object)[np.random.default_rng(n).choice(4, n, p=probs)]
    column = pd.Series(pd.Categorical(texts, categories=list(SOURCES)))
    made = table._categorical_texts(column)
    made.validate(full=True)
    assert made.equals(table._few_texts(texts))
