"""Tests for audit.units: reading report values ("175B", "3640 PF-days", "46.2%") into canonical floats."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from audit.units import (
    KINDS,
    MAX_TEXT_LEN,
    UnitError,
    bound_of,
    parse_series,
    parse_value,
    unit_scale,
)

PF_DAY = 1e15 * 86400  # one petaflop/s-day in FLOP
JULIAN_YEAR_DAYS = 365.25

# --------------------------------------------------------------------------------------------------------
# Accepted values: (text, kind, expected float written with hand arithmetic).

NUMBERS = [
    ("3.14e23", "count", 3.14e23),
    ("3.14E+23", "count", 3.14e23),
    ("1,022,362", "count", 1022362),
    ("3.14×10^23", "count", 3.14e23),
    ("3.14 x 10^23", "count", 3.14e23),
    ("3.14 X 10^23", "count", 3.14e23),
    ("3.14*10**23", "count", 3.14e23),
    ("3.14·10^23", "count", 3.14e23),
    ("10^24", "count", 1e24),
    ("10**24", "count", 1e24),
    ("3.14×10²³", "count", 3.14e23),
    ("1×10⁻³", "fraction", 1e-3),
    ("~175B", "count", 175e9),
    ("≈ 3.14e23", "flop", 3.14e23),
    ("about 175B", "count", 175e9),
    ("approx. 70B", "count", 70e9),
    ("approximately 70B", "count", 70e9),
    ("over 2 trillion tokens", "count", 2e12),
    ("up to 1.2M", "count", 1.2e6),
    (">1T", "count", 1e12),
    ("< 5", "count", 5),
    ("15T+", "count", 15e12),
    ("  42  ", "count", 42),
    ("\u00a042\u2009", "count", 42),
    ("+7", "count", 7),
    ("-7", "count", -7),  # sign passes through; validity is checked elsewhere
    (".5", "fraction", 0.5),
    ("5.", "count", 5),
    ("1,000.5", "count", 1000.5),
    ("2^30", "bytes", 2**30),
    ("0", "count", 0),
]

COUNTS = [
    ("175B", "count", 175e9),
    ("175b", "count", 175e9),
    ("175 bn", "count", 175e9),
    ("1.4T tokens", "count", 1.4e12),
    ("~ 5,500 GT", "count", 5.5e12),  # gigatokens, as TII writes them (Falcon Mamba 7B's model card)
    ("5,500 GT tokens", "count", 5.5e12),
    ("300 gigatokens", "count", 300e9),
    ("1.4 T tokens", "count", 1.4e12),
    ("70B parameters", "count", 70e9),
    ("65.2B params", "count", 65.2e9),
    ("7b param", "count", 7e9),
    ("125m", "count", 125e6),
    ("125M", "count", 125e6),
    ("300k", "count", 300e3),
    ("300K", "count", 300e3),
    ("2048 GPUs", "count", 2048),
    ("1 GPU", "count", 1),
    ("6,144 chips", "count", 6144),
    ("6,144 TPU v4 chips", "count", 6144),
    ("2048 A100 GPUs", "count", 2048),
    ("1024 accelerators", "count", 1024),
    ("512 devices", "count", 512),
    ("256 TPUs", "count", 256),
    ("1.2 million", "count", 1.2e6),
    ("5 thousand", "count", 5e3),
    ("3 billion tokens", "count", 3e9),
    ("2 trillion tokens", "count", 2e12),
    ("1.4T training tokens", "count", 1.4e12),
    ("300B token", "count", 300e9),
]

FLOPS = [
    ("3.14e23", "flop", 3.14e23),
    ("3.14e23 FLOP", "flop", 3.14e23),
    ("3.14e23 FLOPs", "flop", 3.14e23),
    ("3.14e23 flops", "flop", 3.14e23),
    ("314 ZFLOP", "flop", 314 * 1e21),
    ("2 EFLOP", "flop", 2 * 1e18),
    ("5 PFLOP", "flop", 5 * 1e15),
    ("5 TFLOP", "flop", 5 * 1e12),
    ("5 GFLOP", "flop", 5 * 1e9),
    ("3640 PF-days", "flop", 3640 * 1e15 * 86400),
    ("1 PF-day", "flop", 1e15 * 86400),
    ("3640 petaflop/s-days", "flop", 3640 * PF_DAY),
    ("3640 pfs-days", "flop", 3640 * PF_DAY),
    ("3640 PFLOP/s-days", "flop", 3640 * PF_DAY),
    ("3640 petaflop-days", "flop", 3640 * PF_DAY),
    ("3640 petaflop/s-day", "flop", 3640 * PF_DAY),
    ("3640 PF‑days", "flop", 3640 * PF_DAY),  # non-breaking hyphen, as pasted from PDFs
    ("2 yottaflop", "flop", 2 * 1e24),
    ("314 zettaflops", "flop", 314 * 1e21),
    ("314 zettaflop", "flop", 314 * 1e21),
    ("2.1 × 10²⁴ FLOPs", "flop", 2.1e24),
    ("3 billion PFLOP", "flop", 3e9 * 1e15),
]

DAYS = [
    ("21", "days", 21),
    ("21 days", "days", 21),
    ("21 d", "days", 21),
    ("1 day", "days", 1),
    ("3.5 months", "days", 3.5 * 365.25 / 12),
    ("2 weeks", "days", 2 * 7),
    ("920 hours", "days", 920 / 24),
    ("920 h", "days", 920 / 24),
    ("920 hrs", "days", 920 / 24),
    ("1.5 years", "days", 1.5 * 365.25),
    ("90 minutes", "days", 90 / (24 * 60)),
    ("21 wall-clock days", "days", 21),
]

HOURS = [
    ("1,022,362", "hours", 1022362),
    ("2.788M GPU-hours", "hours", 2.788e6),
    ("1,022,362 GPU hours", "hours", 1022362),
    ("30.84M H100-hours", "hours", 30.84e6),
    ("3.3M GPU hours", "hours", 3.3e6),
    ("100 TPU-hours", "hours", 100),
    ("100 chip-hours", "hours", 100),
    ("100 A100-hours", "hours", 100),
    ("100 H100 GPU hours", "hours", 100),
    ("100 GPU-hrs", "hours", 100),
    ("100 hours", "hours", 100),
    ("10 GPU-days", "hours", 10 * 24),
    ("10 chip-days", "hours", 10 * 24),
    ("2 GPU-years", "hours", 2 * 365.25 * 24),
    ("5k GPU-hours", "hours", 5e3),
    ("5K GPU-hours", "hours", 5e3),
    ("1.2 million GPU hours", "hours", 1.2e6),
]

FRACTIONS = [
    ("0.462", "fraction", 0.462),
    ("46.2", "fraction", 46.2),  # no guessing: validation flags a fraction above 1
    ("46.2%", "fraction", 0.462),
    ("46.2 %", "fraction", 0.462),
    ("46.2 percent", "fraction", 0.462),
]

TOKEN_RATES = [
    ("380", "tokens_rate", 380),
    ("380 tokens/s", "tokens_rate", 380),
    ("380 tok/s", "tokens_rate", 380),
    ("1.2M tokens/sec", "tokens_rate", 1.2e6),
    ("3.1e6 tokens per second", "tokens_rate", 3.1e6),
    ("60 tokens/min", "tokens_rate", 60 / 60),
    # Benchmark tables' abbreviations (llm-foundry's "T/s/GPU" column; "TPS"): a T before "/s" is tokens, not tera.
    ("1039 T/s", "tokens_rate", 1039),
    ("1.2M T/s", "tokens_rate", 1.2e6),
    ("5 t/s", "tokens_rate", 5),
    ("380 tps", "tokens_rate", 380),
    ("12k TPS", "tokens_rate", 12_000),
]

FLOP_RATES = [
    ("312e12", "flops_rate", 312e12),
    ("989 TFLOP/s", "flops_rate", 989e12),
    ("989 TFLOPS", "flops_rate", 989e12),
    ("989 TFLOPs/s", "flops_rate", 989e12),
    ("1.979 PFLOPS", "flops_rate", 1.979e15),
    ("150 TFLOPs", "flops_rate", 150e12),
    ("1.3 PF/s", "flops_rate", 1.3e15),
    ("989 TFLOP/s per GPU", "flops_rate", 989e12),  # the flops_rate fields are per accelerator
    ("400 TFLOPS/GPU", "flops_rate", 400e12),
]

BYTES = [
    ("80GB", "bytes", 80e9),
    ("80 GiB", "bytes", 80 * 2**30),
    ("1.1 TB", "bytes", 1.1e12),
    ("141 GB", "bytes", 141e9),
    ("80 gb", "bytes", 80e9),
    ("16 KiB", "bytes", 16 * 1024),
    ("80 GB HBM3", "bytes", 80e9),
    ("512 bytes", "bytes", 512),
    ("2 gigabytes", "bytes", 2e9),
    ("2 gibibytes", "bytes", 2 * 2**30),
]


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    NUMBERS + COUNTS + FLOPS + DAYS + HOURS + FRACTIONS + TOKEN_RATES + FLOP_RATES + BYTES,
)
def test_parse_value_accepts(text: str, kind: str, expected: float) -> None:
    assert parse_value(text, kind) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("text", "expected"), [("3.14e23", 3.14e23), ("65.2B", 65.2e9), ("3.14×10^23", 3.14e23)])
def test_powers_of_ten_are_exact(text: str, expected: float) -> None:
    # The decimal exponent is folded into the number's text, so there is no rounding from a multiplication.
    assert parse_value(text, "count") == expected


# --------------------------------------------------------------------------------------------------------
# Non-string cells.

@pytest.mark.parametrize("value", [None, "", "   ", "\t\n", "NaN", "nan", "N/A", "null", pd.NA])
def test_missing_is_nan(value: object) -> None:
    assert math.isnan(parse_value(value, "count"))


@pytest.mark.parametrize(("value", "expected"), [(3, 3.0), (3.5, 3.5), (np.int64(7), 7.0), (np.float32(0.5), 0.5),
                                                 (10**400, math.inf), (-(10**400), -math.inf)])
def test_numbers_pass_through(value: object, expected: float) -> None:
    out = parse_value(value, "count")
    assert isinstance(out, float)
    assert out == expected


@pytest.mark.parametrize("value", [math.inf, -math.inf, float("nan")])
def test_non_finite_numbers_pass_through(value: float) -> None:
    out = parse_value(value, "flop")
    assert (math.isnan(out) and math.isnan(value)) or out == value


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_boolean_is_an_error(value: object) -> None:
    with pytest.raises(UnitError, match="boolean"):
        parse_value(value, "count")


def test_unsupported_type_is_an_error() -> None:
    with pytest.raises(UnitError):
        parse_value([1, 2], "count")


def test_overflowing_text_is_inf_not_an_error() -> None:
    assert parse_value("1e400", "flop") == math.inf
    assert parse_value("-1e400", "count") == -math.inf
    assert parse_value("1e-400", "count") == 0.0


# --------------------------------------------------------------------------------------------------------
# Rejected values: (text, kind, substring the message must contain besides the text).

REJECTS = [
    ("5 apples", "count", "apples"),
    ("abc", "count", "no number"),
    ("21 days", "count", "duration"),
    ("175B", "days", "count"),
    ("1.2.3", "count", "malformed"),
    ("1,0223", "count", "malformed"),
    ("46.2%", "flop", "percentage"),
    ("5G", "count", "ambiguous"),
    ("5 G tokens", "count", "ambiguous"),
    ("5000 node-hours", "hours", "node"),
    ("5000 node hours", "hours", "node"),
    ("1T words", "count", "words are not tokens"),
    ("1T tokens", "tokens_rate", "token"),
    ("380 tokens/s/GPU", "tokens_rate", "multiply by the number of chips"),
    ("380 tokens/s per GPU", "tokens_rate", "multiply by the number of chips"),
    ("5 T", "flop", "TFLOP"),
    ("5 PF", "flop", "ambiguous"),
    ("3e23 FLOP/s", "flop", "rate"),
    ("3640 PF-days", "flops_rate", "total compute"),
    ("2.788M GPU-hours", "count", "accelerator-hours"),
    ("920 GPU-hours", "days", "not a wall-clock duration"),
    ("90 m", "days", "ambiguous"),
    ("80 Gb", "bytes", "bits"),
    ("80 gigabits", "bytes", "bits"),
    ("100 TPU core-hours", "hours", "core"),
    ("100 wall-clock hours", "hours", "wall-clock"),
    ("$5M", "count", "currency"),
    ("inf", "count", "no number"),
    ("3,14", "count", "malformed"),
    ("1.5 apples", "fraction", "apples"),
    ("12 parsecs", "days", "parsecs"),
    ("80 GB", "count", "memory size"),
]


@pytest.mark.parametrize(("text", "kind", "needle"), REJECTS)
def test_parse_value_rejects(text: str, kind: str, needle: str) -> None:
    with pytest.raises(UnitError) as info:
        parse_value(text, kind)
    message = str(info.value)
    assert repr(text) in message  # names the text
    assert "expected e.g." in message  # and what the field accepts
    assert needle.lower() in message.lower()
    assert info.value.text == text and info.value.kind == kind


def test_unit_error_is_a_value_error() -> None:
    assert issubclass(UnitError, ValueError)


def test_too_long_string_is_rejected() -> None:
    text = "1" * (MAX_TEXT_LEN + 1)
    with pytest.raises(UnitError, match="too long"):
        parse_value(text, "count")


@pytest.mark.parametrize("text", [
    "9" * 10_000,
    "1" + " " * 5_000 + "x" * 5_000,
    "1e" + "9" * 9_998,
    ("1,000" * 2_000),
    ("GPU-" * 2_500),
    "~" * 10_000,
])
def test_hostile_long_strings_complete(text: str) -> None:
    # No timing assert: this only has to return or raise promptly (no catastrophic backtracking).
    with pytest.raises(UnitError, match="too long"):
        parse_value(text, "hours")


def test_long_whitespace_is_missing() -> None:
    assert math.isnan(parse_value(" " * 10_000, "count"))


@pytest.mark.parametrize("text", ["1" * 150, "~" * 5 + "1" * 100, "1 " + "GPU " * 40 + "hours", "1e" + "9" * 190])
def test_long_but_allowed_strings_complete(text: str) -> None:
    try:
        parse_value(text, "hours")
    except UnitError:
        pass


@pytest.mark.parametrize("kind", ["text", "furlongs", ""])
def test_bad_kind_is_a_programming_error(kind: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_value("5", kind)
    assert type(info.value) is ValueError  # not a UnitError: the caller is wrong, not the data
    with pytest.raises(ValueError):
        parse_series(pd.Series(["5"]), kind)


def test_kinds_tuple() -> None:
    assert KINDS == ("count", "flop", "days", "hours", "fraction", "tokens_rate", "flops_rate", "bytes",
                     "power", "energy", "co2", "usd", "usd_rate", "intensity", "ratio", "text")


# --------------------------------------------------------------------------------------------------------
# parse_series

def test_parse_series_mixed_object_column() -> None:
    index = pd.Index([10, 11, 12, 13, 14, 15, 16, 17, 18], name="row")
    s = pd.Series([175e9, "70B", None, np.nan, "5 apples", 2048, "1.4T tokens", "70B", "  "],
                  index=index, dtype=object)
    values, errors = parse_series(s, "count")
    assert isinstance(values, np.ndarray) and values.dtype == np.float64
    assert isinstance(errors, pd.Series)
    assert errors.index.equals(index)
    expected = [175e9, 70e9, np.nan, np.nan, np.nan, 2048, 1.4e12, 70e9, np.nan]
    np.testing.assert_allclose(values, expected, rtol=1e-12, equal_nan=True)
    assert errors.loc[14] is not None and "5 apples" in errors.loc[14]
    assert errors.drop(14).isna().all()


def test_parse_series_numeric_passthrough() -> None:
    s = pd.Series([1.0, np.nan, 3e23], index=["a", "b", "c"])
    values, errors = parse_series(s, "flop")
    np.testing.assert_array_equal(values, [1.0, np.nan, 3e23])
    assert errors.index.equals(s.index)
    assert errors.isna().all()


def test_parse_series_nullable_int() -> None:
    s = pd.Series([1, None, 3], dtype="Int64")
    values, errors = parse_series(s, "count")
    np.testing.assert_array_equal(values, [1.0, np.nan, 3.0])
    assert errors.isna().all()


def test_parse_series_string_and_categorical_dtypes() -> None:
    for dtype in ("string", "category"):
        s = pd.Series(["46.2%", None, "0.5", "46.2%", "bad"], dtype=dtype)
        values, errors = parse_series(s, "fraction")
        np.testing.assert_allclose(values, [0.462, np.nan, 0.5, 0.462, np.nan], equal_nan=True)
        assert [e is None for e in errors] == [True, True, True, True, False]


def test_parse_series_bool_dtype_is_all_errors() -> None:
    s = pd.Series([True, False])
    values, errors = parse_series(s, "count")
    assert np.isnan(values).all()
    assert errors.notna().all() and "boolean" in errors[0]


def test_parse_series_booleans_among_numbers() -> None:
    # pd.factorize hashes True == 1; a boolean must still be an error and the 1 still a number.
    s = pd.Series([1, True, 1.0, False, 0, "1"], dtype=object)
    values, errors = parse_series(s, "count")
    np.testing.assert_array_equal(values, [1.0, np.nan, 1.0, np.nan, 0.0, 1.0])
    assert [e is None for e in errors] == [True, False, True, False, True, True]


def test_parse_series_parses_each_distinct_value_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import audit.units as units

    calls: list[str] = []
    real = units._parse_text

    def counting(raw: str, kind: str) -> float:
        calls.append(raw)
        return real(raw, kind)

    monkeypatch.setattr(units, "_parse_text", counting)
    s = pd.Series(["175B", "70B", "175B", None] * 1000, dtype=object)
    values, errors = parse_series(s, "count")
    assert sorted(calls) == ["175B", "70B"]
    assert values[0] == 175e9 and values[1] == 70e9 and np.isnan(values[3])
    assert len(values) == 4000 and errors.isna().all()


def test_parse_series_accepts_a_list() -> None:
    values, errors = parse_series(["1K", 2], "count")  # type: ignore[arg-type]
    np.testing.assert_array_equal(values, [1000.0, 2.0])


def test_parse_series_empty() -> None:
    values, errors = parse_series(pd.Series([], dtype=object), "count")
    assert len(values) == 0 and len(errors) == 0


# --------------------------------------------------------------------------------------------------------
def test_pf_days_are_not_accelerator_hours() -> None:
    with pytest.raises(UnitError, match="compute"):
        parse_value("3640 PF-days", "hours")


@pytest.mark.parametrize(("text", "kind", "value", "bound"), [
    ("less than 3K GPU weeks", "hours", 3000 * 7 * 24, "upper"),  # Snowflake Arctic: 3,000 x 168 GPU-hours
    ("under $2 million", "usd", 2e6, "upper"),
    ("within 90 days", "days", 90, "upper"),
    ("up to 16", "count", 16, "upper"),
    ("more than 12 trillion tokens", "count", 12e12, "lower"),
    ("15+ trillion tokens", "count", 15e12, "lower"),
    ("15T+ tokens", "count", 15e12, "lower"),  # Llama 3's model card: "15T+" tokens
    ("15 trillion+ tokens", "count", 15e12, "lower"),
    (">= 1T", "count", 1e12, "lower"),
    ("exceeds 180 TFLOPS", "flops_rate", 180e12, "lower"),  # Baichuan 2 (Yang et al. 2023), Sec. 2.6, verbatim
    ("exceeded 2T tokens", "count", 2e12, "lower"),
    ("surpasses 40%", "fraction", 0.40, "lower"),
    ("40%+", "fraction", 0.40, "lower"),
    ("~16 days", "days", 16, None),
    ("about 2T tokens", "count", 2e12, None),
    ("3.14e+23 FLOP", "flop", 3.14e23, None),
])
def test_a_bound_is_read_as_the_number_written_and_known_for_a_bound(text, kind, value, bound) -> None:
    assert parse_value(text, kind) == pytest.approx(value)
    assert bound_of(text) == bound


@pytest.mark.parametrize(("text", "value"), [
    ("12.8 % MFU", 0.128),  # Zamba-style "x % MFU"
    ("about 13 % MFU", 0.13),
    ("40 % (MFU)", 0.40),
    ("40% model FLOPs utilization", 0.40),
    ("56.5% FLOPS utilization", 0.565),  # LaMDA (Thoppilan et al. 2022), Sec. 10: "56.5% FLOPS utilization"
    ("MFU 40%", 0.40),
    ("MFU: 41.5 %", 0.415),
    ("0.462 MFU", 0.462),
    ("HFU of 52%", 0.52),
])
def test_a_utilization_may_name_itself_beside_its_figure(text, value) -> None:
    # The number is the figure; which utilization the name says is the reader's to check against the field
    # (tests/test_reading.py: an MFU field whose cell says HFU is refused).
    assert parse_value(text, "fraction") == pytest.approx(value)


def test_a_utilization_name_is_no_header_unit() -> None:
    with pytest.raises(UnitError, match="not a unit"):
        unit_scale("(MFU)", "fraction")


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("1.4T (tokens)", "count", 1.4e12),
    ("40 (GPUs)", "count", 40),
    ("21 (days)", "days", 21),
    ("3.1e23 (FLOP)", "flop", 3.1e23),
    ("5 (hours)", "days", 5 / 24),
])
def test_a_unit_in_parentheses_is_that_unit(text, kind, value) -> None:
    assert parse_value(text, kind) == pytest.approx(value)


@pytest.mark.parametrize(("text", "kind", "says"), [
    ("30 days (phase 1)", "days", "a remark in parentheses is not read ('(phase 1)')"),
    ("2.1e+21 FLOP (model card)", "flop", "a remark in parentheses is not read ('(model card)')"),
    ("17B (Activated) 109B (Total)", "count", "active_params"),  # Llama 4's model card lays its table out so
    ("8 (nodes)", "count", "a node holds several accelerators"),  # a unit in parentheses refused as the unit is
])
def test_a_remark_in_parentheses_is_refused_saying_so(text, kind, says) -> None:
    with pytest.raises(UnitError) as err:
        parse_value(text, kind)
    assert says in str(err.value) and "unknown unit" not in str(err.value)


@pytest.mark.parametrize(("text", "readings"), [
    ("2.1 x 10e21", ("2.1e21", "2.1e22")),  # SantaCoder's model card: "Total FLOPS: 2.1 x 10e21"
    ("2.1x10e21 FLOPs", ("2.1e21", "2.1e22")),
    ("3 × 10e-2", ("3e-2", "3e-1")),
])
def test_times_ten_e_is_refused_naming_both_readings(text, readings) -> None:
    # 10e21 is 10 × 10^21 = 1e22 as written, while "x 10e21" is usually meant as × 10^21: a 10x question only the
    # writer can answer.
    with pytest.raises(UnitError, match="ambiguous") as err:
        parse_value(text, "flop")
    assert all(r in str(err.value) for r in readings)
    assert parse_value("2.1 x 10^21", "flop") == 2.1e21


@pytest.mark.parametrize("text", ["$98.32/node-hour", "$98.32 per instance hour", "12 USD per server-hour"])
def test_a_price_per_node_or_instance_hour_is_refused_not_read_per_chip(text) -> None:
    # AWS p5.48xlarge (8 H100) lists $98.32 an instance-hour: read per chip-hour it would be 8x the price.
    with pytest.raises(UnitError, match="divide by the accelerators it holds"):
        parse_value(text, "usd_rate")
    assert parse_value("$2.50/GPU-hr", "usd_rate") == 2.5


def test_a_throughput_per_node_says_a_node_holds_several_accelerators() -> None:
    with pytest.raises(UnitError, match="rate per node, which holds several accelerators"):
        parse_value("80,000 tokens/s/node", "tokens_rate")


@pytest.mark.parametrize(("text", "value"), [("1,024 H100s", 1024), ("64 MI300Xs", 64), ("512 H100", 512)])
def test_an_accelerator_model_counts_as_a_unit_of_chips(text, value) -> None:
    assert parse_value(text, "count") == value


def test_an_exponent_written_apart_is_not_an_accelerator_model() -> None:
    with pytest.raises(UnitError):
        parse_value("1 e23", "count")


@pytest.mark.parametrize(("text", "point"), [("0,479", "0.479"), ("0,48", "0.48"), ("1,5", "1.5"), ("-0,5", "-0.5"),
                                             ("7,5B", "7.5"), ("00,479", "00.479")])
def test_a_decimal_comma_is_refused_never_read_as_thousands(text, point) -> None:
    # "0,479" is 0.479 in a European export: a thousands separator stands after a leading 1-9 and before groups of
    # exactly three digits, so "0,479" was read as 479 (an MFU of 47,900 %) while "0,48" was refused.
    with pytest.raises(UnitError, match=f"decimal comma.*\\({re.escape(point)}\\)"):
        parse_value(text, "fraction")
    values, errors = parse_series(pd.Series([text] * 5000 + ["1,024"]), "count")
    assert np.isnan(values[0]) and "decimal comma" in errors[0] and values[-1] == 1024


@pytest.mark.parametrize(("text", "value"), [("1,024", 1024), ("12,345", 12345), ("1,234,567", 1234567)])
def test_thousands_separators_still_read(text, value) -> None:
    assert parse_value(text, "count") == value


@pytest.mark.parametrize("text, kind, value", [
    ("41-42%", "fraction", 0.415),  # Nemotron-4 340B's MFU as Epoch AI's notes give it: (0.41 + 0.42) / 2
    ("41 to 42 %", "fraction", 0.415),
    ("about 41-42%", "fraction", 0.415),
    ("30\u201340 days", "days", 35.0),  # an en dash: (30 + 40) / 2
    ("2-3 weeks", "days", 17.5),  # (14 + 21) / 2
    ("1.2-1.5T tokens", "count", 1.35e12),
    ("1.2T-1.5T", "count", 1.35e12),
    ("500M to 1.5B", "count", 1.0e9),  # (5e8 + 1.5e9) / 2
    ("1,000-2,000 GPUs", "count", 1500.0),
])
def test_a_range_is_read_as_its_middle(text, kind, value):
    from audit.units import parse_value

    assert parse_value(text, kind) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("text, kind", [("42-41%", "fraction"), ("1e-5-2", "fraction")])
def test_a_range_the_wrong_way_round_is_no_range(text, kind):
    from audit.units import UnitError, parse_value

    with pytest.raises(UnitError):
        parse_value(text, kind)


def test_an_exponent_is_no_range():
    from audit.units import parse_value

    assert parse_value("1e-5", "fraction") == 1e-5 and parse_value("3.14e-2", "fraction") == 0.0314


@pytest.mark.parametrize("text, kind, expected", [
    ("about five weeks", "days", 35.0),           # a press report of GPT-J's training (~5 weeks): 5 x 7 days
    ("two months", "days", 2 * 365.25 / 12),      # a month is a twelfth of a Julian year, as "2 months" reads
    ("a month", "days", 365.25 / 12),
    ("an hour", "hours", 1.0),
    ("ten thousand GPUs", "count", 10_000.0),
    ("a million tokens", "count", 1e6),
    # Halves in words: MPT-1.3B's model card trained "about half a day" on 440 A100s (was "no number found").
    ("about half a day", "days", 0.5),
    ("half an hour", "hours", 0.5),
    ("two and a half weeks", "days", 17.5),       # 2.5 x 7 days
    ("2 and a half days", "days", 2.5),
    ("a day and a half", "days", 1.5),
    ("one and a half days", "days", 1.5),
])
def test_small_numbers_written_as_words_are_read(text: str, kind: str, expected: float) -> None:
    """Blog posts and press releases write durations and counts in words; "about five weeks" was refused ("no
    number found"). The word stands for its digits: the same value as "5 weeks"."""
    assert parse_value(text, kind) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["a few weeks", "a couple of months", "several days", "three point five days",
                                  "a half day", "half of the days"])
