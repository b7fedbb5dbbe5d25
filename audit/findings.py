"""Findings and verdicts as plain data: the long table the engine fills, and the record every format renders.

The engine produces numbers (one row per check, :data:`FINDING_COLUMNS`); :mod:`audit.records` turns a row into
a :class:`Finding` with its words. Severities and statuses, and their order, are defined here once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

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
#: The statuses by rank: a column of statuses is taken from it by rank (the same few strings, none made per row).
_STATUS_BY_RANK = np.array(sorted(STATUS_RANK, key=STATUS_RANK.__getitem__), dtype=object)
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
#: The findings' severities, as a user reads them in a report ("warning C003"), for the statuses they give.
FAIL_LEVEL_ALIASES: dict[str, str] = {"warning": "warn", "error": "fail"}

#: Columns of the findings table. ``detail`` is a short text (close matches, an invalid value's message, the
#: origin of a utilization); ``candidates`` and ``implied`` are the outlier rule's suspects and the value the
#: other figures imply for each (tuples), None elsewhere.
FINDING_COLUMNS: tuple[str, ...] = ("row", "rule", "severity", "quantity", "claimed", "expected", "ratio", "detail",
                                    "candidates", "implied")


@dataclass(frozen=True, eq=False)
class FindingsPart:
    """Findings of one rule on some rows, as arrays: what a rule returns. The engine makes one findings table of
    all the parts once (:func:`findings_table`), not a frame per rule (a frame costs more than its findings on a
    small audit, and concatenating frames inspects every object cell on a large one)."""

    row: np.ndarray
    rule: str
    #: Positions in :data:`SEVERITIES` (int8); -1 for a value that is not a severity.
    severity: np.ndarray
    quantity: np.ndarray
    claimed: np.ndarray
    expected: np.ndarray
    detail: np.ndarray
    #: The outlier rule's suspects and the value the other figures imply for each (tuples); None: none.
    candidates: np.ndarray | None = None
    implied: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.row)

    def worse_than_ok(self) -> np.ndarray:
        """Which findings are not ``ok`` (a value that is not a severity counts as worse)."""
        return self.severity != SEVERITY_RANK["ok"]

    def kept(self, keep: np.ndarray) -> "FindingsPart":
        """The findings ``keep`` marks (a boolean per finding)."""
        def take(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[keep]
        return FindingsPart(row=self.row[keep], rule=self.rule, severity=self.severity[keep],
                            quantity=self.quantity[keep], claimed=self.claimed[keep], expected=self.expected[keep],
                            detail=self.detail[keep], candidates=take(self.candidates), implied=take(self.implied))


def findings_part(rows: np.ndarray, rule: str, severity: np.ndarray | str, quantity: np.ndarray | str,
                  claimed: np.ndarray | float = np.nan, expected: np.ndarray | float = np.nan,
                  detail: np.ndarray | str | None = None, candidates: Sequence[Any] | None = None,
                  implied: Sequence[Any] | None = None) -> FindingsPart:
    """Findings of one rule on ``rows``: scalars are broadcast (``ratio``, claimed / expected, is computed once
    for the whole table)."""
    n = len(rows)

    def column(value: Any, dtype: Any) -> np.ndarray:
        return np.broadcast_to(np.asarray(value, dtype=dtype), (n,)).copy()

    return FindingsPart(
        row=np.asarray(rows).astype(np.int64),
        rule=rule,
        severity=severity_codes(severity, n),
        quantity=column(quantity, object),
        claimed=column(claimed, float),
        expected=column(expected, float),
        detail=column(detail, object),
        candidates=None if candidates is None else object_array(candidates),
        implied=None if implied is None else object_array(implied),
    )


def severity_codes(severity: np.ndarray | str, n: int) -> np.ndarray:
    """``n`` severities (one for all, or one per row; names, or already positions) as positions in
    :data:`SEVERITIES` (int8; -1 for a value that is not a severity: the table shows it as missing)."""
    values = np.asarray(severity)
    if values.dtype.kind in "iu":
        codes = np.broadcast_to(values, (n,)).astype(np.int64)
        return np.where((codes >= 0) & (codes < len(SEVERITIES)), codes, -1).astype(np.int8)
    if values.ndim == 0:
        return np.full(n, SEVERITY_RANK.get(str(values), -1), dtype=np.int8)
    codes = np.full(n, -1, dtype=np.int8)
    for k, name in enumerate(SEVERITIES):
        codes[values == name] = k
    return codes


def concat_parts(parts: Sequence[FindingsPart | None]) -> FindingsPart | None:
    """One rule's parts one after the other (None when none has a finding)."""
    kept = [p for p in parts if p is not None and len(p)]
    if not kept:
        return None
    if len(kept) == 1:
        return kept[0]

    def joined(name: str) -> np.ndarray | None:
        values = [getattr(p, name) for p in kept]
        if all(v is None for v in values):
            return None
        return np.concatenate([np.full(len(p), None, dtype=object) if v is None else v
                               for p, v in zip(kept, values)])

    return FindingsPart(row=np.concatenate([p.row for p in kept]), rule=kept[0].rule,
                        severity=np.concatenate([p.severity for p in kept]),
                        quantity=np.concatenate([p.quantity for p in kept]),
                        claimed=np.concatenate([p.claimed for p in kept]),
                        expected=np.concatenate([p.expected for p in kept]),
                        detail=np.concatenate([p.detail for p in kept]),
                        candidates=joined("candidates"), implied=joined("implied"))


