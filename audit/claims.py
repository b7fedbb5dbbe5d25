"""Reading claims: loaders for JSON, JSON Lines, CSV, Parquet and spreadsheets, and normalization into a claims frame.

A *raw table* holds the cells as written (one row per input row, known columns renamed to their canonical names,
unknown columns kept as extras). :func:`normalize` turns it into :class:`Claims`: one float64 column per quantity
(NaN when unknown), the original text beside it, and a long table of invalid cells. Problems with a whole file
raise :class:`LoadError`; problems with a row never stop the batch, they make that claim invalid.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import re
import sys
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from audit.quantities import (BY_NAME, INPUT_QUANTITIES, PRECISION_ALIASES, TEXT_FIELDS,
                              canonical_column, canonical_column_and_unit)
from audit.resources import data_path, schema_path
from audit.units import UnitError, parse_series, parse_value

#: Input formats by file extension.
FORMATS: dict[str, str] = {
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv",
    ".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx", ".xlsm": "xlsx",
}

#: Deepest nesting accepted in JSON input: claims are flat records, and a limit keeps the parser's
#: recursion far from Python's own limit whatever the file holds.
MAX_JSON_DEPTH = 64

#: Largest input file read (bytes); larger files are refused with a message rather than exhausting memory.
MAX_FILE_BYTES = 2 * 1024**3

ORIGIN_COLUMNS = ("_file", "_row")


class LoadError(Exception):
    """A whole input file cannot be used. ``str()`` names the file and what is wrong."""

    def __init__(self, file: str, message: str) -> None:
        super().__init__(f"{file}: {message}")
        self.file = file
        self.message = message


@dataclass
class RawTable:
    """Cells as read, one row per input row, plus structural problems found while reading.

    ``problems`` rows: (row position, field or '', message).
    """

    frame: pd.DataFrame
    problems: list[tuple[int, str, str]] = field(default_factory=list)


@dataclass
class Claims:
    """The claims frame.

    - ``values``: float64 column per input quantity (NaN when unknown or invalid);
    - ``text``: the original cell text for each quantity (None when absent);
    - ``info``: id, name, source, hardware, precision (normalized), precision_text, file, row;
    - ``extras``: unknown input fields, kept for display;
    - ``invalid``: long table with columns row, field, message.
    """

    values: pd.DataFrame
    text: pd.DataFrame
    info: pd.DataFrame
    extras: pd.DataFrame
    invalid: pd.DataFrame

    def __len__(self) -> int:
        return len(self.values)


# --------------------------------------------------------------------------------------------------- loaders


#: Every byte but the quote and the brackets (deleted before the depth scan).
_NOT_JSON_STRUCTURE = bytes(c for c in range(256) if c not in b'"[]{}')
_BRACKET_STEP = np.zeros(256, dtype=np.int64)
_BRACKET_STEP[[0x5B, 0x7B]] = 1  # [ {
_BRACKET_STEP[[0x5D, 0x7D]] = -1  # ] }


def json_depth(data: bytes, chunk: int = 1 << 24) -> int:
    """The deepest nesting of arrays and objects in JSON text (brackets inside strings do not count).

    No Python step per character: escapes are removed with ``bytes.replace`` (a pair of backslashes, then a
    backslash before a quote, left to right as a JSON reader sees them), everything but quotes and brackets
    with ``bytes.translate``, and the rest is a running sum in numpy, ``chunk`` bytes at a time. Text that is
    not valid JSON still gets a number; the parser then says what is wrong with it.
    """
    if b"\\" in data:
        data = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    marks = data.translate(None, _NOT_JSON_STRUCTURE)
    depth = 0  # nesting at the end of the previous chunk
    deepest = 0
    in_string = False  # the previous chunk ended inside a string
    for start in range(0, len(marks), chunk):
        k = np.frombuffer(marks, dtype=np.uint8, count=min(chunk, len(marks) - start), offset=start)
        quote = k == 0x22
        inside = np.logical_xor.accumulate(quote) ^ in_string  # after an odd number of quotes
        level = depth + np.cumsum(np.where(inside | quote, 0, _BRACKET_STEP[k]))
        deepest = max(deepest, int(level.max()))
        depth = int(level[-1])
        in_string = bool(inside[-1])
    return deepest


def _loads(text: str, file: str) -> Any:
    """Parse JSON safely: nesting bounded before the parser runs, ``NaN`` kept as text and ``Infinity`` read as
    a float (so both are reported, not silently used), integers of any length accepted, a key given twice in
    one object noted on the object."""
    data = text.encode("utf-8", errors="surrogatepass")
    if data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH and json_depth(data) > MAX_JSON_DEPTH:
        raise LoadError(file, f"JSON nested deeper than {MAX_JSON_DEPTH} levels; claims are flat records")
    try:
        return json.loads(text, parse_constant=_keep_constant, object_pairs_hook=_object, parse_int=_integer)
    except json.JSONDecodeError as exc:
        raise LoadError(file, f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:  # pragma: no cover - guarded by the depth scan above
        raise LoadError(file, "JSON nested too deeply") from None


def _keep_constant(name: str) -> Any:
    """``Infinity`` is read as a float, so the loader reports it as not finite; ``NaN`` stays the text
    ``"NaN"``, which the loader reports as NaN (a float NaN would be indistinguishable from a missing value)."""
    return name if name == "NaN" else float(name)


def _integer(digits: str) -> int | float:
    """A JSON integer. Beyond a few thousand digits Python refuses ``int()`` (a guard against quadratic-time
    conversion); such a number is far outside any float anyway, so it is read as a float (inf)."""
    return int(digits) if len(digits) <= 4000 else float(digits)


class _JSONObject(dict):
    """A parsed JSON object that remembers keys given more than once with different values."""

    duplicates: dict[str, list[Any]]


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Keys in name order (a stable sort keeps repeats in file order, so the last still wins): the key order of
    # a JSON object carries no meaning, and the audit and its reports must not depend on it.
    pairs = sorted(pairs, key=lambda kv: kv[0])
    obj = _JSONObject(pairs)
    if len(obj) != len(pairs):  # a key given twice: the parser would silently keep the last value
        seen: dict[str, list[Any]] = {}
        for key, value in pairs:
            seen.setdefault(key, []).append(value)
        dups = {k: v for k, v in seen.items() if len(v) > 1 and any(x != v[0] for x in v[1:])}
        if dups:
            obj.duplicates = dups
    return obj


def _records_from_json(doc: Any, file: str) -> list[Any]:
    """The claims of a parsed JSON document; a document that holds no claims is a whole-file problem."""
    if isinstance(doc, dict) and "claims" in doc:
        items = doc["claims"]
        if not isinstance(items, list):
            raise LoadError(file, f'"claims" must be an array of claim objects, got {_json_type(items)}')
        if not items:
            raise LoadError(file, 'no claims: the "claims" array is empty')
        return items
    if isinstance(doc, dict):
        return [doc]
    if isinstance(doc, list):
        if not doc:
            raise LoadError(file, "no claims: the array is empty")
        return doc
    raise LoadError(file, f"expected a claim object, an array of claims or {{\"claims\": [...]}}, "
                          f"got {_json_type(doc)}")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _frame_from_items(items: list[Any], file: str, rows: Sequence[int] | None = None) -> RawTable:
    """Build a raw table from parsed JSON items; a non-object item becomes an invalid row, not a failure.

    Columns are sorted by name: the key order of a JSON object carries no meaning, so the audit of a claim
    does not depend on it. ``rows`` gives each item's position in the file (default 1, 2, ...).
    """
    records: list[dict[str, Any]] = []
    problems: list[tuple[int, str, str]] = []
    validator = _claim_validator()
    for pos, item in enumerate(items):
        if isinstance(item, dict):
            records.append(item)
            for err in validator.iter_errors(item):
                fld = str(err.path[0]) if err.path else ""
                problems.append((pos, fld, _schema_message(err)))
            for key, values in getattr(item, "duplicates", {}).items():
                shown = ", ".join(_short(v) for v in values[:4])
                problems.append((pos, key, f"{key} is given {len(values)} times with different values ({shown})"))
        else:
            records.append({})
            problems.append((pos, "", f"expected a claim object, got {_json_type(item)}"))
    # dtype=object: cells stay the Python values read (no type inference, which overflows on a huge integer).
    frame = pd.DataFrame(records, dtype=object) if records else pd.DataFrame()
    if len(frame.columns):
        frame = frame[sorted(frame.columns, key=str)]
    else:
        frame = pd.DataFrame(index=range(len(records)))
    frame.index = range(len(records))
    frame = _with_origin(frame, np.arange(1, len(records) + 1) if rows is None else np.asarray(rows))
    return RawTable(frame, problems)


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, str) else repr(value)
    except (ValueError, TypeError):  # e.g. a float that is not finite inside a list
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _with_origin(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """Add the ``_row`` column; an input column of that name (or ``_file``) is kept under another name."""
    clash = {c: f"{c} (input)" for c in frame.columns if c in ORIGIN_COLUMNS}
    if clash:
        frame = frame.rename(columns=clash)
    frame["_row"] = rows
    return frame


def _schema_message(err: Any) -> str:
    """A short message for a jsonschema error on one field."""
    value = err.instance
    shown = _json_type(value) if not isinstance(value, str) else repr(value[:40])
    if err.validator in ("anyOf", "type"):
        return f"{shown} is not an accepted value (expected {_expected(err.schema)})"
    if err.validator == "maxLength":
        return f"text longer than {err.validator_value} characters"
    if err.validator == "enum":
        return f"{shown} is not one of {', '.join(map(str, err.validator_value[:5]))}"
    return err.message[:200]


def _expected(schema: dict) -> str:
    kinds = []
    for option in schema.get("anyOf", [schema]):
        t = option.get("type")
        if t and t != "null":
            kinds.append(t)
    return " or ".join(kinds) or "a valid value"


@lru_cache(maxsize=1)
def _claim_validator():
    from jsonschema import Draft202012Validator  # imported on first JSON input only: keeps CLI start-up light

    schema = json.loads(schema_path("claims.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def _read_text(path: Path, data: bytes | None, file: str) -> str:
    """The file's text: UTF-8 (a byte-order mark is dropped), UTF-16/32 with a byte-order mark, else cp1252."""
    raw = data if data is not None else path.read_bytes()
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if raw.startswith(bom):  # "Unicode text" exports from spreadsheets
            try:
                raw = raw.decode(codec).encode("utf-8")
            except UnicodeDecodeError:
                raise LoadError(file, f"not valid {codec.upper()} text (the file starts with its byte-order "
                                      f"mark)") from None
            break
    nul = raw.find(b"\x00")
    if nul >= 0:
        where = "" if nul < 4096 else f" (a NUL byte at offset {nul:,})"
        raise LoadError(file, f"binary data, not text{where}: is this the right file?")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Spreadsheets exported on Windows are often cp1252/Latin-1; every byte decodes, and the bytes that
        # differ from UTF-8 are accented letters in names, not digits.
        text = raw.decode("cp1252", errors="replace")
    head = text[:65536]
    controls = len(head) - len(head.translate(_CONTROL_CHARS))
    if controls > 8 and controls > len(head) // 200:
        raise LoadError(file, "binary data, not text (control characters throughout): is this the right file?")
    return text


