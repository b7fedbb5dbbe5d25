"""Numbers that leave the tool are rounded to :data:`SIGNIFICANT_DIGITS` significant digits.

The last bits of a float computed with logarithms and powers depend on the numpy build and the CPU (SIMD
kernels of ``log``, ``exp`` and ``power`` differ in their last unit in the last place). Reports, golden files
and JSON must be identical on every machine, so every number written out is first rounded to 12 significant
digits: far more than any figure a report states (three or four), far fewer than the 15-17 a double holds, so
a difference in the last bit never survives. Only correctly rounded operations are used here (IEEE division,
multiplication, ``rint`` and comparisons against exact powers of ten), so the rounding itself is the same on
every machine.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: Significant digits of every number written out (JSON, CSV, Parquet, HTML data, Markdown, text).
SIGNIFICANT_DIGITS = 12

# Exact powers of ten: 10**k is exactly representable for 0 <= k <= 22 (5**22 < 2**53).
_EXACT = np.array([float(10**k) for k in range(23)])
# Powers of ten for magnitudes, as the nearest doubles (Python parses "1e-5" correctly rounded).
_POW_MIN, _POW_MAX = -330, 330
_POWERS = np.array([float(f"1e{k}") for k in range(_POW_MIN, _POW_MAX + 1)])


def round_value(x: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """One number rounded to ``digits`` significant digits (correctly rounded); other values unchanged."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (float, np.floating)):
        return x
    x = float(x)
    if not math.isfinite(x) or x == 0.0:
        return x
    return float(f"{x:.{digits}g}")


def round_array(values: np.ndarray, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """Float array rounded to ``digits`` significant digits, vectorized (NaN, inf and 0 unchanged).

    The magnitude comes from ``log10`` and is then corrected by exact comparisons, so a last-bit difference in
    ``log10`` cannot change it. The scaled value is an integer below 10**digits; dividing it (or multiplying
    it) by an exact power of ten gives the double nearest to the decimal number, as ``float(f"{x:.12g}")``
    would, except for exact ties.
    """
    x = np.asarray(values, dtype=float)
    out = x.copy()
    ok = np.isfinite(x) & (x != 0.0)
    if not ok.any():
        return out
    v = x[ok]
    a = np.abs(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.floor(np.log10(a)).astype(np.int64)
    mag = np.clip(mag, _POW_MIN + 1, _POW_MAX - 1)
    mag = np.where(a >= _POWERS[mag - _POW_MIN + 1], mag + 1, mag)
    mag = np.where(a < _POWERS[mag - _POW_MIN], mag - 1, mag)
    shift = (digits - 1) - mag  # scale by 10**shift to get an integer of `digits` digits
    result = np.empty_like(v)
    up = (shift >= 0) & (shift <= 22)
    down = (shift < 0) & (shift >= -22)
    if up.any():
        p = _EXACT[shift[up]]
        result[up] = np.rint(v[up] * p) / p
    if down.any():
        p = _EXACT[-shift[down]]
        result[down] = np.rint(v[down] / p) * p
    rest = ~(up | down)
    if rest.any():  # magnitudes beyond 1e-11..1e33: rare, rounded one by one through the exact decimal route
        result[rest] = [round_value(float(t), digits) for t in v[rest]]
    out[ok] = result
    return out
