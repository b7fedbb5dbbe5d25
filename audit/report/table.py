"""Tabular output: one row per claim (``--format csv|parquet``) and one row per finding (``--findings FILE``).

Every input row appears exactly once in the claims table, in input order, so it joins back to the input. A claim's
findings include those of its phases (a multi-phase run is as bad as its worst phase, and says why). CSV is written
for spreadsheets: lines end with CRLF (RFC 4180), so a cell holding any line break, a bare CR included, is quoted
and stays one cell; and no line of a cell starts a formula.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from audit.columns import map_unique
from audit.records import SHOWN_QUANTITIES, findings_by_row
from audit.report import Options, register
from audit.result import AuditResult
from audit.rounding import round_array

if TYPE_CHECKING:  # annotations only: pyarrow is imported when a Parquet file is written
    import pyarrow as pa


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
    n = len(result)
    rows = f["row"].to_numpy(dtype=np.int64)
    severity = f["severity"].astype(str).to_numpy(dtype=object)
    bad = (severity == "warning") | (severity == "error")
    out["rules"] = _rule_sets(rows[bad], f["rule"].to_numpy(dtype=object)[bad], n)
    for sev in ("error", "warning"):
        out[f"{sev}s"] = np.bincount(rows[severity == sev], minlength=n)[:n].astype(int)
    return out


def _rule_sets(rows: np.ndarray, rules: np.ndarray, n: int) -> np.ndarray:
    """Per claim, its distinct rule codes sorted and joined by spaces ("" for none), with no Python per row: each
    claim's set of codes is a bit mask (one bit per distinct code, in sorted order), and each distinct mask is
    spelt once."""
    codes, names = pd.factorize(pd.Series(rules, dtype=object), sort=True)
    names = [str(x) for x in names]
    words = (len(names) + 62) // 63 or 1  # 63 codes per int64 word
    masks = np.zeros((n, words), dtype=np.int64)
    for w in range(words):
        sel = (codes // 63) == w
        np.bitwise_or.at(masks[:, w], rows[sel], np.left_shift(np.int64(1), (codes[sel] % 63).astype(np.int64)))
    distinct, inverse = np.unique(masks, axis=0, return_inverse=True)
    spelt = np.array([" ".join(names[w * 63 + b] for w in range(words) for b in range(63)
                               if w * 63 + b < len(names) and (int(m[w]) >> b) & 1) for m in distinct], dtype=object)
    return spelt[np.asarray(inverse).reshape(-1)]


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
    frame = pd.DataFrame.from_records(records, columns=columns)
    # Numbers stay numbers whatever the batch holds (a batch whose findings all lack a ratio included).
    return frame.astype({"claimed": float, "expected": float, "ratio": float})


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


def arrow_schema(frame: pd.DataFrame) -> "pa.Schema":
    """The Parquet schema of a claims or findings table, fixed by its columns' kinds (float64, int64, text) and not
    by the values of one batch: an all-empty text column is text, so tables written batch by batch
    (:mod:`audit.stream`) have one schema."""
    import pyarrow as pa

    def kind(dtype: object) -> pa.DataType:
        if pd.api.types.is_bool_dtype(dtype):
            return pa.bool_()
        if pd.api.types.is_integer_dtype(dtype):
            return pa.int64()
        if pd.api.types.is_float_dtype(dtype):
            return pa.float64()
        return pa.string()

    return pa.schema([(str(c), kind(frame[c].dtype)) for c in frame.columns])


def arrow_table(frame: pd.DataFrame, schema: "pa.Schema | None" = None) -> "pa.Table":
    """A claims or findings table as Arrow, with :func:`arrow_schema` (text cells that are not text are written as
    their ``str``)."""
    import pyarrow as pa

    schema = schema or arrow_schema(frame)
    columns = {}
    for f in schema:
        col = frame[f.name]
        if pa.types.is_string(f.type) and col.dtype == object:
            values = col.to_numpy(dtype=object)
            odd = np.fromiter((v is not None and not isinstance(v, str) for v in values), dtype=bool,
                              count=len(values)) if len(values) and pd.api.types.infer_dtype(col, skipna=True) \
                not in ("string", "empty") else np.zeros(len(values), dtype=bool)
            if odd.any():
                values = values.copy()
                values[odd] = [str(v) for v in values[odd]]
            columns[f.name] = pa.array(values, type=f.type, from_pandas=True)
        else:
            columns[f.name] = pa.array(col.to_numpy(), type=f.type, from_pandas=True)
    return pa.Table.from_pydict(columns, schema=schema)


def csv_text(frame: pd.DataFrame, header: bool = True) -> str:
    """A table as spreadsheet-safe CSV text (written batch by batch, the header only with the first)."""
    safe = frame.apply(_defuse)
    # CRLF line ends: the csv writer quotes a cell holding any character of the line end, so a bare CR (which a
    # spreadsheet takes as a new row) is quoted too; with "\n" alone it was not.
    return safe.to_csv(index=False, header=header, lineterminator="\r\n")


def _to_bytes(frame: pd.DataFrame, fmt: str) -> bytes:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        buf = io.BytesIO()
        pq.write_table(arrow_table(frame), buf)
        return buf.getvalue()
    return csv_text(frame).encode("utf-8")


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
