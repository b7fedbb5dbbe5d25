"""What the engine's faster paths rely on (issue 12), each held to an independent statement of the result.

- ``Relation.solve`` works on whole columns per target: it must equal the documented formula
  x_t = k^(1/e_t) · Π x_i^(-e_i/e_t), multiplied left to right with the C library's ``pow`` (``math.pow``), to
  the last bit, with one row as with many (numpy computes ``x ** -1`` for a one-element exponent as ``1/x``,
  which may differ from ``pow`` in the last bit).
- The relation loop reads each relation's masks once per call: they must not change while the relations run.
- The explanations are sorted and grouped on arrays: the same rows as pandas' ``sort_values``/``groupby``.
- The mantissa of a figure is found by an anchored search first: the same as the first number in the text.
- The outlier search makes the columns that hold nothing in its variants instead of copying them.
- An audit for the claims table alone (``words=False``) leaves out the outlier search and the explanations, and
  nothing else; an audit frees its work frames when it returns (no reference cycle holds them); findings hold rules
  and severities as categoricals.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit import engine
from audit.api import check, check_records
from audit.explain import EXPLANATION_COLUMNS, _best_three
from audit.rules import ChipHours, ComputeFromHardware, ComputeSixND, Outlier, relation_rules
from audit.significance import relative_half_widths
from conftest import DATA


def by_pow(relation, values: list[float], target: int) -> float:
    """The documented formula, on Python floats: k^(1/e_t) · Π_{i≠t} x_i^(-e_i/e_t), the product taken left to
    right, a power of 1 being the value itself."""
    exps = [e for _, e in relation.exponents]
    product = 1.0
    for i, (x, e) in enumerate(zip(values, exps)):
        if i != target:
            p = -e / exps[target]
            product *= x if p == 1.0 else math.pow(x, p)
    return math.pow(relation.constant, 1.0 / exps[target]) * product


def test_solve_gives_the_relation_solved_by_hand():
    # C = 6·N·D: 6 × 7e9 × 1.4e12 = 5.88e22; N from C and D: 5.88e22 / (6 × 1.4e12) = 7e9.
    rel = ComputeSixND.relation
    got = rel.solve(np.array([[np.nan, 7e9, 1.4e12], [5.88e22, np.nan, 1.4e12]]), np.array([0, 1]))
    assert got[0] == pytest.approx(5.88e22, rel=1e-15)
    assert got[1] == pytest.approx(7e9, rel=1e-15)
    # LLaMA-65B: 1,022,362 GPU-hours / (24 × 2,048 GPUs) = 20.80 days (Touvron et al. 2023, Table 15).
    days = ChipHours.relation.solve(np.array([[1_022_362.0, 2048.0, np.nan]]), np.array([2]))[0]
    assert days == pytest.approx(1_022_362 / (24 * 2048), rel=1e-15)


def test_solve_is_pow_to_the_last_bit_with_one_row_as_with_many():
    rng = np.random.default_rng(12)
    for rule in relation_rules():
        rel = rule.relation
        k = len(rel.quantities)
        values = np.exp(rng.uniform(-50, 50, size=(400, k)))
        target = rng.integers(0, k, 400)
        many = rel.solve(values, target)
        for i in range(0, 400, 7):
            want = by_pow(rel, values[i].tolist(), int(target[i]))
            assert many[i] == want, (rule.code, i)
            assert rel.solve(values[i:i + 1], target[i:i + 1])[0] == want, (rule.code, i)


def test_solve_does_not_take_numpys_reciprocal_for_a_power_of_minus_one():
    # A value whose reciprocal 1/x differs from pow(x, -1) in the last bit (there are some in any large sample).
    x = np.exp(np.random.default_rng(3).uniform(-40, 40, 200_000))
    odd = x[np.array([1.0 / v != math.pow(v, -1.0) for v in x[:20_000]] + [False] * (len(x) - 20_000))]
    assert len(odd)
    v = float(odd[0])
    rel = ComputeFromHardware.relation  # C = 3600 · chip_hours · peak · MFU: MFU = C · h^-1 · peak^-1 / 3600
    row = np.array([[1e24, v, 1e15, np.nan]])
    want = math.pow(3600.0, -1.0) * ((1e24 * math.pow(v, -1.0)) * math.pow(1e15, -1.0))
    assert rel.solve(row, np.array([3]))[0] == want
    assert rel.solve(np.vstack([row, row]), np.array([3, 3]))[0] == want


def generated(n: int, seed: int = 7) -> list[dict]:
    """Claims with fine-tunes, mixtures of experts, sums of stages and architectures mixed in."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        p = rng.choice([1.3e9, 7e9, 70e9]) * rng.uniform(0.8, 1.2)
        d = p * rng.uniform(5, 40)
        chips, days = rng.choice([64, 1024]), rng.uniform(3, 60)
        r: dict = {"id": f"g{i}", "params": p, "tokens": d, "hardware": rng.choice(["H100", "A100", None]),
                   "chips": chips, "wall_clock_days": days, "compute_flops": 6 * p * d * rng.choice([1, 3, 1000]),
                   "chip_hours": chips * 24 * days * rng.choice([1, 24])}
        if rng.random() < 0.2:
            r["base_model"] = "Llama 2 70B"
        if rng.random() < 0.2:
            r["architecture"] = "mixture of experts"
        if rng.random() < 0.2:
            r["layers"], r["d_model"], r["heads"], r["seq_len"] = 32, 4096, 32, 4096
        if rng.random() < 0.1:
            r["compute_notes"] = "1.0e22 + 2.0e22 = 3.0e22"
        out.append(r)
    return out