#: C0 control characters other than tab, line feed, form feed and carriage return: text files hold none, random
#: bytes about one in nine.
_CONTROL_CHARS = {c: None for c in range(32) if chr(c) not in "\t\n\x0c\r"}


def read_json(path: Path, file: str, data: bytes | None = None) -> RawTable:
    """A JSON document: one claim, an array of claims, or ``{"claims": [...]}``."""
    text = _read_text(path, data, file)
    if not text.strip():
        raise LoadError(file, "empty file")
    doc = _loads(text, file)
    return _frame_from_items(_records_from_json(doc, file), file)


def read_jsonl(path: Path, file: str, data: bytes | None = None) -> RawTable:
    """JSON Lines: one claim object per line; a bad line is an invalid claim, the others are read."""
    text = _read_text(path, data, file)
    items: list[Any] = []
    linenos: list[int] = []
    line_problems: list[tuple[int, str]] = []
    # Lines end at "\n" only (JSON Lines): str.splitlines would also split at U+2028 or a form feed, which
    # may stand inside a JSON string, and so cut one claim in two.
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        linenos.append(lineno)
        try:
            items.append(_loads(line, file))
        except LoadError as exc:
            line_problems.append((len(items), f"line {lineno}: {exc.message}"))
            items.append(None)
    if not items:
        raise LoadError(file, "no claims: the file has no JSON lines")
    table = _frame_from_items(items, file, rows=linenos)
    bad = {pos for pos, _ in line_problems}
    table.problems = [p for p in table.problems if p[0] not in bad] + [(pos, "", msg) for pos, msg in line_problems]
    return table


