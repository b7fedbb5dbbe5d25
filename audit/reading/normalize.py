"""From a raw table to the claims frame: canonical column names, units, validation, precision and text limits.

:func:`canonical_columns` renames known columns (and their spreadsheet aliases) and notes a unit a header names;
:func:`normalize` parses every quantity into one float64 column (NaN when unknown), keeps the original text beside
it, and records invalid cells in a long table. A problem with a row never stops the batch: it makes that claim
invalid.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from audit.claims import Claims, RawTable
from audit.columns import map_unique
from audit.quantities import BY_NAME, INPUT_QUANTITIES, PRECISION_ALIASES, TEXT_FIELDS, canonical_column_and_unit
from audit.reading.common import ORIGIN_COLUMNS
from audit.resources import schema_path
from audit.units import UnitError, is_bare_number, parse_series, unit_scale

__all__ = ["canonical_columns", "normalize"]


def canonical_columns(table: RawTable) -> RawTable:
    """Rename known columns (and their spreadsheet aliases) to canonical names; the first of duplicates wins.

    A unit named in a renamed column's header (``Training time (hours)``) is noted in ``header_units`` for every
    row of the table, when it is a unit the quantity can be written in; the cells are left as written.
    """
    frame = table.frame
    renames: dict[Any, str] = {}
    taken: set[str] = set(ORIGIN_COLUMNS)
    hinted: dict[str, str] = {}
    for col in frame.columns:
        if col in ORIGIN_COLUMNS:
            continue
        canon, unit = canonical_column_and_unit(str(col))
        if canon is not None and canon not in taken:
            renames[col] = canon
            taken.add(canon)
            if unit and _unit_fits(unit, canon):
                hinted[canon] = unit
        else:
            name = str(col)
            while name in taken or name in renames.values():
                name = f"{name}_"
            renames[col] = name
            taken.add(name)
    header_units = {name: list(spans) for name, spans in table.header_units.items()}
    for canon, unit in hinted.items():
        header_units[canon] = [(0, len(frame), unit)]
    return RawTable(frame.rename(columns=renames), list(table.problems), header_units)


def _unit_fits(unit: str, canon: str) -> bool:
    """Whether a header's unit is one the quantity can be written in (``hours`` for a duration, not ``MFU``)."""
    q = BY_NAME.get(canon)
    if q is None or q.kind == "text":
        return False
    try:
        return math.isfinite(unit_scale(unit, q.kind))
    except (UnitError, ValueError):
        return False


def _one_text(v: Any) -> str | None:
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(v) else repr(float(v))
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)[:500]
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", errors="replace")
    try:
        return str(v)
    except ValueError:  # an int too long for str() (Python's digit limit)
        return f"an integer of about {int(v.bit_length() * 0.30103):,} digits"


def _as_text(series: pd.Series) -> pd.Series:
    """Cells as display text (None when absent); numbers keep their shortest repr (as ``repr(float)``)."""
    dtype = series.dtype
    if pd.api.types.is_float_dtype(dtype) or (pd.api.types.is_integer_dtype(dtype)
                                              and not isinstance(dtype, pd.CategoricalDtype)):
        # map() of a builtin over a list runs in C: no Python bytecode per row, and faster than numpy's str cast.
        if pd.api.types.is_float_dtype(dtype):
            arr = series.to_numpy(dtype=np.float64)
            out = np.array(list(map(repr, arr.tolist())), dtype=object)
            out[np.isnan(arr)] = None
        else:
            out = np.array(list(map(str, series.to_numpy().tolist())), dtype=object)
        return pd.Series(out, index=series.index, dtype=object)
    if dtype == object:
        kind = pd.api.types.infer_dtype(series, skipna=True)
        if kind == "string":  # text as read from CSV: nothing to convert
            return series.where(series.notna(), None)
        if kind == "empty":
            return pd.Series(np.full(len(series), None, dtype=object), index=series.index, dtype=object)
    return map_unique(series, _one_text)


