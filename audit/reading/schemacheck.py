"""A quick first look at each claim object against ``schemas/claims.schema.json``, so that a file of valid claims
is read without importing or running ``jsonschema`` (its import alone is about 50 ms of a one-claim ``check``, and
validating costs about 0.1 ms a claim).

The quick check answers one question only: *is this object certainly valid?* It understands a small part of
JSON Schema (``type``, ``anyOf``, ``minLength``, ``maxLength``, ``enum`` of strings, ``minimum`` and ``maximum``,
``properties`` and ``additionalProperties: true`` at the top) and says yes only when every field it finds is of
a plain JSON type (``str``, ``int``, ``float``, ``None``, ``bool``) that one of the field's alternatives accepts
for certain. Anything else (a keyword it does not know, a numpy number, a list, a value out of bounds) is
"not certain", and the claim then goes to ``jsonschema`` itself, which finds and words the errors. So the errors
reported are exactly jsonschema's, and a valid claim is never rejected by the quick check.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np

#: A predicate: True when a value is certainly valid against a (sub)schema.
Check = Callable[[Any], bool]

#: Keywords that say nothing about validity.
_ANNOTATIONS = frozenset({"description", "title", "examples", "default", "$comment", "deprecated", "readOnly",
                          "writeOnly"})
#: Top-level keywords the quick check understands (anything else: every claim goes to jsonschema).
_TOP_LEVEL = frozenset({"$schema", "$id", "$defs", "type", "properties", "additionalProperties"}) | _ANNOTATIONS

#: JSON types by the exact Python types the JSON parser gives them (bool is not a number, float 1.0 is left to
#: jsonschema for ``integer``).
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "null": (type(None),),
    "boolean": (bool,),
}


def _never(_value: Any) -> bool:
    return False


def compile_check(schema: Mapping[str, Any]) -> Check:
    """The "certainly valid" predicate of one field's schema (always False for a schema it does not understand)."""
    if not isinstance(schema, Mapping):
        return _never
    keys = set(schema) - _ANNOTATIONS
    if "anyOf" in keys:
        if keys != {"anyOf"} or not isinstance(schema["anyOf"], list):
            return _never
        options = [compile_check(s) for s in schema["anyOf"]]
        return lambda v: any(check(v) for check in options)
    if keys - {"type", "minLength", "maxLength", "enum", "minimum", "maximum"}:
        return _never
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind
    if not isinstance(kinds, list) or not kinds or any(k not in _TYPES for k in kinds):
        return _never  # no type, or array / object: left to jsonschema
    exact = tuple(t for k in kinds for t in _TYPES[k])
    low_len, high_len = schema.get("minLength", 0), schema.get("maxLength", math.inf)
    enum = schema.get("enum")
    if enum is not None and not (isinstance(enum, list) and all(isinstance(e, str) for e in enum)):
        return _never
    allowed = frozenset(enum) if enum is not None else None
    low, high = schema.get("minimum", -math.inf), schema.get("maximum", math.inf)

    def check(value: Any) -> bool:
        if type(value) not in exact:
            return False
        if type(value) is str:
            if not low_len <= len(value) <= high_len:
                return False
            return allowed is None or value in allowed
        if allowed is not None:
            return False
        if type(value) in (int, float):
            return bool(low <= value <= high)  # NaN fails here: not certain
        return True

    return check


def float_ranges(schema: Mapping[str, Any]) -> tuple[tuple[float, float], ...] | None:
    """Where :func:`compile_check`'s predicate holds for a Python float, as ranges (empty: nowhere), so that a
    column of floats is checked with numpy. Mirrors :func:`compile_check` step by step; None when a bound is not a
    number that a float compares with exactly (the predicate then decides, float by float)."""
    if not isinstance(schema, Mapping):
        return ()
    keys = set(schema) - _ANNOTATIONS
    if "anyOf" in keys:
        if keys != {"anyOf"} or not isinstance(schema["anyOf"], list):
            return ()
        options = [float_ranges(s) for s in schema["anyOf"]]
        return None if any(o is None for o in options) else tuple(r for o in options if o for r in o)
    if keys - {"type", "minLength", "maxLength", "enum", "minimum", "maximum"}:
        return ()
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind
    if not isinstance(kinds, list) or not kinds or any(k not in _TYPES for k in kinds):
        return ()
    if float not in tuple(t for k in kinds for t in _TYPES[k]) or schema.get("enum") is not None:
        return ()  # a float is not of the type, or an enum (of strings, or not understood) refuses it
    low, high = schema.get("minimum", -math.inf), schema.get("maximum", math.inf)
    for bound in (low, high):
        if type(bound) not in (int, float) or (type(bound) is int and float(bound) != bound):
            return None
    return ((float(low), float(high)),)


class QuickCheck:
    """The quick check of whole claim objects against the claims schema (see the module's docstring)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        understood = (set(schema) <= _TOP_LEVEL and schema.get("type", "object") == "object"
                      and schema.get("additionalProperties", True) is True
                      and isinstance(schema.get("properties", {}), Mapping))
        self.usable = understood
        self.fields: dict[str, Check] = ({str(k): compile_check(v) for k, v in schema.get("properties", {}).items()}
                                         if understood else {})
        self.floats: dict[str, tuple[tuple[float, float], ...] | None] = (
            {str(k): float_ranges(v) for k, v in schema.get("properties", {}).items()} if understood else {})

    def __call__(self, item: Any) -> bool:
        """True when ``item`` is certainly valid; False: ask jsonschema."""
        if not self.usable or not isinstance(item, dict):
            return False
        fields = self.fields
        for key, value in item.items():
            check = fields.get(key)
            if check is not None and not check(value):
                return False
        return True

    def certain(self, key: str, values: np.ndarray) -> np.ndarray:
        """For objects given as columns: whether each of ``values`` (an object array: the objects' values of field
        ``key``) is certainly valid, as :meth:`__call__` asks of each field; an object is certainly valid when each
        of its fields' values is (and the check is usable at all). Floats are compared with the field's ranges
        (:func:`float_ranges`) in numpy, and a text is checked once however often it comes."""
        n = len(values)
        if not self.usable:
            return np.zeros(n, dtype=bool)
        check = self.fields.get(key)
        if check is None:
            return np.ones(n, dtype=bool)
        out = np.zeros(n, dtype=bool)
        kinds = np.fromiter(map(id, map(type, values.tolist())), dtype=np.int64, count=n)  # exact types, in C
        is_text = kinds == id(str)
        ranges = self.floats.get(key)
        by_range = kinds == id(float) if ranges is not None else np.zeros(n, dtype=bool)
        if by_range.any():
            at = np.flatnonzero(by_range)
            numbers = values[at].astype(float)
            for low, high in ranges or ():  # NaN is in no range: not certain, as the predicate says
                out[at] |= (low <= numbers) & (numbers <= high)
        if is_text.any():
            at = np.flatnonzero(is_text)
            cells = values[at].tolist()
            verdict = {text: check(text) for text in dict.fromkeys(cells)}
            out[at] = np.fromiter(map(verdict.__getitem__, cells), dtype=bool, count=len(cells))
        rest = np.flatnonzero(~is_text & ~by_range)
        if len(rest):  # None, int, bool, a list: few
            out[rest] = np.fromiter(map(check, values[rest].tolist()), dtype=bool, count=len(rest))
        return out
