"""Energy, cost and carbon (issue 13): published figures as tests, each worked by hand from its source, and
doctored copies that must fail. Units of the new quantities are read as people write them."""

from __future__ import annotations

import pytest

from audit.api import check_records
from audit.units import UnitError, parse_value


def findings(record: dict, code: str) -> list[dict]:
    result = check_records([record])
    f = result.findings
    return f[f["rule"] == code].to_dict("records")


def status(record: dict) -> str:
    return str(check_records([record]).status.iat[0])


# Llama 2 (Touvron et al. 2023, arXiv:2307.09288, Sec. 2.2.1 and Table 2 "CO2 emissions during pretraining"):
# A100-80GB GPU-hours, power per GPU and tCO2eq per model. The power column is "peak power capacity per GPU
# device for the GPUs used adjusted for power usage efficiency": 400 W for 7B, 13B and 70B, 350 W for 34B (the
# per-GPU power cap: 400 W on the Research Super Cluster, 350 W on the production cluster, Sec. 2.2.1); the text
# adds that the calculation leaves out interconnect, non-GPU server power and cooling, so no PUE. The Total row
# prints 3,311,616 GPU-hours and 539.00 t. The released model card (meta-llama/llama MODEL_CARD.md, "Carbon
# Footprint") repeats the 7B, 13B and 70B rows and the totals; 34B was not released.
LLAMA2 = {
    "7b": (184_320, 400, 31.22),
    "13b": (368_640, 400, 62.44),
    "34b": (1_038_336, 350, 153.90),
    "70b": (1_720_320, 400, 291.42),
}


def llama2(size: str, **over: object) -> dict:
    hours, watts, tco2 = LLAMA2[size]
    return {"id": f"llama2-{size}", "hardware": "A100-80GB", "chip_hours": f"{hours:,}",
            "power_w_per_chip": f"{watts} W", "co2_tonnes": f"{tco2} tCO2eq", **over}


def test_llama2_table2_rows_add_up_to_its_total_row():
    # GPU-hours: 184,320 + 368,640 + 1,038,336 + 1,720,320 = 3,311,616, the printed total exactly.
    assert sum(hours for hours, _, _ in LLAMA2.values()) == 3_311_616
    # Tonnes: 31.22 + 62.44 + 153.90 + 291.42 = 538.98, printed 539.00: the total was rounded from the unrounded
    # rows, so the rows agree with it only to about 0.02 t.
    tonnes = sum(t for _, _, t in LLAMA2.values())
    assert tonnes == pytest.approx(538.98) and round(tonnes, 1) == 539.0


@pytest.mark.parametrize("size", sorted(LLAMA2))
def test_llama2_table2_implies_one_grid_intensity(size):
    # 70B by hand: 1,720,320 h x 400 W = 688,128 kWh = 688.128 MWh; 291.42 t / 688.128 MWh = 0.42350 kg/kWh.
    # 7B: 184,320 x 0.4 = 73,728 kWh; 31.22 / 73.728 = 0.42345. 13B: 368,640 x 0.4 = 147,456 kWh;
    # 62.44 / 147.456 = 0.42345. 34B: 1,038,336 x 0.35 = 363,417.6 kWh; 153.90 / 363.4176 = 0.42348.
    # The four rows agree on about 0.4235 kg CO2e per kWh.
    hours, watts, tco2 = LLAMA2[size]
    result = check_records([llama2(size)])
    assert result.q.at[0, "energy_mwh"] == pytest.approx(hours * watts / 1e6)
    assert result.q.at[0, "grid_kgco2_per_kwh"] == pytest.approx(0.4235, abs=2e-4)
    assert result.q.at[0, "pue"] == 1.0 and result.how.at[0, "pue"] == "E008"  # assumed, and said
    assert str(result.status.iat[0]) == "pass"


def test_llama2_stated_power_is_the_tdp_and_confirms_nothing():
    # A100 SXM4 80GB TDP is 400 W (NVIDIA A100 datasheet): the 70B row's 400 W is TDP x hours.
    [f] = findings(llama2("70b"), "E005")
    assert f["severity"] == "info" and f["detail"] == "tdp"
    [f34] = findings(llama2("34b"), "E005")  # 350 W cap: 0.875 of TDP
    assert f34["severity"] == "ok" and f34["ratio"] == pytest.approx(350 / 400)