@pytest.mark.parametrize("kind", ["days", "hours"])
def test_vague_amounts_in_words_are_refused(text: str, kind: str) -> None:
    """"a few weeks" is no number: refused, never read as one week. "three point five days" goes on in words past
    its first: refused, where as accelerator-hours it read as 3 "point five"-days, 72 hours."""
    with pytest.raises(UnitError):
        parse_value(text, kind)


@pytest.mark.parametrize("text, accelerator_time", [
    ("3 GPU days", True), ("3 A100-days", True), ("3 TPU v4 days", True),
    ("3 full days", False), ("3 point five days", False),
])
def test_only_a_device_makes_days_accelerator_time(text: str, accelerator_time: bool) -> None:
    """"'point five days' is accelerator time" was said of "three point five days": any word before "days" was
    taken for a device. Only a device's name makes accelerator time; other words are an unknown unit."""
    with pytest.raises(UnitError) as refused:
        parse_value(text, "days")
    assert ("is accelerator time" in str(refused.value)) == accelerator_time


# Field test, session 23: cells as papers write them that were refused with "unknown unit" or "no number found".

@pytest.mark.parametrize(("text", "days", "bound"), [
    ("slightly more than one month", 365.25 / 12, "lower"),  # UL2 (Tay et al. 2022): a month is 365.25 / 12 days
    ("slightly over 1 month", 365.25 / 12, "lower"),
    ("slightly more than 30 days", 30.0, "lower"),
    ("a little under 3 weeks", 21.0, "upper"),
])
def test_a_bound_qualified_by_slightly_is_still_the_bound(text, days, bound):
    assert parse_value(text, "days") == pytest.approx(days)
    assert bound_of(text) == bound