def read_csv(path: Path, file: str, data: bytes | None = None, sep: str = ",") -> RawTable:
    """CSV (or TSV) with a header row; every cell read as text, so the original is kept.

    A row with more cells than the header is kept and made invalid (its extra cells are named in the message);
    a row with fewer cells has its last fields missing. A header without rows is a whole-file problem.
    """
    text = _read_text(path, data, file)
    if not text.strip():
        raise LoadError(file, "empty file")
    options = dict(dtype=str, keep_default_na=False, sep=sep, skipinitialspace=True, index_col=False)
    problems: list[tuple[int, str, str]] = []
    try:
        with warnings.catch_warnings():
            # pandas warns, and drops cells, when the first row is longer than the header: read it again.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(io.StringIO(text), **options)
    except pd.errors.EmptyDataError:
        raise LoadError(file, "empty file") from None
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "EOF inside string" in message or "EOF following escape" in message:
            raise LoadError(file, f"not readable as CSV: a quoted cell is never closed "
                                  f"({message.replace('Error tokenizing data. C error: ', '')})") from None
        frame, problems = _read_ragged_csv(text, file, options)
    except ValueError as exc:
        raise LoadError(file, f"not readable as CSV: {str(exc).strip().splitlines()[0]}") from None
    other = _other_separator(frame, sep) if sep == "," else None
    if other:  # "id;params;tokens" as one column: a spreadsheet export with another separator
        return read_csv(path, file, data=text.encode("utf-8"), sep=other)
    if len(frame) == 0:
        raise LoadError(file, f"no claims: the file has a header ({_header_words(frame.columns)}) but no rows")
    frame = frame.astype(object)
    frame = frame.where(frame.notna() & (frame != ""), None)
    frame = _drop_empty_unnamed(frame)
    # Row numbers count the header as 1 (blank lines are skipped, as in a spreadsheet import).
    frame = _with_origin(frame, np.arange(2, len(frame) + 2))
    return RawTable(frame, problems)