def test_llama2_doctored_kilograms_in_the_tonnes_column_fail():
    record = llama2("70b", co2_tonnes=291_420)  # kg written where tonnes belong: 1000x
    [f] = findings(record, "E006")
    assert f["severity"] == "error" and f["claimed"] == pytest.approx(423.5, rel=1e-3)
    assert status(record) == "fail"


# PaLM (Chowdhery et al. 2022, arXiv:2204.02311, Appendix B, compute usage and environmental impact): 6,144 TPU
# v4 chips for 1,200 h and 3,072 for 336 h "including some downtime and repeated steps"; 378.5 W measured system
# power per chip; PUE 1.08 (Oklahoma data centre); 0.079 tCO2e per MWh; 271.43 tCO2e. Checked against secondary
# transcriptions of App. B and the arithmetic below, not against the primary text; the first arXiv version gave
# 240.5 tCO2e (as cited by Wang et al. 2022, arXiv:2204.05832v1, App. B), so cite the version. The energy is not
# a printed figure here: 3,435.8 MWh (about 3.4 GWh) is derived.
PALM_HOURS = 6144 * 1200 + 3072 * 336  # = 7,372,800 + 1,032,192 = 8,404,992 chip-hours


def palm(**over: object) -> dict:
    return {"id": "palm-540b", "hardware": "TPU v4", "chip_hours": PALM_HOURS, "power_w_per_chip": "378.5 W",
            "pue": "1.08", "grid_kgco2_per_kwh": "0.079 tCO2e/MWh", "co2_tonnes": "271.43 tCO2e", **over}


def test_palm_energy_and_emissions_agree():
    # 8,404,992 x 378.5 W = 3,181.289 MWh; x 1.08 = 3,435.79 MWh; x 0.079 = 271.43 t.
    assert PALM_HOURS == 8_404_992
    result = check_records([palm()])
    assert result.q.at[0, "energy_mwh"] == pytest.approx(3435.79, rel=1e-5)
    [f] = findings(palm(), "E002")
    assert f["severity"] == "ok" and f["expected"] == pytest.approx(271.43, rel=1e-4)
    assert str(result.status.iat[0]) == "pass"


@pytest.mark.parametrize("doctored", [{"co2_tonnes": "2714.3 tCO2e"}, {"energy_mwh": "34,357.9 MWh"}])
def test_palm_doctored_copies_fail(doctored):
    assert status(palm(id="palm-doctored", **doctored)) == "fail"


# DeepSeek-V3 (DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv:2412.19437, Sec. 1, Table 1, p. 5, "Training
# costs of DeepSeek-V3, assuming the rental price of H800 is $2 per GPU hour"): pre-training 2,664K + context
# extension 119K + post-training 5K = 2,788K H800 GPU hours; USD 5.328M + 0.238M + 0.01M = USD 5.576M.
DSV3 = {"id": "deepseek-v3", "hardware": "H800", "chip_hours": "2.788M GPU-hours",
        "price_per_chip_hour": "$2/GPU-hour", "cost_usd": "$5.576M"}


def test_deepseek_v3_cost_is_hours_times_price():
    [f] = findings(DSV3, "E003")
    assert f["severity"] == "ok" and f["expected"] == pytest.approx(2.788e6 * 2)  # = 5,576,000
    assert status(DSV3) == "pass"


@pytest.mark.parametrize("cost", ["$55.76M", "$557,600"])
def test_deepseek_v3_doctored_cost_fails(cost):
    assert status({**DSV3, "id": "dsv3-doctored", "cost_usd": cost}) == "fail"


def test_energy_far_below_what_the_hours_allow_is_flagged():
    # The example: an energy ten times below chip-hours x TDP no longer passes silently.
    record = {"id": "low", "hardware": "A100-80GB", "chip_hours": "1,720,320", "energy_mwh": "68.81 MWh"}
    [f] = findings(record, "E005")
    assert f["severity"] == "warning" and f["ratio"] == pytest.approx(68.81e6 / 1_720_320 / 400, rel=1e-6)


