"""Findings and verdicts as plain data: the long table the engine fills, and the record every format renders.

The engine produces numbers (one row per check, :data:`FINDING_COLUMNS`); :mod:`audit.records` turns a row into
a :class:`Finding` with its words. Severities and statuses, and their order, are defined here once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from audit.lazy import pandas as pd  # imported on first use: quick start-up

#: Severities of a finding, mildest first.
SEVERITIES: tuple[str, ...] = ("ok", "info", "warning", "error")
SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}

#: Statuses of a claim, in the order counts are reported (the JSON summary's keys). A claim is as bad as its worst
#: finding (``pass``: checked and consistent, ``warn``, ``fail``); an unusable value makes it ``invalid``; a claim
#: on which nothing could be checked is ``unchecked``, never ``pass``.
STATUSES: tuple[str, ...] = ("pass", "warn", "fail", "invalid", "unchecked")
#: How much a status says, for combining a run with its phases: a run is as bad as its worst phase, and a run
#: with nothing to check of its own is as good as its checked phases.
STATUS_RANK: dict[str, int] = {"unchecked": 0, "pass": 1, "warn": 2, "fail": 3, "invalid": 4}
#: Statuses as every report lists claims: what must be fixed first (a failed check, then unusable input, then a
#: warning); unchecked claims come before passing ones (they need a look).
STATUSES_WORST_FIRST: tuple[str, ...] = ("fail", "invalid", "warn", "unchecked", "pass")
#: What ``--fail-on`` may name: a status (and everything worse), ``unchecked``, or ``never``.
FAIL_LEVELS: dict[str, frozenset[str]] = {
    "warn": frozenset({"warn", "fail", "invalid"}),
    "fail": frozenset({"fail", "invalid"}),
    "unchecked": frozenset({"unchecked"}),
    "never": frozenset(),
}

#: Columns of the findings table. ``detail`` is a short text (close matches, an invalid value's message, the
#: origin of a utilization); ``candidates`` and ``implied`` are the outlier rule's suspects and the value the
#: other figures imply for each (tuples), None elsewhere.
FINDING_COLUMNS: tuple[str, ...] = ("row", "rule", "severity", "quantity", "claimed", "expected", "ratio", "detail",
                                    "candidates", "implied")


def findings_frame(rows: np.ndarray, rule: str, severity: np.ndarray | str, quantity: np.ndarray | str,
                   claimed: np.ndarray | float = np.nan, expected: np.ndarray | float = np.nan,
                   detail: np.ndarray | str | None = None, candidates: Sequence[Any] | None = None,
                   implied: Sequence[Any] | None = None) -> pd.DataFrame:
    """Findings of one rule on ``rows``: scalars are broadcast, ``ratio`` is claimed / expected."""
    n = len(rows)

    def column(value: Any, dtype: Any) -> np.ndarray:
        return np.broadcast_to(np.asarray(value, dtype=dtype), (n,)).copy()

    claimed_a = column(claimed, float)
    expected_a = column(expected, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = claimed_a / expected_a
    # Every column is a new array: the frame takes them as they are (copy=False), one block each, never stacked
    # into blocks of a kind (a copy of every cell, which costs more than making the frame on a large batch). The
    # rule and the severity are categoricals (small integers), as the engine's findings table holds them.
    return table_of({
        "row": np.asarray(rows).astype(int),
        "rule": pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), categories=[rule]),
        "severity": _severities(severity, n),
        "quantity": column(quantity, object),
        "claimed": claimed_a,
        "expected": expected_a,
        "ratio": ratio,
        "detail": column(detail, object),
        "candidates": np.full(n, None, dtype=object) if candidates is None else object_array(candidates),
        "implied": np.full(n, None, dtype=object) if implied is None else object_array(implied),
    })


def table_of(columns: dict[str, Any]) -> "pd.DataFrame":
    """A frame of ``columns`` as they are, one block each (no copy): an object array stays objects, as
    ``pd.DataFrame`` would leave it after looking through every cell for dates (a tenth of a second for a million
    findings)."""
    return pd.DataFrame({name: pd.Series(values, dtype=object, copy=False)
                         if isinstance(values, np.ndarray) and values.dtype == object else values
                         for name, values in columns.items()}, copy=False)


def severity_dtype() -> "pd.CategoricalDtype":
    """The findings table's ``severity`` column: :data:`SEVERITIES`, ordered mildest first."""
    return pd.CategoricalDtype(list(SEVERITIES), ordered=True)


