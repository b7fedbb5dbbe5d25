"""A configuration built in code is checked like the command line's options: a value no audit could mean is a
ValueError naming the field, never a check silently dropped (``bytes_per_param=nan`` used to switch M001 off)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from audit.config import Config


def test_the_defaults_are_valid_and_documented():
    config = Config.default()
    assert config.bytes_per_param == 16  # Adam in mixed precision: 2 + 2 + 4 + 4 + 4 bytes per parameter
    assert 0 < config.band[0] < config.band[1] < 1
    assert all(1 <= ok <= warn for ok, warn in config.tolerances.values())


@pytest.mark.parametrize("change, field", [
    ({"bytes_per_param": math.nan}, "bytes_per_param"),
    ({"bytes_per_param": 0.0}, "bytes_per_param"),
    ({"weight_bytes_per_param": math.inf}, "weight_bytes_per_param"),
    ({"tokens_per_param_optimal": -20.0}, "tokens_per_param_optimal"),
    ({"band": (0.65, 0.15)}, "band"),
    ({"band": (0.15, math.nan)}, "band"),
    ({"tolerances": {"C001": (0.5, 2.0)}}, "C001"),
    ({"tolerances": {"C001": (2.0, 1.5)}}, "C001"),
])
def test_a_value_no_audit_could_mean_is_refused_naming_it(change, field):
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(Config.default(), **change)