@pytest.mark.parametrize("text, kind, value", [
    ("688 MWh", "energy", 688.0), ("6.9 GWh", "energy", 6900.0), ("3,300 kWh", "energy", 3.3),
    ("271.43 tCO2e", "co2", 271.43), ("5,000 kg", "co2", 5.0), ("2 Mt CO2e", "co2", 2e6),
    ("$5.6M", "usd", 5.6e6), ("5.576 million USD", "usd", 5.576e6), ("$2/GPU-hour", "usd_rate", 2.0),
    ("2 USD per GPU hour", "usd_rate", 2.0), ("378.5 W per chip", "power", 378.5), ("25 MW", "power", 25e6),
    ("429 gCO2e/kWh", "intensity", 0.429), ("0.079 tCO2e/MWh", "intensity", 0.079),
    # Strubell et al. 2019, Table 3: CO2eq in pounds (1 lb = 0.45359237 kg exactly) and costs as dollar ranges.
    ("192 lbs", "co2", 192 * 0.45359237 / 1000), ("626,155 pounds", "co2", 626_155 * 0.45359237 / 1000),
    ("$289 - $981", "usd", (289 + 981) / 2), ("$3751 - $12,571", "usd", (3751 + 12_571) / 2),
    ("$289-981", "usd", 635.0),
    ("$2/A100-40GB/hr", "usd_rate", 2.0),  # MosaicML's MPT-7B post: per named accelerator, per hour
])
def test_units_of_the_new_quantities(text, kind, value):
    assert parse_value(text, kind) == pytest.approx(value)


@pytest.mark.parametrize("text, kind", [("€5M", "usd"), ("5 GPU-hours", "energy"), ("$5", "co2")])
def test_units_of_the_new_quantities_refuse_other_units(text, kind):
    with pytest.raises(UnitError):
        parse_value(text, kind)


def test_epoch_power_and_cost_columns_are_read_and_checked(tmp_path):
    # Epoch AI's columns: 'Training power draw (W)' is the cluster's power, 'Training compute cost (2023 USD)'
    # the cost. EXAONE 4.0 (32B) row: 512 H200, 701,356 W -> 1,369.8 W per GPU, 1.96x the 700 W TDP (servers and
    # data centre included: info); cost compared with chip-hours as a price per hour (E003 -> E007).
    import pandas as pd

    from audit.api import check

    frame = pd.DataFrame({"Model": ["x"], "Training hardware": ["NVIDIA H200 SXM"], "Hardware quantity": [512],
                          "Training time (hours)": [3192], "Training power draw (W)": [701356.0],
                          "Training compute cost (2023 USD)": [1.0e6]})
    path = tmp_path / "epoch.csv"
    frame.to_csv(path, index=False)
    result = check([str(path)])
    assert result.q.at[0, "cluster_power_w"] == 701356.0
    assert result.q.at[0, "power_w_per_chip"] == pytest.approx(701356 / 512)
    [f] = result.findings[result.findings["rule"] == "E005"].to_dict("records")
    assert f["severity"] == "info" and f["ratio"] == pytest.approx(701356 / 512 / 700)
    # 1.0e6 USD / (512 x 3192 h = 1,634,304 chip-hours) = USD 0.612 per chip-hour: plausible.
    [p] = result.findings[result.findings["rule"] == "E007"].to_dict("records")
    assert p["severity"] == "ok" and p["claimed"] == pytest.approx(1.0e6 / (512 * 3192))


def test_market_based_zero_emissions_are_not_stated_not_invalid():
    """Meta's Llama 3.1 model card: "the total market-based greenhouse gas emissions for training were 0 tons CO2eq"
    (renewable energy matched to the use), beside 8,930 t location-based. A zero made the claim invalid ("cannot be
    zero ... rounded to nothing"); it is accounting, read as not stated and said (V003)."""
    result = check_records([{"id": "llama31-405b-market", "hardware": "H100-80GB", "chip_hours": "30.84M",
                             "power_w_per_chip": 700, "co2_tonnes": 0}])
    assert result.status.tolist() != ["invalid"]
    said = result.findings[result.findings["rule"].astype(str) == "V003"]["detail"].tolist()
    assert len(said) == 1 and "market-based" in said[0]


def test_a_dollar_range_is_said_as_a_range():
    """Strubell et al. 2019 give cloud costs as ranges, "$289 - $981" (Transformer big): read as the middle, $635,
    with half the range as its precision, and said (V011); the second dollar sign made it "only US dollars"."""
    result = check_records([{"id": "t2t-big", "cost_usd": "$289 - $981", "chip_hours": 672}])
    v011 = result.findings[result.findings["rule"].astype(str) == "V011"]["detail"].tolist()
    assert len(v011) == 1 and "a range, read as its middle" in v011[0]
