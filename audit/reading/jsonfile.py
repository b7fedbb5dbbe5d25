"""JSON and JSON Lines: bounded-depth parsing, keys given twice, and schema checks of each claim object."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from audit.claims import RawTable
from audit.reading.common import read_text
from audit.reading.errors import LoadError
from audit.reading.fields import field_of
from audit.reading.registry import Reader, register
from audit.reading.schemacheck import QuickCheck
from audit.resources import schema_path

__all__ = ["MAX_JSON_DEPTH", "frame_from_items", "json_depth", "read_json", "read_jsonl"]

#: Deepest nesting accepted in JSON input: claims are flat records, and a limit keeps the parser's
#: recursion far from Python's own limit whatever the file holds.
MAX_JSON_DEPTH = 64

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


def _loads(text: str, file: str, one_line: bool = False) -> Any:
    """Parse JSON safely: nesting bounded before the parser runs, ``NaN`` kept as text and ``Infinity`` read as
    a float (so both are reported, not silently used), integers of any length accepted, a key given twice in
    one object noted on the object. ``one_line``: the text is a line of a file (JSON Lines), whose number the
    caller gives: an error names the column alone."""
    data = text.encode("utf-8", errors="surrogatepass")
    if data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH and json_depth(data) > MAX_JSON_DEPTH:
        raise LoadError(file, f"JSON nested deeper than {MAX_JSON_DEPTH} levels; claims are flat records")
    try:
        return json.loads(text, parse_constant=_keep_constant, object_pairs_hook=_object, parse_int=_integer)
    except json.JSONDecodeError as exc:
        where = f"column {exc.colno}" if one_line else f"line {exc.lineno}, column {exc.colno}"
        # The parser's own words may end in "at" ("Unterminated string starting at"): one "at", not two.
        raise LoadError(file, f"not valid JSON: {exc.msg}{' ' if exc.msg.endswith(' at') else ' at '}{where}") \
            from None
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


def _records_from_json(doc: Any, file: str, notes: list[tuple[str, str]]) -> list[Any]:
    """The claims of a parsed JSON document; a document that holds no claims is a whole-file problem.

    Claims are the document itself (one object), its items (an array), or the array under ``"claims"``. An array
    of objects under another key of an object that names no field of a claim (``{"runs": [...]}``,
    ``{"Claims": [...]}``), or beside ``"claims"``, is refused naming the key, so it is never read as one empty
    claim; other keys beside ``"claims"`` are not read, and a note says so."""
    # An object with a field of a claim (an id, a figure) is a claim, whatever else it holds.
    if isinstance(doc, dict) and ("claims" in doc or not any(field_of(k)[0] for k in doc)):
        wrappers = [k for k, v in doc.items() if k != "claims" and _objects(v)]
        if wrappers:
            named = ", ".join(f'"{k}"' for k in wrappers)
            raise LoadError(file, f"the object holds claims under {named}, which is not read: put the claims in a "
                                  f'top-level array or under "claims"')
    if isinstance(doc, dict) and "claims" in doc:
        items = doc["claims"]
        if not isinstance(items, list):
            raise LoadError(file, f'"claims" must be an array of claim objects, got {_json_type(items)}')
        if not items:
            raise LoadError(file, 'no claims: the "claims" array is empty')
        others = [k for k in doc if k != "claims"]
        if others:
            notes.append((file, f'keys beside "claims" are not read: {", ".join(others)}'))
        return items
    if isinstance(doc, dict):
        return [doc]
    if isinstance(doc, list):
        if not doc:
            raise LoadError(file, "no claims: the array is empty")
        return doc
    raise LoadError(file, f"expected a claim object, an array of claims or {{\"claims\": [...]}}, "
                          f"got {_json_type(doc)}")


def _objects(value: Any) -> bool:
    """Whether a value is a non-empty array of objects (claims, wrapped under some key)."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


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


def frame_from_items(items: list[Any], file: str, rows: Sequence[int] | None = None,
                     text_checked: bool = False) -> RawTable:
    """Build a raw table from parsed JSON items (or in-memory records); a non-object item becomes an invalid row,
    not a failure.

    Columns are sorted by name: the key order of a JSON object carries no meaning, so the audit of a claim
    does not depend on it. ``rows`` gives each item's position in the file (default 1, 2, ...).
    ``text_checked``: the items hold no string that cannot be written out (see :class:`RawTable`).
    """
    records: list[dict[str, Any]] = []
    problems: list[tuple[int, str, str]] = []
    quick = _quick_check()  # certainly valid claims skip jsonschema (and its import): audit.reading.schemacheck
    for pos, item in enumerate(items):
        if isinstance(item, dict):
            if any(isinstance(v, dict) for v in item.values()):
                item = _flattened(item, pos, problems)
            records.append(item)
            for err in (() if quick(item) else _claim_validator().iter_errors(item)):
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
    origin = np.arange(1, len(records) + 1) if rows is None else np.asarray(rows)
    return RawTable(frame, problems, rows=origin, text_checked=text_checked)


