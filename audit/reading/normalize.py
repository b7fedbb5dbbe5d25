"""From a raw table to the claims frame: units, validation, precision and text limits.

:func:`normalize` parses every quantity into one float64 column (NaN when unknown), keeps the original text beside
it, and records invalid cells in a long table. A problem with a row never stops the batch: it makes that claim
invalid. Columns are given their canonical names before (:func:`audit.reading.fields.canonical_columns`).
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, NamedTuple

import numpy as np
import pandas as pd

from audit.catalog import uncounted_systems
from audit.claims import Claims, RawTable, distinct_texts, texts_of_numbers
from audit.columns import map_unique, objects_of
from audit.quantities import BY_NAME, INPUT_QUANTITIES, PER_CHIP_SCOPE, PRECISION_ALIASES, TEXT_FIELDS
from audit.reading.fields import field_of, per_chip_header_unit, refused_header_unit, unit_fits
from audit.resources import schema_path
from audit.units import (BOUND_RE2, RANGE_RE2, bound_of, is_bare_number, is_placeholder, parse_distinct, parse_series,
                         per_device_rate, range_of, strip_qualifiers)

if TYPE_CHECKING:  # pyarrow is imported on first use
    import pyarrow as pa

__all__ = ["normalize"]


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


class Texts(NamedTuple):
    """A column's cells as display text (:func:`column_texts`), with which cells hold one and what the column held
    (``pd.api.types.infer_dtype`` of an object column, else ""), so that no later step looks at every cell again."""

    texts: np.ndarray
    present: np.ndarray
    kind: str


def whole_numbers(series: pd.Series) -> pd.Series:
    """A float column's whole numbers as Python integers, cell by cell (the others as they are, None where
    missing): a Parquet column of integer ids with a null among them reaches pandas as floats, and its ids 1 and 3
    were named "1.0" and "3.0". Each cell on its own, so a claim is named the same alone as in any batch; a
    column of objects (JSON's numbers, 1984 and 1984.0 as written) keeps each cell's own text."""
    if not pd.api.types.is_float_dtype(series.dtype):
        return series
    values = series.to_numpy(dtype=np.float64)
    whole = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**53)
    if not whole.any():
        return series
    out = series.astype(object).where(series.notna(), None).to_numpy(dtype=object)
    at = np.flatnonzero(whole)
    out[at] = values[at].astype(np.int64).tolist()
    return pd.Series(out, index=series.index, dtype=object)


def column_texts(series: pd.Series, arrow: "pa.Array | None" = None) -> Texts:
    """Cells as display text (None when absent); numbers keep their shortest repr (as ``repr(float)``).
    ``arrow``: the Arrow string column the cells were converted from (:class:`audit.claims.ArrowText`), when they
    were: which cells hold text is then Arrow's validity, not a look at every cell."""
    dtype = series.dtype
    n = len(series)
    if arrow is not None and dtype == object:  # Python strings, None where missing (Arrow's conversion)
        present = arrow.is_valid().to_numpy(zero_copy_only=False)
        # What infer_dtype says of such a column: "empty" when no cell holds text.
        return Texts(series.to_numpy(dtype=object), present, "string" if present.any() else "empty")
    if pd.api.types.is_float_dtype(dtype) or (pd.api.types.is_integer_dtype(dtype)
                                              and not isinstance(dtype, pd.CategoricalDtype)):
        # map() of a builtin over a list runs in C: no Python bytecode per row, and faster than numpy's str cast.
        if pd.api.types.is_float_dtype(dtype):
            numbers = series.to_numpy(dtype=np.float64)
            return Texts(texts_of_numbers(numbers), ~np.isnan(numbers), "")
        if isinstance(dtype, np.dtype) and dtype.kind == "i":
            arr = series.to_numpy()
            return Texts(distinct_texts(arr.astype(np.int64, copy=False), lambda v: v, str), np.ones(n, dtype=bool),
                         "")
        out = np.array(list(map(str, series.to_numpy().tolist())), dtype=object)
        return Texts(out, pd.notna(out), "")
    if dtype == object:
        kind = pd.api.types.infer_dtype(series, skipna=True)
        if kind == "string":  # text as read from CSV or Arrow: only a missing cell other than None to replace
            values = series.to_numpy(dtype=object)
            present = ~pd.isna(values)
            absent = np.flatnonzero(~present)
            if len(absent) and not np.equal(values[absent], None).all():
                values = values.copy()
                values[absent] = None
            return Texts(values, present, kind)
        if kind == "empty":
            return Texts(np.empty(n, dtype=object), np.zeros(n, dtype=bool), kind)  # np.empty: all None
        if kind == "floating":  # floats only, NaN for missing (JSON input, in-memory records): as a float column's
            numbers = series.to_numpy(dtype=np.float64)  # a numpy float's text is its float64's, as _one_text makes
            return Texts(texts_of_numbers(numbers), ~np.isnan(numbers), kind)
    else:
        kind = ""
    out = map_unique(series, _one_text).to_numpy(dtype=object)
    return Texts(out, pd.notna(out), kind)


class Coded(NamedTuple):
    """A column of text as :func:`_coded_texts` reads it: the cells (str, None when missing), each row's code (-1
    when missing) and the distinct texts they index, in order of first appearance, as an Arrow string array."""

    texts: np.ndarray
    codes: np.ndarray
    distinct: "pa.Array"


def _coded_texts(series: pd.Series, arrow: "pa.Array | None" = None) -> Coded | None:
    """A column whose cells are all text (or missing) as Arrow's dictionary of its distinct texts: each distinct
    text is then parsed and matched once, with no Python string made of it (``pd.factorize`` of the Python strings
    costs twice Arrow's conversion and encoding). None for any other column, or one Arrow cannot hold (a lone
    surrogate, more than 2 GiB of text): the caller reads it as before. ``arrow``: the Arrow string column the
    cells were converted from, when they were (:class:`audit.claims.ArrowText`): taken as it is."""
    import pyarrow as pa

    values = series.to_numpy(dtype=object)
    if arrow is not None:
        cells = arrow
    else:
        if series.dtype != object or pd.api.types.infer_dtype(series, skipna=True) != "string":
            return None
        try:
            # from_pandas: Arrow takes None, NaN and pd.NA as missing (all missing to pandas too); any other
            # missing value pandas knows is not text, and Arrow refuses it (the column is then read as before).
            cells = pa.array(values, type=pa.string(), from_pandas=True)
        except (pa.ArrowException, UnicodeError, TypeError, ValueError):
            return None
        if not isinstance(cells, pa.Array):  # chunked: too much text for one array
            return None
    encoded = cells.dictionary_encode()
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.intp)
    absent = np.flatnonzero(codes < 0)
    if len(absent) and not np.equal(values[absent], None).all():  # missing as NaN: shown as None
        values = values.copy()
        values[absent] = None
    return Coded(values, codes, encoded.dictionary)


