"""Explanations: test a discrepancy's ratio against a library of known causes (``audit/data/causes.csv``).

Each cause has an exact factor (1000 for a unit prefix, 8.64e19 for PF-days, 24 for GPU-days, the chip count,
total/active parameters, ...) or a range (goodput, a rate between the dense and sparse peak). For every finding
that is not ``ok``, the ratio claimed/expected is divided by each applicable factor (in the direction that
helps); a cause *fits* when the corrected ratio falls within the rule's ``ok`` tolerance. Explanations are data
beside the findings: they never change a severity, they say what the figure would be if the cause were fixed.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
import pandas as pd

from audit.columns import distinct_pairs
from audit.engine import Evaluation
from audit.quantities import BY_NAME
from audit.resources import data_path
from audit.rules import RULES, codes_where
from audit.state import CLAIMED, says_dense

EXPLANATION_COLUMNS = ("finding", "rank", "cause", "factor", "direction", "corrected", "fit")

#: Dynamic factors: computed per claim from its quantities.
_DYNAMIC = ("chips", "moe", "epochs", "embeddings")

#: A mixture-of-experts hint needs an active share in this range (DeepSeek-V3: 37/671 = 5.5 %; Mixtral 13/47).
MOE_SHARE = (0.02, 0.7)


@dataclass(frozen=True)
class Cause:
    """A known reason for a discrepancy."""

    code: str
    name: str
    factor: str
    kind: str
    applies: frozenset[str]
    description: str
    reference: str
    #: How common the cause is, 0-1: ranks causes that fit equally well (words-for-tokens is rare today).
    weight: float = 1.0
    #: A trait the claim's accelerator must have for the cause to be possible (e.g. a sparse headline figure).
    requires: str = ""
    #: What the claim must state for the cause to be possible: quantity names, ``a|b`` for either, all of the
    #: space-separated groups; ``!dense`` excludes a claim whose architecture is dense (no experts).
    needs: str = ""
    #: Which figure the slip makes wrong, and which way: ``compute_flops low`` (counting the forward pass only gives
    #: a compute 3x too low). A relation finding is explained only in the direction the slip would push it; empty:
    #: either way (a unit prefix); a figure without a way (``mfu``): that figure, either way. Several
    #: alternatives, separated by ``;``, are tried in order, the first whose figure the relation holds deciding
    #: (``mfu high; throughput_tokens_per_s high``: a steady-state figure reads high against end-to-end time,
    #: whichever one the relation compares).
    slip: str = ""

    @property
    def slips(self) -> tuple[tuple[str, str], ...]:
        """:attr:`slip` read: (figure, ``low``/``high``/``""`` for either way) for each alternative, in order."""
        return tuple((parts[0], parts[1] if len(parts) > 1 else "")
                     for parts in (part.split() for part in self.slip.split(";")) if parts)

    @property
    def figures(self) -> frozenset[str]:
        """The figures the cause is about: those its slip makes wrong and those it needs stated (:attr:`needs`'s
        quantities; ``!dense`` names none)."""
        needed = {name for group in self.needs.split() if not group.startswith("!") for name in group.split("|")}
        return frozenset({figure for figure, _ in self.slips} | needed)


@lru_cache(maxsize=1)
def load_causes() -> tuple[Cause, ...]:
    """The library of causes."""
    frame = pd.read_csv(data_path("causes.csv"), dtype=str, keep_default_na=False)
    return tuple(Cause(code=r["code"], name=r["name"], factor=r["factor"], kind=r["kind"],
                       applies=frozenset(r["applies"].split()), description=r["description"],
                       reference=r["reference"], weight=float(r["weight"] or 1.0),
                       requires=r.get("requires", "") or "", needs=r.get("needs", "") or "",
                       slip=r.get("slip", "") or "")
                 for _, r in frame.iterrows())


def _slip_fits(slips: tuple[tuple[str, str], ...], pairs: tuple[np.ndarray, np.ndarray], pair_of: np.ndarray,
               log_r: np.ndarray, stated: Callable[[str], np.ndarray] | None = None) -> np.ndarray:
    """Findings that a slip (:attr:`Cause.slips`: figure and ``low``/``high``) would push the way they point.

    In a relation Σ eᵢ·ln xᵢ = ln k, a figure x_a off by a factor f moves the subject s's ratio claimed/expected by
    f^(e_a/e_s): a compute counted forward-only (3x too low) makes C001's compute ratio 1/3 and C003's MFU ratio 3.
    A finding of a rule whose relation does not hold the figure is not ruled out.

    The first slip the relation holds decides the way (a figure derived from a slipped one moves with it: OPT's
    compute counted with recomputation makes the MFU derived from it too high). A cause whose slips are
    alternatives (recomputation: the compute counts it, too high, or the MFU does, an HFU quoted as MFU) also fits
    the way a slip of another figure the claim states (``stated``: per figure, which findings' claims state it)
    pushes; a figure no claim states (a catalog peak) adds none.

    ``pairs`` holds the distinct (rule, subject) pairs of the findings (rules, subjects), ``pair_of`` each finding's
    pair (:func:`_pairs`): the signs are worked out once per pair, not per finding."""
    def signs(rule: str, subject: str) -> list[tuple[str, float]]:
        """Each slip the relation holds with the subject and the sign it pushes the ratio (0: either way)."""
        relation = getattr(RULES.get(rule), "relation", None)
        exps = dict(relation.exponents) if relation is not None else {}
        out = []
        for quantity, way in slips:
            if quantity in exps and subject in exps:
                sign = 0.0 if not way else float(np.sign((-1.0 if way == "low" else 1.0) * exps[quantity]
                                                         / exps[subject]))
                out.append((quantity, sign))
        return out

    per_pair = [signs(r, s) for r, s in zip(*pairs)]
    first = np.array([held[0][1] if held else 0.0 for held in per_pair], dtype=float)[pair_of]
    fits = (first == 0.0) | (np.sign(log_r) == first)
    if stated is None or not any(len(held) > 1 for held in per_pair):
        return fits
    up = np.zeros(len(log_r), dtype=bool)
    down = np.zeros(len(log_r), dtype=bool)
    for p, held in enumerate(per_pair):
        if len(held) < 2:
            continue
        at = pair_of == p
        for quantity, sign in held:
            said = at & stated(quantity)
            up |= said & (sign >= 0)
            down |= said & (sign <= 0)
    # The first slip as before, or a stated figure's slip that pushes the ratio the way it is.
    return fits | np.where(log_r > 0, up, np.where(log_r < 0, down, up | down))


def _single_outliers(findings: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """For the claims at ``rows``, the one stated figure the outlier search (C009) names as the likely outlier, ""
    where it names none or several: the claims it names one for are few, read one finding at a time."""
    if "candidates" not in findings.columns or not len(rows):
        return np.full(len(rows), "", dtype=object)
    searches = [code for code, rule in RULES.items() if rule.stage == "outlier"]  # C009
    at = np.flatnonzero(findings["rule"].astype(str).isin(searches).to_numpy(dtype=bool))
    single: dict[int, str] = {}
    for row, cands in zip(findings["row"].to_numpy(dtype=int)[at].tolist(),
                          findings["candidates"].to_numpy(dtype=object)[at].tolist()):
        if isinstance(cands, tuple) and len(cands) == 1:
            single[row] = str(cands[0])
    if not single:
        return np.full(len(rows), "", dtype=object)
    return np.array([single.get(r, "") for r in rows.tolist()], dtype=object)


def _text_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(values.astype(str))``: each cell's number among the distinct texts, in order of first
    appearance, and those texts. A column of texts (rule codes, quantity names) is numbered as it is, without
    making a text array of it first; any other value is read as its ``str``."""
    codes, uniques = pd.factorize(values)
    if (codes < 0).any() or not all(type(u) is str for u in uniques):
        codes, uniques = pd.factorize(values.astype(str))
    return codes, np.asarray(uniques, dtype=object)


def _pairs(rules: np.ndarray, subjects: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """The distinct (rule, subject) pairs of findings (as text) and each finding's pair, without a Python step
    per finding."""
    rule_of, rule_names = _text_codes(rules)
    subject_of, subject_names = _text_codes(subjects)
    rule_names, subject_names = np.asarray(rule_names, dtype=object), np.asarray(subject_names, dtype=object)
    pair_of, rule_at, subject_at = distinct_pairs(rule_of, subject_of, max(len(subject_names), 1))
    return (rule_names[rule_at], subject_names[subject_at]), pair_of


def _stated_in(evaluation: Evaluation, rows: np.ndarray, stated_at: dict[str, np.ndarray], name: str) -> np.ndarray:
    """Which claims at ``rows`` state ``name``, kept in ``stated_at`` (filled on first use: causes share them)."""
    if name not in stated_at:
        stated_at[name] = evaluation.source[name].cat.codes.to_numpy()[rows] == CLAIMED
    return stated_at[name]


def _needs_met(needs: str, evaluation: Evaluation, rows: np.ndarray,
               stated_at: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Rows (positions in the claims) whose stated figures make a cause possible (see :attr:`Cause.needs`).

    ``stated_at`` keeps, by quantity, which of ``rows`` state it (filled on first use: causes share quantities)."""
    stated_at = {} if stated_at is None else stated_at
    ok = np.ones(len(rows), dtype=bool)
    for group in needs.split():
        if group == "!dense":
            experts = evaluation.q["experts"].to_numpy(dtype=float)[rows]
            width = evaluation.q["d_model"].to_numpy(dtype=float)[rows]
            # Dense: one expert stated, an architecture given without experts, or an architecture field that says
            # so ("dense").
            ok &= ~((experts <= 1) | (~np.isnan(width) & np.isnan(experts)))
            info = evaluation.claims.info
            if "architecture" in info:
                ok &= ~says_dense(pd.Series(info["architecture"].to_numpy(dtype=object)[rows], dtype=object))
            continue
        stated = np.zeros(len(rows), dtype=bool)
        for name in group.split("|"):
            stated |= _stated_in(evaluation, rows, stated_at, name)
        ok &= stated
    return ok


def causes_by_code() -> dict[str, Cause]:
    """Causes keyed by code."""
    return {c.code: c for c in load_causes()}


def _dynamic_factor(name: str, q: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    def col(c: str) -> np.ndarray:
        return q[c].to_numpy(dtype=float)[rows]

    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "chips":
            return col("chips")
        if name == "moe":
            return col("params") / col("active_params")
        if name == "epochs":
            return col("epochs")
        if name == "embeddings":
            p = col("params")
            return p / (p - col("vocab_size") * col("d_model"))
    raise KeyError(name)


def no_explanations() -> pd.DataFrame:
    """An explanations table with no rows (columns :data:`EXPLANATION_COLUMNS`)."""
    return pd.DataFrame({c: pd.Series(dtype=object) for c in EXPLANATION_COLUMNS})


def explain(evaluation: Evaluation) -> pd.DataFrame:
    """Explanations for every finding worse than ``info``, best first (at most three per finding).

    Columns :data:`EXPLANATION_COLUMNS`; ``finding`` is the position of the finding in ``evaluation.findings``.
    """
    findings, q, config, hardware = evaluation.findings, evaluation.q, evaluation.config, evaluation.hardware
    rules = findings["rule"].to_numpy(dtype=object)
    # A mixture-of-experts compute at its bound (C001, detail "upper-bound-reached") is not a ratio to explain:
    # the finding names its cause (total parameters behind the compute).
    target = np.flatnonzero(findings["severity"].isin(["warning", "error"]).to_numpy(dtype=bool)
                            & (findings["detail"].to_numpy(dtype=object) != "upper-bound-reached"))
    parts: list[pd.DataFrame] = []
    if len(target) == 0:
        return no_explanations()
    rows = findings["row"].to_numpy(dtype=int)[target]
    ratio = findings["ratio"].to_numpy(dtype=float)[target]
    claimed = findings["claimed"].to_numpy(dtype=float)[target]
    rule_t = rules[target]
    # A utilization judged against a band: the correction must land inside the band.
    which, codes = _text_codes(rule_t)
    band_rule = np.isin(codes, [code for code, rule in RULES.items() if rule.utilization])[which]
    ok_tol = np.array([config.tolerance(c)[0] for c in codes])[which]
    low, high = config.band
    log_r = np.log(np.abs(ratio))
    subjects = findings["quantity"].to_numpy(dtype=object)[target]
    pairs, pair_of = _pairs(rule_t, subjects)
    # A stated utilization (MFU, HFU) that a cause says is itself wrong must stay a utilization once corrected: an
    # MFU of 55 % "computed against the sparse peak" would be 110 % of the dense one, so that is not the cause.
    subject_of, subject_names = _text_codes(subjects)
    fraction = np.array([bool(getattr(BY_NAME.get(str(s)), "fraction", False)) for s in subject_names] + [False],
                        dtype=bool)[subject_of]
    stated_at: dict[str, np.ndarray] = {}
    outlier = _single_outliers(findings, rows)
    for cause in load_causes():
        applies = np.array([code in cause.applies for code in codes], dtype=bool)[which]
        if cause.kind not in ("factor", "range") or not applies.any():
            continue
        if cause.factor in _DYNAMIC:
            factor = _dynamic_factor(cause.factor, q, rows)
        else:
            factor = np.full(len(target), float(cause.factor))
        valid = applies & np.isfinite(factor) & (factor > 1.0001)
        if cause.requires:
            valid &= hardware[cause.requires].to_numpy(dtype=bool)[rows]
        if cause.needs:
            valid &= _needs_met(cause.needs, evaluation, rows, stated_at)
        if cause.slip:
            valid &= _slip_fits(cause.slips, pairs, pair_of, log_r,
                                lambda name: _stated_in(evaluation, rows, stated_at, name))
            # The outlier search found the one figure that, left out, lets the rest agree: a slip in another figure
            # cannot be the cause (hours written as days when the chip-hours are the outlier).
            valid &= (outlier == "") | np.isin(outlier, sorted(cause.figures))
        if not valid.any():
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            log_f = np.log(factor)
        if cause.kind == "range":
            spread = np.abs(log_r)
            fits = valid & ~band_rule & (spread > 1e-12) & (spread <= log_f + 1e-12)
            score = np.full(len(target), 0.5) + (1 - cause.weight)  # a range is a weaker match than a factor
            direction = np.sign(log_r)
            corrected = np.full(len(target), np.nan)
        else:
            # Divide the ratio by the factor in the direction that brings it towards 1 (or into the band).
            direction = np.where(band_rule, np.where(claimed > high, 1.0, -1.0), np.sign(log_r))
            log_corr = np.where(band_rule, np.log(np.abs(claimed)) - direction * log_f, log_r - direction * log_f)
            corrected = np.exp(log_corr)
            in_band = (corrected >= low) & (corrected <= high)
            fits_ratio = np.abs(log_corr) <= np.log(ok_tol) + 1e-12
            # A utilization is explained only when it is too high: a low one has too many innocent causes.
            own = fraction & np.isin(subjects, [figure for figure, _ in cause.slips])  # its wrong figure: the subject
            possible = ~own | (claimed * np.exp(-direction * log_f) <= 1.0)
            fits = valid & np.where(band_rule, in_band & (claimed > high),
                                    fits_ratio & (np.abs(log_corr) < np.abs(log_r)) & possible)
            if cause.code == "fp8-peak":
                fits &= _fp8_side_fits(subjects, direction, hardware, rows)
            # Closeness of the fix, in units of the rule's tolerance, plus a penalty for a rare cause.
            score = np.where(band_rule, np.abs(log_corr - np.log(0.4)) / 10, np.abs(log_corr) / np.log(ok_tol))
            score = score + (1 - cause.weight)
        idx = np.flatnonzero(fits)
        if len(idx) == 0:
            continue
        parts.append(pd.DataFrame({
            "finding": target[idx],
            "cause": cause.code,
            "factor": factor[idx],
            "direction": direction[idx],
            "corrected": corrected[idx],
            "fit": np.where(cause.kind == "range", "in range", "within tolerance"),
            "score": score[idx],
        }))
    parts.extend(_moe_hints(findings, target, q, evaluation))
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in EXPLANATION_COLUMNS})
    return _best_three(parts)


def _fp8_side_fits(subjects: np.ndarray, direction: np.ndarray, hardware: pd.DataFrame, rows: np.ndarray
                   ) -> np.ndarray:
    """Whether "FP8 peak vs BF16 peak" can explain a claimed peak that is off by 2x: a claim in FP8 is checked
    against the FP8 peak, so its peak can only have been taken from the BF16 one (too low); any other claim is
    checked against its 16-bit peak, so its peak can only be the FP8 one (too high). An H100 claim in FP8 whose
    peak is 3,958 TFLOP/s (2x the FP8 peak: the sparse figure) is not explained by it."""
    fp8 = (hardware["precision"].to_numpy(dtype=object)[rows] == "fp8")
    peak = subjects == "peak_flops_per_chip"
    return ~peak | np.where(fp8, direction < 0, direction > 0)


def _best_three(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The causes that fit (``parts``: frames of finding, cause, factor, direction, corrected, fit, score), at
    most three per finding, best first: sorted by finding, score and cause (stable), and one story per finding:
    causes pointing the other way from the best one are dropped (never "too high by 4/3" beside "too low by 1.3"
    for the same figure). On whole columns, as ``sort_values`` and ``groupby`` would do it."""
    names = ("finding", "cause", "factor", "direction", "corrected", "fit", "score")
    col = {c: np.concatenate([p[c].to_numpy() for p in parts]) for c in names}
    if np.isnan(col["direction"]).any():  # "the first direction" of a finding skips a missing one: pandas' way
        out = pd.DataFrame(col).sort_values(["finding", "score", "cause"], kind="stable")
        best = out.groupby("finding")["direction"].transform("first")
        out = out[np.sign(out["direction"].to_numpy(dtype=float)) == np.sign(best.to_numpy(dtype=float))]
        out["rank"] = out.groupby("finding").cumcount() + 1
        out = out[out["rank"] <= 3].reset_index(drop=True)
        return out[list(EXPLANATION_COLUMNS)]
    cause_of, causes = pd.factorize(col["cause"])
    cause_rank = np.empty(len(causes), dtype=np.int64)  # each cause's place in sorted order
    cause_rank[np.argsort(np.asarray(causes, dtype=object), kind="stable")] = np.arange(len(causes))
    # A stable sort on finding, score, cause (np.lexsort: the last key first; NaN scores last, as pandas puts
    # them).
    order = np.lexsort((cause_rank[cause_of], col["score"], col["finding"]))
    finding, direction = col["finding"][order], col["direction"][order]
    first = np.r_[True, finding[1:] != finding[:-1]]
    best = direction[first][np.cumsum(first) - 1]  # each finding's first (best) direction
    keep = np.sign(direction) == np.sign(best)
    order, finding = order[keep], finding[keep]
    first = np.r_[True, finding[1:] != finding[:-1]]
    position = np.arange(len(finding))
    rank = position - np.maximum.accumulate(np.where(first, position, 0)) + 1  # 1, 2, ... within each finding
    top = rank <= 3
    order = order[top]
    taken = {c: col[c][order] for c in names}
    taken["rank"] = rank[top].astype(np.int64)
    return pd.DataFrame({c: taken[c] for c in EXPLANATION_COLUMNS}, copy=False)


def _moe_hints(findings: pd.DataFrame, target: np.ndarray, q: pd.DataFrame, evaluation: Evaluation
               ) -> list[pd.DataFrame]:
    """A compute or utilization figure that fits a fraction of the total parameters (no active count stated):
    'consistent with about 37B active of 671B parameters'."""
    rules = findings["rule"].to_numpy(dtype=object)[target]
    quantity = findings["quantity"].to_numpy(dtype=object)[target]
    rows = findings["row"].to_numpy(dtype=int)[target]
    ratio = findings["ratio"].to_numpy(dtype=float)[target]
    active, total = (q[name].to_numpy(dtype=float)[rows] for name in ("active_params", "params"))
    # An active count equal to the total of a model with experts is the total written twice (a team's sheet:
    # 236B "active" of 236B with 6 of 160 experts per token): as good as none.
    with np.errstate(invalid="ignore"):
        twice = (active >= total * (1 - 1e-9)) & (q["experts"].to_numpy(dtype=float)[rows] > 1)
    no_active = (np.isnan(active) | twice) & ~np.isnan(total) & \
        _needs_met(causes_by_code()["moe-active-share"].needs, evaluation, rows)
    # The rules whose findings about a quantity fall with the active share (Rule.active_share_of): a compute
    # stated against 6·N·D with N the total (C001, C007), an MFU against such a compute (C003).
    share_of = {code: RULES[code].active_share_of for code in codes_where("active_share_of")}
    band_rules = [code for code in share_of if RULES[code].utilization]
    which, codes = _text_codes(rules)
    of = np.array([share_of.get(str(c), "") for c in codes] + [""], dtype=object)[which]
    share = np.where((of == quantity) & ~np.isin(rules, band_rules), ratio, np.nan)
    # An MFU above the band that was derived from a compute counting the total parameters (6·N·D, C001): it
    # falls with the active share; the share that brings it to the middle of the band (the geometric mean of
    # 15 % and 65 %).
    low, high = evaluation.config.band
    mfu = findings["claimed"].to_numpy(dtype=float)[target]
    from_total = np.isin(evaluation.how["compute_flops"].to_numpy(dtype=object)[rows],
                         codes_where("derives_from_total_params"))
    utilization = np.isin(rules, band_rules) & from_total & (mfu > high)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(utilization, math.sqrt(low * high) / mfu, share)
    hit = no_active & (share >= MOE_SHARE[0]) & (share <= MOE_SHARE[1])
    idx = np.flatnonzero(hit)
    if len(idx) == 0:
        return []
    return [pd.DataFrame({
        "finding": target[idx],
        "cause": "moe-active-share",
        "factor": 1.0 / share[idx],
        # The stated figure looks too low (a compute or MFU stated against 6·N_total·D), or, for a derived MFU
        # above the band, too high.
        "direction": np.where(utilization[idx], 1.0, -1.0),
        "corrected": share[idx] * q["params"].to_numpy(dtype=float)[rows[idx]],
        "fit": "active parameters implied",
        "score": 0.4,
    })]
