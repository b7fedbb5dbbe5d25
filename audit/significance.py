"""The precision of a stated figure: a number written with k significant digits means ± half a unit of its last
digit. "56.5 %" is 56.45-56.55 %; "21 days" is 20.5-21.5 days; "1.4T" is 1.35-1.45T.

No check may flag a difference smaller than the precision of the figures it compares (issue 9: "HFU 56.5 % is
below MFU 56.54 %" is not a finding when the MFU was derived from figures stated to three digits). The engine
keeps, for every value, its relative half-width: read here from the text as written, and carried through every
derivation (in log space the half-widths of a product add up).
"""

from __future__ import annotations

import re
import sys
from typing import Any

import numpy as np
import pandas as pd

from audit.columns import map_unique
from audit.units import (COMPOUND_DURATION_RE2, RANGE_RE2, UnitError, compound_duration_unit, parse_value, range_of,
                         strip_qualifiers)

# The first number in a cell: digits with optional thousands separators and decimals, and an exponent.
_NUMBER = re.compile(r"(?P<mantissa>\d[\d,]*(?:\.\d*)?|\.\d+)(?:\s*(?:[eE]|[×xX*·]\s*10\s*\^?\s*)(?P<exp>[-+]?\d+))?")


#: A whole or decimal number in ASCII digits and nothing else ("2048.0", "18400000000.0", "7"): no range, no
#: qualifier and no separator to read, so :func:`relative_half_width` reads it without its general steps (a
#: multi-phase batch's phases hold thousands of such texts, the reprs of their runs' figures).
_PLAIN_NUMBER = re.compile(r"([0-9]+)(?:\.([0-9]+))?")


def relative_half_width(text: object) -> float:
    """± half a unit of the last stated digit, relative to the stated number (0 when there is no text).

    ``"56.5%"`` → 0.05 / 56.5; ``"1,022,362"`` → 0.5 / 1,022,362; ``"3.14e23"`` → 0.005 / 3.14; a figure
    read from a number cell (``2048.0``) counts its digits as written (``2048``). Trailing zeros of a whole
    number count as significant (``"300B"`` → ± 0.5B): the narrower reading, so that precision never hides a
    real difference.
    """
    if text is None or not isinstance(text, str):
        return 0.0
    plain = _PLAIN_NUMBER.fullmatch(text)
    if plain is not None:  # the steps below, for such a text: the whole text is the mantissa
        whole, fraction = plain.groups()
        if fraction == "0":  # a number cell printed by Python: the ".0" is not a stated digit
            fraction = None
        value = float(whole if fraction is None else text)
        return 0.0 if value == 0 else 0.5 * 10.0 ** (-len(fraction or "")) / value
    ends = range_ends(text)
    if ends is not None:  # "41-42%": the middle, 41.5 %, ± half the range
        return (ends[1] - ends[0]) / (ends[1] + ends[0])
    compound = compound_duration_unit(text)
    if compound is not None:  # "2d 16h": ± half an hour of 64 hours
        total, unit = compound
        return 0.5 * unit / total if total > 0 else 0.0
    m = _NUMBER.search(text)
    if not m:
        return 0.0
    mantissa = m.group("mantissa").replace(",", "")
    if _is_python_float_repr(text):  # a number cell printed by Python (2048.0): the ".0" is not a stated digit
        mantissa = mantissa[:-2]
    try:
        value = float(mantissa)
    except ValueError:
        return 0.0
    if value == 0:
        return 0.0
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (-decimals) / value


def range_ends(text: str) -> tuple[float, float] | None:
    """The two ends of a figure written as a range ("41-42%", "30 to 40 days", "1.2-1.5T": as written, in their
    one scale; "500M to 1.5B": as counts), or None (no range, or ends in units of their own, "2 days to 3 weeks",
    whose precision is then read from the first figure: the narrower reading)."""
    text = strip_qualifiers(text)  # "about 41-42%"
    ends = range_of(text)
    if ends is None:
        return None
    first, second = (_NUMBER.match(e.strip()) for e in ends)
    if first is None or second is None or first.group("exp") or second.group("exp"):
        return None
    scale_a, scale_b = ends[0].strip()[first.end():].strip(), ends[1].strip()[second.end():].strip()
    if scale_b.startswith(scale_a):  # one scale, after the second end or after both
        low, high = (float(m.group("mantissa").replace(",", "")) for m in (first, second))
    else:  # each end with its own multiplier ("500M to 1.5B"), read as counts
        try:
            low, high = (parse_value(e, "count") for e in ends)
        except UnitError:
            return None
    return (low, high) if 0 < low < high else None