def cell_texts(series: pd.Series) -> pd.Series:
    """Cells as display text (None when absent); numbers keep their shortest repr (as ``repr(float)``)."""
    return pd.Series(column_texts(series).texts, index=series.index, dtype=object)


def _text_lengths(texts: np.ndarray, present: np.ndarray | None = None, arrow: "pa.Array | None" = None
                  ) -> np.ndarray:
    """The length of each text (str, or None when absent: -1), with no Python code per cell. ``present``: which
    texts are not None, when known; ``arrow``: the Arrow string column the texts were converted from, when they
    were (its code points, as ``len`` counts them)."""
    if arrow is not None:
        import pyarrow.compute as pc

        return pc.utf8_length(arrow).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    out = np.full(len(texts), -1, dtype=np.int64)
    at = np.flatnonzero(pd.notna(texts) if present is None else present)
    out[at] = np.fromiter(map(len, texts[at].tolist()), dtype=np.int64, count=len(at))
    return out


def cut_texts(texts: np.ndarray, limit: int, present: np.ndarray | None = None, arrow: "pa.Array | None" = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """Texts longer than ``limit`` characters cut there (with "…" after), and which were. ``present``: which
    texts are not None, when known; ``arrow``: the Arrow string column they were converted from, when they were."""
    too_long = _text_lengths(texts, present, arrow) > limit
    if too_long.any():
        texts = texts.copy()
        texts[too_long] = [t[:limit] + "…" for t in texts[too_long]]
    return texts, too_long


def text_limit(name: str) -> int:
    """The longest text the schema accepts in text field ``name``."""
    return _text_limits().get(name, 500)


def named_ids(ids: np.ndarray, files: np.ndarray, rows: np.ndarray, present: np.ndarray | None = None,
              arrow: "pa.Array | None" = None) -> tuple[np.ndarray, np.ndarray]:
    """Each claim's id, a claim without one (absent, empty or blank) named by its file and row (``runs.csv#12``),
    and whether the claim gave it. ``present``: which ids are not None, when known; ``arrow``: the Arrow string
    column the ids were converted from, when they were."""
    missing = _blank(ids, present, arrow)
    if missing.any():
        names = map_unique(pd.Series(files[missing], dtype=object), lambda f: Path(str(f)).name if f else "row")
        ids = ids.copy()
        ids[missing] = (names + "#" + pd.Series(rows[missing]).astype(str)).to_numpy(dtype=object)
    return ids, ~missing


def _blank(texts: np.ndarray, present: np.ndarray | None = None, arrow: "pa.Array | None" = None) -> np.ndarray:
    """Texts (str or None) that are absent, empty or only whitespace (what ``str.strip()`` leaves empty).
    ``present``: which texts are not None, when known; ``arrow``: the Arrow string column they were converted from,
    when they were."""
    out = np.ones(len(texts), dtype=bool)
    given = pd.notna(texts) if present is None else present
    if arrow is not None:
        import pyarrow.compute as pc

        # A text that starts with a printable ASCII character other than the space ("!" to "~") is not blank
        # (no such character is whitespace to str.isspace): only the others are looked at one by one.
        first = pc.utf8_slice_codeunits(arrow, 0, 1)
        plain = pc.and_(pc.greater(first, " "), pc.less(first, "\x7f")).fill_null(False).to_numpy(
            zero_copy_only=False)
        out[plain] = False
        given = given & ~plain
    at = np.flatnonzero(given)
    given = texts[at].tolist()
    out[at] = (np.fromiter(map(len, given), dtype=np.int64, count=len(given)) == 0) | np.fromiter(
        map(str.isspace, given), dtype=bool, count=len(given))
    return out


def _header_unit_text(value: Any, unit: str) -> str | None:
    """How a bare number under a header unit is shown: with the unit it was read in (``180 hours``), so the text
    beside the value says what the number meant. None for any other cell (shown as written)."""
    if not is_bare_number(value):
        return None
    return f"{_one_text(value).strip()} {unit}"


def _header_units(name: str, source: pd.Categorical | None, mapped: dict[str, str | None] | None = None
                  ) -> tuple[np.ndarray, list[str | None]] | None:
    """The unit each row's header names for ``name`` (``Training time (hours)``: hours), as codes into a list of
    units (None: no unit); None when no header of the column names a unit the quantity can be written in.
    ``mapped``: the unit a column map gives a header (it replaces the one in the header's brackets)."""
    if source is None:
        return None
    units = [unit if unit and unit_fits(unit, name) else None for unit in _units_of_headers(source, mapped)]
    if not any(units):
        return None
    distinct = list(dict.fromkeys(units))
    remap = np.array([distinct.index(u) for u in units], dtype=np.int16)
    return remap[np.asarray(source.codes)], distinct


def _units_of_headers(source: pd.Categorical, mapped: dict[str, str | None] | None) -> list[str | None]:
    """The unit each header a column was read from names: a column map's for the headers it maps, else the one in
    the header's brackets (None: no unit)."""
    return [mapped[str(h)] if mapped and str(h) in mapped else field_of(str(h))[1] for h in source.categories]


def _per_chip_headers(col: pd.Series, cell_text: np.ndarray, source: pd.Categorical | None,
                      mapped: dict[str, str | None] | None) -> tuple[pd.Series, np.ndarray]:
    """A throughput column under a header naming one accelerator's rate ("Throughput (tokens/s/GPU)"): its bare
    numbers written with that unit ("7535 tokens/s/GPU"), as the per-accelerator reading of a cell takes them."""
    if source is None:
        return col, cell_text
    units = _units_of_headers(source, mapped)
    per_chip = [bool(u) and per_chip_header_unit(u, "throughput_tokens_per_s") for u in units]
    if not any(per_chip):
        return col, cell_text
    codes = np.asarray(source.codes)
    under = np.asarray(per_chip, dtype=bool)[codes]
    bare = map_unique(col, lambda v: v is not None and is_bare_number(v)).to_numpy(dtype=bool)
    rows = np.flatnonzero(under & bare)
    if not len(rows):
        return col, cell_text
    cell_text = cell_text.copy()
    col = col.astype(object).copy()
    for k in np.flatnonzero(per_chip):  # one pass per header, not per row
        at = rows[codes[rows] == k]
        written = (pd.Series(cell_text[at], dtype=object).str.strip() + f" {units[k]}").to_numpy(dtype=object)
        cell_text[at] = written
        col.iloc[at] = written
    return col, cell_text


def _refused_by_header(name: str, source: pd.Categorical | None, mapped: dict[str, str | None] | None,
                       col: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """The bare numbers of a column read under a header whose unit says they are not the quantity ("Cost (EUR)",
    "chips (nodes)"), with why; None when no header of the column says so."""
    if source is None:
        return None
    reasons: list[str | None] = []
    for header, unit in zip(source.categories, _units_of_headers(source, mapped)):
        why = refused_header_unit(unit, name) if unit else None
        reasons.append(None if why is None else f"the header {str(header)!r} gives the unit {unit!r}: {why}")
    if not any(reasons):
        return None
    per_row = np.asarray(reasons, dtype=object)[np.asarray(source.codes)]
    bare = map_unique(col, lambda v: v is not None and is_bare_number(v)).to_numpy(dtype=bool)
    rows = pd.notna(per_row) & bare
    return (rows, per_row) if rows.any() else None


#: The words of the other utilization in an MFU or HFU cell ("40% HFU" under mfu), and the field it belongs to, in
#: the syntax of Arrow's regular expressions (RE2).
_OTHER_UTILIZATION: dict[str, tuple[str, str]] = {"mfu": (r"(?i)\bhfu\b|hardware\s+flops?", "hfu"),
                                                  "hfu": (r"(?i)\bmfu\b|model\s+flops?", "mfu")}


def _names_other_utilization(name: str, cell_text: np.ndarray, coded: Coded | None = None
                             ) -> tuple[np.ndarray, np.ndarray] | None:
    """The cells of an MFU (HFU) column that name the other utilization ("40% HFU"), with why: read as the
    field's own they would check the wrong figure (the units reader accepts a utilization's name beside its
    number); None when there are none. ``coded``: the cells as :func:`_coded_texts` read them, when they were."""
    other = _OTHER_UTILIZATION.get(name)
    if other is None or (coded is None and not pd.notna(cell_text).any()):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    pattern, field = other
    if coded is not None:  # each distinct text matched once (not a copy of the column made into Arrow again)
        matched = pc.match_substring_regex(coded.distinct, pattern).to_numpy(zero_copy_only=False)
        said = np.append(matched, False)[coded.codes]  # code -1: missing
    else:
        texts = pa.array(np.where(pd.notna(cell_text), cell_text, None), type=pa.string())
        said = pc.fill_null(pc.match_substring_regex(texts, pattern), False).to_numpy(zero_copy_only=False)
    if not said.any():
        return None
    why = (f"names the {BY_NAME[field].label} ({BY_NAME[field].description}), not the {BY_NAME[name].label}: "
           f"give it as {field}")
    messages = np.full(len(said), None, dtype=object)
    messages[said] = [f"{text!r} {why}" for text in cell_text[said].tolist()]  # the few cells that do
    return said, messages


def _parse_quantity(col: pd.Series, kind: str, unit_codes: np.ndarray, units: list[str | None],
                    cell_text: np.ndarray) -> tuple[np.ndarray, pd.Series]:
    """Parse one quantity column whose rows were read under header units (``units[unit_codes[row]]``); each
    unit's rows are parsed together (each distinct cell once), and ``cell_text`` shows the unit beside their bare
    numbers."""
    n = len(col)
    parsed = np.full(n, np.nan)
    errors = np.full(n, None, dtype=object)
    for k, unit in enumerate(units):
        mask = unit_codes == k
        if not mask.any():
            continue
        part = col if mask.all() else col[mask]
        values, messages = parse_series(part, kind, unit=unit)
        parsed[mask] = values
        errors[mask] = messages.to_numpy(dtype=object)
        if unit is not None:
            shown = map_unique(part, lambda v, unit=unit: _header_unit_text(v, unit)).to_numpy(dtype=object)
            has = pd.notna(shown)
            cell_text[np.flatnonzero(mask)[has]] = shown[has]
    return parsed, pd.Series(errors, index=col.index, dtype=object)


#: A context length in thousands ("4K", "128k tokens"): contexts are powers of two, and "4K" is 4,096 (DeepSeek-V3's
#: "4K sequences" are 4,096 tokens; Llama 3.1's "128K" context is 131,072).
_BINARY_THOUSANDS_RE = re.compile(r"^\s*[~≈]?\s*[0-9]+(?:\.[0-9]+)?\s*[kK](?:\s*tokens?)?\s*$")


def _binary_thousands(parsed: np.ndarray, cell_text: np.ndarray) -> np.ndarray:
    """Sequence lengths written in K read as 1,024s: the figures parsed with K = 1,000, times 1.024 where the
    cell writes a K (read once per distinct text)."""
    kilo = map_unique(pd.Series(cell_text, dtype=object),
                      lambda t: isinstance(t, str) and _BINARY_THOUSANDS_RE.match(t) is not None).to_numpy(dtype=bool)
    return np.where(kilo, parsed * 1.024, parsed) if kilo.any() else parsed


def _say_bounds(cell_text: np.ndarray, used: np.ndarray, label: str, name: str,
                add_reading: Callable[..., None], coded: Coded | None = None) -> None:
    """Say (V011) where a figure used was written as a bound ("less than 400K GPU-hours", "over 2T tokens") or a
    range ("41-42%").
    ``coded``: the cells as :func:`_coded_texts` read them, when they were."""
    import pyarrow as pa
    import pyarrow.compute as pc

    # Arrow's regular expressions over the whole column (or its distinct texts); only the cells that match are read
    # one by one.
    texts = pa.array(cell_text, type=pa.string(), from_pandas=True) if coded is None else None

    def matching(pattern: str) -> np.ndarray:
        if texts is not None:
            return pc.match_substring_regex(texts, pattern, ignore_case=True).fill_null(False).to_numpy(
                zero_copy_only=False)
        assert coded is not None
        matched = pc.match_substring_regex(coded.distinct, pattern, ignore_case=True)
        return np.append(matched.to_numpy(zero_copy_only=False), False)[coded.codes]  # code -1: missing

    rows = np.flatnonzero(used & matching(BOUND_RE2))
    if len(rows):  # most columns have none: map_unique of nothing still costs a fixed part of a millisecond
        bounds = map_unique(pd.Series(cell_text[rows], dtype=object), bound_of).to_numpy(dtype=object)
        found, kinds = rows[pd.notna(bounds)], bounds[pd.notna(bounds)]
    else:
        found = kinds = rows
    if len(found):
        add_reading(np.isin(np.arange(len(cell_text)), found), name, [
            f"{label} written {cell_text[r]!r} is {'an upper' if k == 'upper' else 'a lower'} bound (the value is "
            f"{'at most' if k == 'upper' else 'at least'} the figure written), read as that figure: the checks that "
            f"use it hold only as bounds" for r, k in zip(found, kinds)], rule="V011")
    # A range ("41-42%") used as its middle, its half-range the figure's precision.
    rows = np.flatnonzero(used & matching(RANGE_RE2))
    if len(rows):
        ranged = map_unique(pd.Series(cell_text[rows], dtype=object),
                            lambda t: isinstance(t, str) and range_of(strip_qualifiers(t)) is not None
                            ).to_numpy(dtype=bool)
        rows = rows[ranged]
    found = rows
    if len(found):
        add_reading(np.isin(np.arange(len(cell_text)), found), name, [
            f"{label} written {cell_text[r]!r} is a range, read as its middle; the checks that use it allow for half "
            f"the range" for r in found], rule="V011")



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


#: What ``pd.api.types.infer_dtype`` says of an object column holding numbers only (ints and floats, not bools).
_NUMBER_KINDS = frozenset({"integer", "floating", "mixed-integer-float"})


#: Text fields that may also be written as a number (``"id": 7``, a model named ``1984``), as the schema says.
_NUMBER_OK = frozenset({"id", "name"})


def _not_text(series: pd.Series, name: str, kind: str | None = None) -> np.ndarray:
    """Rows whose cell is neither text nor missing (nor, for id and name, a number). ``kind``: what
    ``pd.api.types.infer_dtype`` says of an object column, when known."""
    dtype = series.dtype
    n = len(series)
    if pd.api.types.is_bool_dtype(dtype):
        return series.notna().to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype):
        return np.zeros(n, dtype=bool) if name in _NUMBER_OK else series.notna().to_numpy(dtype=bool)
    if dtype != object:
        return np.zeros(n, dtype=bool) if isinstance(dtype, pd.CategoricalDtype) else series.notna().to_numpy(dtype=bool)
    kind = kind or pd.api.types.infer_dtype(series, skipna=True)
    if kind in ("string", "empty"):
        return np.zeros(n, dtype=bool)
    number_ok = name in _NUMBER_OK
    return np.fromiter((v is not None and not isinstance(v, str)
                        and not (number_ok and isinstance(v, (int, float, np.integer, np.floating))
                                 and not isinstance(v, (bool, np.bool_)))
                        and not (isinstance(v, float) and math.isnan(v))
                        for v in series.to_numpy(dtype=object)), dtype=bool, count=n)


def arrow_of(raw: RawTable, name: str, series: pd.Series) -> "pa.Array | None":
    """The Arrow string column the cells of ``series`` (column ``name`` of ``raw``) were converted from, when they
    were and are still those cells (:class:`audit.claims.ArrowText`); else None."""
    held = raw.arrow_text.get(name)
    return None if held is None else held.of(series)


def _map_distinct(arrow: "pa.Array", fn: Callable[[Any], Any]) -> np.ndarray:
    """``fn`` of each cell of an Arrow string column (None where missing), as an object array: called once per
    distinct text, as :func:`audit.columns.map_unique` calls it on the Python strings (equal strings are equal
    UTF-8), with no hashing of the Python strings."""
    encoded = arrow.dictionary_encode()
    distinct = encoded.dictionary.to_pylist()
    results = np.empty(len(distinct) + 1, dtype=object)
    for k, value in enumerate(distinct):
        results[k] = fn(value)
    results[-1] = fn(None)  # code -1: missing
    return results[encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.intp)]