@pytest.mark.parametrize(("text", "words"), [
    ("16x3.8B", "experts × expert size"),  # Phi-3.5-MoE's name: 41.9B parameters, not 16 x 3.8 = 60.8B
    ("8x7B", "Mixtral 8x7B has 46.7B"),
    ("6.9B total", "the total parameters as params"),
    ("1.3B active", "the active ones as active_params"),
    ("2048 TPU v3 cores", "cores are not chips"),  # GShard's 2,048 TPU v3 cores are 1,024 chips
])
def test_counts_that_are_not_one_figure_are_refused_saying_what_to_write(text, words):
    with pytest.raises(UnitError, match=re.escape(words)):
        parse_value(text, "count")


@pytest.mark.parametrize(("text", "count"), [("8x A100", 8), ("8 × H100s", 8), ("1,024 H100s", 1024)])
def test_a_count_of_accelerators_written_with_their_model_is_the_count(text, count):
    assert parse_value(text, "count") == count


def test_a_product_of_figures_is_still_refused():
    with pytest.raises(UnitError, match="a product of figures"):
        parse_value("3 x 1024 GPUs", "count")


@pytest.mark.parametrize(("text", "count"), [("12-billion", 12e9), ("12-billion parameters", 12e9),
                                             ("3-million tokens", 3e6)])