def _other_separator(frame: pd.DataFrame, sep: str) -> str | None:
    """The separator a one-column header is really split by (``;`` from spreadsheets set to a European locale,
    a tab, a bar), or None. Only a header naming several known fields that way counts."""
    if len(frame.columns) != 1:
        return None
    name = str(frame.columns[0])
    for other in (";", "\t", "|"):
        if other != sep and other in name:
            fields = [f.strip() for f in name.split(other)]
            if sum(canonical_column(f) is not None for f in fields) >= 2:
                return other
    return None


def _header_words(columns: Sequence[Any]) -> str:
    names = [str(c) for c in columns][:5]
    more = len(columns) - len(names)
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


def _read_ragged_csv(text: str, file: str, options: dict) -> tuple[pd.DataFrame, list[tuple[int, str, str]]]:
    """Read a CSV whose rows have more cells than its header: every row kept, the long ones made invalid.

    Only for malformed files: the csv module counts the cells per row, then pandas reads the file again with
    that many columns so cells are read exactly as in the normal path.
    """
    limit = csv.field_size_limit(sys.maxsize)  # the csv module refuses cells over 128 KiB; pandas does not
    try:
        widths = [len(r) for r in csv.reader(io.StringIO(text, newline=""), delimiter=options["sep"],
                                             skipinitialspace=True) if r]
        header_width, width = (widths[0], max(widths)) if widths else (0, 0)
        wide = pd.read_csv(io.StringIO(text), header=None, names=range(width),
                           **{k: v for k, v in options.items() if k != "index_col"})
    except (csv.Error, pd.errors.ParserError, ValueError) as exc:
        raise LoadError(file, f"not readable as CSV: {_first_line(exc)}") from None
    finally:
        csv.field_size_limit(limit)
    header = [str(h) if isinstance(h, str) else "" for h in wide.iloc[0].tolist()]
    n_named = max(header_width, 1)
    names = _mangle(header[:n_named])
    body = wide.iloc[1:].reset_index(drop=True)
    extra = body.iloc[:, n_named:]
    problems: list[tuple[int, str, str]] = []
    if extra.shape[1]:
        filled = extra.where(extra.notna(), "").astype(str).to_numpy()
        for pos in np.flatnonzero((filled != "").any(axis=1)):
            cells = filled[pos]
            used = cells[: np.flatnonzero(cells != "").max() + 1]
            shown = ", ".join(repr(c[:20]) for c in used[:3]) + (", ..." if len(used) > 3 else "")
            problems.append((int(pos), "", f"the row has {n_named + len(used)} cells but the header has {n_named}; "
                                           f"the extra cells ({shown}) belong to no column"))
    frame = body.iloc[:, :n_named].copy()
    frame.columns = names
    return frame, problems


