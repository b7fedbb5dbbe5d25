"""Numbers as people read them: ``175B``, ``3.14e23 FLOP``, ``1,022,362 h``, ``46.2 %``, ``989.4 TFLOP/s``.

Used by every renderer, so the same value reads the same everywhere. Every value is first rounded to 12
significant digits (:mod:`audit.rounding`), so that a last-bit difference between machines cannot tip a
printed digit (2.6625e13 is "2.662e13" on every machine, not "2.663e13" on one of them).
"""

from __future__ import annotations

import functools
import math
from math import isfinite
from typing import Callable

from audit.quantities import BY_NAME
from audit.rounding import SIGNIFICANT_DIGITS, round_value

_COUNT_SUFFIXES = ((1e12, "T"), (1e9, "B"), (1e6, "M"))

# Every function here first rounds to SIGNIFICANT_DIGITS with ``float(format(x, _ROUND))``: for a float this is
# exactly audit.rounding.round_value (which also returns 0.0, -0.0, NaN and infinities as they are, as this does),
# without its type checks; these functions run several times for every number a report prints.
_ROUND = f".{SIGNIFICANT_DIGITS}g"
#: Format specs by number of digits (``f"{x:.{digits}g}"`` builds its spec on every call).
_G = {d: f".{d}g" for d in range(1, 18)}
_E = {d: f".{d - 1}e" for d in range(1, 18)}


#: Texts already made, by (function, value, digits): a report writes the same figure many times (a claim's tokens
#: in several formulas, a datasheet's peak in every claim on that part). Only finite non-zero values are kept
#: (0.0 and -0.0 are equal keys but different texts; NaN is never equal to itself), and the memo is emptied when
#: it reaches _MEMO_SIZE entries, so it stays small.
_MEMO: dict[tuple[str, float, int], str] = {}
_MEMO_SIZE = 100_000


def _memoized(make: Callable[[float, int], str]) -> Callable[..., str]:
    """``make(x, digits)`` called with ``x`` rounded to 12 significant digits, its text remembered in _MEMO by
    (function, value, digits) for finite non-zero values."""
    kind = make.__name__

    @functools.wraps(make)
    def text_of(x: float, digits: int = 3) -> str:
        key = (kind, x, digits)
        try:
            text = _MEMO.get(key)
        except TypeError:  # an unhashable number (a 0-d array)
            key, text = (kind, float(x), digits), None
        if text is not None:
            return text
        rounded = float(format(float(x), _ROUND))
        text = make(rounded, digits)
        if rounded != 0 and isfinite(rounded):
            if len(_MEMO) >= _MEMO_SIZE:
                _MEMO.clear()
            _MEMO[key] = text
        return text

    return text_of


@_memoized
def sig(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, without trailing zeros."""
    if x == 0 or not isfinite(x):
        return str(x)
    text = format(x, _G[digits]) if digits in _G else f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exp = text.split("e")
        text = f"{mantissa}e{int(exp)}"
    return text


@_memoized
def sci(x: float, digits: int = 3) -> str:
    """Scientific notation: ``3.14e23``."""
    if x == 0 or not isfinite(x):
        return str(x)
    mantissa, exp = (format(x, _E[digits]) if digits in _E else f"{x:.{digits - 1}e}").split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exp)}"


def count(x: float) -> str:
    """Counts: ``175B``, ``1.4T``, ``65.2B``; below a million with thousands separators."""
    return _count(x, 0)


@_memoized
def _count(x: float, _digits: int = 0) -> str:
    if not isfinite(x):
        return str(x)
    size = abs(x)
    if size >= 1e6:
        for scale, suffix in _COUNT_SUFFIXES:
            if size >= scale:
                return f"{sig(x / scale, 4)}{suffix}"
    if abs(x - round(x)) < 1e-9 or abs(x) >= 1000:
        return f"{int(round(x)):,}"
    return f"{x:,.4g}"


def hours(x: float) -> str:
    """Accelerator-hours with separators: ``1,022,362``; large values as ``30.84M``."""
    x = float(format(float(x), _ROUND))
    if not isfinite(x):
        return str(x)
    if abs(x) >= 1e7:
        return count(x)
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return sig(x, 4)


def value(name: str, x: float | None, unit: bool = True) -> str:
    """Format a quantity's value in its unit (``unit=False`` leaves the unit out)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    q = BY_NAME.get(name)
    kind = q.kind if q else ""
    if name in ("n_eff",):
        kind = "count"
    if name in ("catalog_peak",):
        kind = "flops_rate"
    if kind == "fraction":
        return f"{sig(x * 100, 3)} %"
    if kind == "flop":
        return f"{sci(x)} FLOP" if unit else sci(x)
    if kind == "flops_rate":
        return f"{sig(x / 1e12, 4)} TFLOP/s" if unit else sci(x)
    if kind == "hours":
        return f"{hours(x)} h" if unit else hours(x)
    if kind == "days":
        return f"{sig(x, 3)} days" if unit else sig(x, 3)
    if kind == "tokens_rate":
        return f"{count(x)} tokens/s" if unit else count(x)
    if kind == "bytes":
        return f"{sig(x / 1e9, 4)} GB" if unit else sci(x)
    if name == "tokens_per_param":
        return sig(x, 4)
    if kind in _ENERGY_UNITS:  # energy, power, emissions, money (issue 13)
        return f"{_plain(x)} {_ENERGY_UNITS[kind]}".rstrip() if unit else _plain(x)
    return count(x)


#: Units shown after the values of the energy, power, emissions and money quantities.
_ENERGY_UNITS: dict[str, str] = {"power": "W", "energy": "MWh", "co2": "t CO2e", "usd": "USD",
                                 "usd_rate": "USD/chip-h", "intensity": "kg CO2e/kWh", "ratio": ""}


def _plain(x: float) -> str:
    """A value of an energy, power, emissions or money quantity: 4 significant digits, thousands separated."""
    if abs(x) >= 1e7:
        return count(x)
    if abs(x) >= 1000:
        return f"{round_value(x):,.0f}"
    return sig(x, 4)


def operand(name: str, x: float) -> str:
    """A value inside a formula: compact, no unit, exact enough to redo the arithmetic (4 digits)."""
    q = BY_NAME.get(name)
    kind = q.kind if q else ("flops_rate" if name == "catalog_peak" else "count")
    if kind == "fraction":
        return sig(x, 4)
    if kind in ("flop", "flops_rate", "bytes"):
        return sci(x, 4)
    if kind == "hours":
        return hours(x)
    if kind in ("days", "tokens_rate"):
        return sig(x, 4) if x < 1000 else count(x)
    if kind in _ENERGY_UNITS:
        return _plain(x)
    return count(x)


def ratio(x: float) -> str:
    """A ratio: ``1.02x``, ``1000x``, ``0.042x``."""
    if not math.isfinite(x):
        return "—"
    return f"{sig(x, 3)}x"