def test_a_multiplier_word_joined_by_a_hyphen_is_read(text, count):
    """DALL-E (Ramesh et al. 2021): "a 12-billion parameter autoregressive transformer"."""
    assert parse_value(text, "count") == count


def test_a_hyphen_before_a_multiplier_letter_is_still_refused():
    with pytest.raises(UnitError):
        parse_value("7-B", "count")


@pytest.mark.parametrize(("text", "chip_hours"), [
    # ViT (Dosovitskiy et al. 2021, Table 2): ViT-H/14 took 2.5k TPUv3-core-days; a TPU v3 chip has 2 TensorCores
    # (Google Cloud TPU docs), so 2,500 x 24 / 2 = 30,000 chip-hours.
    ("2.5k TPUv3-core-days", 2500 * 24 / 2),
    ("12.3k TPUv3 core-days", 12300 * 24 / 2),  # Noisy Student (Xie et al. 2020)
    ("22 TPU v3 core-years", 22 * 8766 / 2),  # GShard (Lepikhin et al. 2020): 22 core-years
    ("5 TPUv5e-core-days", 5 * 24),  # one TensorCore per v5e chip
])
def test_core_time_of_a_named_tpu_is_chip_time(text, chip_hours):
    assert parse_value(text, "hours") == pytest.approx(chip_hours, rel=1e-12)


