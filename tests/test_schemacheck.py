"""The quick check of claim objects (audit.reading.schemacheck) never calls a claim valid that jsonschema finds
an error in, and calls the usual valid claims valid (so they skip jsonschema)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from audit.reading.jsonfile import frame_from_items
from audit.reading.schemacheck import QuickCheck, compile_check
from audit.resources import schema_path

SCHEMA = json.loads(schema_path("claims.schema.json").read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)
QUICK = QuickCheck(SCHEMA)


def _valid(item: dict) -> bool:
    return not list(VALIDATOR.iter_errors(item))


VALID = [
    {"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": 3.14e23},
    {"id": 7, "name": None, "source": "Brown et al. 2020, Table D.1", "chips": 1024, "mfu": 0.462},
    {"id": "x", "hardware": "A100 80GB", "precision": "bf16", "wall_clock_days": "21 days", "unknown": [1, 2]},
    {"id": "y", "name": 3.5, "params_notes": "a" * 20000},
]
INVALID = [
    {"id": ""},                          # minLength 1
    {"id": 1.5},                         # not an integer
    {"id": True},                        # a boolean is not an integer
    {"id": "z", "params": True},         # a boolean is not a number
    {"id": "z", "params": [1, 2]},       # an array
    {"id": "z", "params": {"v": 1}},     # an object
    {"id": "z", "hardware": 12},         # a number where text is expected
    {"id": "z", "source": "s" * 2001},   # too long
    {"id": "a" * 201},                   # too long
]


@pytest.mark.parametrize("item", VALID)
def test_usual_valid_claims_are_certainly_valid(item):
    assert _valid(item)
    assert QUICK(item)


@pytest.mark.parametrize("item", INVALID)
def test_invalid_claims_are_left_to_jsonschema(item):
    assert not _valid(item)
    assert not QUICK(item)


def test_values_it_cannot_judge_go_to_jsonschema():
    # numpy numbers, NaN, a float where an integer is asked: not certain (jsonschema decides)
    assert not QUICK({"id": np.int64(3)})
    assert not QUICK({"id": 3.0})
    assert not QUICK({"id": "q", "params": np.float64(1.0)})
    assert not QUICK(["not", "an", "object"])


def test_a_schema_it_does_not_understand_is_never_certain():
    assert not compile_check({"type": "string", "pattern": "^a"})("a")
    assert not compile_check({"$ref": "#/x"})("a")
    assert not QuickCheck({**SCHEMA, "required": ["id"]})({"id": "a"})
    assert not QuickCheck({**SCHEMA, "additionalProperties": False})({"id": "a"})
    check = compile_check({"type": "number", "minimum": 0, "maximum": 1})
    assert check(0.5) and not check(2) and not check(math.nan) and not check("0.5")
    assert compile_check({"type": "string", "enum": ["a", "b"]})("a")
    assert not compile_check({"type": "string", "enum": ["a", "b"]})("c")


_FIELDS = ["id", "name", "source", "hardware", "params", "chips", "mfu", "params_notes", "extra_field"]
_VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=5), st.text(min_size=195, max_size=205), st.lists(st.integers(), max_size=2),
                    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(_FIELDS), _VALUES, max_size=5))
def test_certainly_valid_means_valid_to_jsonschema(item):
    if QUICK(item):
        assert _valid(item), item


def test_problems_found_are_jsonschemas_own():
    """frame_from_items reports for each invalid claim exactly what jsonschema finds, and nothing for valid ones."""
    items = [*VALID, *INVALID]
    table = frame_from_items(items, "claims.json")
    fields = sorted((pos, fld) for pos, fld, _ in table.problems)
    expected = sorted((pos, str(e.path[0]) if e.path else "") for pos, item in enumerate(items)
                      for e in VALIDATOR.iter_errors(item))
    assert fields == expected and all(pos >= len(VALID) for pos, _ in fields)
