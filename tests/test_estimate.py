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


def test_bytes_per_param_is_an_option_of_estimate(cli_run):
    # 18 bytes per parameter (e.g. fp32 master weights with a larger optimizer state): ceil(18 x 70e9 / 80e9) = 16.
    res = cli_run("estimate", "--params", "70B", "--hardware", "H100", "--bytes-per-param", "18", "-f", "json")
    assert res.exit_code == 0, res.output
    assert math.ceil(18 * 70e9 / H100_MEMORY_BYTES) == 16
    assert res.json()["quantities"]["min_chips_memory"]["value"] == 16


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
    # R001 (where 1e24 FLOP stands against the regulatory lines) is an info that needs no hardware.
    assert [f["rule"] for f in doc["findings"] if f["severity"] != "ok" and f["rule"] != "R001"] == ["H001"]


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


# ------------------------------------------------------------------------ energy, cost, CO2 and sweeps (issue 13)


def test_estimate_energy_cost_and_co2_from_reference_data():
    # 70B x 2T: C = 6 x 70e9 x 2e12 = 8.4e23 FLOP; on H100 SXM (989.4 TFLOP/s dense bf16) at MFU 0.4:
    # chip-hours = 8.4e23 / (3600 x 989.4e12 x 0.4) = 589,583 h. Power: the H100 SXM TDP 700 W (an upper bound,
    # said); PUE 1.0: energy = 589,583 x 700 / 1e6 = 412.7 MWh; US grid 0.369 kg/kWh (the US national average
    # quoted by Guidi et al. 2024, arXiv:2411.09786v1): 412.7 x 0.369 = 152.3 t;
    # H800 at USD 2 (DeepSeek-V3 report's price): cost = 1,179,166 USD.
    hours = 6 * 70e9 * 2e12 / (SECONDS_PER_HOUR * H100_SXM_BF16 * 0.4)
    result = estimate({"params": "70B", "tokens": "2T", "hardware": "H100 SXM", "mfu": 0.4},
                      references={"grid": "us", "price_from": "h800-deepseek-2024"})
    q = estimate_json(result)["quantities"]
    assert _value(q, "chip_hours") == pytest.approx(hours)
    assert _value(q, "power_w_per_chip") == 700 and "TDP" in q["power_w_per_chip"]["how"]
    assert _value(q, "energy_mwh") == pytest.approx(hours * 700 / 1e6)
    assert _value(q, "co2_tonnes") == pytest.approx(hours * 700 / 1e6 * 0.369)
    assert "arXiv:2411.09786" in q["grid_kgco2_per_kwh"]["how"]  # the row's source, named in the derivation
    assert _value(q, "cost_usd") == pytest.approx(hours * 2.0)


def test_estimate_without_an_energy_question_adds_no_energy():
    q = _est(params="70B", tokens="2T", hardware="H100 SXM", mfu=0.4)
    assert "energy_mwh" not in q and "power_w_per_chip" not in q


def test_estimate_stated_power_and_pue_are_used():
    # PaLM's figures: 378.5 W per TPU v4 chip, PUE 1.08; 8,404,992 chip-hours -> 3,435.8 MWh.
    q = _est(chip_hours=8_404_992, hardware="TPU v4", power_w_per_chip="378.5 W", pue="1.08")
    assert _value(q, "energy_mwh") == pytest.approx(8_404_992 * 378.5 * 1.08 / 1e6)


def test_cli_estimate_sweep_over_chips_prints_a_table(cli_run):
    # 8.4e23 FLOP on H100 at MFU 0.4: 589,583 chip-hours; days = 589,583 / (24 x chips): 24.0, 12.0, 6.0.
    res = cli_run("estimate", "--params", "70B", "--tokens", "2T", "--hardware", "H100 SXM", "--mfu", "0.4",
                  "--chips", "1024,2048,4096")
    assert res.exit_code == 0, res.output
    hours = 6 * 70e9 * 2e12 / (SECONDS_PER_HOUR * H100_SXM_BF16 * 0.4)
    for chips in (1024, 2048, 4096):
        days = hours / (HOURS_PER_DAY * chips)
        assert re.search(rf"^\s*{chips:,}\s.*\s{days:.3g} days\*", res.stdout, re.M), (days, res.stdout)


def test_cli_estimate_sweep_over_a_range_as_json(cli_run):
    res = cli_run("estimate", "--params", "70B", "--tokens", "2T", "--hardware", "H100 SXM", "--chips", "2048",
                  "--mfu", "0.3:0.5:0.05", "--format", "json")
    assert res.exit_code == 0, res.output
    doc = res.json()
    assert doc["sweep"] == "mfu" and [r["value"] for r in doc["rows"]] == ["0.3", "0.35", "0.4", "0.45", "0.5"]
    hours = [_value(r["quantities"], "chip_hours") for r in doc["rows"]]
    # chip-hours are inversely proportional to MFU: 0.3 x h(0.3) = 0.5 x h(0.5).
    assert hours[0] * 0.3 == pytest.approx(hours[-1] * 0.5)


def test_cli_estimate_sweep_as_html_plots_it(cli_run, tmp_path):
    out = tmp_path / "sweep.html"
    res = cli_run("estimate", "--params", "70B", "--tokens", "2T", "--hardware", "H100 SXM", "--chips", "2048",
                  "--mfu", "0.3:0.5:0.1", "--grid", "world", "--format", "html", "-o", str(out))
    assert res.exit_code == 0, res.output
    page = out.read_text(encoding="utf-8")
    # Wall-clock, chip-hours, energy and emissions change with the MFU (one chart each, 3 points); the compute
    # does not, and gets none.
    titles = re.findall(r"<title>([^<]*) against MFU</title>", page)
    assert titles == ["Wall-clock", "Chip-hours", "Energy", "Emissions"], titles
    assert page.count('class="point"') == 4 * 3
    assert "default-src 'none'" in page and "<script" not in page


@pytest.mark.parametrize("args, words", [
    (("--chips", "1024,2048", "--mfu", "0.3:0.5:0.1"), "sweep one quantity at a time"),
    (("--mfu", "0.5:0.3:0.1"), "start <= stop"),
    (("--grid", "mars"), "known: world"),
    (("--format", "html"), "plots a sweep"),
])
def test_cli_estimate_bad_sweeps_and_references_exit_2(cli_run, args, words):
    res = cli_run("estimate", "--params", "70B", "--tokens", "2T", *args)
    assert res.exit_code == 2 and words in res.output, res.output
