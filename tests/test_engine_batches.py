"""The engine's batch arithmetic: a claim's result does not depend on the claims audited with it.

The relation loop works on whole columns and the outlier search (C009) re-solves many variants of the affected
claims stacked in one call of the engine, in batches (issue 12). These tests hold the engine to what that
relies on: every step is row by row, so a claim audited alone, in a batch, or in any grouping of the outlier's
variants gets the same findings and the same derived values; and the outlier search starts again from the work
columns exactly as they were before the relations ran.
"""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from audit import engine
from audit.api import check_records
from audit.rules import Outlier

#: The columns compared between audits (the findings' numbers and words, and the derived work columns).
FINDING_KEYS = ["rule", "severity", "quantity", "claimed", "expected", "detail", "candidates", "implied"]


def claims(n: int, seed: int = 12) -> list[dict]:
    """``n`` claims with the usual slips (a compute 1000x, GPU-days written as GPU-hours, an MFU in percent
    read as a fraction), mixes, TPU slices, fine-tunes, mixture-of-experts and per-GPU throughputs mixed in."""
    rng = random.Random(seed)
    hardware = ["H100", "A100 80GB", "V100", "TPU v4", "v4-1024", "A100, V100", "H100 SXM", "MI250X", None]
    out = []
    for i in range(n):
        p = rng.choice([1.3e9, 7e9, 13e9, 70e9, 175e9]) * rng.uniform(0.8, 1.2)
        d = p * rng.uniform(5, 40)
        chips = rng.choice([64, 256, 1024, 2048])
        days = rng.uniform(3, 60)
        r: dict = {"id": f"c{i:04d}", "params": p, "tokens": d, "hardware": rng.choice(hardware),
                   "chips": chips, "wall_clock_days": days}
        k = rng.random()
        if k < 0.6:
            r["compute_flops"] = 6 * p * d * rng.choice([1, 1, 1, 1.1, 3, 1000])
        if k > 0.3:
            r["chip_hours"] = chips * 24 * days * rng.choice([1, 1, 1, 24])
        if rng.random() < 0.4:
            r["mfu"] = rng.choice([rng.uniform(0.2, 0.6), rng.uniform(20, 60)])
        if rng.random() < 0.2:
            r["precision"] = rng.choice(["bf16", "fp16", "fp8", "tf32"])
        if rng.random() < 0.1:
            r["base_model"] = "Llama 2 70B"
            r["finetune_compute_flops"] = 6 * p * d / 50
        if rng.random() < 0.1:
            r["architecture"] = "mixture of experts"
            r["active_params"] = p / rng.choice([4, 8])
        if rng.random() < 0.1:
            r["throughput_tokens_per_s"] = d / (days * 86400) / chips
            r["throughput_scope"] = "per GPU"
        out.append(r)
    return out


def findings_by_claim(result) -> pd.DataFrame:
    """The findings keyed by claim id, in the engine's order within each claim."""
    f = result.findings
    ids = result.claims.info["id"].to_numpy(dtype=object)[f["row"].to_numpy(dtype=int)]
    out = f[FINDING_KEYS].copy()
    out.insert(0, "id", ids)
    out["severity"] = out["severity"].astype(str)
    return out.reset_index(drop=True)


@pytest.fixture(scope="module")
def batch() -> list[dict]:
    return claims(240)


def test_the_outlier_search_gives_the_same_suspects_however_its_variants_are_grouped(batch, monkeypatch):
    results = {}
    for size in (1, 64, 1 << 30):  # one candidate per call where it can, a few, all of them in one call
        monkeypatch.setattr(Outlier, "batch_rows", size)
        results[size] = findings_by_claim(check_records(batch))
    c009 = results[1 << 30][results[1 << 30]["rule"] == "C009"]
    assert len(c009) >= 10 and (c009["candidates"].map(len) > 1).any()  # single and several suspects
    pd.testing.assert_frame_equal(results[1], results[1 << 30])
    pd.testing.assert_frame_equal(results[64], results[1 << 30])


def test_a_claim_audits_the_same_alone_as_in_a_batch(batch):
    together = check_records(batch)
    every = findings_by_claim(together)
    q = together.q
    for i in range(0, len(batch), 6):  # every sixth claim, alone
        alone = check_records([batch[i]])
        mine = every[every["id"] == batch[i]["id"]].reset_index(drop=True)
        pd.testing.assert_frame_equal(findings_by_claim(alone), mine)
        np.testing.assert_array_equal(alone.q.iloc[0].to_numpy(dtype=float), q.iloc[i].to_numpy(dtype=float))
        assert alone.source.iloc[0].tolist() == together.source.iloc[i].tolist()
        assert alone.how.iloc[0].tolist() == together.how.iloc[i].tolist()


def test_the_outlier_search_starts_from_the_work_columns_before_the_relations(batch, monkeypatch):
    """``WorkState.initial_rows`` undoes the relations' writes: it equals a full copy taken before them."""
    before: dict[str, tuple[pd.DataFrame, ...]] = {}
    derived: list[int] = []
    relations = engine.apply_relations
    evaluate = Outlier.evaluate.__func__

    def snapshot(state, preused=None, undo=None):
        if undo is not None:  # the engine's own pass over every claim (not a re-solve)
            before["frames"] = tuple(f.copy() for f in (state.q, state.source, state.how, state.precision))
        return relations(state, preused, undo)

    def compare(cls, state):
        rows = np.arange(len(state.q))[::3]
        names = list(state.q.columns)
        for got, frame in zip(state.initial_rows(rows), before["frames"]):
            want = frame[names].to_numpy(dtype=got.dtype)[rows]
            if got.dtype == object:
                assert got.tolist() == want.tolist()
            else:
                np.testing.assert_array_equal(got, want)
        # The relations did write into these rows since (the undo log was needed): values derived from NaN.
        now, then = state.q[names].to_numpy(dtype=float)[rows], before["frames"][0][names].to_numpy(dtype=float)[rows]
        derived.append(int((np.isnan(then) & ~np.isnan(now)).sum()))
        return evaluate(cls, state)

    monkeypatch.setattr(engine, "apply_relations", snapshot)
    monkeypatch.setattr(Outlier, "evaluate", classmethod(compare))
    check_records(batch)
    assert derived and derived[-1] > 100