def _is_python_float_repr(text: str) -> bool:
    """``"2048.0"``: a whole number as Python prints a float (the text of a numeric cell)."""
    return re.fullmatch(r"\s*\d+\.0\s*", text) is not None


#: Half-widths are capped: a figure stated to one digit ("1e24") is still a figure, not "anything".
_MAX_HALF_WIDTH = 0.5


#: From this many distinct texts on, :func:`relative_half_widths` works on whole columns (pyarrow.compute, no
#: Python per cell); below it, one call of :func:`relative_half_width` per distinct text costs less than the import.
_VECTOR_FROM = 2000
#: The same once pyarrow.compute is imported (a batch's second audit, or its claims read from Parquet): measured
#: on bench/scale.py's texts ("17B", "2.62M GPU-hours", "22.4%"), the whole-column reading costs 1.3-1.4 ms for
#: 200 texts against 1.8-1.9 ms one by one, and 2 ms for 1,000 against 8-9 ms.
_VECTOR_FROM_IMPORTED = 200

#: The mantissa of :data:`_NUMBER` for ASCII text, in RE2 syntax (``\d`` is ASCII in RE2; Python's also matches
#: other scripts' digits, so non-ASCII text is read by :func:`relative_half_width` itself).
_MANTISSA_RE2 = r"(?P<mantissa>[0-9][0-9,]*(?:\.[0-9]*)?|\.[0-9]+)"
#: The same match where no "." comes before it (anchored: about twice as fast). A match can only start at a digit
#: or a ".", so where this one matches, it is the first match; where it does not (a "." without a digit before the
#: number), the search above is run.
_MANTISSA_FIRST_RE2 = r"^[^0-9.]*" + _MANTISSA_RE2
#: :func:`_is_python_float_repr` in RE2 syntax (Python's ``\s`` on ASCII text: these eleven characters).
_FLOAT_REPR_RE2 = r"^[\t\n\x0b\x0c\r\x1c-\x1f ]*[0-9]+\.0[\t\n\x0b\x0c\r\x1c-\x1f ]*$"


def _pow10(exponents: np.ndarray) -> np.ndarray:
    """10 to each whole exponent by the C library's ``pow``, as Python's ``10.0 ** -k`` in
    :func:`relative_half_width` computes it: numpy's ``power`` dispatches to SIMD kernels on CPUs that have them
    (AVX-512), which differ from ``pow`` in the last bit, so the vectorized precisions differed from the scalar
    ones on such a machine."""
    return np.float_power(10.0, np.asarray(exponents, dtype=float))


