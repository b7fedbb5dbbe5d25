"""Numbers as people read them: ``175B``, ``3.14e23 FLOP``, ``1,022,362 h``, ``46.2 %``, ``989.4 TFLOP/s``.

Used by every renderer, so the same value reads the same everywhere. Every value is first rounded to 12
significant digits (:mod:`audit.rounding`), so that a last-bit difference between machines cannot tip a
printed digit (2.6625e13 is "2.662e13" on every machine, not "2.663e13" on one of them).
"""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal
from math import isfinite
from typing import Callable, Sequence

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


def _round(x: float) -> float:
    """``x`` rounded to 12 significant digits (what every function here formats)."""
    return float(format(float(x), _ROUND))


# The functions below whose names end in ``_text`` take a value already rounded (:func:`_round`) and remember
# nothing: the public functions are these with the rounding and the memo.


def _sig_text(x: float, digits: int = 3) -> str:
    if x == 0 or not isfinite(x):
        return str(x)
    text = format(x, _G[digits]) if digits in _G else f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exp = text.split("e")
        text = f"{mantissa}e{int(exp)}"
    return text


def _sci_text(x: float, digits: int = 3) -> str:
    if x == 0 or not isfinite(x):
        return str(x)
    mantissa, exp = (format(x, _E[digits]) if digits in _E else f"{x:.{digits - 1}e}").split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exp)}"