#: Words after a figure that name what the field itself counts ("90 epochs", "1.28M images"): a count's own unit,
#: read as the bare number. Only where the word cannot mean another quantity: "256M sequences" in a dataset size
#: are not its tokens (AudioLM), so sequences, examples and samples stay unread units.
_OWN_UNIT_WORDS: dict[str, re.Pattern[str]] = {
    "epochs": re.compile(r"\s*(?:epochs?|passes)\s*$", re.IGNORECASE),
    "dataset_size": re.compile(r"\s*(?:images?|photos?|videos?)\s*$", re.IGNORECASE),
    # The count the field is: DeepSeek-V3's "37B activated", Llama 4's "17B (active)" as active parameters, "671B
    # total" as parameters. The word of the other count stays unread and refused ("37B active" as params).
    # Only after a text without brackets: "17B (Activated) 109B (Total)" is two figures, refused as written whole.
    "active_params": re.compile(r"^([^()]*?)\s*\(?\s*(?:active|activated)\s*\)?\s*$", re.IGNORECASE),
    "params": re.compile(r"^([^()]*?)\s*\(?\s*total\s*\)?\s*$", re.IGNORECASE),
}


def _without_own_unit(name: str, values: Any) -> Any:
    """``values`` (a column, or the Arrow array of its distinct texts) with a field's own unit word removed from each
    text (:data:`_OWN_UNIT_WORDS`): the text shown stays as written."""
    pattern = _OWN_UNIT_WORDS.get(name)
    if pattern is None:
        return values
    kept = r"\1" if pattern.groups else ""  # the text before the word, where the pattern captures it
    if isinstance(values, pd.Series):
        if values.dtype != object:
            return values
        return map_unique(values, lambda v: pattern.sub(kept, v) if isinstance(v, str) else v)
    import pyarrow.compute as pc

    return pc.replace_substring_regex(values, pattern="(?i)" + pattern.pattern, replacement=kept)


