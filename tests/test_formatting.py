"""Numbers as the tool prints them (audit/formatting.py): exact expected strings, and every printed value reads
back through the unit parser to the number it came from (what a report shows can be typed back in)."""

from __future__ import annotations

import math

import pytest

from audit import formatting as fmt
from audit.quantities import BY_NAME
from audit.units import parse_value


@pytest.mark.parametrize(("x", "expected"), [
    (175e9, "175B"), (1.4e12, "1.4T"), (65.2e9, "65.2B"), (2048, "2,048"), (1022362, "1.022M"),
    (540.35e9, "540.4B"), (0.5, "0.5"),
])
def test_count(x: float, expected: str) -> None:
    assert fmt.count(x) == expected


@pytest.mark.parametrize(("x", "digits", "expected"), [
    (3.14e23, 3, "3.14e23"), (3.14159e23, 4, "3.142e23"), (1e24, 3, "1e24"), (8.64e19, 3, "8.64e19"),
])
def test_sci(x: float, digits: int, expected: str) -> None:
    assert fmt.sci(x, digits) == expected


@pytest.mark.parametrize(("name", "x", "expected"), [
    ("compute_flops", 3.14e23, "3.14e23 FLOP"),
    ("mfu", 0.462, "46.2 %"),
    # IMPALA's row on Epoch's file: an MFU of 44.03 is 4,403 %, to 3 significant digits 4,400 % (not "4.4e3 %").
    ("mfu", 44.03, "4,400 %"),
    ("mfu", 0.000065, "0.0065 %"),
    ("chip_hours", 1022362, "1,022,362 h"),
    ("chip_hours", 30.84e6, "30.84M h"),
    ("peak_flops_per_chip", 989.4e12, "989.4 TFLOP/s"),
    ("wall_clock_days", 7.14, "7.14 days"),
    ("memory_per_chip", 80e9, "80 GB"),
    # ERNIE 4.5's 424B parameters x 16 B = 6.784e12 B: 6.784 TB, in the unit its derivation writes (was "6784 GB").
    ("training_state_bytes", 16 * 424e9, "6.784 TB"),
    ("training_state_bytes", 16 * 70e9, "1.12 TB"),  # Llama 2 70B: 1.12e12 B
    ("training_state_bytes", 16 * 1e9, "16 GB"),  # Pythia-1B: 1.6e10 B
    ("training_state_bytes", 999.97e9, "1 TB"),  # 1000 GB to 4 digits is 1 TB
    ("training_state_bytes", 16 * 10e6, "160 MB"),
    ("params", float("nan"), "—"),
])
def test_value(name: str, x: float, expected: str) -> None:
    assert fmt.value(name, x) == expected
    assert fmt.values(name, [x]) == [expected]  # the column formatter writes the same


@pytest.mark.parametrize(("name", "x"), [
    ("params", 175e9), ("tokens", 1.4e12), ("compute_flops", 3.14e23), ("chips", 2048),
    ("wall_clock_days", 7.14), ("chip_hours", 1022362), ("mfu", 0.462), ("throughput_tokens_per_s", 2.96e6),
    ("achieved_flops_per_chip", 395.8e12), ("peak_flops_per_chip", 989.4e12), ("memory_per_chip", 80e9),
    ("training_state_bytes", 6.784e12),
])
def test_printed_values_read_back(name: str, x: float) -> None:
    assert parse_value(fmt.value(name, x), BY_NAME[name].kind) == pytest.approx(x, rel=5e-4)


def test_ratio_and_non_finite() -> None:
    assert fmt.ratio(1.02) == "1.02x"
    assert fmt.ratio(math.inf) == "—"
    assert fmt.sig(math.nan) == "nan"


@pytest.mark.parametrize("text, shown", [
    ("175000000000.0", "1.75e11"),  # JSON's 175e9, parsed: repr keeps every digit and no exponent below 1e16
    ("540350000000.0", "5.4035e11"),
    ("2.352e+24", "2.352e24"),
    ("118.0", "118"),  # a layer count written 118 in JSON, read as a float
    ("73728.0", "73728"),
    ("999999.0", "999999"),
    ("1000000.0", "1e6"),
    ("-3000000.0", "-3e6"),
    ("0.5", "0.5"),
    ("0.00123", "0.00123"),
    ("0.000123", "1.23e-4"),
    ("1e-05", "1e-5"),
    ("0.0", "0"),
])
def test_the_text_of_a_number_cell_is_shown_as_a_reader_writes_it(text, shown):
    assert fmt.written(text) == shown
    assert float(shown) == float(text)  # the same number


@pytest.mark.parametrize("text", ["175B", "1,024", "3.0e5", "1.4e12", "12", "512 GPUs", "nan", "inf", ""])
def test_a_text_a_person_wrote_is_shown_as_written(text):
    assert fmt.written(text) == text


@pytest.mark.parametrize(("x", "beyond", "expected"), [
    (0.4999958333, None, "0.5x"),        # no verdict to keep: three digits
    (0.4999958333, 2.0, "0.499996x"),   # beyond 2x: digits until the text is beyond 2x too
    (2.0000026, 2.0, "2.000003x"),
    (0.79995, 1.25, "0.79995x"),        # 1 / 1.25 = 0.8
    (0.5, 2.0, "0.5x"),                 # on the factor is not beyond it
    (0.3, 2.0, "0.3x"), (10.0, 4.0, "10x"),
])
def test_a_ratio_beyond_a_factor_is_never_printed_on_it(x: float, beyond: float | None, expected: str) -> None:
    assert fmt.ratio(x, beyond) == expected


def test_a_memory_size_reads_the_same_as_a_value_and_in_its_derivation() -> None:
    """The training state of a 424B-parameter model (ERNIE 4.5; 16 B per parameter, ZeRO Sec. 3.1) is
    16 x 424e9 = 6.784e12 B: one text, 6.784 TB, for the value (text, HTML, Markdown, JSON ``display``) and in
    M001's derivation, finding and the chips it needs (6.784e12 / 80e9 = 84.8, so 85 H100s of 80 GB). The value
    read "6784 GB" while the derivation said "6.78 TB"."""
    import json

    from audit.api import check_records, render

    result = check_records([{"id": "ernie", "params": 424e9, "hardware": "H100 SXM5 80GB", "chips": 8}])
    claim = json.loads(render(result, "json"))["claims"][0]
    q = claim["quantities"]
    assert q["training_state_bytes"]["display"] == "6.784 TB"
    assert q["training_state_bytes"]["how"] == "M001: 16 B × 424B params = 6.784 TB"
    assert q["min_chips_memory"]["how"] == "M001: ⌈6.784 TB / 80 GB⌉ = 85"
    message = next(f["message"] for f in claim["findings"] if f["rule"] == "M001")
    assert "= 6.784 TB), which needs at least 85 × 80 GB" in message
    assert "6784 GB" not in render(result, "html", verbose=True) + render(result, "markdown")
