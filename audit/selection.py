"""Rule selection, as ruff selects: ``select``, ``extend-select`` and ``ignore`` by code or prefix (``C0``, ``U``).

Every rule still runs, so an ignored rule still derives the values other checks use; only its findings are dropped
from the result (every output, the statuses and the exit code). The most specific selector wins (``--select C
--ignore C001`` keeps every C rule but C001; ``--ignore C --extend-select C003`` keeps C003); on a tie, ignore
wins. ``ALL`` selects every rule. ``V001`` (a value that cannot be used) is always reported: an unusable value
never makes a claim pass without a word, so ignoring it by name is refused.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Iterable, Sequence

import numpy as np

from audit.findings import status_of, worst_status
from audit.result import AuditResult
from audit.rules import RULES, codes_where

#: Selects every rule.
ALL = "ALL"
#: Rules that cannot be ignored: an invalid value always makes its claim invalid.
ALWAYS = frozenset(codes_where("invalidates"))


class SelectionError(ValueError):
    """A selector that names no rule, or a rule that cannot be ignored."""


def split(values: Iterable[str]) -> list[str]:
    """Selectors as given (repeated options, each possibly comma-separated), upper-cased, blanks dropped."""
    return [part.strip().upper() for value in values for part in str(value).split(",") if part.strip()]


def _matches(selector: str, codes: Sequence[str]) -> list[str]:
    return list(codes) if selector == ALL else [c for c in codes if c.startswith(selector)]


def _check(option: str, selectors: Sequence[str], codes: Sequence[str]) -> None:
    for s in selectors:
        if not _matches(s, codes):
            near = difflib.get_close_matches(s, list(codes), n=3)
            hint = f" (close: {', '.join(near)})" if near else ""
            raise SelectionError(f"{option} {s}: no rule has this code or prefix{hint}; `train-audit rules` lists "
                                 f"them")


def enabled(select: Iterable[str] = (), ignore: Iterable[str] = (), extend_select: Iterable[str] = (),
            codes: Sequence[str] | None = None) -> frozenset[str]:
    """The codes whose findings are reported. ``select`` (default: every rule) replaces the set, ``extend_select``
    adds to it, ``ignore`` removes from it; for each rule the longest matching selector decides (ignore on a tie)."""
    codes = list(RULES) if codes is None else list(codes)
    sel, ign, ext = split(select), split(ignore), split(extend_select)
    _check("--select", sel, codes)
    _check("--ignore", ign, codes)
    _check("--extend-select", ext, codes)
    for s in ign:
        if s in ALWAYS:
            raise SelectionError(f"--ignore {s}: {s} ({RULES[s].name if s in RULES else s}) is always reported: an "
                                 f"unusable value makes its claim invalid and is never dropped without a word")
    chosen = (sel or [ALL]) + ext
    out = set()
    for code in codes:
        on = max((_specificity(s) for s in chosen if _matches(s, [code])), default=-1)
        off = max((_specificity(s) for s in ign if _matches(s, [code])), default=-1)
        if code in ALWAYS or (on >= 0 and on > off):
            out.add(code)
    return frozenset(out)


def _specificity(selector: str) -> int:
    return 0 if selector == ALL else len(selector)


def apply(result: AuditResult, codes: frozenset[str]) -> AuditResult:
    """``result`` with only the findings of rules in ``codes`` (and their explanations); statuses are made again
    from the findings kept, so a claim whose every check was ignored is ``unchecked``, never a pass. The values
    every rule derived are kept as they are. Multi-phase runs: the phases' findings are selected too."""
    if set(RULES) <= codes:
        return result
    phase_result = result.phase_result
    if phase_result is not None:
        phase_result = apply(phase_result, codes)
    findings = result.findings
    keep = findings["rule"].isin(sorted(codes)).to_numpy()
    kept = findings[keep].reset_index(drop=True)
    # Explanations point at findings by position: renumber them to the kept findings' positions.
    new_position = np.full(len(findings), -1, dtype=int)
    new_position[keep] = np.arange(int(keep.sum()))
    explanations = result.explanations
    if len(explanations):
        moved = new_position[explanations["finding"].to_numpy(dtype=int)]
        explanations = explanations[moved >= 0].copy()
        explanations["finding"] = moved[moved >= 0]
        explanations = explanations.reset_index(drop=True)
    notes = kept["rule"].isin(codes_where("note")).to_numpy()
    status = status_of(kept, len(result), notes, kept["rule"].isin(codes_where("invalidates")).to_numpy())
    if phase_result is not None and result.phase_parent is not None:
        status = worst_status(status, phase_result.status, result.phase_parent)
    return dataclasses.replace(result, findings=kept, explanations=explanations, status=status,
                               phase_result=phase_result)


__all__ = ["ALL", "ALWAYS", "SelectionError", "split", "enabled", "apply"]