def normalize(raw: RawTable) -> Claims:
    """Turn a raw table into the claims frame: parse units, validate, and record invalid cells."""
    frame = raw.frame
    n = len(frame)
    index = pd.RangeIndex(n)
    if not (isinstance(frame.index, pd.RangeIndex) and frame.index.equals(index)):
        frame = frame.reset_index(drop=True)  # a copy of every column: only when the rows are numbered otherwise
    invalid_rows: list[np.ndarray] = []
    invalid_fields: list[np.ndarray] = []
    invalid_msgs: list[np.ndarray] = []

    reading_rows: list[int] = []
    reading_fields: list[str] = []
    reading_msgs: list[str] = []
    reading_rules: list[str] = []

    def add_reading(mask: np.ndarray, fld: str, messages: Iterable[str], rule: str = "V003") -> None:
        """How cells were read, said as an info finding: read as *not stated*, with why (V003: not invalid, not
        used), or a figure written as a bound (V011: used as the number written)."""
        for row, message in zip(np.flatnonzero(mask), messages):
            reading_rows.append(int(row))
            reading_fields.append(fld)
            reading_msgs.append(message)
            reading_rules.append(rule)

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

    # Columns are written into one array per frame (column-major), each wrapped once as a single block: inserting
    # columns one by one, or framing a dict of them (pandas then copies them into a block), costs more than parsing.
    per_device_rows = np.empty(0, dtype=int)  # throughputs written per accelerator ("3,000 tokens/s/GPU")
    notes = list(raw.notes)
    value_a = np.full((n, len(INPUT_QUANTITIES)), np.nan, order="F")
    text_a = np.empty((n, len(INPUT_QUANTITIES)), dtype=object, order="F")  # np.empty: all None
    numbers: dict[str, np.ndarray] = {}
    for j, name in enumerate(INPUT_QUANTITIES):
        q = BY_NAME[name]
        if name not in frame.columns:
            continue
        col = frame[name]
        header_units = _header_units(name, raw.sources.get(name), raw.header_units)
        coded = None  # the column's distinct texts in Arrow and each row's code, when read from them
        error_mask = None  # which cells did not read, when known without a look at every cell
        number_cells = False  # an object column of Python numbers only, shown as written (in-memory records)
        if header_units is None and pd.api.types.is_float_dtype(col.dtype):
            # Number cells: their texts (reprs) are made only if asked for (Claims.text); nothing below reads
            # the text of a float column.
            numbers[name] = col.to_numpy(dtype=np.float64)
            cell_text, present = np.empty(n, dtype=object), np.zeros(n, dtype=bool)  # np.empty: all None
        elif header_units is None and name != "throughput_tokens_per_s" and (
                coded := _coded_texts(col, arrow_of(raw, name, col))) is not None:
            # Text cells: each distinct one read once from Arrow's dictionary of them, as parse_series reads them.
            cell_text, present = coded.texts, coded.codes >= 0
            parsed_u, errors_u = parse_distinct(_without_own_unit(name, coded.distinct), q.kind)
            parsed = parsed_u[coded.codes]
            error_mask = np.not_equal(errors_u, None)[coded.codes]
            errors = pd.Series(errors_u[coded.codes], dtype=object)
        else:
            cell_text, present, kind = column_texts(col)
            number_cells = header_units is None and name != "throughput_tokens_per_s" and kind in _NUMBER_KINDS
        if name == "throughput_tokens_per_s":
            col, cell_text = _per_chip_headers(col, cell_text, raw.sources.get(name), raw.header_units)
            present = pd.notna(cell_text)
        if name == "throughput_tokens_per_s" and col.dtype == object:
            # "3,000 tokens/s/GPU": the rate of one accelerator, as a throughput_scope of "per GPU" says (the engine
            # multiplies it by the chips); read without its suffix, the row's scope set from it below.
            per_device = map_unique(pd.Series(cell_text, dtype=object), per_device_rate).to_numpy(dtype=object)
            per_device_rows = np.flatnonzero(pd.notna(per_device))
            if len(per_device_rows):
                col = col.copy()
                col.iloc[per_device_rows] = per_device[per_device_rows]
        if header_units is not None:
            cell_text = cell_text.copy()  # may be a view of the input frame's column
            parsed, errors = _parse_quantity(col, q.kind, *header_units, cell_text)
            present = pd.notna(cell_text)
        elif coded is None:
            parsed, errors = parse_series(_without_own_unit(name, col), q.kind)
        text_a[:, j] = cell_text
        parsed = np.asarray(parsed, dtype=float)
        if name == "seq_len" and not pd.api.types.is_numeric_dtype(col.dtype):
            parsed = _binary_thousands(parsed, cell_text)
        ambiguous = None
        if q.fraction:
            parsed, ambiguous = _bare_percentages(name, parsed, cell_text, name in numbers, header_units, raw, notes)
        refused = _refused_by_header(name, raw.sources.get(name), raw.header_units, col)
        refused = _refusing(_refusing(refused, ambiguous), _names_other_utilization(name, cell_text, coded))
        if refused is not None:
            rows, messages = refused
            parsed = np.where(rows, np.nan, parsed)
            errors = errors.copy()
            errors[rows] = messages[rows]
        # A column of numbers (not booleans) reads with no error, and its text is None exactly where it holds NaN
        # (:func:`cell_texts`): neither needs a look at every cell.
        numbers_only = (pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype)
                        and not pd.api.types.is_complex_dtype(col.dtype))
        err_mask = (np.zeros(n, dtype=bool) if numbers_only and refused is None
                    else error_mask if error_mask is not None and refused is None else errors.notna().to_numpy())
        listed: list[int] = []  # cells listing several figures: said below, not placeholders
        if err_mask.any():
            # A cell listing several figures ("2260275840,2290000001": Epoch AI gives alternatives so) is not a
            # malformed number: the same figure twice is that figure; different ones are not used, and said so.
            several = _several_numbers(cell_text, err_mask)
            if several:
                parsed = parsed.copy()
                for row, figures in several.items():
                    err_mask[row] = False
                    listed.append(row)
                    same = len(set(figures)) == 1
                    parsed[row] = figures[0] if same else np.nan
                    parts = [f"{f:,.0f}" if f.is_integer() else f"{f:g}" for f in figures]
                    shown = "; ".join(parts)
                    add_reading(np.arange(n) == row, name, [
                        f"{q.label} lists the same figure twice ({shown}): read as {parts[0]}" if same
                        else f"{q.label} lists {len(figures)} different figures ({shown}): not used; give one to "
                             f"check it"])
        add_invalid(err_mask, name, errors[err_mask].astype(str))
        bad = np.zeros(n, dtype=bool)
        # A cell written as NaN/inf, or a number too large to represent, is not a value.
        nonfinite = ~np.isfinite(parsed) & ~np.isnan(parsed)
        add_invalid(nonfinite, name, f"{q.label} is not a finite number")
        bad |= nonfinite | err_mask
        # Only cells that read as missing can be a written NaN; look at those alone.
        maybe_nan = (np.empty(0, dtype=int) if numbers_only
                     else np.flatnonzero(np.isnan(parsed) & ~err_mask & present))
        nan_text = np.zeros(n, dtype=bool)
        if len(maybe_nan):
            nan_text[maybe_nan] = [str(t).strip().lower() in ("nan", "-nan", "+nan") for t in cell_text[maybe_nan]]
        add_invalid(nan_text, name, f"{q.label} is NaN, not a number")
        bad |= nan_text
        # The rest read as missing although they hold text: placeholders ("TBD", "n/a", "-"), said, not dropped.
        placeholder = maybe_nan[~nan_text[maybe_nan] & ~np.isin(maybe_nan, listed)] if len(maybe_nan) else maybe_nan
        if len(placeholder):  # an empty or blank text is simply empty
            placeholder = placeholder[[bool(str(cell_text[r]).strip()) for r in placeholder]]
        if len(placeholder):
            add_reading(np.isin(np.arange(n), placeholder), name, [
                f"{q.label} written {str(cell_text[r]).strip()!r}: a placeholder, read as not stated"
                for r in placeholder])
        finite = np.isfinite(parsed)
        neg = finite & (parsed < 0)
        add_invalid(neg & ~bad, name, f"{q.label} cannot be negative")
        bad |= neg
        if name == "finetune_compute_flops":
            # Epoch AI writes 0 where a model had no fine-tuning (FunSearch: PaLM 2 sampled, not trained).
            zero = finite & (parsed == 0) & ~bad
            add_reading(zero, name, [f"{q.label} 0 read as no fine-tuning: not a fine-tune's compute, not used"]
                        * int(zero.sum()))
            bad |= zero
        elif name == "co2_tonnes":
            # Meta's model cards state "market-based" emissions of 0 t CO2eq (renewable energy matched to the use):
            # an accounting figure, not the emissions of the energy used, which E006 weighs.
            zero = finite & (parsed == 0) & ~bad
            add_reading(zero, name, [f"{q.label} 0 read as not stated: a market-based figure (renewable energy "
                                     f"matched to the use) is accounting, not the emissions of the energy used"]
                        * int(zero.sum()))
            bad |= zero
        elif q.positive and not q.fraction:
            zero = finite & (parsed == 0)
            # The cell quoted (a duration rounded to 0.0 days in an export is the usual cause), the few that are.
            add_invalid(zero & ~bad, name, [
                f"{q.label} cannot be zero (written {str(cell_text[r]) if cell_text[r] is not None else '0'!r}): "
                f"a figure rounded to nothing needs more digits; an unknown one, an empty cell"
                for r in np.flatnonzero(zero & ~bad).tolist()])
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
        if not numbers_only and not number_cells:  # a number's repr or str() writes no bound and no range
            _say_bounds(cell_text, ~bad & ~err_mask & ~np.isnan(parsed), q.label, name, add_reading, coded)
        value_a[:, j] = np.where(bad, np.nan, parsed)
    values = pd.DataFrame(value_a, index=index, columns=list(INPUT_QUANTITIES), dtype=float, copy=False)
    text = pd.DataFrame(text_a, index=index, columns=list(INPUT_QUANTITIES), dtype=object, copy=False)

    files = raw.files if raw.files is not None else objects_of(n, "")
    rows = raw.rows if raw.rows is not None else np.arange(1, n + 1)
    info_a = np.empty((n, 1 + len(TEXT_FIELDS)), dtype=object, order="F")  # np.empty: all None
    info_a[:, 0] = np.asarray(files, dtype=object)
    read: dict[str, Texts] = {}  # each text field's cells as read, with which hold text
    arrows: dict[str, pa.Array] = {}  # the Arrow string columns they were converted from, where they were
    for j, name in enumerate(TEXT_FIELDS, start=1):
        if name in frame.columns:
            if (arrow := arrow_of(raw, name, frame[name])) is not None:
                arrows[name] = arrow
            read[name] = column_texts(whole_numbers(frame[name]) if name in _NUMBER_OK else frame[name], arrow)
            info_a[:, j] = read[name].texts
            if name == "hardware":  # "N/A", "unknown", "-": no accelerator named, not an unknown one
                said = info_a[:, j]
                held = (map_unique(pd.Series(said, dtype=object), is_placeholder).to_numpy(dtype=bool)
                        if arrow is None else _map_distinct(arrow, is_placeholder).astype(bool))
                if held.any():
                    add_reading(held, name, [f"Hardware written {str(t).strip()!r}: a placeholder, no accelerator "
                                             f"named" for t in said[held]])
                    info_a[:, j] = np.where(held, None, said)
                    read[name] = read[name]._replace(present=read[name].present & ~held)
                    arrows.pop(name, None)  # no longer its cells
                # A count of systems of a size the text does not give ("H100 (96 nodes)"): the accelerator is read,
                # the count is not (no chips), and that is said rather than dropped, unless the claim gives its
                # chips ("8xH100 nodes" beside a GPU count: a team's sheet said it on 38 honest rows of 720).
                said = info_a[:, j]
                systems = (_map_distinct(arrows[name], uncounted_systems) if name in arrows
                           else map_unique(pd.Series(said, dtype=object), uncounted_systems).to_numpy(dtype=object))
                counted = pd.notna(systems) & np.isnan(value_a[:, INPUT_QUANTITIES.index("chips")])
                if counted.any():
                    add_reading(counted, name, [
                        f"Hardware written {str(t).strip()!r}: its count of {n} is not read as accelerators (how "
                        f"many each holds is not given); give chips" for t, n in zip(said[counted], systems[counted])])
    info = pd.DataFrame(info_a, index=index, columns=["file", *TEXT_FIELDS], dtype=object, copy=False)
    info.insert(1, "row", np.asarray(rows, dtype=int))
    # Text fields: a boolean or structured value is not text; long values are invalid and cut for display.
    for name in TEXT_FIELDS:
        if name not in frame.columns:
            continue
        add_invalid(_not_text(frame[name], name, read[name].kind), name, f"{name} must be text")
        limit = text_limit(name)
        texts, too_long = cut_texts(info[name].to_numpy(dtype=object), limit, read[name].present, arrows.get(name))
        if too_long.any():
            add_invalid(too_long, name, f"{name} is longer than {limit} characters")
            info[name] = texts
            arrows.pop(name, None)  # no longer its cells
    ids, given = named_ids(info["id"].to_numpy(dtype=object), info["file"].to_numpy(dtype=object),
                           info["row"].to_numpy(), read["id"].present if "id" in read else None, arrows.get("id"))
    info["id"] = ids
    info["id_given"] = given
    _scope_from_units(info, per_device_rows, add_invalid)
    # Precision: normalized where it is recognised; text that names none ("Unknown", "n/a") is "not stated", never
    # an invalid claim: the engine then assumes the accelerator's usual precision and says so.
    info["precision_text"] = info["precision"]
    info["precision"] = (map_unique(info["precision"], _precision_of).to_numpy() if "precision" not in arrows
                         else _map_distinct(arrows["precision"], _precision_of))

    problems = [(pos, fld, msg) for pos, fld, msg in raw.problems if 0 <= pos < n]
    if problems:  # one array each, not a mask per problem (a batch may have a problem on every row)
        invalid_rows.append(np.array([p[0] for p in problems], dtype=int))
        invalid_fields.append(np.array([p[1] or "claim" for p in problems], dtype=object))
        invalid_msgs.append(np.array([p[2] for p in problems], dtype=object))

    known = set(INPUT_QUANTITIES) | set(TEXT_FIELDS)
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
        invalid["message"] = _naming_headers(invalid, raw.sources)
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
    readings = pd.DataFrame({"row": pd.Series(reading_rows, dtype=int), "field": pd.Series(reading_fields, dtype=object),
                             "message": pd.Series(reading_msgs, dtype=object),
                             "rule": pd.Series(reading_rules, dtype=object)})
    return Claims(values=values, stated_text=text, info=info, extras=extras, invalid=invalid,
                  unread_columns=list(raw.unread), notes=notes, readings=readings, numbers_written=numbers,
                  cut=raw.cut)


