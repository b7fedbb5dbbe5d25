"""Tabular output: one row per claim (``--format csv|parquet``) and one row per finding (``--findings FILE``).

Every input row appears exactly once in the claims table, in input order, so it joins back to the input. A claim's
findings include those of its phases (a multi-phase run is as bad as its worst phase, and says why). CSV is written
for spreadsheets: lines end with CRLF (RFC 4180), so a cell holding any line break, a bare CR included, is quoted
and stays one cell; and no line of a cell starts a formula.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd

from audit.columns import map_unique
from audit.records import SHOWN_QUANTITIES, findings_by_row
from audit.report import Options, register
from audit.result import AuditResult
from audit.rounding import round_array


def claims_frame(result: AuditResult) -> pd.DataFrame:
    """One row per claim: identity, status, key quantities (value and source) and its non-ok rule codes."""
    info = result.claims.info
    out = pd.DataFrame({
        "id": info["id"].astype(str),
        "name": info["name"],
        "file": info["file"],
        "row": info["row"].astype(int),
        "status": result.status.astype(str),
        "accelerator": result.hardware["accelerator"],
        "precision": result.hardware["precision"],
    })
    for name in SHOWN_QUANTITIES:
        out[name] = round_array(result.q[name].to_numpy(dtype=float))
        out[f"{name}_source"] = result.source[name]
    f = _with_phases(result)
    bad = f[f["severity"].astype(str).isin(["warning", "error"])]
    codes = bad.groupby("row")["rule"].agg(lambda s: " ".join(sorted(set(s))))
    out["rules"] = codes.reindex(np.arange(len(result))).fillna("").to_numpy()
    counts = f.groupby(["row", f["severity"].astype(str)]).size().unstack(fill_value=0)
    for sev in ("error", "warning"):
        col = counts[sev] if sev in counts.columns else pd.Series(dtype=int)
        out[f"{sev}s"] = col.reindex(np.arange(len(result))).fillna(0).astype(int).to_numpy()
    return out


def _with_phases(result: AuditResult) -> pd.DataFrame:
    """Rows (claim), rules and severities of every finding of each claim, its phases' findings included."""
    own = result.findings[["row", "rule", "severity"]]
    phases, parent = result.phase_result, result.phase_parent
    if phases is None or parent is None or not len(phases.findings):
        return own
    theirs = pd.DataFrame({"row": parent[phases.findings["row"].to_numpy(dtype=int)],
                           "rule": phases.findings["rule"].to_numpy(),
                           "severity": phases.findings["severity"].astype(str).to_numpy()})
    return pd.concat([own.assign(severity=own["severity"].astype(str)), theirs], ignore_index=True)


def findings_frame(result: AuditResult) -> pd.DataFrame:
    """One row per finding, with its message and formula, in claim order; a run's phases' findings follow its own
    (their ``claim_id`` is the phase's, ``run/phase-1``)."""
    own = findings_by_row(result)
    phases: dict[int, list] = {}
    if result.phase_result is not None and result.phase_parent is not None:
        by_phase = findings_by_row(result.phase_result)
        for i, run in enumerate(result.phase_parent.tolist()):
            phases.setdefault(run, []).extend(by_phase.get(i, []))
    records = [f.to_dict() for row in sorted(own.keys() | phases.keys())
               for f in own.get(row, []) + phases.get(row, [])]
    columns = ["claim_id", "rule", "name", "severity", "quantity", "claimed", "expected", "ratio", "message", "formula"]
    return pd.DataFrame.from_records(records, columns=columns)


#: A CSV cell starting with one of these is run as a formula by spreadsheet programs (OWASP "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

#: A line of a cell: at the start, or after a line break. A program that splits rows at a bare CR (or a user who
#: pastes the cell) sees each line as a cell of its own, so each line is defused as a cell start.
_LINE = re.compile(r"(?:^|(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n))[^\r\n]*")


def _defuse_line(line: str) -> str:
    if not line.startswith(_FORMULA_START):
        return line
    try:
        float(line)  # "-3.5" is a number, not a formula
        return line
    except ValueError:
        return "'" + line


def _defuse_text(value: object) -> object:
    if not isinstance(value, str):
        return value
    if "\n" not in value and "\r" not in value:
        return _defuse_line(value)
    return _LINE.sub(lambda m: _defuse_line(m.group()), value)


def _defuse(column: pd.Series) -> pd.Series:
    """Text cells that a spreadsheet would run as a formula get a leading apostrophe (shown, not evaluated)."""
    if column.dtype != object:
        return column
    return map_unique(column, _defuse_text)  # once per distinct value: source columns hold three


def _to_bytes(frame: pd.DataFrame, fmt: str) -> bytes:
    if fmt == "parquet":
        buf = io.BytesIO()
        frame.to_parquet(buf, index=False)
        return buf.getvalue()
    safe = frame.apply(_defuse)
    # CRLF line ends: the csv writer quotes a cell holding any character of the line end, so a bare CR (which a
    # spreadsheet takes as a new row) is quoted too; with "\n" alone it was not.
    return safe.to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def claims_bytes(result: AuditResult, fmt: str) -> bytes:
    """The claims table as CSV or Parquet bytes."""
    return _to_bytes(claims_frame(result), fmt)


@register("csv", description="one row per claim, in input order (spreadsheet-safe)")
def render_csv(result: AuditResult, options: Options) -> bytes:
    """The registered ``csv`` format."""
    return claims_bytes(result, "csv")


@register("parquet", binary=True, description="one row per claim, in input order")
def render_parquet(result: AuditResult, options: Options) -> bytes:
    """The registered ``parquet`` format."""
    return claims_bytes(result, "parquet")


def findings_bytes(result: AuditResult, path: str) -> bytes:
    """The findings table, in the format the file name's extension asks for (.parquet, else CSV)."""
    fmt = "parquet" if str(path).lower().endswith((".parquet", ".pq")) else "csv"
    return _to_bytes(findings_frame(result), fmt)