def test_relation_masks_do_not_change_while_the_relations_run(monkeypatch):
    seen: list[tuple[str, str, bool]] = []
    relations = engine.apply_relations

    def masks(state):
        return {(rule.code, kind): getattr(rule, kind)(state) for rule in relation_rules()
                for kind in ("applies", "upper_bound", "lower_bound")}

    def both_sides(state, preused=None, undo=None):
        before = masks(state)
        out = relations(state, preused, undo)
        for key, after in masks(state).items():
            same = (before[key] is None and after is None) or np.array_equal(before[key], after)
            seen.append((*key, same))
        return out

    monkeypatch.setattr(engine, "apply_relations", both_sides)
    check([str(DATA / "published.json"), str(DATA / "doctored.json")])
    check_records(generated(120))
    assert seen and all(same for *_, same in seen), [s for s in seen if not s[2]]


def test_the_best_three_explanations_are_pandas_sort_and_groupby():
    rng = np.random.default_rng(5)
    parts = []
    for cause in ("goodput", "fp8-peak", "mac-as-one", "gpu-days"):
        n = 300
        parts.append(pd.DataFrame({
            "finding": rng.integers(0, 80, n), "cause": cause, "factor": rng.uniform(1, 3, n),
            "direction": rng.choice([-1.0, 1.0], n), "corrected": rng.uniform(0, 2, n),
            "fit": np.where(cause == "goodput", "in range", "within tolerance"),
            "score": rng.choice([0.25, 0.5, 0.75, np.nan], n)}))
    got = _best_three(parts)
    # pandas, step by step (what explain() did before it worked on arrays)
    out = pd.concat(parts, ignore_index=True).sort_values(["finding", "score", "cause"], kind="stable")
    best = out.groupby("finding")["direction"].transform("first")
    out = out[np.sign(out["direction"]) == np.sign(best)]
    out["rank"] = out.groupby("finding").cumcount() + 1
    want = out[out["rank"] <= 3].reset_index(drop=True)[list(EXPLANATION_COLUMNS)]
    pd.testing.assert_frame_equal(got, want)
    assert (got.groupby("finding").size() <= 3).all() and len(got) > 100


def test_the_mantissa_is_the_first_number_even_after_a_stray_dot():
    # ± half a unit of the last stated digit over the number: "a. 5" is 5 ± 0.5; ".5" is 0.5 ± 0.05;
    # "x.y 7.25" is 7.25 ± 0.005; "v. 12,000.50 GPUs" is 12000.50 ± 0.005.
    got = relative_half_widths(np.array(["a. 5", ".5", "x.y 7.25", "v. 12,000.50 GPUs", "no figure", None],
                                        dtype=object))
    np.testing.assert_allclose(got, [0.5 / 5, 0.05 / 0.5, 0.005 / 7.25, 0.005 / 12000.5, 0.0, 0.0], rtol=1e-15)