def _flattened(item: dict[str, Any], pos: int, problems: list[tuple[int, str, str]]) -> dict[str, Any]:
    """A run log's nested objects as keys joined by dots: ``{"hardware": {"type": "H100", "count": 512}}`` is
    ``hardware.type`` and ``hardware.count``, headers that name fields as any other (:func:`audit.reading.fields.
    field_of`: ``hardware.count`` is the chips, ``metrics.mfu`` the MFU). Arrays (``phases``) stay as they are; an
    empty object is a key without a value. A dotted key written beside the same key nested, with another value, is
    a key given twice."""
    flat: dict[str, Any] = {}
    duplicates = dict(getattr(item, "duplicates", {}))

    def walk(prefix: str, obj: dict[str, Any], into: dict[str, Any]) -> None:
        if prefix:  # keys given twice inside a nested object
            duplicates.update({f"{prefix}.{k}": v for k, v in getattr(obj, "duplicates", {}).items()})
        for key, value in obj.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict) and value:
                walk(name, value, into)
                continue
            value = None if isinstance(value, dict) else value
            if name in into and into[name] != value:
                duplicates[name] = [into[name], value]
            into[name] = value

    for key, value in item.items():
        if not (isinstance(value, dict) and value):
            walk("", {key: value}, flat)
            continue
        inner: dict[str, Any] = {}
        walk(str(key), value, inner)
        if field_of(str(key))[0] is not None and not any(field_of(k)[0] for k in inner):
            # The value of a field written as an object ({"tokens": {"value": 140, "unit": "B"}}): kept whole,
            # so the field is invalid, as any other value of the wrong type.
            flat[str(key)] = value
            continue
        for name, inner_value in inner.items():
            walk("", {name: inner_value}, flat)
    flat = _JSONObject(sorted(flat.items(), key=lambda kv: kv[0]))
    if duplicates:
        flat.duplicates = duplicates
    return flat


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, str) else repr(value)
    except (ValueError, TypeError):  # e.g. a float that is not finite inside a list
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
def _claims_schema() -> dict[str, Any]:
    return json.loads(schema_path("claims.schema.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _quick_check() -> QuickCheck:
    return QuickCheck(_claims_schema())


@lru_cache(maxsize=1)
def _claim_validator():
    from jsonschema import Draft202012Validator  # imported on first JSON input only: keeps CLI start-up light

    return Draft202012Validator(_claims_schema())


#: A JSON escape of a surrogate code point: the only way a JSON text decoded from valid UTF-8 can give a string
#: that cannot be written out again (a lone surrogate). A match (or a false one, after an escaped backslash) only
#: makes the reader look at its strings.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def read_json(path: Path, file: str, data: bytes | None = None) -> RawTable:
    """A JSON document: one claim, an array of claims, or ``{"claims": [...]}``."""
    text = read_text(path, data, file)
    if not text.strip():
        raise LoadError(file, "empty file")
    doc = _loads(text, file)
    notes: list[tuple[str, str]] = []
    table = frame_from_items(_records_from_json(doc, file, notes), file,
                             text_checked=_SURROGATE_ESCAPE.search(text) is None)
    table.notes = notes
    return table


_LINE_END = re.compile(r"\r\n|\r|\n")


def read_jsonl(path: Path, file: str, data: bytes | None = None) -> RawTable:
    """JSON Lines: one claim object per line; a bad line is an invalid claim, the others are read."""
    text = read_text(path, data, file)
    items: list[Any] = []
    linenos: list[int] = []
    line_problems: list[tuple[int, str]] = []
    # Lines end at "\n", "\r\n" or a bare "\r" (no JSON string can hold a raw CR or LF). Not str.splitlines: it
    # would also split at U+2028 or a form feed, which may stand inside a JSON string, and so cut a claim in two.
    for lineno, line in enumerate(_LINE_END.split(text), start=1):
        if not line.strip():
            continue
        linenos.append(lineno)
        try:
            items.append(_loads(line, file, one_line=True))
        except LoadError as exc:
            line_problems.append((len(items), f"line {lineno}: {exc.message}"))
            items.append(None)
    if not items:
        raise LoadError(file, "no claims: the file has no JSON lines")
    table = frame_from_items(items, file, rows=linenos, text_checked=_SURROGATE_ESCAPE.search(text) is None)
    bad = {pos for pos, _ in line_problems}
    table.problems = [p for p in table.problems if p[0] not in bad] + [(pos, "", msg) for pos, msg in line_problems]
    return table


register(Reader("json", (".json",), read_json, keys_per_row=True))
register(Reader("jsonl", (".jsonl", ".ndjson"), read_jsonl, keys_per_row=True))
