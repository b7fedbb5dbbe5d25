"""Stated figures carry their precision (audit/significance.py), and a check that only that precision lets pass
says so: an "agrees" at a ratio beyond the rule's tolerance must not read as an unexplained pass."""

from __future__ import annotations

import numpy as np
import pytest

from audit.api import check_records
from audit.rules import RULES
from audit.significance import relative_half_width


@pytest.mark.parametrize("text, width", [
    ("56.5%", 0.05 / 56.5),  # half a unit of the last digit, relative to the number
    ("1T", 0.5),  # one significant digit: 0.5T to 1.5T
    ("1.00T", 0.005),
    ("48 hours", 0.5 / 48),
    ("1,022,362", 0.5 / 1_022_362),
    ("3.14e23", 0.005 / 3.14),
    ("2048.0", 0.5 / 2048),  # a number cell printed by Python: the ".0" is not a stated digit
])
def test_half_a_unit_of_the_last_stated_digit(text, width):
    assert relative_half_width(text) == pytest.approx(width, rel=1e-12)


#: A vendor-style claim: 512 H100 for 48 hours training 13B parameters on 1T tokens at 55 % MFU. By hand:
#: C = 6 × 13e9 × 1e12 = 7.8e22 FLOP; chip-hours 512 × 48 = 24,576; at the H100 SXM's dense BF16 peak of
#: 989.4 TFLOP/s (NVIDIA H100 datasheet) the figures imply MFU = 7.8e22 / (24,576 × 3600 × 9.894e14) = 89.1 %,
#: and 0.55 / 0.891 = 0.617, beyond C003's 1.25x tolerance.
VENDOR = {"id": "vendor", "params": "13B", "hardware": "H100 SXM", "chips": 512, "wall_clock_days": "48 hours",
          "mfu": "55%"}


def _c003(tokens: str) -> dict:
    result = check_records([{**VENDOR, "tokens": tokens}])
    f = result.findings
    [pos] = f.index[f["rule"].astype(str) == "C003"].tolist()
    row = f.loc[pos]
    return {"severity": str(row["severity"]), "ratio": float(row["ratio"]),
            "message": RULES["C003"].message(result, row)}


def test_a_pass_that_only_the_rounding_of_a_figure_allows_says_which_figure():
    c003 = _c003("1T")  # one significant digit: anything from 0.5T to 1.5T tokens
    assert c003["ratio"] == pytest.approx(0.55 / (7.8e22 / (24_576 * 3600 * 989.4e12)), rel=1e-3)
    assert c003["severity"] == "ok"
    assert 'within the rounding of the stated figures: Tokens written "1T" is anything from 500B to 1.5T' \
        in c003["message"]


def test_the_same_claim_stated_to_three_digits_is_a_finding_without_that_note():
    c003 = _c003("1.00T")
    assert c003["severity"] == "warning"
    assert "rounding" not in c003["message"]


@pytest.mark.parametrize("number, width", [
    (2048.0, 0.5 / 2048),  # repr "2048.0": a whole number, its ".0" not a stated digit
    (2000.0, 0.5 / 2000),  # repr "2000.0": trailing zeros of a whole number count (the narrower reading)
    (56.5, 0.05 / 56.5),
    (0.0001, 0.00005 / 0.0001),  # repr "0.0001": the last positional form (E = -4)
    (1.5e-05, 0.05 / 1.5),  # repr "1.5e-05": scientific below 1e-4, read as its mantissa 1.5
    (1234500000000000.0, 0.5 / 1234500000000000.0),  # repr positional up to E = 15
    (1e16, 0.5),  # repr "1e+16": one significant digit
    (3.14e23, 0.005 / 3.14),
    (0.1 + 0.2, 0.5e-17 / 0.30000000000000004),  # repr "0.30000000000000004": 17 decimals
    (-3.5, 0.05 / 3.5),  # the sign is not a digit
    (0.0, 0.0), (float("inf"), 0.0), (float("nan"), 0.0),
])
def test_a_number_cell_has_the_precision_of_its_repr(number, width):
    from audit.significance import number_half_widths

    assert number_half_widths(np.array([number]))[0] == pytest.approx(width, rel=1e-12)


def test_number_cells_read_bit_for_bit_as_their_reprs():
    """The engine reads a number column's precision from the numbers (Arrow's shortest digits) instead of writing
    each repr: the same floats, bit for bit, as reading the reprs, over every magnitude and digit count."""
    from audit.significance import number_half_widths, relative_half_widths

    rng = np.random.default_rng(2026)
    x = [rng.integers(0, 2**63 - 1, 20_000, dtype=np.int64).view(np.float64)]  # any bits: every exponent
    for k in range(1, 18):  # k-digit decimals at scales from 1e-30 to 1e30
        digits = rng.integers(1, 10**k, 2_000).astype(np.float64)
        x.append(digits * 10.0 ** rng.integers(-30, 30, 2_000))
    x.append(np.array([9.999999999999999e22, 1e23, 9.9999e-5, 5e-324, 1.7976931348623157e308, 123.0, 1e15]))
    x = np.concatenate(x)
    texts = np.array([None if v != v else repr(float(v)) for v in x], dtype=object)
    assert np.array_equal(number_half_widths(x).view(np.int64), relative_half_widths(texts).view(np.int64))