def test_core_time_of_no_named_tpu_is_still_refused():
    with pytest.raises(UnitError, match="core-hours are not chip-hours"):
        parse_value("100 core-hours", "hours")


@pytest.mark.parametrize(("text", "words"), [
    # Llama 3.2-Vision's model card writes its GPU-hours by stage in one cell: it was refused with "no number found".
    ("Stage 1 pretraining: 147K H100 hours Stage 2 annealing: 98K H100 hours", "give them as phases"),
    ("total of 5 days", "does not start with its figure"),
    ("trillions of tokens", "no number found"),  # gpt-oss's card: no figure at all
])
def test_a_cell_with_words_before_its_figure_says_so(text, words):
    with pytest.raises(UnitError, match=re.escape(words)):
        parse_value(text, "hours")


@pytest.mark.parametrize(("text", "days"), [
    ("2d 16h", 2 + 16 / 24),  # a team's run sheet: 2 days and 16 hours = 64 hours
    ("1 day 6 hours", 1.25),
    ("1 day, 12 hours", 1.5),
    ("3 weeks and 2 days", 23.0),
    ("2h 30min", 2.5 / 24),
])
def test_a_duration_in_several_units_is_their_sum(text, days):
    """A wall-clock written as a run log prints it was refused ("unknown unit 'd 16h'")."""
    assert parse_value(text, "days") == pytest.approx(days, rel=1e-12)


def test_a_duration_in_several_units_in_any_order_is_refused():
    with pytest.raises(UnitError):
        parse_value("16h 2d", "days")