def _mangle(names: list[str]) -> list[str]:
    """Column names as pandas makes them: an empty name is ``Unnamed: i``, a repeat gets ``.1``, ``.2``."""
    out: list[str] = []
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        name = name or f"Unnamed: {i}"
        base = name
        while name in seen:
            seen[base] += 1
            name = f"{base}.{seen[base]}"
        seen.setdefault(name, 0)
        out.append(name)
    return out


def _drop_empty_unnamed(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop columns without a header and without a value (trailing commas); name the others by position."""
    renames: dict[Any, str] = {}
    drop: list[Any] = []
    for i, col in enumerate(frame.columns):
        if isinstance(col, str) and col.startswith("Unnamed: "):
            if frame[col].isna().all():
                drop.append(col)
            else:
                renames[col] = f"column {i + 1}"
    if drop:
        frame = frame.drop(columns=drop)
    return frame.rename(columns=renames) if renames else frame


def read_parquet(path: Path, file: str) -> RawTable:
    """Parquet: columns keep their types; numbers stay numbers and strings are parsed as written text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # ParquetFile.read, not read_table: the dataset reader behind read_table refuses a column name given
        # twice, which Parquet allows (the second is kept as an extra field here).
        with pq.ParquetFile(path) as handle:
            table = handle.read()
    except (pa.ArrowException, OSError, ValueError, EOFError) as exc:
        raise LoadError(file, f"not a readable Parquet file: {_first_line(exc)}") from None
    if table.num_rows == 0:
        columns = f"columns ({_header_words(table.column_names)}) but " if table.column_names else ""
        raise LoadError(file, f"no claims: the file has {columns}no rows")
    names = _mangle([str(c) for c in table.column_names])  # Parquet allows a column name twice
    try:
        table = table.rename_columns(names)
        frame = table.to_pandas(integer_object_nulls=False, date_as_object=True)
    except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
        raise LoadError(file, f"Parquet columns cannot be read: {_first_line(exc)}") from None
    frame = _object_columns(frame)
    frame.index = range(len(frame))
    frame = _with_origin(frame, np.arange(1, len(frame) + 1))
    return RawTable(frame)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def _object_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Numeric columns stay numeric (parsed with no Python loop); every other column becomes Python objects
    with None for missing (categoricals, dates and nested values included)."""
    out = {}
    for col in frame.columns:
        series = frame[col]
        dtype = series.dtype
        if (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
                and not pd.api.types.is_complex_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype)):
            out[col] = series.astype("float64") if not pd.api.types.is_integer_dtype(dtype) else series
        else:
            out[col] = series.astype(object).where(series.notna(), None)
    return pd.DataFrame(out, index=frame.index)


def read_xlsx(path: Path, file: str) -> RawTable:
    """A spreadsheet's first sheet (needs openpyxl: ``pip install 'train-audit[xlsx]'``)."""
    try:
        frame = pd.read_excel(path, dtype=object)
    except ImportError:
        raise LoadError(file, "reading .xlsx needs openpyxl: pip install 'train-audit[xlsx]'") from None
    except Exception as exc:  # openpyxl raises many types for a damaged workbook
        raise LoadError(file, f"not a readable spreadsheet: {_first_line(exc)}") from None
    if len(frame) == 0:
        raise LoadError(file, f"no claims: the first sheet has a header ({_header_words(frame.columns)}) but no rows")
    frame = frame.astype(object).where(frame.notna(), None)
    frame.index = range(len(frame))
    frame = _drop_empty_unnamed(frame)
    frame = _with_origin(frame, np.arange(2, len(frame) + 2))
    return RawTable(frame)


def read_path(path_text: str, stdin: io.BufferedReader | None = None) -> RawTable:
    """Read one input path (``-`` reads JSON from standard input). Raises :class:`LoadError` for unusable files."""
    if path_text == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = stream.read()
        table = read_json(Path("-"), "<stdin>", data=data)
        table.frame["_file"] = "<stdin>"
        return table
    path = Path(path_text)
    file = str(path_text)
    if not path.exists():
        raise LoadError(file, "no such file")
    if path.is_dir():
        raise LoadError(file, "is a folder, not a file")
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        raise LoadError(file, f"unknown file type {path.suffix or '(none)'!r}; use one of {known}")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise LoadError(file, f"file is {size / 1e9:.1f} GB; the limit is {MAX_FILE_BYTES / 1e9:.0f} GB")
        if size == 0:
            raise LoadError(file, "empty file")
        if fmt == "json":
            table = read_json(path, file)
        elif fmt == "jsonl":
            table = read_jsonl(path, file)
        elif fmt in ("csv", "tsv"):
            table = read_csv(path, file, sep="\t" if fmt == "tsv" else ",")
        elif fmt == "parquet":
            table = read_parquet(path, file)
        else:
            table = read_xlsx(path, file)
    except PermissionError:
        raise LoadError(file, "permission denied") from None
    except MemoryError:
        raise LoadError(file, "too large to read into memory") from None
    table.frame["_file"] = file
    return table


def read_paths(paths: Sequence[str], stdin: io.BufferedReader | None = None) -> RawTable:
    """Read several inputs into one raw table (rows in input order)."""
    frames: list[pd.DataFrame] = []
    problems: list[tuple[int, str, str]] = []
    offset = 0
    for p in paths:
        table = read_path(p, stdin)
        frame = _canonical_columns(table.frame)
        frames.append(frame)
        problems.extend((offset + pos, fld, msg) for pos, fld, msg in table.problems)
        offset += len(frame)
    if not frames:
        raise LoadError("(no input)", "no input files")
    frame = pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0]
    frame = frame.reset_index(drop=True)
    return RawTable(frame, problems)