def relative_half_widths(texts: np.ndarray) -> np.ndarray:
    """:func:`relative_half_width` of every cell of an object array of texts (None or non-text: 0), on whole
    columns: the same figures, with no Python per cell for ASCII text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    texts = np.asarray(texts, dtype=object)
    is_text = np.fromiter(map(isinstance, texts, [str] * len(texts)), dtype=bool, count=len(texts))
    out = np.zeros(len(texts), dtype=float)
    idx = np.flatnonzero(is_text)
    if len(idx) == 0:
        return out
    arr = pa.array(texts if len(idx) == len(texts) else texts[idx], type=pa.string())
    ascii_ = pc.string_is_ascii(arr).to_numpy(zero_copy_only=False)
    first = pc.struct_field(pc.extract_regex(arr, _MANTISSA_FIRST_RE2), "mantissa")
    missed = pc.is_null(first)
    if pc.any(missed).as_py():
        later = pc.struct_field(pc.extract_regex(pc.filter(arr, missed), _MANTISSA_RE2), "mantissa")
        first = pc.replace_with_mask(first, missed, later)
    has = pc.is_valid(first).to_numpy(zero_copy_only=False) & ascii_
    mantissa = pc.fill_null(pc.replace_substring(first, ",", ""), "")
    # A Python float's text ("2048.0") holds ".0": the pattern is tried only on the texts that do.
    repr_ = pc.match_substring(arr, ".0").to_numpy(zero_copy_only=False)
    if repr_.any():
        maybe = np.flatnonzero(repr_)
        repr_[maybe] = pc.match_substring_regex(arr.take(pa.array(maybe)), _FLOAT_REPR_RE2).to_numpy(
            zero_copy_only=False)
    length = pc.utf8_length(mantissa).to_numpy(zero_copy_only=False).astype(np.int64)
    length = np.where(repr_, length - 2, length)  # "2048.0": the ".0" is not a stated digit
    mantissa = pc.if_else(pa.array(repr_), pc.utf8_slice_codeunits(mantissa, 0, -2), mantissa)
    dot = pc.find_substring(mantissa, ".").to_numpy(zero_copy_only=False).astype(np.int64)
    decimals = np.where(dot >= 0, length - dot - 1, 0)
    value = pc.cast(pc.if_else(pa.array(has), mantissa, "0"), pa.float64()).to_numpy(zero_copy_only=False)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        width = np.where(value == 0, 0.0, 0.5 * _pow10(-decimals) / value)
    width = np.where(has, width, 0.0)
    # Other scripts' digits and spaces, and ranges ("41-42%"): Python's own reading.
    ranged = pc.match_substring_regex(arr, RANGE_RE2, ignore_case=True).to_numpy(zero_copy_only=False)
    ranged |= pc.match_substring_regex(arr, COMPOUND_DURATION_RE2, ignore_case=True).to_numpy(zero_copy_only=False)
    slow = np.flatnonzero(~ascii_ | ranged)
    width[slow] = [relative_half_width(t) for t in texts[idx[slow]]]
    out[idx] = width
    return out


def number_half_widths(values: np.ndarray) -> np.ndarray:
    """:func:`relative_half_width` of each number's ``repr`` (the text of a number cell), bit for bit, without
    writing the reprs: Arrow writes each float's shortest round-trip digits (the digits ``repr`` writes) at C
    speed, and the digit count k and decimal exponent E say how ``repr`` lays them out.

    ``repr`` writes ``-4 <= E < 16`` positionally (``"2048.0"``, ``"0.0001"``), read as the number itself with
    ``max(0, k - 1 - E)`` decimals (a whole number's ``.0`` is not a stated digit); otherwise in scientific
    notation (``"1.5e-05"``), read as its mantissa ``d.ddd`` with ``k - 1`` decimals. NaN, ±inf and 0 give 0.
    Arrow's texts are read with trims and searches (no regular expression): about 45 ms per 100,000 floats of
    17 digits, against about 140 ms for writing their reprs alone (CPU time)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def ints(arr: Any) -> np.ndarray:
        return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.int64)

    x = np.abs(np.asarray(values, dtype=np.float64))
    out = np.zeros(len(x), dtype=float)
    idx = np.flatnonzero(np.isfinite(x) & (x > 0))
    if not len(idx):
        return out
    a = x[idx]
    # Arrow's text of a positive float: "2048", "123.45", "0.000015" or "1.2345e+15", "1e-07" (no trailing zero
    # after a point, no leading zero but the "0." of a number below 1).
    written = pc.cast(pa.array(a), pa.string())
    length = ints(pc.utf8_length(written))
    scientific = ints(pc.find_substring(written, "e")) >= 0
    k = np.zeros(len(a), dtype=np.int64)
    e = np.zeros(len(a), dtype=np.int64)
    value = a.copy()
    sci = np.flatnonzero(scientific)
    mantissa = None
    if len(sci):
        text = written.take(pa.array(sci))
        mantissa = pc.utf8_rtrim(pc.utf8_rtrim(text, "+-0123456789"), "e")  # "1.2345", "1"
        digits = ints(pc.utf8_length(mantissa))
        k[sci] = np.where(digits > 1, digits - 1, 1)
        e[sci] = ints(pc.cast(pc.utf8_ltrim(pc.utf8_ltrim(text, "0123456789."), "e+"), pa.int64()))  # "-05" → -5
    pos = np.flatnonzero(~scientific)
    if len(pos):
        text = written.take(pa.array(pos)) if len(sci) else written
        n = length[pos]
        point = ints(pc.find_substring(text, "."))
        below_one = a[pos] < 1
        stripped = n - ints(pc.utf8_length(pc.utf8_ltrim(text, "0.")))  # "0.000015": "0.0000" (the point and 5 zeros)
        whole_digits = n - ints(pc.utf8_length(pc.utf8_rtrim(text, "0")))  # "2000": 3 trailing zeros
        k[pos] = np.where(point < 0, n - whole_digits, np.where(below_one, n - stripped, n - 1))
        e[pos] = np.where(point < 0, n - 1, np.where(below_one, 1 - stripped, point - 1))
    positional = (e >= -4) & (e < 16)
    decimals = np.where(positional, np.maximum(0, k - 1 - e), k - 1)
    if mantissa is not None:  # repr's mantissa "d.ddd" is Arrow's, read as Python reads it (correctly rounded)
        value[sci] = np.where(positional[sci], value[sci], mantissa.cast(pa.float64()).to_numpy(zero_copy_only=False))
    width = 0.5 * _pow10(-decimals) / value
    # A number Arrow writes out in full but repr in scientific notation (below 1e-4, or a whole number of 17
    # digits and more): its repr is read as written.
    odd = np.flatnonzero(~scientific & ~positional)
    if len(odd):
        width[odd] = [relative_half_width(repr(float(v))) for v in a[odd]]
    out[idx] = width
    return out