def test_a_column_of_repeated_numbers_reads_as_its_reprs():
    """Chip counts and layer sizes repeat: their precision is read once per distinct number, the same as per
    cell (NaN, a missing cell, and -0.0 included)."""
    import pandas as pd

    from audit.significance import log_half_widths, log_half_widths_of_numbers

    rng = np.random.default_rng(7)
    x = rng.choice(np.array([8.0, 64.0, 2048.0, 0.5, 1.5e-05, 3.14e23, -0.0, np.nan]), 10_000)
    texts = pd.Series([None if v != v else repr(float(v)) for v in x], dtype=object)
    assert np.array_equal(log_half_widths_of_numbers(x), log_half_widths(texts))


def _u001(days: str) -> tuple[str, str]:
    from audit.api import to_json

    doc = to_json(check_records([{"id": "v100", "params": "1.3B", "tokens": "26B", "chips": 64, "hardware": "V100",
                                  "wall_clock_days": days, "precision": "fp32"}]))
    [f] = [f for f in doc["claims"][0]["findings"] if f["rule"] == "U001"]
    return f["severity"], f["message"]


def test_an_mfu_above_100_percent_by_less_than_the_precision_is_not_called_impossible():
    # 6 x 1.3e9 x 26e9 = 2.028e20 FLOP on 64 V100 at FP32 (15.7 TFLOP/s, NVIDIA V100 datasheet) for 2 days:
    # 2.028e20 / (64 x 48 x 3600 x 15.7e12) = 116.8 %. "2 days" is 1.5-2.5 days (± 25 %): 2.34 days or more
    # would give 100 %, so the figures are not proven impossible (a warning that says why); "2.00 days" is.
    severity, message = _u001("2 days")
    assert severity == "warning" and "117 %" in message
    assert "by less than the precision" in message and "physically impossible" not in message
    severity, message = _u001("2.00 days")
    assert severity == "error" and "physically impossible" in message


def test_a_number_of_thirteen_digits_or_more_is_exact_and_fewer_are_read():
    """The engine takes a number cell of 13 or more significant digits as exact (its half-width, below 5e-13, is
    beneath the 1e-9 every comparison adds): every number of at most 12 digits, at every scale, keeps the precision
    of its repr, and one of 17 digits (what a program writes) has none."""
    from audit.significance import log_half_widths_of_numbers, relative_half_width

    rng = np.random.default_rng(13)
    short = []
    for k in range(1, 13):  # k-digit decimals from 1e-250 to 1e250
        digits = rng.integers(10 ** (k - 1), 10**k, 500).astype(np.float64)
        short.append(digits * 10.0 ** rng.integers(-250, 250, 500))
    short = np.concatenate(short)
    expected = -np.log1p(-np.minimum([relative_half_width(repr(float(v))) for v in short], 0.5))
    assert np.array_equal(log_half_widths_of_numbers(short), expected)
    # 3,273,267,445,255.4595 (17 digits: half a unit of 1e-4, 1.5e-17 of it) and 1/3 (16 digits) are exact.
    assert log_half_widths_of_numbers(np.array([3273267445255.4595, 1 / 3, 2048.0]))[:2].tolist() == [0.0, 0.0]
    assert log_half_widths_of_numbers(np.array([2048.0]))[0] == pytest.approx(0.5 / 2048, rel=1e-3)


@pytest.mark.parametrize("text, width", [
    ("41-42%", 0.5 / 41.5),  # the middle 41.5, ± half the range
    ("30 to 40 days", 5 / 35),
    ("1.2-1.5T tokens", 0.15 / 1.35),
    ("500M to 1.5B", 0.5e9 / 1e9),
    ("about 41-42%", 0.5 / 41.5),
    ("2 days to 3 weeks", 0.5 / 2),  # ends in units of their own: the first figure's digits (the narrower reading)
])
def test_a_range_has_half_its_width_as_precision(text, width):
    from audit.significance import relative_half_width, relative_half_widths

    assert relative_half_width(text) == pytest.approx(width, rel=1e-12)
    column = np.array([text] * 3000 + ["56.5%"], dtype=object)  # the vectorized reading of a whole column agrees
    assert relative_half_widths(column)[0] == pytest.approx(width, rel=1e-12)


def test_a_duration_in_several_units_is_as_precise_as_its_smallest():
    """"2d 16h" is 64 hours ± half an hour (0.5 / 64), not 2 days ± half a day (what its first number would give);
    the whole-column reading agrees with the one-by-one."""
    import numpy as np

    from audit.significance import relative_half_width, relative_half_widths

    assert relative_half_width("2d 16h") == pytest.approx(0.5 / 64, rel=1e-12)
    assert relative_half_width("1 day, 12 hours") == pytest.approx(0.5 / 36, rel=1e-12)
    texts = np.array(["2d 16h", "1 day, 12 hours", "21 days"] * 800, dtype=object)
    assert relative_half_widths(texts).tolist() == [relative_half_width(t) for t in texts]