def _canonical_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Rename known columns (and their spreadsheet aliases) to canonical names; the first of duplicates wins."""
    renames: dict[Any, str] = {}
    taken: set[str] = set(ORIGIN_COLUMNS)
    hinted: dict[Any, str] = {}
    for col in frame.columns:
        if col in ORIGIN_COLUMNS:
            continue
        canon, unit = canonical_column_and_unit(str(col))
        if canon is not None and canon not in taken:
            renames[col] = canon
            taken.add(canon)
            if unit and _unit_fits(unit, canon):
                hinted[col] = unit
        else:
            name = str(col)
            while name in taken or name in renames.values():
                name = f"{name}_"
            renames[col] = name
            taken.add(name)
    if hinted:
        frame = frame.copy()
        for col, unit in hinted.items():
            # A bare number in a column headed "Training time (hours)" is in hours: it reads as "1200 hours".
            frame[col] = map_unique(frame[col], lambda v, unit=unit: _with_unit(v, unit))
    return frame.rename(columns=renames)


_BARE_NUMBER = re.compile(r"^\s*[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def _unit_fits(unit: str, canon: str) -> bool:
    """Whether a header's unit is one the quantity can be written in (``hours`` for a duration, not ``MFU``)."""
    q = BY_NAME.get(canon)
    if q is None or q.kind == "text":
        return False
    try:
        return math.isfinite(parse_value(f"1 {unit}", q.kind))
    except (UnitError, ValueError):
        return False


def _with_unit(value: Any, unit: str) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return f"{value!r} {unit}"
    if isinstance(value, str) and _BARE_NUMBER.match(value):
        return f"{value.strip()} {unit}"
    return value


def bundled_corpus_path() -> Path:
    """The bundled corpus of published training runs (audited when no path is given)."""
    return data_path("corpus.csv")


# ------------------------------------------------------------------------------------------------ normalize


def map_unique(series: pd.Series, fn: Callable[[Any], Any]) -> pd.Series:
    """``series.map(fn)`` calling ``fn`` once per distinct value, not once per row (None/NaN map to fn(None))."""
    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    except TypeError:  # unhashable cells (a list or object in a JSON field): rare, and only then per row
        return series.map(fn)
    results = np.empty(len(uniques) + 1, dtype=object)
    for k, value in enumerate(uniques):
        results[k] = fn(value)
    results[-1] = fn(None)
    return pd.Series(results[codes], index=series.index, dtype=object)


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
        text_cols[name] = cell_text
        parsed, errors = parse_series(col, q.kind)
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


#: How the bundled corpus is named in reports (not its install path, so reports are the same on every machine).
BUNDLED_NAME = "corpus.csv (bundled)"


def load(paths: Sequence[str], stdin: io.BufferedReader | None = None) -> Claims:
    """Read and normalize input paths (no paths: the bundled corpus)."""
    if not paths:
        raw = read_paths([str(bundled_corpus_path())])
        raw.frame["_file"] = BUNDLED_NAME
        return normalize(raw)
    return normalize(read_paths(paths, stdin))


def claims_from_records(records: list[dict[str, Any]], file: str = "<records>") -> Claims:
    """Claims from in-memory dicts (the library API and ``estimate``)."""
    table = _frame_from_items(list(records), file)
    table.frame["_file"] = file
    table.frame = _canonical_columns(table.frame)
    return normalize(table)
