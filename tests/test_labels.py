"""The hand-judged labels of bench/labels/ name claims the tool still names the same way.

bench/accuracy.py joins its labels to the tool's verdicts by claim id. Epoch AI's rows have no id column, so their
ids are ``file#row``: a change to how rows are numbered (a CSV's lines instead of its records, which differ where a
cell spans lines, as Epoch's notes do) would rename them and silently empty the join. Needs Epoch AI's file beside
the clone (``../shared/data/epoch/``); skipped without it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from audit.api import check

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT.parent / "shared" / "data" / "epoch" / "notable_ai_models.csv"
LABELS = ROOT / "bench" / "labels" / "epoch_sample.csv"


@pytest.mark.skipif(not MODELS.exists(), reason=f"Epoch AI's model database is not at {MODELS}")
def test_every_labelled_epoch_row_is_the_claim_of_that_id_and_model():
    labels = pd.read_csv(LABELS)
    result = check([str(MODELS)])
    info = result.claims.info
    ids = info["id"].astype(str).str.rsplit("#", n=1).str[-1]
    named = dict(zip("notable_ai_models.csv#" + ids, info["name"].astype(str)))
    missing = [i for i in labels["id"] if i not in named]
    assert not missing, f"label ids the tool no longer gives: {missing[:5]}"
    wrong = [(i, m, named[i]) for i, m in zip(labels["id"], labels["model"]) if named[i] != m]
    assert not wrong, f"a label's id now names another model: {wrong[:5]}"