def _refusing(refused: tuple[np.ndarray, np.ndarray] | None, more: tuple[np.ndarray, np.ndarray] | None
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """Refused cells (mask, messages) with ``more`` of them, whose messages win where both refuse a cell."""
    if more is None or refused is None:
        return refused if more is None else more
    return refused[0] | more[0], np.where(more[0], more[1], refused[1])


def _bare_percentages(name: str, parsed: np.ndarray, cell_text: np.ndarray, numbers_only: bool,
                      header_units: tuple[np.ndarray, list[str | None]] | None, raw: RawTable,
                      notes: list[tuple[str, str]]) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """A utilization (MFU, HFU: a fraction of 1) written as a number from 1 to 100 with no unit and no header
    unit: a percentage with its sign left off (a run sheet's ``reported_mfu`` of 42.5), read as one (÷ 100), and
    said once per file and header (``notes``). Cell by cell, so a claim reads the same alone as in any batch. A
    figure above 100 is no percentage of a utilization either: left as written for U001 to call impossible.
    ``numbers_only``: the column holds number cells (each one a bare number).

    Returns the figures, and the cells refused with their messages (None: none): a bare 1 is either reading at
    once (100 % as a fraction, 1 % as a percentage), two figures a hundred times apart, and a claim should not
    pass on either guess (read as 100 %, its one digit let it agree with an implied 47 %)."""
    candidate = (parsed >= 1) & (parsed <= 100)
    if header_units is not None:  # a header naming a unit ("MFU (%)") has said what its numbers are
        codes, units = header_units
        candidate &= np.equal(np.asarray(units, dtype=object), None)[codes]
    rows = np.flatnonzero(candidate)
    if not len(rows):
        return parsed, None
    if not numbers_only:
        rows = rows[map_unique(pd.Series(cell_text[rows], dtype=object), is_bare_number).to_numpy(dtype=bool)]
        if not len(rows):
            return parsed, None
    q = BY_NAME[name]
    ambiguous = None
    one = parsed[rows] == 1
    if one.any():
        mask = np.zeros(len(parsed), dtype=bool)
        mask[rows[one]] = True
        messages = np.full(len(parsed), None, dtype=object)
        messages[rows[one]] = [f"{q.label} written {t!r} is 100 % as a fraction of 1 and 1 % as a percentage: write "
                               f"100% or 1%" for t in cell_text[rows[one]].tolist()]
        ambiguous = (mask, messages)
        rows = rows[~one]
        if not len(rows):
            return parsed, ambiguous
    parsed = parsed.copy()
    parsed[rows] /= 100
    files = raw.files[rows] if raw.files is not None else np.full(len(rows), "<input>", dtype=object)
    source = raw.sources.get(name)
    headers = (np.asarray(source.categories, dtype=object)[np.asarray(source.codes)[rows]] if source is not None
               else np.full(len(rows), name, dtype=object))
    for file, header in dict.fromkeys(zip(files.tolist(), headers.tolist())):
        notes.append((str(file), f"{str(header)!r}: {q.label} figures from 1 to 100 written without a unit are read "
                                 f"as percentages ({q.label} is a fraction of 1: 42.5 is 42.5 %); a header such as "
                                 f"'{header} (%)' says so"))
    return parsed, ambiguous


#: The scope a throughput written per accelerator gets when the claim gives none.
UNIT_SCOPE = "per accelerator (the throughput's unit says so)"


def _scope_from_units(info: pd.DataFrame, rows: np.ndarray, add_invalid: Callable[..., None]) -> None:
    """The throughput scope of the claims whose throughput is written per accelerator (``rows``): per
    accelerator where they give none; a scope that says otherwise ("cluster") contradicts the unit."""
    if not len(rows):
        return
    scope = pd.Series(info["throughput_scope"].to_numpy(dtype=object)[rows], dtype=object)
    given = scope.notna().to_numpy()
    other = given & ~scope.fillna("").astype(str).str.contains(PER_CHIP_SCOPE).to_numpy(dtype=bool)
    mask = np.zeros(len(info), dtype=bool)
    mask[rows[other]] = True
    add_invalid(mask, "throughput_tokens_per_s", "the throughput is written per accelerator but throughput_scope "
                                                 "says otherwise; give one of the two")
    info.loc[info.index[rows[~given]], "throughput_scope"] = UNIT_SCOPE


#: Several whole numbers of four digits or more separated by commas: neither one number with thousands separators
#: (groups of three) nor a decimal comma ("0,45", refused as malformed), but a list ("2260275840,2290000001").
_SEVERAL = re.compile(r"\s*\d{4,}(?:\s*,\s*\d{4,})+\s*")


def _several_numbers(cell_text: np.ndarray, rows: np.ndarray) -> dict[int, list[float]]:
    """Rows (among ``rows``) whose cell lists several numbers, with the numbers."""
    found: dict[int, list[float]] = {}
    for row in np.flatnonzero(rows):  # only cells that failed to parse: few
        text = cell_text[row]
        if isinstance(text, str) and _SEVERAL.fullmatch(text):
            found[int(row)] = [float(part) for part in text.split(",")]
    return found


def _naming_headers(invalid: pd.DataFrame, sources: dict[str, pd.Categorical]) -> np.ndarray:
    """Messages about a value read from a header other than the field's name also name that header, as the user
    wrote it (``... (from 'model_size')``)."""
    messages = invalid["message"].to_numpy(dtype=object).copy()
    fields = invalid["field"].to_numpy(dtype=object)
    rows = invalid["row"].to_numpy(dtype=int)
    for fld in set(fields.tolist()) & set(sources):
        at = np.flatnonzero(fields == fld)
        source = sources[fld]
        headers = np.asarray(source.categories, dtype=object)[np.asarray(source.codes)[rows[at]]]
        for i, header in zip(at.tolist(), headers.tolist()):
            if header != fld and repr(header) not in messages[i]:
                messages[i] = f"{messages[i]} (from {header!r})"
    return messages


#: Texts that state no precision: read as not stated (the engine assumes the part's usual one and says so).
_PRECISION_NOT_STATED = frozenset({"unknown", "unk", "na", "nan", "none", "null", "notstated", "unspecified",
                                   "notspecified", "notreported", "notgiven", "notavailable", "tbd", "default"})

#: Formats a precision text may name (lowercase text). Mixed-precision training runs its matrix products in the
#: narrowest float format it names ("FP16/FP32 mixed" -> fp16, "BF16 with FP8 GEMMs" -> fp8), so that one sets the
#: peak; "16-bit" or "mixed precision" alone is the part's 16-bit format (``16bit``), and so is naming both bf16 and
#: fp16. A bare "8-bit" (8-bit Adam) names no format; int8 counts only when no float format is named.
_PRECISION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(pattern)) for name, pattern in (
    ("fp4", r"(?<![a-z0-9])(?:nv|mx)?fp[\s_-]*4(?![0-9])|float[\s_-]*4(?![0-9])|e2m1"),
    ("fp8", r"(?<![a-z0-9])(?:nv|mx)?fp[\s_-]*8(?![0-9])|float[\s_-]*8(?![0-9])|e4m3|e5m2|8[\s_-]*bit[\s_-]*float"),
    ("bf16", r"bf[\s_-]*16|bfloat|brain[\s_-]*float"),
    ("fp16", r"(?<![a-z0-9])fp[\s_-]*16|(?<![a-z0-9])float[\s_-]*16|(?<![a-z0-9])f16(?![0-9])|half|binary16"),
    ("16bit", r"(?<![0-9])16[\s_-]*bits?(?![a-z0-9])|mixed|(?<![a-z0-9])amp(?![a-z0-9])"),
    ("tf32", r"tf[\s_-]*32|tensor[\s_-]*float"),
    ("fp32", r"(?<![a-z0-9])fp[\s_-]*32|(?<![a-z0-9])float[\s_-]*32|(?<![a-z0-9])f32(?![0-9])|single|"
             r"full[\s_-]*precision|(?<![0-9])32[\s_-]*bits?(?![a-z0-9])|binary32"),
    ("fp64", r"(?<![a-z0-9])fp[\s_-]*64|(?<![a-z0-9])float[\s_-]*64|double|(?<![0-9])64[\s_-]*bits?(?![a-z0-9])"),
    ("int8", r"(?<![a-z0-9])u?int[\s_-]*8(?![0-9])|8[\s_-]*bit[\s_-]*int"),
))