def _severities(severity: np.ndarray | str, n: int) -> Any:
    """A column of ``n`` severities (one for all, or one per row) as a categorical of :func:`severity_dtype`;
    as objects when some value is not a severity (the table then says so as it is)."""
    values = np.asarray(severity)
    values = np.broadcast_to(values if values.dtype.kind == "U" else values.astype(object), (n,))
    codes = np.full(n, -1, dtype=np.int8)
    for k, name in enumerate(SEVERITIES):
        codes[values == name] = k
    if (codes < 0).any():
        return values.astype(object)
    return pd.Categorical.from_codes(codes, dtype=severity_dtype())


def object_array(values: Sequence[Any]) -> np.ndarray:
    """A 1-D object array of ``values``."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):  # tuples must stay whole cells, not become a 2-D array
        out[i] = v
    return out


def concat_findings(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Findings tables one after the other, column by column (``pd.concat`` inspects every object cell of
    columns that are mostly None, which costs seconds on a large batch)."""
    frames = [f for f in frames if f is not None and len(f)]
    if not frames:
        return empty_findings()
    columns: dict[str, Any] = {}
    for c in FINDING_COLUMNS:
        parts = [f[c] for f in frames]
        if all(isinstance(p.dtype, pd.CategoricalDtype) for p in parts):
            columns[c] = _concat_categoricals(parts)
        else:
            columns[c] = np.concatenate([p.to_numpy(dtype=object) if isinstance(p.dtype, pd.CategoricalDtype)
                                         else p.to_numpy() for p in parts])
    return table_of(columns)


def _concat_categoricals(parts: Sequence["pd.Series"]) -> "pd.Categorical":
    """Categorical columns one after the other, by their codes: the categories of all of them, in order of
    first appearance (ordered when the first part's are; :func:`severity_dtype` when every part has it)."""
    first = parts[0].dtype
    if all(p.dtype == first for p in parts):
        dtype = first
    else:
        seen: dict[Any, None] = {}
        for p in parts:
            seen.update(dict.fromkeys(p.cat.categories.tolist()))
        dtype = pd.CategoricalDtype(list(seen), ordered=bool(first.ordered))
    categories = pd.Index(dtype.categories)
    codes = []
    for p in parts:
        own = np.asarray(p.cat.codes, dtype=np.int64)
        where = np.append(categories.get_indexer(p.cat.categories), -1)  # a missing cell (-1) stays missing
        codes.append(where[own])
    return pd.Categorical.from_codes(np.concatenate(codes), dtype=dtype)


def empty_findings() -> pd.DataFrame:
    """A findings table with no rows."""
    frame = findings_frame(np.array([], dtype=int), "", "ok", "")
    frame["severity"] = pd.Categorical(frame["severity"], categories=list(SEVERITIES), ordered=True)
    return frame


