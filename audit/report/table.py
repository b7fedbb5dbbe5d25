"""Tabular output: one row per claim (``--format csv|parquet``) and one row per finding (``--findings FILE``).

Every input row appears exactly once in the claims table, in input order, so it joins back to the input.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from audit.columns import map_unique
from audit.records import SHOWN_QUANTITIES, iter_findings
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
    f = result.findings
    bad = f[f["severity"].astype(str).isin(["warning", "error"])]
    codes = bad.groupby("row")["rule"].agg(lambda s: " ".join(sorted(set(s))))
    out["rules"] = codes.reindex(np.arange(len(result))).fillna("").to_numpy()
    counts = f.groupby(["row", f["severity"].astype(str)]).size().unstack(fill_value=0)
    for sev in ("error", "warning"):
        col = counts[sev] if sev in counts.columns else pd.Series(dtype=int)
        out[f"{sev}s"] = col.reindex(np.arange(len(result))).fillna(0).astype(int).to_numpy()
    return out


def findings_frame(result: AuditResult) -> pd.DataFrame:
    """One row per finding, with its message and formula."""
    records = [f.to_dict() for f in iter_findings(result)]
    columns = ["claim_id", "rule", "name", "severity", "quantity", "claimed", "expected", "ratio", "message", "formula"]
    return pd.DataFrame.from_records(records, columns=columns)


#: A CSV cell starting with one of these is run as a formula by spreadsheet programs (OWASP "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _defuse_text(value: object) -> object:
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)  # "-3.5" is a number, not a formula
        return value
    except ValueError:
        return "'" + value


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
    return safe.to_csv(index=False, lineterminator="\n").encode("utf-8")


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