def _precision_of(text: str | None) -> str | None:
    """The canonical precision a text names, or None when it names none ("not stated").

    Reads what reports write: ``'bfloat16 (weights)'`` -> ``'bf16'``, ``'FP16/FP32 mixed'`` -> ``'fp16'``,
    ``'FP8 (E4M3)'`` -> ``'fp8'``, ``'TF32'`` -> ``'tf32'``, ``'mixed precision (16-bit)'`` -> ``'16bit'`` (the
    part's 16-bit format), ``'int8'`` -> ``'int8'``. ``'Unknown'``, ``'n/a'`` and text naming no format give None:
    the claim does not state its precision (never an invalid claim).
    """
    if text is None:
        return None
    lower = str(text).lower()
    key = "".join(ch for ch in lower if ch.isalnum())
    if not key or key in _PRECISION_NOT_STATED:
        return None
    if key in PRECISION_ALIASES:
        return PRECISION_ALIASES[key]
    found = {name for name, pattern in _PRECISION_PATTERNS if pattern.search(lower)}
    for name in ("fp4", "fp8"):
        if name in found:
            return name
    if "bf16" in found and "fp16" in found:
        return "16bit"
    for name in ("bf16", "fp16", "16bit", "tf32", "fp32", "fp64", "int8"):
        if name in found:
            return name
    return None