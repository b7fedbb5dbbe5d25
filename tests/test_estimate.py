"""The lesson's worked numbers, through ``audit.api.estimate`` and ``train-audit estimate --format json``.

Every expected value is the lesson's arithmetic written out here (C = 6·N·D; chip_hours = C / (3600 · peak ·
MFU); days = chip_hours / (24 · chips); N = sqrt(C / 120) at 20 tokens per parameter) with datasheet peaks from
conftest.py, never a number read back from the code.
"""

from __future__ import annotations

import math
import re

import pytest

from audit.api import estimate, estimate_json
from conftest import (BYTES_PER_PARAM, DAYS_PER_JULIAN_YEAR, H100_LESSON_PEAK, H100_MEMORY_BYTES, H100_SXM_BF16,
                      HOURS_PER_DAY, SECONDS_PER_HOUR)


def _value(quantities: dict, name: str) -> float:
    return quantities[name]["value"]


def _est(**given) -> dict:
    return estimate_json(estimate(given))["quantities"]


# ------------------------------------------------------------------------------------------- C = 6 N D


@pytest.mark.parametrize("params, tokens, expected", [
    ("175B", "300B", 3.15e23),   # GPT-3: 6 × 175e9 × 300e9
    ("70B", "1.4T", 5.88e23),    # Chinchilla-sized: 6 × 70e9 × 1.4e12
    ("8B", "15T", 7.20e23),      # Llama 3 8B: 6 × 8e9 × 15e12
])
def test_compute_is_six_n_d(params, tokens, expected):
    q = _est(params=params, tokens=tokens)
    n = {"175B": 175e9, "70B": 70e9, "8B": 8e9}[params]
    d = {"300B": 300e9, "1.4T": 1.4e12, "15T": 15e12}[tokens]
    assert _value(q, "compute_flops") == pytest.approx(6 * n * d, rel=1e-9)
    assert _value(q, "compute_flops") == pytest.approx(expected, rel=1e-9)  # the lesson's rounded figure
    assert q["compute_flops"]["source"] == "derived"
    assert q["compute_flops"]["rule"] == "C001"
    # The inputs are reported as claimed, with the text the user typed.
    assert q["params"]["source"] == "claimed" and q["params"]["text"] == params
    assert q["tokens"]["source"] == "claimed" and q["tokens"]["text"] == tokens


def test_llama3_8b_tokens_per_parameter():
    q = _est(params="8B", tokens="15T")
    assert _value(q, "tokens_per_param") == pytest.approx(15e12 / 8e9, rel=1e-12)
    assert _value(q, "tokens_per_param") == pytest.approx(1875, rel=1e-12)


def test_compute_optimal_split_of_1e24():
    # C = 6 · N · (20 N) = 120 N² → N = sqrt(C / 120), D = 20 N (Hoffmann et al. 2022, about 20 tokens/param).
    q = _est(compute_flops="1e24")
    n = math.sqrt(1e24 / 120)
    assert _value(q, "params") == pytest.approx(n, rel=1e-9)
    assert _value(q, "tokens") == pytest.approx(20 * n, rel=1e-9)
    assert _value(q, "params") == pytest.approx(91e9, rel=0.005)    # "about 91B"
    assert _value(q, "tokens") == pytest.approx(1.83e12, rel=0.005)  # "about 1.83T"
    assert q["params"]["source"] == "derived" and q["tokens"]["source"] == "derived"
    assert q["compute_flops"]["source"] == "claimed"


def test_1e24_flop_on_4096_h100_at_40_percent():
    q = _est(compute_flops="1e24", hardware="H100", chips="4096", mfu="0.4")
    # The catalog peak is the H100 whitepaper v1.04 figure (989.4 TF); the lesson rounded to 989 TF and got
    # 702,168 GPU-hours. 989 / 989.4 differs by 4e-4, so the lesson's figure holds to rel=1e-3.
    chip_hours = 1e24 / (SECONDS_PER_HOUR * H100_SXM_BF16 * 0.4)
    assert _value(q, "chip_hours") == pytest.approx(chip_hours, rel=1e-9)
    assert _value(q, "chip_hours") == pytest.approx(702_168, rel=1e-3)
    lesson = 1e24 / (SECONDS_PER_HOUR * H100_LESSON_PEAK * 0.4)
    assert lesson == pytest.approx(702_168, abs=1)  # the lesson's own arithmetic, for the record
    days = chip_hours / (HOURS_PER_DAY * 4096)
    assert _value(q, "wall_clock_days") == pytest.approx(days, rel=1e-9)
    assert _value(q, "wall_clock_days") == pytest.approx(7.1, abs=0.05)
    assert q["peak_flops_per_chip"]["source"] == "catalog"
    assert _value(q, "peak_flops_per_chip") == H100_SXM_BF16


def test_one_million_h100_hours_at_40_percent():
    q = _est(chip_hours="1M GPU-hours", hardware="H100", mfu="40%")
    flop = 1e6 * SECONDS_PER_HOUR * H100_SXM_BF16 * 0.40
    assert _value(q, "compute_flops") == pytest.approx(flop, rel=1e-9)
    assert _value(q, "compute_flops") == pytest.approx(1.4e24, rel=0.02)  # "about 1.4e24"