def findings_table(parts: Sequence[FindingsPart],
                   order: Callable[[np.ndarray, np.ndarray, list[str], np.ndarray], np.ndarray] | None = None,
                   rule_categories: Sequence[str] | None = None) -> "pd.DataFrame":
    """The findings table (:data:`FINDING_COLUMNS`) of ``parts``, made once.

    ``order(rows, rule_codes, rule_names, severity_codes)`` gives the order of the findings (positions;
    ``rule_codes`` index ``rule_names``, the distinct rules as they appear). ``rule_categories`` are the rule
    column's categories (every rule of the parts among them), by default the distinct rules in order of
    appearance. Severity is a categorical of :func:`severity_dtype`; ``ratio`` is claimed / expected."""
    parts = [p for p in parts if p is not None and len(p)]
    names = list(dict.fromkeys(p.rule for p in parts))
    rule_at = {name: k for k, name in enumerate(names)}
    n = sum(len(p) for p in parts)
    rows = np.concatenate([p.row for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    rule_code = (np.concatenate([np.full(len(p), rule_at[p.rule], dtype=np.int64) for p in parts]) if parts
                 else np.zeros(0, dtype=np.int64))
    severity = np.concatenate([p.severity for p in parts]) if parts else np.zeros(0, dtype=np.int8)
    take = None if order is None else order(rows, rule_code, names, severity)

    def arranged(values: np.ndarray) -> np.ndarray:
        return values if take is None else values[take]

    def joined(name: str, dtype: Any) -> np.ndarray:
        if not parts:
            return np.zeros(0, dtype=dtype)
        return arranged(np.concatenate([getattr(p, name) for p in parts]))

    def sparse(name: str) -> np.ndarray:
        # Most parts have none: a column of None, with only the parts that have some taken in order.
        if all(getattr(p, name) is None for p in parts):
            return np.full(n, None, dtype=object)
        return arranged(np.concatenate([np.full(len(p), None, dtype=object) if getattr(p, name) is None
                                        else getattr(p, name) for p in parts]))

    categories = list(names) if rule_categories is None else list(rule_categories)
    positions = np.array([categories.index(name) for name in names] + [-1], dtype=np.int64)
    claimed, expected = joined("claimed", float), joined("expected", float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = claimed / expected
    return table_of({
        "row": arranged(rows),
        "rule": pd.Categorical.from_codes(positions[arranged(rule_code)], dtype=pd.CategoricalDtype(categories)),
        "severity": pd.Categorical.from_codes(arranged(severity), dtype=severity_dtype()),
        "quantity": joined("quantity", object),
        "claimed": claimed,
        "expected": expected,
        "ratio": ratio,
        "detail": joined("detail", object),
        "candidates": sparse("candidates"),
        "implied": sparse("implied"),
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


def object_array(values: Sequence[Any]) -> np.ndarray:
    """A 1-D object array of ``values``."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):  # tuples must stay whole cells, not become a 2-D array
        out[i] = v
    return out


def status_of(findings: pd.DataFrame, n: int, notes: np.ndarray | None = None,
              invalid: np.ndarray | None = None) -> pd.Series:
    """Each claim's status from its worst finding: error → fail, warning → warn, a finding that ``invalid`` marks
    (an unusable value, from the rules that invalidate, :attr:`audit.rules.Rule.invalidates`) → invalid, and a
    claim on which no check ran → unchecked. ``notes`` marks findings that only say how a figure was read (an
    info from a rule that checks nothing); they do not make a claim checked."""
    rank = np.full(n, STATUS_RANK["unchecked"])
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
        rank = np.where(worst >= SEVERITY_RANK["error"], STATUS_RANK["fail"],
                        np.where(worst >= SEVERITY_RANK["warning"], STATUS_RANK["warn"],
                                 np.where(checked, STATUS_RANK["pass"], STATUS_RANK["unchecked"])))
        if invalid is not None:
            rank[rows[np.asarray(invalid, dtype=bool)]] = STATUS_RANK["invalid"]
    return pd.Series(_STATUS_BY_RANK[rank], dtype=object)


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
    out = status.to_numpy(dtype=object).copy()
    # Only the runs with phases are ranked (a few in a batch of thousands: mapping every status cost ~5 ms).
    runs, which = np.unique(np.asarray(into, dtype=np.intp), return_inverse=True)
    rank = np.fromiter(map(STATUS_RANK.__getitem__, out[runs].tolist()), dtype=np.int64, count=len(runs))
    phase_rank = other.to_numpy(dtype=object).tolist()
    np.maximum.at(rank, which, np.fromiter(map(STATUS_RANK.__getitem__, phase_rank), dtype=np.int64,
                                            count=len(phase_rank)))
    out[runs] = _STATUS_BY_RANK[rank]
    return pd.Series(out, dtype=object)


def fail_levels(fail_on: str) -> frozenset[str]:
    """The statuses that fail a run, from ``--fail-on``: comma-separated names of :data:`FAIL_LEVELS`
    (``fail``, ``warn``, ``never``, and ``unchecked`` to add claims on which nothing could be checked; the severities
    ``error`` and ``warning`` name ``fail`` and ``warn``). ``unchecked``
    adds to a level: alone it adds to the default, ``fail`` (a failed claim still fails the run)."""
    levels: set[str] = set()
    names = [part.strip() for part in fail_on.split(",")]
    names = [FAIL_LEVEL_ALIASES.get(name, name) for name in names]
    for name in names:
        if name not in FAIL_LEVELS:
            raise ValueError(f"unknown fail level {name!r} (one of {', '.join(FAIL_LEVELS)}; 'error' and 'warning' "
                             f"name fail and warn)")
        levels |= FAIL_LEVELS[name]
    # One level, and unchecked beside it: "never,warn" asks for two things, and "fail,warn" read as warn would
    # gate on more than the first asked.
    if len({name for name in names if name != "unchecked"}) > 1:
        raise ValueError(f"{fail_on!r} names more than one level; give one of fail, warn, never (and unchecked "
                         f"beside it: 'warn,unchecked')")
    if all(name == "unchecked" for name in names):
        levels |= FAIL_LEVELS["fail"]
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
