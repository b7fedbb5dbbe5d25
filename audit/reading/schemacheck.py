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


class QuickCheck:
    """The quick check of whole claim objects against the claims schema (see the module's docstring)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        understood = (set(schema) <= _TOP_LEVEL and schema.get("type", "object") == "object"
                      and schema.get("additionalProperties", True) is True
                      and isinstance(schema.get("properties", {}), Mapping))
        self.usable = understood
        self.fields: dict[str, Check] = ({str(k): compile_check(v) for k, v in schema.get("properties", {}).items()}
                                         if understood else {})

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