#: The significant digits from which a number cell is taken as exact: one written with 13 or more has a relative
#: half-width below 5e-13, far beneath the slack of 1e-9 (in log space) that every comparison adds anyway
#: (``audit.rules._SLACK``), so reading its digits could change no verdict. Such figures are what programs write
#: (run logs, computed columns: 1,000,000 synthetic claims of bench/scale.py, nearly all of 17 digits); reading
#: them cost about a tenth of the engine's time.
_EXACT_FROM_DIGITS = 13


def _long_numbers(values: np.ndarray) -> np.ndarray:
    """Which numbers' reprs certainly have at least :data:`_EXACT_FROM_DIGITS` significant digits, without writing
    them: scaled to about 12 whole digits, a number of at most 12 significant digits is a whole number up to the
    rounding of a float (a relative 3.3e-16 of at most 1e13: below 4e-3), so one at least 0.01 from a whole number
    has more. A number within 0.01 of one by chance (about 2 %) is read in full, as are zeros, NaN and the
    extremes of the float range (where the scale 10^(e - 11) loses digits)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = np.abs(values)
        usable = (x > 1e-280) & (x < 1e290)
        scale = 10.0 ** (np.floor(np.log10(np.where(usable, x, 1.0))) - (_EXACT_FROM_DIGITS - 2))
        scaled = x / scale
        return usable & (np.abs(scaled - np.round(scaled)) >= 0.01)


def log_half_widths_of_numbers(values: np.ndarray) -> np.ndarray:
    """:func:`log_half_widths` of the numbers' reprs (a column of number cells), from the numbers themselves:
    once per distinct number when they repeat (chip counts); 0 for a number of :data:`_EXACT_FROM_DIGITS`
    significant digits or more (exact for every comparison)."""
    values = np.asarray(values, dtype=np.float64)
    long = _long_numbers(values)
    if long.any():
        out = np.zeros(len(values), dtype=float)
        short = np.flatnonzero(~long)
        if len(short):
            out[short] = log_half_widths_of_numbers(values[short])
        return out
    sample = values[:: max(1, len(values) // 1024)]
    if len(values) >= 4096 and len(np.unique(sample)) <= len(sample) // 8:
        codes, uniques = pd.factorize(values.view(np.int64))  # by bits: -0.0 is not 0.0 (its repr differs)
        delta = number_half_widths(np.asarray(uniques).view(np.float64))[codes]
    else:
        delta = number_half_widths(values)
    return -np.log1p(-np.minimum(delta, _MAX_HALF_WIDTH))


def log_half_widths(texts: pd.Series) -> np.ndarray:
    """Every cell's precision in log space, −ln(1 − δ) for δ = :func:`relative_half_width` (the wider side of
    ln(1 ± δ)), once per distinct text (or once per cell, when nearly every text is distinct: the texts of figures
    read from number cells). Log half-widths add up through products and quotients."""
    if texts.dtype == object and len(texts) >= 4 * _VECTOR_FROM:
        head = texts.iloc[:_VECTOR_FROM]
        if head.nunique() >= 0.9 * head.notna().sum() > 0:  # numbering the texts would not save reading them
            delta = relative_half_widths(texts.to_numpy(dtype=object))
            return -np.log1p(-np.minimum(delta, _MAX_HALF_WIDTH))
    if texts.dtype == object:
        # Numbered once: only a text has a width, so values that are equal but written differently (1, 1.0, True:
        # what map_unique tells apart) all have none.
        codes, uniques = pd.factorize(texts, use_na_sentinel=True)
        uniques = np.asarray(uniques, dtype=object)
        vector_from = _VECTOR_FROM_IMPORTED if "pyarrow.compute" in sys.modules else _VECTOR_FROM
        widths = relative_half_widths(uniques) if len(uniques) >= vector_from else \
            [relative_half_width(text) for text in uniques]
        delta = np.append(widths, 0.0)[codes]  # NaN/None → code -1 → the 0.0 appended
    else:
        delta = map_unique(texts, relative_half_width).to_numpy(dtype=float)
    return -np.log1p(-np.minimum(delta, _MAX_HALF_WIDTH))