def _header_unit_text(value: Any, unit: str) -> str | None:
    """How a bare number under a header unit is shown: with the unit it was read in (``180 hours``), so the text
    beside the value says what the number meant. None for any other cell (shown as written)."""
    if not is_bare_number(value):
        return None
    return f"{_one_text(value).strip()} {unit}"


def _parse_quantity(col: pd.Series, kind: str, spans: list[tuple[int, int, str]],
                    cell_text: np.ndarray) -> tuple[np.ndarray, pd.Series]:
    """Parse one quantity column whose rows ``spans`` were read under header units; each unit's rows are
    parsed together (each distinct cell once), and ``cell_text`` shows the unit beside their bare numbers."""
    n = len(col)
    groups: dict[str | None, np.ndarray] = {}
    covered = np.zeros(n, dtype=bool)
    for start, stop, unit in spans:
        groups.setdefault(unit, np.zeros(n, dtype=bool))[start:stop] = True
        covered[start:stop] = True
    if not covered.all():
        groups[None] = ~covered
    parsed = np.full(n, np.nan)
    errors = np.full(n, None, dtype=object)
    for unit, mask in groups.items():
        part = col if mask.all() else col[mask]
        values, messages = parse_series(part, kind, unit=unit)
        parsed[mask] = values
        errors[mask] = messages.to_numpy(dtype=object)
        if unit is not None:
            shown = map_unique(part, lambda v, unit=unit: _header_unit_text(v, unit)).to_numpy(dtype=object)
            has = pd.notna(shown)
            cell_text[np.flatnonzero(mask)[has]] = shown[has]
    return parsed, pd.Series(errors, index=col.index, dtype=object)


@lru_cache(maxsize=1)
def _text_limits() -> dict[str, int]:
    """Longest text accepted per text field: the schema's ``maxLength`` (500 where the schema sets none)."""
    schema = json.loads(schema_path("claims.schema.json").read_text(encoding="utf-8"))
    limits: dict[str, int] = {}
    for name in TEXT_FIELDS:
        prop = schema.get("properties", {}).get(name, {})
        lengths = [o["maxLength"] for o in prop.get("anyOf", [prop]) if isinstance(o, dict) and "maxLength" in o]
        limits[name] = max(lengths) if lengths else 500
    return limits


#: Text fields that may also be written as a number (``"id": 7``, a model named ``1984``), as the schema says.
_NUMBER_OK = frozenset({"id", "name"})


def _not_text(series: pd.Series, name: str) -> np.ndarray:
    """Rows whose cell is neither text nor missing (nor, for id and name, a number)."""
    dtype = series.dtype
    n = len(series)
    if pd.api.types.is_bool_dtype(dtype):
        return series.notna().to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype):
        return np.zeros(n, dtype=bool) if name in _NUMBER_OK else series.notna().to_numpy(dtype=bool)
    if dtype != object:
        return np.zeros(n, dtype=bool) if isinstance(dtype, pd.CategoricalDtype) else series.notna().to_numpy(dtype=bool)
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind in ("string", "empty"):
        return np.zeros(n, dtype=bool)
    number_ok = name in _NUMBER_OK
    return np.fromiter((v is not None and not isinstance(v, str)
                        and not (number_ok and isinstance(v, (int, float, np.integer, np.floating))
                                 and not isinstance(v, (bool, np.bool_)))
                        and not (isinstance(v, float) and math.isnan(v))
                        for v in series.to_numpy(dtype=object)), dtype=bool, count=n)


