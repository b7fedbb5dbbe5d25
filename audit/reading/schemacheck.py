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


def _always(_value: Any) -> bool:
    return True


def compile_check(schema: Mapping[str, Any]) -> Check:
    """The "certainly valid" predicate of one field's schema (always False for a schema it does not understand)."""
    by_type = _checks_by_type(schema)
    return lambda value: by_type.get(type(value), _never)(value)


def _checks_by_type(schema: Mapping[str, Any]) -> dict[type, Check]:
    """For each exact Python type a schema can accept for certain, the "certainly valid" predicate of a value of that
    type (:func:`_always` when every value of the type is); a type not listed is never certain. Looked up by
    ``type(value)``, one predicate a field, most of them :func:`_always`: the check of a claim calls next to nothing
    (an ``anyOf`` tried option by option cost a call per option and per field, most of the reading of a record)."""
    if not isinstance(schema, Mapping):
        return {}
    keys = set(schema) - _ANNOTATIONS
    if "anyOf" in keys:
        if keys != {"anyOf"} or not isinstance(schema["anyOf"], list):
            return {}
        options: dict[type, list[Check]] = {}
        for option in schema["anyOf"]:
            for t, check in _checks_by_type(option).items():
                options.setdefault(t, []).append(check)
        return {t: _any_of(checks) for t, checks in options.items()}
    if keys - {"type", "minLength", "maxLength", "enum", "minimum", "maximum"}:
        return {}
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind
    if not isinstance(kinds, list) or not kinds or any(k not in _TYPES for k in kinds):
        return {}  # no type, or array / object: left to jsonschema
    low_len, high_len = schema.get("minLength", 0), schema.get("maxLength", math.inf)
    enum = schema.get("enum")
    if enum is not None and not (isinstance(enum, list) and all(isinstance(e, str) for e in enum)):
        return {}
    allowed = frozenset(enum) if enum is not None else None
    low, high = schema.get("minimum", -math.inf), schema.get("maximum", math.inf)
    out: dict[type, Check] = {}
    for t in (t for k in kinds for t in _TYPES[k]):
        if t is str:
            if allowed is None and low_len == 0 and high_len == math.inf:
                out[t] = _always
            else:
                out[t] = lambda v: low_len <= len(v) <= high_len and (allowed is None or v in allowed)
        elif allowed is not None:
            continue  # an enum of strings: no other value is in it
        elif t is float or (t is int and (low, high) != (-math.inf, math.inf)):
            out[t] = lambda v: bool(low <= v <= high)  # NaN fails here: not certain
        else:
            out[t] = _always  # None, a bool, an int with no bounds
    return out


def _any_of(checks: list[Check]) -> Check:
    """One predicate that holds when one of ``checks`` does."""
    if _always in checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    return lambda v: any(check(v) for check in checks)


class QuickCheck:
    """The quick check of whole claim objects against the claims schema (see the module's docstring)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        understood = (set(schema) <= _TOP_LEVEL and schema.get("type", "object") == "object"
                      and schema.get("additionalProperties", True) is True
                      and isinstance(schema.get("properties", {}), Mapping))
        self.usable = understood
        self.fields: dict[str, dict[type, Check]] = (
            {str(k): _checks_by_type(v) for k, v in schema.get("properties", {}).items()} if understood else {})

    def __call__(self, item: Any) -> bool:
        """True when ``item`` is certainly valid; False: ask jsonschema."""
        if not self.usable or not isinstance(item, dict):
            return False
        fields = self.fields
        for key, value in item.items():
            by_type = fields.get(key)
            if by_type is not None:
                check = by_type.get(type(value), _never)
                if check is not _always and not check(value):
                    return False
        return True