def status_of(findings: pd.DataFrame, n: int, notes: np.ndarray | None = None,
              invalid: np.ndarray | None = None) -> pd.Series:
    """Each claim's status from its worst finding: error → fail, warning → warn, a finding that ``invalid`` marks
    (an unusable value, from the rules that invalidate, :attr:`audit.rules.Rule.invalidates`) → invalid, and a
    claim on which no check ran → unchecked. ``notes`` marks findings that only say how a figure was read (an
    info from a rule that checks nothing); they do not make a claim checked."""
    status = np.full(n, "unchecked", dtype=object)
    if len(findings):
        rank = findings["severity"].cat.codes.to_numpy()
        rows = findings["row"].to_numpy(dtype=int)
        # Each claim's worst severity: the rows of each severity marked in increasing order (the last mark is the
        # worst), which np.maximum.at would do one finding at a time.
        worst = np.full(n, -1)
        for level in range(len(SEVERITIES)):
            worst[rows[rank == level]] = level
        checked = np.zeros(n, dtype=bool)
        is_check = np.ones(len(findings), dtype=bool) if notes is None else ~np.asarray(notes, dtype=bool)
        checked[rows[is_check | (rank >= SEVERITY_RANK["warning"])]] = True
        status = np.where(worst >= SEVERITY_RANK["error"], "fail",
                          np.where(worst >= SEVERITY_RANK["warning"], "warn",
                                   np.where(checked, "pass", "unchecked"))).astype(object)
        if invalid is not None:
            status[rows[np.asarray(invalid, dtype=bool)]] = "invalid"
    return pd.Series(status, dtype=object)


def rule_is(findings: pd.DataFrame, codes: Sequence[str]) -> np.ndarray:
    """Which findings are of one of the rules ``codes``: ``findings["rule"].isin(codes)``, tested once per distinct
    rule (a batch has a few dozen rules and millions of findings)."""
    column = findings["rule"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        which, rules = np.asarray(column.cat.codes), column.cat.categories
    else:
        which, rules = pd.factorize(column.to_numpy(dtype=object))
    hit = np.array([rule in codes for rule in rules] + [False], dtype=bool)  # a missing rule (-1): no
    return hit[which]


def worst_status(status: pd.Series, other: pd.Series, into: np.ndarray) -> pd.Series:
    """``status`` made at least as bad as ``other[i]`` at row ``into[i]`` (a run is as bad as its worst phase)."""
    worst = status.map(STATUS_RANK).to_numpy(dtype=int)
    np.maximum.at(worst, into, other.map(STATUS_RANK).to_numpy(dtype=int))
    by_rank = np.empty(len(STATUS_RANK), dtype=object)
    for name, rank in STATUS_RANK.items():
        by_rank[rank] = name
    return pd.Series(by_rank[worst], dtype=object)


def fail_levels(fail_on: str) -> frozenset[str]:
    """The statuses that fail a run, from ``--fail-on``: comma-separated names of :data:`FAIL_LEVELS`
    (``fail``, ``warn``, ``never``, and ``unchecked`` to add claims on which nothing could be checked)."""
    levels: set[str] = set()
    for name in (part.strip() for part in fail_on.split(",")):
        if name not in FAIL_LEVELS:
            raise ValueError(f"unknown fail level {name!r} (one of {', '.join(FAIL_LEVELS)})")
        levels |= FAIL_LEVELS[name]
    return frozenset(levels)


def exit_status(status: Sequence[str], fail_on: str) -> int:
    """0 when no claim reaches the fail level, 1 when one does (``fail_on``: see :func:`fail_levels`)."""
    levels = fail_levels(fail_on)
    return 1 if any(s in levels for s in status) else 0


@dataclass(frozen=True)
class Finding:
    """One check on one claim (flake8's ``Violation``, for training arithmetic)."""

    claim_id: str
    rule: str
    name: str
    severity: str
    quantity: str
    claimed: float | None
    expected: float | None
    ratio: float | None
    message: str
    formula: str
    #: The best-fitting known causes (see :mod:`audit.explain`), best first; empty when none fits.
    explanations: tuple[dict[str, Any], ...] = ()

    @property
    def explanation(self) -> str | None:
        """The best explanation as a sentence, or None."""
        return self.explanations[0]["text"] if self.explanations else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN as None)."""
        data = {f: getattr(self, f) for f in _FIELDS}
        data["explanations"] = [dict(e) for e in self.explanations]
        data["explanation"] = self.explanation
        for key in ("claimed", "expected", "ratio"):
            v = data[key]
            if v is not None and (not isinstance(v, float) or not math.isfinite(v)):
                data[key] = None
        return data


_FIELDS = ("claim_id", "rule", "name", "severity", "quantity", "claimed", "expected", "ratio", "message", "formula")
