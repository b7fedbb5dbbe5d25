"""C009 leaves out the variants its relations' first pass already settles (``Outlier._settled``).

A variant (an affected claim without one stated figure) is not solved again when a relation whose figures were all
known from the start disagreed on the claim and neither it nor any relation before it reads the figure left out:
the variant would disagree too. These tests solve every variant anyway and hold the rule to that: each settled
variant disagrees when solved, and the findings are the same with and without leaving them out.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.api import check_frame, check_records
from audit.rules import Outlier

from test_engine_batches import claims, findings_by_claim

ROOT = Path(__file__).resolve().parent.parent


def _synthetic(n: int) -> pd.DataFrame:
    """The benchmark's generator (``bench/scale.py``): a fleet's claims, a tenth of them doctored."""
    spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "bench" / "scale.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module.synthetic(n, seed=3)


def _solve_every_variant(audit, monkeypatch) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """The audit's findings with every variant solved, the variants the rule settles, the variants that fit and
    the variants solved (affected claims × candidate figures, over every call of the outlier search)."""
    settled_all, fit_all, solved_all = [], [], []
    settled_of = Outlier._settled
    resolve = Outlier._resolve_without.__func__

    def keep_settled(state, bad_rows, q0, h0, at, names):
        settled = settled_of(state, bad_rows, q0, h0, at, names)
        settled_all.append(settled)
        fit_all.append(None)
        solved_all.append(np.zeros(settled.shape, dtype=bool))
        return np.zeros_like(settled)  # solve them all

    def watch(cls, state, bad_rows, initial, filled, columns, variants, fit, strong, implied, buffers=None):
        fit_all[-1] = fit
        for _, k, rows in variants:
            solved_all[-1][rows, k] = True
        return resolve(cls, state, bad_rows, initial, filled, columns, variants, fit, strong, implied, buffers)

    monkeypatch.setattr(Outlier, "_settled", staticmethod(keep_settled))
    monkeypatch.setattr(Outlier, "_resolve_without", classmethod(watch))
    every = findings_by_claim(audit())
    monkeypatch.undo()
    pairs = [(s, f, v) for s, f, v in zip(settled_all, fit_all, solved_all) if f is not None]
    settled = np.concatenate([s.ravel() for s, _, _ in pairs])
    fit = np.concatenate([f.ravel() for _, f, _ in pairs])
    solved = np.concatenate([v.ravel() for _, _, v in pairs])
    return every, settled, fit, solved


@pytest.mark.parametrize("make", [lambda: (lambda: check_records(claims(240))),
                                  lambda: (lambda frame=_synthetic(3000): check_frame(frame))],
                         ids=["slips", "fleet"])
def test_a_settled_variant_disagrees_when_solved_and_leaving_it_out_changes_nothing(make, monkeypatch):
    audit = make()
    every, settled, fit, solved = _solve_every_variant(audit, monkeypatch)
    settled &= solved  # a variant exists for each stated figure only
    assert settled.sum() >= 20  # the rule leaves some variants out on these claims
    assert not (settled & fit).any()  # each of them disagrees when solved
    pd.testing.assert_frame_equal(findings_by_claim(audit()), every)


def test_a_suspect_that_would_have_to_be_impossible_is_not_offered():
    """C009 listed "Accelerators (1024) would have to be about 0" and utilizations above 100 % as fixes."""
    from audit.rules import _impossible_value

    assert _impossible_value("chips", 0.4) and _impossible_value("mfu", 1.3) and _impossible_value("hfu", 2.0)
    assert not _impossible_value("chips", 8.19) and not _impossible_value("mfu", 0.33)
    # Parameters and tokens are counts of things too: "Tokens (300 B) would have to be about 3.467e-09" (GPT-3
    # with 3,640 PF-days pasted as FLOP: 3640 / (6 x 175e9) = 3.47e-9 tokens) is no fix. An epoch may be a fraction.
    assert _impossible_value("tokens", 0.5) and _impossible_value("params", 3.5e-9)
    assert not _impossible_value("tokens", 2.0) and not _impossible_value("epochs", 0.5)


def test_gpt3_with_pf_days_as_flop_names_only_the_compute():
    from audit.api import check_records, to_json

    # Brown et al. 2020, Table D.1: 3.64e3 PF-days = 3.14e23 FLOP for 175B parameters and 300B tokens.
    claim = to_json(check_records([{"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": 3640}]))
    c009 = [f for f in claim["claims"][0]["findings"] if f["rule"] == "C009"][0]["message"]
    assert "Compute" in c009 and "Tokens" not in c009 and "Parameters" not in c009, c009


_EPOCH = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "epoch" / "notable_ai_models.csv"


@pytest.mark.skipif(not _EPOCH.exists(), reason=f"Epoch AI's model database is not at {_EPOCH}")
def test_a_suspect_that_would_have_to_be_what_it_is_is_not_offered(tmp_path):
    # Epoch AI's PaLM (540B) row: C009 listed "Compute (2.5272e+24 FLOP) would have to be about 2.53e24 FLOP",
    # its own value, beside the MFU (46.2 % would have to be 27 %) and the chips.
    import pandas as pd

    from audit.api import check, to_json

    rows = pd.read_csv(_EPOCH, dtype=str, keep_default_na=False)
    path = tmp_path / "palm.csv"
    rows[rows["Model"] == "PaLM (540B)"].to_csv(path, index=False)
    claim = to_json(check([str(path)]))["claims"][0]
    c009 = [f["message"] for f in claim["findings"] if f["rule"] == "C009"][0]
    assert "MFU" in c009 and "Compute" not in c009, c009