def test_the_outlier_variants_make_the_columns_that_hold_nothing():
    values = np.array([["claimed", None, "derived"], ["claimed", None, None], [None, None, "derived"]],
                      dtype=object, order="F")
    taken = Outlier._take_rows(values, [np.array([0, 2]), np.arange(3)], np.array([True, False, True]), None)
    assert taken.tolist() == [["claimed", None, "derived"], [None, None, "derived"],
                              ["claimed", None, "derived"], ["claimed", None, None], [None, None, "derived"]]
    floats = np.array([[1.0, np.nan], [2.0, np.nan]], order="F")
    taken = Outlier._take_rows(floats, [np.array([1])], np.array([True, False]), np.nan)
    assert taken[0, 0] == 2.0 and np.isnan(taken[0, 1]) and taken.flags.f_contiguous


# ------------------------------------------------------------------ what an audit for the claims table leaves out

EPOCH_MODELS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "epoch" / "notable_ai_models.csv"


def _inputs_with_every_kind_of_finding() -> list[str]:
    """The doctored example (C009 outliers, explanations, an invalid value), a multi-phase run, and Epoch's file
    when it lies beside the project (notes, fine-tunes, mixes)."""
    paths = [str(DATA / "doctored.json"), str(DATA / "bad_fields.json"), str(DATA / "runs.jsonl"),
             str(Path(__file__).resolve().parents[1] / "reports" / "example-claims.json")]
    return paths + ([str(EPOCH_MODELS)] if EPOCH_MODELS.exists() else [])


@pytest.mark.parametrize("path", _inputs_with_every_kind_of_finding(), ids=lambda p: Path(p).name)
def test_an_audit_without_words_is_the_same_audit_but_for_the_outliers_and_explanations(path):
    """``words=False`` (the claims table alone) skips the outlier search and the explanations, and nothing else:
    every other finding, every status and every quantity is the same, so the claims table is the same."""
    from audit.report.table import claims_frame

    full, table_only = check([path]), check([path], words=False)
    assert table_only.status.tolist() == full.status.tolist()
    outlier = full.findings["rule"].astype(str).isin([Outlier.code]).to_numpy()
    assert not table_only.findings["rule"].astype(str).isin([Outlier.code]).any()
    kept = full.findings[~outlier].reset_index(drop=True)
    pd.testing.assert_frame_equal(table_only.findings.astype({"rule": str, "severity": str}),
                                  kept.astype({"rule": str, "severity": str}))
    assert len(table_only.explanations) == 0
    pd.testing.assert_frame_equal(claims_frame(table_only), claims_frame(full))
    if path.endswith("doctored.json"):  # the input has outliers and explanations to leave out
        assert outlier.any() and len(full.explanations)


def test_an_audit_leaves_no_cycle_that_holds_its_work_frames():
    """The work state's closures (re-solving variants of claims) refer to the state: the audit breaks that cycle,
    so its frames are freed when it returns, not at a later pass of the garbage collector (a stream of batches
    grew by a batch's frames each time until then)."""
    import gc

    claims = [{"id": f"r{i}", "params": "7B", "tokens": "2T", "compute_flops": 8.4e22 * (1 + i % 3),
               "hardware": "A100", "chips": 64, "wall_clock_days": 30} for i in range(50)]
    gc.collect()
    gc.disable()
    try:
        check_records(claims)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        held = [type(o).__name__ for o in gc.garbage if isinstance(o, (pd.DataFrame, np.ndarray))
                or type(o).__name__ == "WorkState"]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert held == []


def test_findings_hold_rule_and_severity_as_categoricals_and_concatenate_by_codes():
    """Two rules' findings, one after the other: the rule codes and severities as written, as categoricals (every
    registered rule code; the severities mildest first)."""
    from audit.findings import SEVERITIES, findings_part, findings_table

    a = findings_part(np.array([0, 1]), "C001", np.array(["ok", "error"]), "compute_flops", 1.0, 2.0)
    b = findings_part(np.array([1]), "C002", "warning", "chip_hours", 3.0, 1.5)
    both = findings_table([a, b])
    assert both["rule"].astype(str).tolist() == ["C001", "C001", "C002"]
    assert both["severity"].astype(str).tolist() == ["ok", "error", "warning"]
    assert list(both["severity"].cat.categories) == list(SEVERITIES) and both["severity"].cat.ordered
    assert both["ratio"].tolist() == [0.5, 0.5, 2.0]  # claimed / expected: 1/2, 1/2, 3/1.5