@_memoized
def sig(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, without trailing zeros."""
    return _sig_text(x, digits)


def _percent_text(p: float) -> str:
    """A percentage to 3 significant digits, written out in full with thousands separators from 1,000 to below a
    million ("4,400", not "4.4e3": an MFU of 44 is 4,400 %)."""
    text = _sig_text(p, 3)
    return f"{float(text):,.0f}" if isfinite(p) and 1e3 <= abs(p) < 1e6 else text


def percent(x: float) -> str:
    """A fraction as a percentage, without the sign: 0.462 → "46.2", 44.03 → "4,400"."""
    return _percent_text(_round(x * 100))


@_memoized
def sci(x: float, digits: int = 3) -> str:
    """Scientific notation: ``3.14e23``."""
    return _sci_text(x, digits)


def count(x: float) -> str:
    """Counts: ``175B``, ``1.4T``, ``65.2B``; below a million with thousands separators."""
    return _count(x, 0)


def _count_text(x: float, _digits: int = 0) -> str:
    if not isfinite(x):
        return str(x)
    size = abs(x)
    if size >= 1e6:
        for scale, suffix in _COUNT_SUFFIXES:
            if size >= scale:
                return f"{_sig_text(_round(x / scale), 4)}{suffix}"
    if abs(x - round(x)) < 1e-9 or abs(x) >= 1000:
        return f"{int(round(x)):,}"
    return f"{x:,.4g}"


_count = _memoized(_count_text)


def hours(x: float) -> str:
    """Accelerator-hours with separators: ``1,022,362``; large values as ``30.84M``."""
    return _hours_text(_round(x))


def _hours_text(x: float) -> str:
    if not isfinite(x):
        return str(x)
    if abs(x) >= 1e7:
        return _count_text(x)
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return _sig_text(x, 4)


#: Decimal units of bytes (a datasheet's "80 GB" is 80e9 bytes), largest first.
_BYTE_UNITS = ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))


def _memory_text(x: float, _digits: int = 4) -> str:
    """Bytes to 4 significant digits in the largest decimal unit that leaves at least 1: ``80 GB``, ``6.784 TB``
    (not ``6784 GB``), ``1.12 TB``; chosen after rounding, so 999.97e9 is ``1 TB``, not ``1000 GB``."""
    if not isfinite(x):
        return str(x)
    shown = _round(float(_sig_text(x, 4)))  # the 4 digits shown, which choose the unit
    for scale, unit in _BYTE_UNITS:
        if abs(shown) >= scale:
            return f"{_sig_text(_round(x / scale), 4)} {unit}"
    return f"{_sig_text(x, 4)} B"


_memory = _memoized(_memory_text)


def memory(x: float) -> str:
    """Bytes with their unit, scaled: ``80 GB``, ``6.784 TB``. The one writer of a memory size (a quantity of
    kind ``bytes``, a datasheet's memory) in every report, so a value and its derivation agree."""
    return _memory(x, 4)


def _kind(name: str) -> str:
    """The kind a quantity's value is written as: its own, but N (``n_eff``) is a count and the catalog's peak a
    FLOP rate."""
    if name == "n_eff":
        return "count"
    if name == "catalog_peak":
        return "flops_rate"
    q = BY_NAME.get(name)
    return q.kind if q else ""


def value(name: str, x: float | None, unit: bool = True) -> str:
    """Format a quantity's value in its unit (``unit=False`` leaves the unit out)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    kind = _kind(name)
    if kind == "fraction":
        return f"{percent(x)} %"
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
        return memory(x) if unit else sci(x)
    if name == "tokens_per_param":
        return sig(x, 4)
    if kind in _ENERGY_UNITS:  # energy, power, emissions, money (issue 13)
        return f"{_plain(x)} {_ENERGY_UNITS[kind]}".rstrip() if unit else _plain(x)
    return count(x)


#: Units shown after the values of the energy, power, emissions and money quantities.
_ENERGY_UNITS: dict[str, str] = {"power": "W", "energy": "MWh", "co2": "t CO2e", "usd": "USD",
                                 "usd_rate": "USD/chip-h", "intensity": "kg CO2e/kWh", "ratio": ""}


def written(text: str) -> str:
    """A figure's text as a reader would have written it: the text of a number cell (a JSON number, a Parquet
    float), which is the number's ``repr`` ("175000000000.0"), in the shortest form that reads back as the same
    number ("1.75e11", "512"); any other text as it is. A number's ``repr`` keeps every digit and no exponent
    below 1e16, which no one writes: the original text of a JSON number is gone once it is parsed."""
    try:
        x = float(text)
    except (TypeError, ValueError):
        return text
    if not isfinite(x) or repr(x) != text:
        return text
    d = Decimal(text).normalize()
    sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)  # finite
    places = len(digits) + exponent  # digits before the point
    if x == 0 or -3 < places <= 6:  # 0.00123 to 999999: positional, as repr writes it, without a trailing ".0"
        return text[:-2] if text.endswith(".0") else text
    mantissa = "".join(map(str, digits))
    mantissa = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{places - 1}"


def _plain(x: float) -> str:
    """A value of an energy, power, emissions or money quantity: 4 significant digits, thousands separated."""
    if abs(x) >= 1e7:
        return count(x)
    if abs(x) >= 1000:
        return f"{round_value(x):,.0f}"
    return sig(x, 4)


def _operand_kind(name: str) -> str:
    """The kind an operand is written as: its quantity's, else a FLOP rate for the catalog's peak and a count for
    anything else (N)."""
    q = BY_NAME.get(name)
    return q.kind if q else ("flops_rate" if name == "catalog_peak" else "count")


def operand(name: str, x: float) -> str:
    """A value inside a formula: compact, no unit, exact enough to redo the arithmetic (4 digits)."""
    kind = _operand_kind(name)
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


# ------------------------------------------------------------------------------------- a column at a time
#
# The same texts as the functions above, for a whole column of numbers (the JSON report formats every figure of
# every claim): each step is one list comprehension over the column, no function call and no memo look-up per
# number, and the mantissas' zeros and the exponents are fixed over the column's texts joined into one string.
# 1.3 to 2.7 times faster than the functions one number at a time on the benchmark's figures;
# tests/test_records_columns.py checks that every text is the same.

_SEP = "\x1f"
_TRAILING_ZEROS = re.compile(r"\.?0+e")  # "3.100e" -> "3.1e", "3.000e" -> "3e" (a mantissa's zeros)


def values(name: str, xs: Sequence[float | None], unit: bool = True) -> list[str]:
    """``[value(name, x, unit) for x in xs]``, a column at a time."""
    present = [j for j, x in enumerate(xs) if x is not None and x == x]
    if len(present) == len(xs):
        return _value_texts(name, unit, xs)  # type: ignore[arg-type]
    out = ["—"] * len(xs)
    _put(out, present, _value_texts(name, unit, [xs[j] for j in present]))  # type: ignore[misc]
    return out


def operands(name: str, xs: Sequence[float]) -> list[str]:
    """``[operand(name, x) for x in xs]``, a column at a time."""
    kind = _operand_kind(name)
    if kind == "fraction":
        return _sig_texts(_rounded(xs), 4)
    if kind in ("flop", "flops_rate", "bytes"):
        return _sci_texts(_rounded(xs), 4)
    if kind == "hours":
        return _hours_texts(_rounded(xs))
    if kind in ("days", "tokens_rate"):  # below 1000 to 4 digits, else as a count (NaN: as a count)
        out = [""] * len(xs)
        low = [j for j, x in enumerate(xs) if x < 1000]
        high = [j for j, x in enumerate(xs) if not x < 1000]
        _put(out, low, _sig_texts(_rounded([xs[j] for j in low]), 4))
        _put(out, high, _count_texts(_rounded([xs[j] for j in high])))
        return out
    if kind in _ENERGY_UNITS:
        return [_plain(x) for x in xs]
    return _count_texts(_rounded(xs))


def counts(xs: Sequence[float]) -> list[str]:
    """``[count(x) for x in xs]``, a column at a time."""
    return _count_texts(_rounded(xs))


def sigs(xs: Sequence[float], digits: int = 3) -> list[str]:
    """``[sig(x, digits) for x in xs]``, a column at a time."""
    return _sig_texts(_rounded(xs), digits)


def scis(xs: Sequence[float], digits: int = 3) -> list[str]:
    """``[sci(x, digits) for x in xs]``, a column at a time."""
    return _sci_texts(_rounded(xs), digits)


def _value_texts(name: str, unit: bool, xs: Sequence[float]) -> list[str]:
    """:func:`value` of each of ``xs`` (none missing)."""
    kind = _kind(name)
    texts: list[str]
    if kind == "fraction":
        return [_percent_text(p) + " %" for p in _rounded([x * 100 for x in xs])]
    if kind == "flop":
        texts = _sci_texts(_rounded(xs), 3)
        return [t + " FLOP" for t in texts] if unit else texts
    if kind == "flops_rate":
        if not unit:
            return _sci_texts(_rounded(xs), 3)
        return [t + " TFLOP/s" for t in _sig_texts(_rounded([x / 1e12 for x in xs]), 4)]
    if kind == "hours":
        texts = _hours_texts(_rounded(xs))
        return [t + " h" for t in texts] if unit else texts
    if kind == "days":
        texts = _sig_texts(_rounded(xs), 3)
        return [t + " days" for t in texts] if unit else texts
    if kind == "tokens_rate":
        texts = _count_texts(_rounded(xs))
        return [t + " tokens/s" for t in texts] if unit else texts
    if kind == "bytes":
        return [memory(x) for x in xs] if unit else _sci_texts(_rounded(xs), 3)  # a value per distinct figure
    if name == "tokens_per_param":
        return _sig_texts(_rounded(xs), 4)
    if kind in _ENERGY_UNITS:
        return [value(name, x, unit) for x in xs]
    return _count_texts(_rounded(xs))


def _put(out: list, at: list[int], texts: list[str]) -> None:
    """``out[j] = text`` for each position of ``at`` and its text."""
    for j, text in zip(at, texts):
        out[j] = text


def _rounded(xs: Sequence[float]) -> list[float]:
    """:func:`_round` of each."""
    return [float(format(x, _ROUND)) for x in xs]


def _fixed_exponents(texts: list[str]) -> list[str]:
    """Exponents written as :func:`sig` and :func:`sci` write them (``e23``, ``e-5``, ``e0``), over the column at
    once: Python writes an exponent with a sign and two or three digits, so only a two-digit exponent's leading
    zero and the plus sign go."""
    joined = _SEP.join(texts)
    if "e" not in joined:
        return texts
    return joined.replace("e+0", "e+").replace("e-0", "e-").replace("e+", "e").split(_SEP)


def _sig_texts(xs: list[float], digits: int) -> list[str]:
    """:func:`_sig_text` of each (rounded) value; 0.0 and -0.0 as ``str`` writes them, as NaN and infinities."""
    spec = _G[digits] if digits in _G else f".{digits}g"
    return _fixed_exponents([format(x, spec) if x else str(x) for x in xs])


def _sci_texts(xs: list[float], digits: int) -> list[str]:
    """:func:`_sci_text` of each (rounded) value."""
    spec = _E[digits] if digits in _E else f".{digits - 1}e"
    texts = [format(x, spec) if x and x - x == 0 else str(x) for x in xs]  # x - x: NaN for NaN and infinities
    if digits > 1:  # a mantissa with a point: its trailing zeros (and the point) dropped
        texts = _TRAILING_ZEROS.sub("e", _SEP.join(texts)).split(_SEP)
    return _fixed_exponents(texts)


def _count_texts(xs: list[float]) -> list[str]:
    """:func:`_count_text` of each (rounded) value."""
    out = [""] * len(xs)
    scaled: dict[str, list[int]] = {"T": [], "B": [], "M": []}
    for j, x in enumerate(xs):
        size = abs(x)
        if x - x != 0:
            out[j] = str(x)
        elif size >= 1e12:
            scaled["T"].append(j)
        elif size >= 1e9:
            scaled["B"].append(j)
        elif size >= 1e6:
            scaled["M"].append(j)
        elif abs(x - round(x)) < 1e-9 or size >= 1000:
            out[j] = f"{int(round(x)):,}"
        else:
            out[j] = f"{x:,.4g}"
    for scale, suffix in _COUNT_SUFFIXES:
        at = scaled[suffix]
        if at:
            for j, text in zip(at, _sig_texts(_rounded([xs[j] / scale for j in at]), 4)):
                out[j] = text + suffix
    return out


def _hours_texts(xs: list[float]) -> list[str]:
    """:func:`_hours_text` of each (rounded) value."""
    out: list[str | None] = [format(x, ",.0f") if 100 <= abs(x) < 1e7 else None for x in xs]  # most of them
    rest = [j for j, text in enumerate(out) if text is None]
    if rest:
        large = [j for j in rest if abs(xs[j]) >= 1e7]  # NaN is not
        small = [j for j in rest if abs(xs[j]) < 100]
        _put(out, large, _count_texts([xs[j] for j in large]))
        _put(out, small, _sig_texts([xs[j] for j in small], 4))
        for j in rest:
            if out[j] is None:  # NaN and infinities
                out[j] = str(xs[j])
    return out  # type: ignore[return-value]


def ratio(x: float, beyond: float | None = None) -> str:
    """A ratio: ``1.02x``, ``1000x``, ``0.042x``.

    ``beyond``, a factor above 1 that the ratio lies beyond either way (a verdict's tolerance: a warning is beyond
    the ok factor, an error beyond the warning one), keeps the text beyond it too: digits are added until the
    rounding no longer lands on the factor (0.4999994 beyond 2x is ``0.499999x``, not ``0.5x``, which "warning
    within 2x" would call a warning)."""
    if not math.isfinite(x):
        return "—"
    text = sig(x, 3)
    if beyond is None or not x > 0 or not abs(math.log(x)) > math.log(beyond):
        return f"{text}x"
    digits = 3
    while digits < 12 and not abs(math.log(float(text))) > math.log(beyond):
        digits += 1
        text = sig(x, digits)
    return f"{text}x"