def test_70b_needs_at_least_14_h100s_for_memory():
    q = _est(params="70B", hardware="H100")
    need = math.ceil(BYTES_PER_PARAM * 70e9 / H100_MEMORY_BYTES)  # ceil(1.12e12 / 8e10) = 14
    assert need == 14
    assert _value(q, "min_chips_memory") == need
    assert _value(q, "memory_per_chip") == H100_MEMORY_BYTES


def test_1e24_flop_on_one_h100_takes_about_80_years():
    q = _est(compute_flops="1e24", hardware="H100", chips="1", mfu="0.4")
    seconds = 1e24 / (H100_SXM_BF16 * 0.4)
    years = seconds / 86400 / DAYS_PER_JULIAN_YEAR
    assert _value(q, "wall_clock_days") / DAYS_PER_JULIAN_YEAR == pytest.approx(years, rel=1e-9)
    assert years == pytest.approx(80, abs=0.5)


def test_estimate_of_an_unknown_accelerator_derives_no_hardware_figures():
    result = estimate({"compute_flops": "1e24", "hardware": "H1000", "chips": 4096, "mfu": 0.4})
    doc = estimate_json(result)
    q = doc["quantities"]
    assert "peak_flops_per_chip" not in q and "chip_hours" not in q and "wall_clock_days" not in q
    assert [f["rule"] for f in doc["findings"] if f["severity"] != "ok"] == ["H001"]


# ------------------------------------------------------------------------------------------- via the CLI


def test_cli_estimate_gpt3_json(cli_run):
    res = cli_run("estimate", "--params", "175B", "--tokens", "300B", "--format", "json")
    assert res.exit_code == 0, res.output
    q = res.json()["quantities"]
    assert q["compute_flops"]["value"] == pytest.approx(6 * 175e9 * 300e9, rel=1e-9)
    assert q["compute_flops"]["source"] == "derived"


def test_cli_estimate_lesson_cluster_json(cli_run):
    res = cli_run("estimate", "--compute-flops", "1e24", "--hardware", "H100", "--chips", "4096", "--mfu", "0.4",
                  "-f", "json")
    assert res.exit_code == 0, res.output
    doc = res.json()
    q = doc["quantities"]
    n = math.sqrt(1e24 / 120)
    assert q["params"]["value"] == pytest.approx(n, rel=1e-9)
    assert q["tokens"]["value"] == pytest.approx(20 * n, rel=1e-9)
    assert q["chip_hours"]["value"] == pytest.approx(702_168, rel=1e-3)
    assert q["wall_clock_days"]["value"] == pytest.approx(1e24 / (3600 * H100_SXM_BF16 * 0.4) / (24 * 4096), rel=1e-9)
    assert set(doc) >= {"quantities", "findings"}


def test_cli_estimate_70b_memory_json(cli_run):
    res = cli_run("estimate", "--params", "70B", "--hardware", "H100 SXM5 80GB", "--format", "json")
    assert res.exit_code == 0, res.output
    assert res.json()["quantities"]["min_chips_memory"]["value"] == math.ceil(16 * 70e9 / 80e9)


def test_cli_estimate_text_shows_the_derivation(cli_run):
    res = cli_run("estimate", "--params", "8B", "--tokens", "15T")
    assert res.exit_code == 0, res.output
    lines = [line.rstrip() for line in res.stdout.splitlines()]
    # C = 6 × 8e9 × 15e12 = 7.2e23 FLOP, derived, followed by its formula with the values substituted.
    at = next(i for i, line in enumerate(lines) if re.match(r"^Compute\s", line))
    assert re.fullmatch(r"Compute\s+7\.2e23 FLOP\s+derived", lines[at]), lines[at]
    assert re.search(r"C = 6 · N · D = 6 × 8B × 15T = 7\.2e23$", lines[at + 1]), lines[at + 1]
    # 15e12 / 8e9 = 1,875 tokens per parameter.
    at = next(i for i, line in enumerate(lines) if line.startswith("Tokens per parameter"))
    assert re.fullmatch(r"Tokens per parameter\s+1,?875\s+derived", lines[at]), lines[at]
    assert re.search(r"= 15T / 8B = 1,?875$", lines[at + 1]), lines[at + 1]


def test_cli_estimate_invalid_value_exits_2(cli_run):
    # A value that cannot be used is a usage error before anything is computed (issue 11): no plan is printed.
    res = cli_run("estimate", "--params", "5 apples", "--format", "json")
    assert res.exit_code == 2 and res.stdout == ""
    assert "--params: cannot read '5 apples'" in res.stderr


def test_cli_estimate_without_quantities_is_a_usage_error(cli_run):
    res = cli_run("estimate")
    assert res.exit_code == 2
    assert "give at least one quantity" in res.stderr


def test_split_is_not_checked_against_the_compute_it_came_from():
    doc = estimate_json(estimate({"compute_flops": "1e24"}))
    assert [f for f in doc["findings"] if f["rule"] == "C001"] == []