def normalize(raw: RawTable) -> Claims:
    """Turn a raw table into the claims frame: parse units, validate, and record invalid cells."""
    frame = raw.frame
    n = len(frame)
    index = pd.RangeIndex(n)
    frame = frame.reset_index(drop=True)
    invalid_rows: list[np.ndarray] = []
    invalid_fields: list[np.ndarray] = []
    invalid_msgs: list[np.ndarray] = []

    def add_invalid(mask: np.ndarray, fld: str, messages: Iterable[str] | str) -> None:
        rows = np.flatnonzero(mask)
        if len(rows) == 0:
            return
        invalid_rows.append(rows)
        invalid_fields.append(np.full(len(rows), fld, dtype=object))
        if isinstance(messages, str):
            invalid_msgs.append(np.full(len(rows), messages, dtype=object))
        else:
            invalid_msgs.append(np.asarray(list(messages), dtype=object))

    # Columns are collected in dicts and framed once: inserting them one by one costs more than parsing them.
    value_cols: dict[str, np.ndarray] = {}
    text_cols: dict[str, Any] = {}
    nothing = np.full(n, None, dtype=object)
    for name in INPUT_QUANTITIES:
        q = BY_NAME[name]
        if name not in frame.columns:
            value_cols[name] = np.full(n, np.nan)
            text_cols[name] = nothing
            continue
        col = frame[name]
        cell_text = _as_text(col).to_numpy(dtype=object)
        spans = raw.header_units.get(name)
        if spans:
            cell_text = cell_text.copy()  # may be a view of the input frame's column
            parsed, errors = _parse_quantity(col, q.kind, spans, cell_text)
        else:
            parsed, errors = parse_series(col, q.kind)
        text_cols[name] = cell_text
        parsed = np.asarray(parsed, dtype=float)
        err_mask = errors.notna().to_numpy()
        add_invalid(err_mask, name, errors[err_mask].astype(str))
        bad = np.zeros(n, dtype=bool)
        # A cell written as NaN/inf, or a number too large to represent, is not a value.
        nonfinite = ~np.isfinite(parsed) & ~np.isnan(parsed)
        add_invalid(nonfinite, name, f"{q.label} is not a finite number")
        bad |= nonfinite | err_mask
        # Only cells that read as missing can be a written NaN; look at those alone.
        maybe_nan = np.flatnonzero(np.isnan(parsed) & ~err_mask & pd.notna(cell_text))
        nan_text = np.zeros(n, dtype=bool)
        if len(maybe_nan):
            nan_text[maybe_nan] = [str(t).strip().lower() in ("nan", "-nan", "+nan") for t in cell_text[maybe_nan]]
        add_invalid(nan_text, name, f"{q.label} is NaN, not a number")
        bad |= nan_text
        finite = np.isfinite(parsed)
        neg = finite & (parsed < 0)
        add_invalid(neg & ~bad, name, f"{q.label} cannot be negative")
        bad |= neg
        if q.positive and not q.fraction:
            zero = finite & (parsed == 0)
            add_invalid(zero & ~bad, name, f"{q.label} cannot be zero")
            bad |= zero
        if q.fraction:
            zero = finite & (parsed == 0)
            add_invalid(zero & ~bad, name, f"{q.label} of zero means no useful work was done")
            bad |= zero
        if q.integer:
            with np.errstate(invalid="ignore"):  # inf - inf on cells already flagged as not finite
                frac = finite & ~bad & (np.abs(parsed - np.round(parsed)) > 1e-9 * np.maximum(1, np.abs(parsed)))
            what = " (a fraction of an accelerator)" if name == "chips" else ""
            add_invalid(frac, name, f"{q.label} must be a whole number{what}")
            bad |= frac
        value_cols[name] = np.where(bad, np.nan, parsed)
    values = pd.DataFrame(value_cols, index=index)
    text = pd.DataFrame(text_cols, index=index)

    files = frame["_file"] if "_file" in frame.columns else pd.Series([""] * n, index=index)
    rows = frame["_row"] if "_row" in frame.columns else pd.Series(np.arange(1, n + 1), index=index)
    info_cols: dict[str, Any] = {"file": files.astype(str).to_numpy(), "row": rows.astype(int).to_numpy()}
    for name in TEXT_FIELDS:
        info_cols[name] = _as_text(frame[name]).to_numpy(dtype=object) if name in frame.columns else nothing.copy()
    info = pd.DataFrame(info_cols, index=index)
    # Text fields: a boolean or structured value is not text; long values are invalid and cut for display.
    limits = _text_limits()
    for name in TEXT_FIELDS:
        if name not in frame.columns:
            continue
        add_invalid(_not_text(frame[name], name), name, f"{name} must be text")
        limit = limits.get(name, 500)
        too_long = (info[name].str.len() > limit).fillna(False).to_numpy(dtype=bool)
        if too_long.any():
            add_invalid(too_long, name, f"{name} is longer than {limit} characters")
            info.loc[too_long, name] = info.loc[too_long, name].map(lambda t: t[:limit] + "…")
    # Identity: a claim without an id is named by its file and row.
    missing_id = (info["id"].isna() | (info["id"].astype(str).str.strip() == "")).to_numpy(dtype=bool)
    if missing_id.any():
        names = map_unique(info["file"], lambda f: Path(str(f)).name if f else "row")
        info.loc[missing_id, "id"] = names[missing_id] + "#" + info.loc[missing_id, "row"].astype(str)
    info["id_given"] = ~missing_id
    # Precision: normalized where known; an unknown precision is an invalid field.
    info["precision_text"] = info["precision"]
    normalized = map_unique(info["precision"], _precision_of)
    unknown_prec = info["precision"].notna() & normalized.isna()
    add_invalid(unknown_prec.to_numpy(dtype=bool), "precision",
                [f"precision {t!r} is not one of bf16, fp16, fp8, tf32, fp32" for t in info["precision_text"][unknown_prec]])
    info["precision"] = normalized.to_numpy()

    for pos, fld, msg in raw.problems:
        mask = np.zeros(n, dtype=bool)
        if 0 <= pos < n:
            mask[pos] = True
        add_invalid(mask, fld or "claim", msg)

    known = set(INPUT_QUANTITIES) | set(TEXT_FIELDS) | set(ORIGIN_COLUMNS)
    extras = frame[[c for c in frame.columns if c not in known]].copy()
    extras.index = index

    if invalid_rows:
        invalid = pd.DataFrame({
            "row": np.concatenate(invalid_rows).astype(int),
            "field": np.concatenate(invalid_fields),
            "message": np.concatenate(invalid_msgs),
        })
        # A schema error and a unit error on the same cell say the same thing: keep the first.
        invalid = invalid.drop_duplicates(subset=["row", "field"], keep="first")
        invalid = invalid.sort_values(["row", "field"], kind="stable").reset_index(drop=True)
        # A value that could not be used is not used: the claim is invalid, and no other check may rest on the
        # cell (a key given twice, hardware written as a number). A problem with the whole row (stray cells
        # that may have shifted the others, an item that is not an object) voids all its figures.
        for fld, rows_of in invalid.groupby("field", sort=True)["row"]:
            rows_at = rows_of.to_numpy()
            if fld in values.columns:
                values.loc[rows_at, fld] = np.nan
            elif fld in ("hardware", "precision"):
                info.loc[rows_at, fld] = None
            elif fld == "claim":
                values.loc[rows_at, :] = np.nan
                info.loc[rows_at, ["hardware", "precision"]] = None
    else:
        invalid = pd.DataFrame({"row": pd.Series([], dtype=int), "field": pd.Series([], dtype=object),
                                "message": pd.Series([], dtype=object)})
    return Claims(values=values, text=text, info=info, extras=extras, invalid=invalid)


def _precision_of(text: str | None) -> str | None:
    """The canonical precision a text names (``'bfloat16 (weights)'`` -> ``'bf16'``), or None."""
    if text is None:
        return None
    key = "".join(ch for ch in str(text).lower() if ch.isalnum())
    if key in PRECISION_ALIASES:
        return PRECISION_ALIASES[key]
    for alias, canon in PRECISION_ALIASES.items():
        # "bfloat16 (parameters and activations)" -> bf16: the leading word names the format.
        if key.startswith(alias):
            return canon
    return None
