"""The precision of a stated figure: a number written with k significant digits means ± half a unit of its last
digit. "56.5 %" is 56.45-56.55 %; "21 days" is 20.5-21.5 days; "1.4T" is 1.35-1.45T.

No check may flag a difference smaller than the precision of the figures it compares (issue 9: "HFU 56.5 % is
below MFU 56.54 %" is not a finding when the MFU was derived from figures stated to three digits). The engine
keeps, for every value, its relative half-width: read here from the text as written, and carried through every
derivation (in log space the half-widths of a product add up).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from audit.columns import map_unique

# The first number in a cell: digits with optional thousands separators and decimals, and an exponent.
_NUMBER = re.compile(r"(?P<mantissa>\d[\d,]*(?:\.\d*)?|\.\d+)(?:\s*(?:[eE]|[×xX*·]\s*10\s*\^?\s*)(?P<exp>[-+]?\d+))?")


def relative_half_width(text: object) -> float:
    """± half a unit of the last stated digit, relative to the stated number (0 when there is no text).

    ``"56.5%"`` → 0.05 / 56.5; ``"1,022,362"`` → 0.5 / 1,022,362; ``"3.14e23"`` → 0.005 / 3.14; a figure
    read from a number cell (``2048.0``) counts its digits as written (``2048``). Trailing zeros of a whole
    number count as significant (``"300B"`` → ± 0.5B): the narrower reading, so that precision never hides a
    real difference.
    """
    if text is None or not isinstance(text, str):
        return 0.0
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


def _is_python_float_repr(text: str) -> bool:
    """``"2048.0"``: a whole number as Python prints a float (the text of a numeric cell)."""
    return re.fullmatch(r"\s*\d+\.0\s*", text) is not None


#: Half-widths are capped: a figure stated to one digit ("1e24") is still a figure, not "anything".
_MAX_HALF_WIDTH = 0.5


def log_half_widths(texts: pd.Series) -> np.ndarray:
    """Every cell's precision in log space, −ln(1 − δ) for δ = :func:`relative_half_width` (the wider side of
    ln(1 ± δ)), once per distinct text. Log half-widths add up through products and quotients."""
    delta = map_unique(texts, relative_half_width).to_numpy(dtype=float)
    return -np.log1p(-np.minimum(delta, _MAX_HALF_WIDTH))
