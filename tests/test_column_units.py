"""Units named in a column header ("Training time (hours)", "compute (PF-days)") apply to bare numbers in it.

Spreadsheets (Epoch AI's database among them) put the unit in the header and plain numbers in the cells.
"""

from __future__ import annotations

import pytest

from audit.api import check, to_json
from audit.quantities import canonical_column_and_unit


@pytest.mark.parametrize(("header", "expected"), [
    ("Training time (hours)", ("wall_clock_days", "hours")),
    ("compute (PF-days)", ("compute_flops", "PF-days")),
    ("Training compute (FLOP)", ("compute_flops", None)),  # the whole header is an alias: no hint needed
    # Epoch's "Hardware utilization (MFU)": MFU names the quantity, not a unit; the Epoch column profile maps it
    # (tests/test_colmap.py), the built-in aliases do not.
    ("Hardware utilization (MFU)", (None, "MFU")),
    ("gpu_hours", ("chip_hours", None)),
    ("Favourite colour (hours)", (None, "hours")),
])
def test_headers(header, expected):
    assert canonical_column_and_unit(header) == expected


def test_bare_numbers_take_the_header_unit_and_cells_with_units_keep_theirs(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("id,params,tokens,Training time (hours),compute (PF-days)\n"
                    "a,175B,300B,180,3640\n"
                    "b,175B,300B,7.5 days,3.14e23 FLOP\n", encoding="utf-8")
    claims = to_json(check([str(path)]))["claims"]
    a, b = claims
    assert a["quantities"]["wall_clock_days"]["value"] == pytest.approx(180 / 24)
    assert a["quantities"]["wall_clock_days"]["text"] == "180 hours"
    # Brown et al. 2020 Table D.1: 3.64e3 PF-days = 3640 x 1e15 x 86400 FLOP.
    assert a["quantities"]["compute_flops"]["value"] == pytest.approx(3640 * 1e15 * 86400)
    assert b["quantities"]["wall_clock_days"]["value"] == pytest.approx(7.5)
    assert b["quantities"]["compute_flops"]["value"] == pytest.approx(3.14e23)
    assert a["status"] == b["status"] == "pass"


def test_a_header_unit_that_does_not_fit_the_quantity_is_not_used_and_said_so(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("id,params (hours)\na,7B\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    assert report["claims"][0]["quantities"]["params"]["value"] == pytest.approx(7e9)
    notes = [n["message"] for n in report["summary"]["input"]["notes"]]
    assert any("'params (hours)'" in n and "not a unit of parameters" in n for n in notes), notes


@pytest.mark.parametrize("header", ["Training Time (GPU hours)", "Compute (GPU hours)", "Training time (GPU-days)"])
def test_a_header_in_accelerator_time_gives_the_chip_hours(tmp_path, header):
    """Meta's model cards head the GPU-hours column "Training Time (GPU hours)" (Llama 2, Table "CO2 emissions
    during pretraining": Llama 2 7B, 184,320 GPU hours on A100-80GB, 2T tokens; Touvron et al. 2023, Table 2 and
    Sec. 2.2). The number is accelerator time, not days of wall clock (it read as 184,320 days, 505 years)."""
    path = tmp_path / "card.csv"
    path.write_text(f"id,params,tokens,hardware,{header}\nllama2-7b,7B,2T,A100-80GB,184320\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    q = report["claims"][0]["quantities"]
    assert q["chip_hours"]["value"] == pytest.approx(184_320 * (24 if "days" in header else 1))
    assert "wall_clock_days" not in q or q["wall_clock_days"]["source"] != "claimed"
    # By hand: 6 x 7e9 x 2e12 / (184,320 x 3600 x 312e12, the A100's dense BF16 peak) = 0.406.
    if "days" not in header:
        assert q["mfu"]["value"] == pytest.approx(6 * 7e9 * 2e12 / (184_320 * 3600 * 312e12), rel=1e-3)
    notes = [n["message"] for n in report["summary"]["input"]["notes"]]
    assert any(header in n and "read as chip_hours" in n for n in notes), notes


def test_a_plain_duration_in_a_header_stays_wall_clock():
    assert canonical_column_and_unit("Training time (hours)")[0] == "wall_clock_days"
    from audit.reading.fields import field_of

    assert field_of("Training time (hours)") == ("wall_clock_days", "hours")
    assert field_of("Training Time (GPU hours)") == ("chip_hours", "GPU hours")
    assert field_of("params (GPU hours)") == ("params", "GPU hours")  # not a unit of parameters: said, not used


def _claim(tmp_path, header: str, cell: str, **more: str | None) -> dict:
    cols = {"id": "r", "params": "7B", "tokens": "2T", "hardware": "H100", "chips": "1024", "wall_clock_days": "3",
            **more, header: cell}
    cols = {k: v for k, v in cols.items() if v is not None}
    path = tmp_path / "runs.csv"
    path.write_text(",".join(cols) + "\n" + ",".join(cols.values()) + "\n", encoding="utf-8")
    return to_json(check([str(path)]))


@pytest.mark.parametrize("header", ["MFU (%)", "MFU [%]", "MFU %", "mfu (%)"])
def test_a_percent_sign_in_the_header_makes_the_numbers_percentages(tmp_path, header):
    # It was dropped with the header's other signs ("MFU (%)" is the alias "mfu"): 45 read as 4,500 %, a fail.
    report = _claim(tmp_path, header, "45")
    assert report["claims"][0]["quantities"]["mfu"]["value"] == pytest.approx(0.45)


def test_a_run_sheet_with_model_params_and_wall_time_headers_is_read_whole(tmp_path):
    """An internal run sheet's headers: 'Model params (B)' and 'Wall time (h)' were not read (only a did-you-mean),
    so its 7B run was audited with the parameters derived from the MFU. A consistent row, by hand: 1e12 tokens at
    3,850 tokens/s on each of 256 H100 take 1e12 / (3,850 x 256 x 3600) = 281.8 h, 256 x 281.8 = 72,150 GPU-hours,
    and 6 x 7e9 x 3,850 = 1.617e14 FLOP/s per GPU is 16.3 % of the dense BF16 989.4 TFLOP/s (H100 whitepaper)."""
    path = tmp_path / "runs.csv"
    path.write_text("Run,Model params (B),Tokens (B),GPU type,# GPUs,Wall time (h),MFU (%),Throughput (tok/s/gpu),"
                    "GPU hours,Precision\n"
                    "exp-001,7,1000,H100 SXM,256,281.8,16.3,3850,72150,bf16\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    assert report["summary"]["input"]["unread_columns"] == []
    [claim] = report["claims"]
    q = claim["quantities"]
    assert q["params"]["value"] == 7e9 and q["params"]["source"] == "claimed"
    assert q["wall_clock_days"]["value"] == pytest.approx(281.8 / 24)
    assert claim["status"] == "pass", [(f["rule"], f["message"]) for f in claim["findings"] if f["severity"] != "ok"]


def test_a_utilization_of_1_to_100_without_a_unit_is_read_as_a_percentage_and_said(tmp_path):
    """A run sheet's ``reported_mfu`` of 39, 40, 41: MFU is a fraction of 1, so a number from 1 to 100 is a
    percentage with its sign left off (each failed U001 at 3,900 %). Llama 2 7B (Touvron et al. 2023, Table 2):
    184,320 A100 GPU-hours for 2T tokens; 6 x 6.74e9 x 2e12 = 8.09e22 FLOP, / (184,320 x 3600 x 312e12) = 39.1 %
    of the dense BF16 peak: stated here as 39 (%), and 40 and 41 for two other runs."""
    path = tmp_path / "runs.csv"
    path.write_text("id,params,tokens,hardware,gpu_hours,reported_mfu\n"
                    "llama2-7b,6.74B,2T,A100-80GB,184320,39\n"
                    "b,6.74B,2T,A100-80GB,184320,40\n"
                    "c,6.74B,2T,A100-80GB,184320,41\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    assert [c["quantities"]["mfu"]["value"] for c in report["claims"]] == pytest.approx([0.39, 0.40, 0.41])
    assert report["claims"][0]["quantities"]["mfu"]["text"] == "39"  # as written
    assert [c["status"] for c in report["claims"]] == ["pass", "pass", "pass"]
    notes = [n["message"] for n in report["summary"]["input"]["notes"]]
    assert notes == ["'reported_mfu': MFU figures from 1 to 100 written without a unit are read as percentages (MFU "
                     "is a fraction of 1: 42.5 is 42.5 %); a header such as 'reported_mfu (%)' says so"]


def test_a_utilization_reads_cell_by_cell_fractions_beside_percentages_and_beyond_100_not_at_all(tmp_path):
    """Each cell on its own (a claim reads the same alone as in any batch): 0.39 is a fraction, 40 a percentage,
    '41%' says so itself, and 450 is no percentage of a utilization: left as written, U001 calls it impossible."""
    path = tmp_path / "runs.csv"
    path.write_text("id,mfu,hfu\na,0.39,\nb,40,\nc,41%,\nd,450,\ne,,1\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    mfu = [c["quantities"].get("mfu", {}).get("value") for c in report["claims"]]
    assert mfu == pytest.approx([0.39, 0.40, 0.41, 450, None])
    # A bare 1 is both readings at once, 100 % as a fraction and 1 % as a percentage: refused, saying both.
    assert "hfu" not in report["claims"][4]["quantities"]
    [refused] = [f for f in report["claims"][4]["findings"] if f["rule"] == "V001"]
    assert "written '1' is 100 % as a fraction of 1 and 1 % as a percentage" in refused["message"]
    assert [c["status"] for c in report["claims"]] == ["pass", "pass", "pass", "fail", "invalid"]
    assert "U001" in {f["rule"] for f in report["claims"][3]["findings"]}
    assert len(report["summary"]["input"]["notes"]) == 1  # once per file and header


def test_a_bare_1_as_a_utilization_is_refused_not_passed_on_its_one_digit(tmp_path):
    """LLaMA 65B (Touvron et al. 2023, Sec. 2.4): 2,048 A100-80GB for about 21 days on 1.4T tokens, so 6 x 65.2e9 x
    1.4e12 = 5.48e23 FLOP / (2,048 x 504 h x 3600 x 312e12) = 47.2 % MFU. Written "1" (or "1.0"), the MFU is 100 %
    as a fraction and 1 % as a percentage; read as 100 %, its one digit (anything from 50 % to 150 %) let it agree
    with the 47.2 % the other figures imply, and the claim passed. A header unit settles it: "MFU (%)" makes 1 one
    percent, and the implied 47.2 % then contradicts it."""
    path = tmp_path / "runs.csv"
    rows = "".join(f"{i},65.2B,1.4T,A100-80GB,2048,21,{mfu}\n" for i, mfu in enumerate(["1", "1.0", "0.472"]))
    path.write_text("id,params,tokens,hardware,chips,wall_clock_days,mfu\n" + rows, encoding="utf-8")
    report = to_json(check([str(path)]))
    assert [c["status"] for c in report["claims"]] == ["invalid", "invalid", "pass"]
    assert report["claims"][2]["quantities"]["mfu"]["value"] == pytest.approx(0.472)
    for claim in report["claims"][:2]:
        [refused] = [f for f in claim["findings"] if f["rule"] == "V001"]
        assert refused["message"].endswith("write 100% or 1%"), refused["message"]
    unit = tmp_path / "unit.csv"
    unit.write_text("id,params,tokens,hardware,chips,wall_clock_days,MFU (%)\na,65.2B,1.4T,A100-80GB,2048,21,1\n",
                    encoding="utf-8")
    [claim] = to_json(check([str(unit)]))["claims"]
    assert claim["quantities"]["mfu"]["value"] == pytest.approx(0.01)
    assert claim["status"] == "fail"


def test_palm_utilizations_typed_without_their_signs_are_read_as_percentages():
    """PaLM 540B (Chowdhery et al. 2022, Table 3 and App. B): MFU 46.2 %, HFU 57.8 %, typed without their % sign:
    HFU/MFU = 1.25, the rematerialization the paper describes; read as 4,620 % and 5,780 % it was a U001 and a
    U002 error."""
    from audit.api import check_records

    claim = to_json(check_records([{"id": "palm", "params": "540.35B", "tokens": "780B", "hardware": "TPU v4",
                                    "chips": 6144, "mfu": 46.2, "hfu": 57.8}]))["claims"][0]
    assert claim["quantities"]["mfu"]["value"] == pytest.approx(0.462)
    assert claim["quantities"]["hfu"]["value"] == pytest.approx(0.578)
    assert not [f for f in claim["findings"] if f["severity"] == "error"], claim["findings"]


@pytest.mark.parametrize(("header", "cell", "usd"), [
    ("Cost ($K)", "147", 147_000), ("Cost (kUSD)", "147", 147_000), ("Cost ($M)", "0.147", 147_000),
    ("Cost (USD)", "147000", 147_000)])
def test_money_headers_scale_the_amounts(tmp_path, header, cell, usd):
    # 1,024 H100 x 3 days x 24 h x $2 per GPU-hour = $147,456 (hand arithmetic): agrees with $147K.
    report = _claim(tmp_path, header, cell, price_per_chip_hour="2")
    claim = report["claims"][0]
    assert claim["quantities"]["cost_usd"]["value"] == pytest.approx(usd)
    assert not [f for f in claim["findings"] if f["rule"] == "E003" and f["severity"] != "ok"]


def test_a_header_multiplier_word_scales_the_numbers(tmp_path):
    # "GPU hours (thousands)": 73.728 thousand = 1,024 x 72 h (hand arithmetic), consistent with the chips and days.
    report = _claim(tmp_path, "GPU hours (thousands)", "73.728")
    assert report["claims"][0]["quantities"]["chip_hours"]["value"] == pytest.approx(73_728)


def test_a_per_accelerator_throughput_header_is_one_chips_rate(tmp_path):
    # 7,535 tokens/s per H100 x 1,024 = 7.72M tokens/s, and 2T tokens / 7.72M = 3.0 days (hand arithmetic).
    report = _claim(tmp_path, "Throughput (tokens/s/GPU)", "7535")
    claim = report["claims"][0]
    assert claim["quantities"]["throughput_tokens_per_s"]["value"] == pytest.approx(7535 * 1024)
    assert claim["status"] == "pass", [f["message"] for f in claim["findings"] if f["severity"] != "ok"]


@pytest.mark.parametrize(("header", "field", "words"), [("Cost (EUR)", "cost_usd", "not US dollars"),
                                                       ("GPUs (nodes)", "chips", "node holds several")])
def test_a_header_unit_that_names_something_else_refuses_the_numbers(tmp_path, header, field, words):
    report = _claim(tmp_path, header, "140000" if "Cost" in header else "128",
                    **({"chips": None} if field == "chips" else {}))
    claim = report["claims"][0]
    assert claim["status"] == "invalid"
    bad = [f["message"] for f in claim["findings"] if f["rule"] == "V001"]
    assert any(header in m and words in m for m in bad), bad


@pytest.mark.parametrize(("header", "field", "scale"), [
    ("Time (GPU hours)", "chip_hours", 1.0),  # Llama 2, Table 2, as printed (Touvron et al. 2023)
    ("Total train compute (PF-days)", "compute_flops", 1e15 * 86400),  # GPT-3, Table D.1 (Brown et al. 2020)
    ("Total train compute (flops)", "compute_flops", 1.0),
    ("GPU-days", "chip_hours", 24.0),
    ("GPU weeks", "chip_hours", 168.0),
    ("TFLOPs/GPU", "achieved_flops_per_chip", 1e12),
    ("TFLOP/s per GPU", "achieved_flops_per_chip", 1e12),
    ("Peak TFLOP/s", "peak_flops_per_chip", 1e12),
    ("Number of GPUs", "chips", 1.0),
    ("BF16 MFU", "mfu", 1.0),
    ("Price ($/GPU-hour)", "price_per_chip_hour", 1.0),
    ("Cost (USD, millions)", "cost_usd", 1e6),  # DeepSeek-V3's $5.576M as 5.576
    ("Cost (millions of dollars)", "cost_usd", 1e6),
])
def test_headers_as_papers_print_them_name_their_field(header, field, scale):
    from audit.quantities import BY_NAME
    from audit.reading.fields import field_of
    from audit.units import unit_scale

    got, unit = field_of(header)
    assert got == field
    assert (1.0 if unit is None else unit_scale(unit, BY_NAME[field].kind)) == pytest.approx(scale)


@pytest.mark.parametrize("header", ["time", "Time", "hours", "b", "k", "TFLOPs", "node-hours", "Total", "Peak",
                                    "Training compute cost (cloud)"])
def test_a_general_word_or_a_bare_multiplier_names_no_field(header):
    from audit.reading.fields import field_of

    assert field_of(header)[0] is None


def test_a_gpu_days_typo_under_the_papers_own_header_fails(tmp_path):
    # Llama 2 70B, Table 2: 1,720,320 GPU-hours on A100-80GB for 2T tokens; 71,680 is that in GPU-days. Read as
    # GPU-hours: 6 x 70e9 x 2e12 / (71,680 x 3600 x 312e12) = 10.4, an MFU of 1,040 %; the 7B row (184,320 h):
    # 6 x 7e9 x 2e12 / (184,320 x 3600 x 312e12) = 40.6 %.
    path = tmp_path / "table2.csv"
    path.write_text("Model,Params,Tokens (T),GPU type,Time (GPU hours)\n"
                    "Llama 2 7B,7B,2.0,A100-80GB,184320\nLlama 2 70B,70B,2.0,A100-80GB,71680\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    seven, seventy = report["claims"]
    assert seven["status"] == "pass" and seven["quantities"]["mfu"]["value"] == pytest.approx(0.406, abs=5e-4)
    assert seventy["status"] == "fail" and seventy["quantities"]["mfu"]["value"] == pytest.approx(10.43, abs=0.01)
    notes = [n["message"] for n in report["summary"]["input"]["notes"]]
    assert any("'Time (GPU hours)' is read as chip_hours" in n for n in notes), notes


def test_of_two_errors_the_compute_side_one_comes_first(tmp_path):
    # Llama 2, Table 2 as printed, the 70B row with GPU-days typed as GPU-hours: 400 W per GPU and 291.42 t CO2eq.
    # The energy derived from the wrong chip-hours, 71,680 h x 400 W = 28.67 MWh, gives 291.42 / 28.67 = 10.16 kg
    # per kWh (E006, an error), but the figure that is wrong is the GPU-hours, which U001 (MFU 1,040 %) points at
    # with its cause (x24): it is the claim's first finding and the report's headline.
    path = tmp_path / "table2.csv"
    path.write_text("Model,Params,Tokens (T),GPU type,Time (GPU hours),Power Consumption (W),Carbon Emitted (tCO2eq)\n"
                    "Llama 2 70B,70B,2.0,A100-80GB,71680,400,291.42\n", encoding="utf-8")
    findings = to_json(check([str(path)]))["claims"][0]["findings"]
    errors = [f["rule"] for f in findings if f["severity"] == "error"]
    assert errors[0] == "U001" and "E006" in errors[1:], errors


def test_one_figure_in_two_units_is_read_once_and_checked(tmp_path):
    # GPT-3's Table D.1 (Brown et al. 2020) gives each model's compute in PF-days and in FLOP: 2.60 PF-days x
    # 8.64e19 = 2.246e20 (printed 2.25E+20), 3.64E+03 PF-days = 3.145e23 (printed 3.14E+23). Both columns were
    # refused ("keep one"); they are one figure, and a row whose two columns disagree (PF-days pasted into the FLOP
    # column: 3640 "flops") is invalid on it, the others audited.
    path = tmp_path / "d1.csv"
    path.write_text("Model,Total train compute (PF-days),Total train compute (flops),Params (M),Training tokens "
                    "(billions)\nGPT-3 Small,2.60,2.25E+20,125,300\nGPT-3 175B,3.64E+03,3.14E+23,174600,300\n"
                    "GPT-3 175B slip,3.64E+03,3640,174600,300\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    small, large, slip = report["claims"]
    assert small["quantities"]["compute_flops"]["value"] == pytest.approx(2.60 * 1e15 * 86400)
    assert large["status"] == "pass" and small["status"] == "pass"
    assert slip["status"] == "invalid"
    assert [f["quantity"] for f in slip["findings"] if f["rule"] == "V001"] == ["compute_flops"]
    notes = [n["message"] for n in report["summary"]["input"]["notes"]]
    assert any("both give compute_flops in different units" in n for n in notes), notes


def test_two_columns_for_one_field_in_the_same_unit_are_still_refused(tmp_path):
    path = tmp_path / "two.csv"
    path.write_text("id,compute (FLOP),training compute (flops),params\na,1e20,2e20,1B\n", encoding="utf-8")
    with pytest.raises(Exception, match="keep one"):
        check([str(path)])


def test_an_abbreviation_dot_after_a_unit_is_punctuation(tmp_path):
    """phi-1.5's paper (Li et al. 2023, "Textbooks Are All You Need II", Table 1) heads its column "Train time
    (GPU hrs.)" and gives phi-1.5 1.5K of them: the dot ends the abbreviation, in the header as in a cell ("1.5K
    GPU hrs.") and after a duration ("8 days."). Both were refused ("unknown unit 'GPU hrs.'"). By hand: 6 x 1.3e9
    x 150e9 / (1,500 x 3600 x 312e12, the A100's dense BF16 peak) = 0.694."""
    path = tmp_path / "phi.csv"
    path.write_text("id,params,tokens,hardware,Train time (GPU hrs.)\nphi-1.5,1.3B,150B,A100,1.5K\n",
                    encoding="utf-8")
    q = to_json(check([str(path)]))["claims"][0]["quantities"]
    assert q["chip_hours"]["value"] == pytest.approx(1_500)
    assert q["mfu"]["value"] == pytest.approx(6 * 1.3e9 * 150e9 / (1_500 * 3600 * 312e12), rel=1e-3)
    cells = tmp_path / "cells.jsonl"
    cells.write_text('{"id": "a", "chip_hours": "1.5K GPU hrs."}\n{"id": "b", "chips": 32, "wall_clock_days": '
                     '"8 days."}\n{"id": "c", "wall_clock_days": "192 hrs."}\n', encoding="utf-8")
    claims = to_json(check([str(cells)]))["claims"]
    assert claims[0]["quantities"]["chip_hours"]["value"] == pytest.approx(1_500)
    assert claims[1]["quantities"]["wall_clock_days"]["value"] == pytest.approx(8)
    assert claims[2]["quantities"]["wall_clock_days"]["value"] == pytest.approx(192 / 24)
    assert all(c["status"] != "invalid" for c in claims)


@pytest.mark.parametrize("header, field", [("Token count", "tokens"), ("Parameter count", "params"),
                                           ("Chip count", "chips"), ("Accelerator count", "chips"),
                                           ("Token count (B)", "tokens"), ("Model count", None)])
def test_a_field_then_count_names_the_count(header, field):
    """Meta's Llama 4 model card heads its token column "Token count" (Scout ~40T, Maverick ~22T): it was not read
    and had no did-you-mean. A field's name then "count" (or "number", "total") is that count; an accelerator's
    name then "count" counts accelerators; a word that names no field stays unread."""
    from audit.reading.fields import field_of

    assert field_of(header)[0] == field


def test_the_llama4_model_card_table_is_read(tmp_path):
    """The Llama 4 model card's training table as written (meta-llama/llama-models, models/llama4/MODEL_CARD.md):
    Scout 5.0M H100-80GB GPU hours, ~40T tokens, 17B active. By hand: 6 x 17e9 x 40e12 / (5.0e6 x 3600 x
    989.4e12, the H100 SXM's dense BF16 peak) = 0.229."""
    path = tmp_path / "card.csv"
    path.write_text("Model Name,Token count,Training Time (GPU hours),Hardware,active_params\n"
                    "Llama 4 Scout,~40T,5.0M,H100-80GB,17B\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    q = report["claims"][0]["quantities"]
    assert q["tokens"]["value"] == pytest.approx(40e12)
    assert q["mfu"]["value"] == pytest.approx(6 * 17e9 * 40e12 / (5.0e6 * 3600 * 989.4e12), rel=1e-3)
    assert not report["summary"]["input"]["unread_columns"]


def test_a_header_rate_of_something_else_is_refused_not_read_as_tokens(tmp_path):
    """llm-foundry's benchmark table heads samples per second "Throughput (S/s)" (MPT-70B on 64 H100: 32 S/s at
    2,048 tokens per sample, 65,536 tokens/s). 'S/s' is no unit of throughput the tool knows; its numbers were read
    as tokens/s, 2,048 times too few. A rate of something else is refused (V001 naming the header), where a word
    that is no unit ("Compute (estimated)") stays a description."""
    path = tmp_path / "foundry.csv"
    path.write_text("id,params,chips,hardware,Throughput (S/s)\nmpt-70b,64862437376,64,H100,32\n", encoding="utf-8")
    c = to_json(check([str(path)]))["claims"][0]
    assert "throughput_tokens_per_s" not in c["quantities"] or \
        c["quantities"]["throughput_tokens_per_s"]["source"] != "claimed"
    v001 = [f["message"] for f in c["findings"] if f["rule"] == "V001"]
    assert v001 and "'Throughput (S/s)'" in v001[0]
    described = tmp_path / "described.csv"
    described.write_text("id,params,tokens,Compute (estimated)\na,7B,2T,8.4e22\n", encoding="utf-8")
    q = to_json(check([str(described)]))["claims"][0]["quantities"]
    assert q["compute_flops"]["value"] == pytest.approx(8.4e22)


def test_snake_case_unit_headers_read_as_written_with_their_separators(tmp_path):
    """A tracking sheet spells unit headers in snake_case: "tflops_per_gpu" is "TFLOPs/GPU", "gpu_days" is
    "GPU days", "tokens_per_sec_per_gpu" is "tokens/sec/GPU"; they were left unread (field test, session 23:
    TinyLlama's 24,000 tokens/s per A100 and Megatron-LM's 163 TFLOP/s per GPU went unchecked)."""
    path = tmp_path / "runs.csv"
    path.write_text("model,params,train_tokens,gpus,gpu_type,train_days,tflops_per_gpu,tokens_per_sec_per_gpu,"
                    "gpu_days\n"
                    "tinyllama,1.1B,3T,16,A100-40G,90,,24000,1440\n"
                    "megatron-1t,1T,450B,3072,A100,84,163,,\n", encoding="utf-8")
    result = check([str(path)])
    assert result.claims.unread_columns == []
    q = to_json(result)["claims"]
    tiny, mega = (c["quantities"] for c in q)
    assert tiny["wall_clock_days"]["value"] == 90  # "train_days": the training days, as "training_days"
    assert tiny["chip_hours"]["value"] == 1440 * 24  # 1,440 GPU-days = 34,560 GPU-hours = 16 GPUs x 90 days x 24
    assert tiny["chip_hours"]["text"] == "1440 gpu days"
    # 24,000 tokens/s on each of 16 GPUs: 384,000 tokens/s for the cluster.
    assert tiny["throughput_tokens_per_s"]["value"] == 24_000 * 16
    # Megatron-LM's 163 TFLOP/s per GPU (Narayanan et al. 2021) counts the recomputed forward pass: the tool reads it
    # as hardware FLOPs (C015) since 6 x 1e12 x 450e9 / (3072 x 84 x 86400 s) = 121.1 TFLOP/s of model FLOPs.
    assert [f["rule"] for f in q[1]["findings"] if f["rule"] == "C015"] == ["C015"]
    assert mega["mfu"]["value"] == pytest.approx(6 * 1e12 * 450e9 / (3072 * 84 * 86400 * 312e12), rel=1e-9)


def test_llm_foundry_tokens_per_second_abbreviated_in_header_and_cell(tmp_path):
    """llm-foundry's benchmark table (mosaicml/llm-foundry, scripts/train/benchmarking/README.md) heads its per-GPU
    throughput "T/s/GPU" (tokens per second per GPU); a cell may repeat the unit ("1039 T/s/GPU"). Both were
    refused: the header left unread, the cell invalid ("unknown unit '/s'": the T read as tera). MPT-13B on 64 H100
    without recomputation, its row: 4,800 T/s/GPU, MFU 39.86 %; 4,800 x 64 = 307,200 tokens/s for the cluster, and
    6 x 12,853,954,560 x 4,800 / 989.4e12 = 37.4 % of the dense BF16 peak by 6N alone (the table's 39.86 % adds
    the attention FLOPs): C005 agrees at 1.07x."""
    path = tmp_path / "foundry.csv"
    path.write_text("id,params,hardware,precision,chips,mfu,T/s/GPU\n"
                    "mpt-13b,12853954560,H100 80GB,amp_bf16,64,39.86,4800\n", encoding="utf-8")
    result = check([str(path)])
    assert result.claims.unread_columns == []
    c = to_json(result)["claims"][0]
    assert c["quantities"]["throughput_tokens_per_s"]["value"] == 4800 * 64
    assert 6 * 12_853_954_560 * 4800 / 989.4e12 == pytest.approx(0.374, abs=5e-4)
    c005 = [f for f in c["findings"] if f["rule"] == "C005"]
    assert c["status"] == "pass" and c005 and c005[0]["severity"] == "ok" and "1.07x" in c005[0]["message"]
    cell = tmp_path / "cell.csv"
    cell.write_text("id,params,hardware,precision,chips,mfu,throughput_tokens_per_s\n"
                    "mpt-13b,12853954560,H100 80GB,amp_bf16,64,39.86,4800 T/s/GPU\n", encoding="utf-8")
    c = to_json(check([str(cell)]))["claims"][0]
    assert c["quantities"]["throughput_tokens_per_s"]["value"] == 4800 * 64 and c["status"] == "pass"


@pytest.mark.parametrize(("header", "cell", "field", "value"), [
    ("mfu_pct", "41.2", "mfu", 0.412),  # a percentage column: 41.2 is 41.2 %
    ("mfu_pct", "0.41", "mfu", 0.0041),  # ... and 0.41 under it is 0.41 %, the slip the header unit reveals
    ("hfu_percent", "52", "hfu", 0.52),
    ("wall_clock_hours", "61.5", "wall_clock_days", 61.5 / 24),
    ("wallclock_s", "221400", "wall_clock_days", 221_400 / 86_400),
    ("duration_hours", "36", "wall_clock_days", 1.5),
    ("train_time_h", "48", "wall_clock_days", 2.0),
    ("energy_kwh", "1500", "energy_mwh", 1.5),
    ("params_b", "6.7", "params", 6.7e9),
])
def test_a_field_name_with_its_unit_after_an_underscore_reads_in_that_unit(tmp_path, header, cell, field, value):
    """A run log's "mfu_pct", "wall_clock_hours", "wallclock_s": the field's name, then its unit. They were left
    unread (field test, session 23: a sheet's MFU and wall-clock columns, and four planted slips with them)."""
    path = tmp_path / "runs.csv"
    path.write_text(f"id,params_total,{header}\nr,7B,{cell}\n" if header != "params_b" else f"id,{header}\nr,{cell}\n",
                    encoding="utf-8")
    result = check([str(path)])
    assert result.claims.unread_columns == []
    assert to_json(result)["claims"][0]["quantities"][field]["value"] == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("header", ["train_hours", "elapsed_days", "gpu_hours_total", "mfu_est"])
def test_a_header_whose_rest_names_no_field_stays_unread(tmp_path, header):
    """"train_hours" is accelerator-hours or wall-clock (only the user can say); "elapsed" names no field."""
    path = tmp_path / "runs.csv"
    path.write_text(f"id,params,{header}\nr,7B,10\n", encoding="utf-8")
    assert [u[1] for u in check([str(path)]).claims.unread_columns] == [header]


def test_train_hours_beside_gpu_hours_are_the_wall_clock_hours(tmp_path):
    """A run sheet with "gpu_hours" and "train_hours": the accelerator-hours have their column, so train_hours are
    the wall-clock hours (field test, session 23: four of ten planted slips went unseen with it unread). 16 GPUs x
    90 h = 1,440 GPU-hours: C002 agrees. Alone, or beside no accelerator-hours, it stays unread."""
    path = tmp_path / "runs.csv"
    path.write_text("run_id,n_params,num_gpus,gpu_type,train_hours,gpu_hours\nr1,1.1B,16,A100,90,1440\n",
                    encoding="utf-8")
    result = check([str(path)])
    assert result.claims.unread_columns == []
    assert "'train_hours' is read as the wall-clock hours: 'gpu_hours' gives the accelerator-hours" in \
        [said for _, said in result.claims.notes]
    claim = to_json(result)["claims"][0]
    assert claim["quantities"]["wall_clock_days"]["value"] == pytest.approx(90 / 24)
    assert [f["severity"] for f in claim["findings"] if f["rule"] == "C002"] == ["ok"]
    alone = tmp_path / "alone.csv"
    alone.write_text("run_id,n_params,num_gpus,train_hours\nr1,1.1B,16,90\n", encoding="utf-8")
    assert [u[1] for u in check([str(alone)]).claims.unread_columns] == ["train_hours"]
    a100 = tmp_path / "a100.csv"  # an accelerator named in the header: accelerator-hours, not read as wall-clock
    a100.write_text("run_id,n_params,gpu_hours,a100_hours\nr1,1.1B,1440,1440\n", encoding="utf-8")
    assert [u[1] for u in check([str(a100)]).claims.unread_columns] == ["a100_hours"]


def test_a_column_the_audit_does_not_use_written_twice_is_kept_and_said(tmp_path):
    """A header written twice for a field the audit uses is refused (which column is meant cannot be guessed); one
    it does not use is kept as extra fields, the second under the reader's name 'foo.1', which the file does not
    have: said, so that the name in the warning and the report is not a mystery."""
    from audit.reading import load

    path = tmp_path / "dup.csv"
    path.write_text("id,params,tokens,foo,foo\nx1,175B,300B,a,b\n", encoding="utf-8")
    claims = load([str(path)])
    assert list(claims.extras["foo"]) == ["a"] and list(claims.extras["foo.1"]) == ["b"]
    assert (str(path), "the column 'foo' is given 2 times: the second is kept as 'foo.1'") in claims.notes
    twice = tmp_path / "twice.csv"
    twice.write_text("id,params,params\nx1,175B,175B\n", encoding="utf-8")
    with pytest.raises(Exception, match="the column 'params' is given 2 times"):
        load([str(twice)])


def test_a_unit_written_with_in_is_read_and_the_in_is_no_part_of_it(tmp_path):
    """LLaMA (Touvron et al. 2023, Sec. 2.4): 65.2B parameters, 1.4T tokens, 2048 A100-80GB for about 21 days, i.e.
    1,022,362 GPU-hours (Table 15): 1,022,362 / 2048 = 499.2 hours. Headers that write their unit "(in hours)",
    "(in billions)" had the unit "in hours" refused ("not a unit of wall-clock") and the numbers read as days and
    as bare counts: C002 failed at 0.0417x and the MFU was 1.99e-18 %."""
    path = tmp_path / "t.csv"
    path.write_text("Model,Params (in billions),Tokens (in billions),Training time (in hours),GPUs,GPU-hours,Hardware\n"
                    'LLaMA-65B,65.2,1400,499.2,2048,"1,022,362",A100-80GB\n', encoding="utf-8")
    report = to_json(check([str(path)]))
    claim = report["claims"][0]
    q = claim["quantities"]
    assert q["params"]["value"] == pytest.approx(65.2e9)
    assert q["tokens"]["value"] == pytest.approx(1.4e12)
    assert q["wall_clock_days"]["value"] == pytest.approx(499.2 / 24)
    # 6 x 65.2e9 x 1.4e12 / (1,022,362 x 3600 x 312e12, the A100's dense BF16 peak) = 0.477
    assert q["mfu"]["value"] == pytest.approx(6 * 65.2e9 * 1.4e12 / (1022362 * 3600 * 312e12), rel=1e-3)
    assert claim["status"] == "pass", [f["message"] for f in claim["findings"] if f["severity"] != "ok"]
    notes = [n["message"] for n in report["summary"]["input"]["notes"]]
    assert not any("'in " in n or "not a unit" in n for n in notes), notes


@pytest.mark.parametrize(("hours_header", "usd_header"), [
    ("in H800 GPU Hours", "in USD"),  # Table 1's row names, as a column header once transposed
    ("Training Costs (in H800 GPU Hours)", "Training Costs (in USD)"),  # the row names with their heading
])
def test_deepseek_v3_costs_headed_as_printed_are_read(tmp_path, hours_header, usd_header):
    """DeepSeek-V3 (arXiv 2412.19437), Table 1: pre-training 2664K H800 GPU hours, $5.328M (at $2 per GPU hour);
    671B total / 37B activated parameters, 14.8T tokens, FP8. Both columns were dropped with a warning. By hand:
    6 x 37e9 x 14.8e12 / (2.664e6 x 3600 x 1978.9e12, the H800 SXM's dense FP8 peak) = 0.173."""
    path = tmp_path / "t.csv"
    path.write_text(f'Stage,"{hours_header}","{usd_header}",Total Params,Activated Params,Tokens,GPUs,Hardware,'
                    f"Precision\nPre-Training,2664K,$5.328M,671B,37B,14.8T,2048,H800,FP8\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    q = report["claims"][0]["quantities"]
    assert q["chip_hours"]["value"] == pytest.approx(2.664e6)
    assert q["cost_usd"]["value"] == pytest.approx(5.328e6)
    assert q["mfu"]["value"] == pytest.approx(6 * 37e9 * 14.8e12 / (2.664e6 * 3600 * 1978.9e12), rel=1e-3)
    unread = [u["column"] for u in report["summary"]["input"]["unread_columns"]]
    assert hours_header not in unread and usd_header not in unread


@pytest.mark.parametrize(("header", "field"), [
    ("Total power consumption (MWh)", "energy_mwh"),  # an energy unit under power words: the energy
    ("Power consumption (MWh)", "energy_mwh"),
    ("Power consumption (kWh)", "energy_mwh"),
    ("Total power consumption (W)", "cluster_power_w"),  # "total" is the cluster's, never one accelerator's
    ("Total power consumption (MW)", "cluster_power_w"),
    ("GPU Power consumption (W)", "power_w_per_chip"),  # an accelerator's word: one accelerator's power
    ("GPU Power consumption", "power_w_per_chip"),
    ("Power Consumption (W)", "power_w_per_chip"),  # Llama 2's card, as before
])
def test_power_and_energy_headers_name_the_field_of_their_dimension(header, field):
    from audit.reading.fields import field_of

    assert field_of(header)[0] == field


def test_llama_table15_energy_headed_total_power_consumption_is_read_as_energy(tmp_path):
    """LLaMA (Touvron et al. 2023), Table 15, as printed: "GPU Power consumption" 400W, "Total power consumption"
    356 MWh (OPT-175B, 809,472 GPU-hours) and 449 MWh (LLaMA-65B, 1,022,362 GPU-hours); the caption's PUE 1.1:
    809,472 x 400 W x 1.1 = 356.2 MWh, 1,022,362 x 400 x 1.1 = 449.8 MWh. Every row was invalid ("unknown unit
    'MWh'", the column read as power per GPU) and the 400W column was not read."""
    path = tmp_path / "t15.csv"
    path.write_text("Model,GPU Type,GPU Power consumption,GPU-hours,Total power consumption,PUE\n"
                    'OPT-175B,A100-80GB,400W,"809,472",356 MWh,1.1\n'
                    'LLaMA-65B,A100-80GB,400W,"1,022,362",449 MWh,1.1\n', encoding="utf-8")
    report = to_json(check([str(path)]))
    for claim, mwh in zip(report["claims"], (356, 449)):
        q = claim["quantities"]
        assert q["energy_mwh"]["value"] == pytest.approx(mwh)
        assert q["power_w_per_chip"]["value"] == pytest.approx(400)
        assert claim["status"] == "pass", [f["message"] for f in claim["findings"] if f["severity"] != "ok"]
    assert 356 / (809472 * 400 * 1.1 / 1e6) == pytest.approx(1, abs=0.01)  # the table agrees with itself
    notes = [n["message"] for n in report["summary"]["input"]["notes"]]
    assert any("'Total power consumption'" in n and "energ" in n for n in notes), notes


def test_an_energy_header_in_a_unit_of_power_is_refused_and_said(tmp_path):
    """'Energy (kW)': a power, not an energy; read in MWh, 5 kW would be taken for 5 MWh."""
    report = _claim(tmp_path, "Energy (kW)", "5")
    claim = report["claims"][0]
    assert "energy_mwh" not in claim["quantities"] or claim["quantities"]["energy_mwh"]["source"] != "claimed"
    bad = [f["message"] for f in claim["findings"] if f["rule"] == "V001"]
    assert any("'Energy (kW)'" in m and "power" in m for m in bad), bad


def test_meta_and_luccioni_emissions_headers_are_read_and_the_market_based_figure_stays_extra(tmp_path):
    """Llama 3.1's model card (meta-llama/llama-models, models/llama3_1/MODEL_CARD.md): 8B, 1.46M H100 GPU hours at
    700 W, "Training Location-Based Greenhouse Gas Emissions (tons CO2eq)" 420, "Training Market-Based ..." 0 (a
    renewable-matching figure, not the run's emissions). 1.46e6 h x 700 W = 1,022 MWh."""
    path = tmp_path / "card.csv"
    path.write_text("Model,Training Time (GPU hours),Training Power Consumption (W),"
                    "Training Location-Based Greenhouse Gas Emissions (tons CO2eq),"
                    "Training Market-Based Greenhouse Gas Emissions (tons CO2eq),Params,Hardware\n"
                    "Llama 3.1 8B,1.46M,700,420,0,8B,H100-80GB\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    claim = report["claims"][0]
    assert claim["quantities"]["co2_tonnes"]["value"] == pytest.approx(420)
    assert claim["quantities"]["energy_mwh"]["value"] == pytest.approx(1.46e6 * 700 / 1e6)
    assert claim["extra"]["Training Market-Based Greenhouse Gas Emissions (tons CO2eq)"] == "0"


def test_luccioni_bloom_table_headers_are_read(tmp_path):
    """Luccioni et al. 2023 (BLOOM's carbon footprint), Table: "Carbon intensity of grid used" 57 gCO2eq/kWh,
    "Power consumption" 433 MWh, "CO2eq emissions" 25 tonnes, "CO2eq emissions × PUE" 30 tonnes. By hand: 433 x
    0.057 = 24.7 t, the IT-only figure; the PUE one (x 1.2 = 29.6 t) stays an extra field, not a second
    co2_tonnes. The intensity and both emissions were unread."""
    path = tmp_path / "t.csv"
    path.write_text("Model name,Number of parameters,Datacenter PUE,Carbon intensity of grid used,Power consumption,"
                    "CO2eq emissions,CO2eq emissions × PUE\nBLOOM,176B,1.2,57 gCO2eq/kWh,433 MWh,25 tonnes,"
                    "30 tonnes\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    claim = report["claims"][0]
    q = claim["quantities"]
    assert q["grid_kgco2_per_kwh"]["value"] == pytest.approx(0.057)
    assert q["energy_mwh"]["value"] == pytest.approx(433)
    assert q["co2_tonnes"]["value"] == pytest.approx(25)
    assert claim["extra"]["CO2eq emissions × PUE"] == "30 tonnes"
    e002 = [f for f in claim["findings"] if f["rule"] == "E002"]
    assert e002 and e002[0]["severity"] == "ok" and e002[0]["expected"] == pytest.approx(433 * 0.057, rel=1e-3)


def test_training_costs_plural_is_the_cost(tmp_path):
    """DeepSeek-V3 (arXiv 2412.19437), Table 1: 2,788K H800 GPU hours at $2 per GPU hour = $5.576M."""
    path = tmp_path / "t.csv"
    path.write_text("Stage,GPU hours,Training Costs (USD),Price ($/GPU-hour)\nTotal,2788K,$5.576M,2\n",
                    encoding="utf-8")
    claim = to_json(check([str(path)]))["claims"][0]
    assert claim["quantities"]["cost_usd"]["value"] == pytest.approx(2788e3 * 2)
    e003 = [f for f in claim["findings"] if f["rule"] == "E003"]
    assert e003 and e003[0]["severity"] == "ok"


@pytest.mark.parametrize(("active_header", "total_header"), [
    ("Params (Activated)", "Params (Total)"),  # Llama 4's card words
    ("Parameters (active)", "Parameters (total)"),
    ("Activated", "Params"),  # the card's sub-header alone, beside the total
])
def test_mixture_of_experts_headers_name_the_active_and_the_total_parameters(tmp_path, active_header, total_header):
    """Llama 4 Scout (meta-llama/llama-models, models/llama4/MODEL_CARD.md): 17B activated, 109B total, ~40T tokens,
    5.0M H100-80GB GPU hours. By hand with the active count: 6 x 17e9 x 40e12 / (5.0e6 x 3600 x 989.4e12) = 0.229;
    with the total it would be 1.47 (147 %, impossible). The two bracketed headers stopped the run (exit 2, both
    read as params); "Activated" alone was dropped and the row failed at MFU 147 %."""
    path = tmp_path / "card.csv"
    path.write_text(f'Model Name,"{active_header}","{total_header}",Token count,Training Time (GPU hours),Hardware\n'
                    "Llama 4 Scout,17B,109B,~40T,5.0M,H100-80GB\n", encoding="utf-8")
    claim = to_json(check([str(path)]))["claims"][0]
    q = claim["quantities"]
    assert q["active_params"]["value"] == pytest.approx(17e9)
    assert q["params"]["value"] == pytest.approx(109e9)
    assert q["mfu"]["value"] == pytest.approx(6 * 17e9 * 40e12 / (5.0e6 * 3600 * 989.4e12), rel=1e-3)
    assert claim["status"] == "pass", [f["message"] for f in claim["findings"] if f["severity"] != "ok"]


def test_a_cell_with_both_parameter_counts_is_refused_quoting_the_whole_cell(tmp_path):
    """Llama 4's card prints "17B (Activated) 109B (Total)" in one cell. Refused (two figures), the message quoted
    '17B (Activated) 109B', "(Total)" cut off."""
    path = tmp_path / "card.csv"
    path.write_text("Model Name,Params,Token count\nLlama 4 Scout,17B (Activated) 109B (Total),~40T\n",
                    encoding="utf-8")
    claim = to_json(check([str(path)]))["claims"][0]
    bad = [f["message"] for f in claim["findings"] if f["rule"] == "V001"]
    assert any("'17B (Activated) 109B (Total)'" in m and "active_params" in m for m in bad), bad


def test_a_column_described_in_brackets_beside_the_plain_one_is_another_figure(tmp_path):
    """Luccioni et al. 2023 (BLOOM), with its two emissions columns named by a user: "CO2eq emissions (IT only)"
    25 t and "CO2 emissions" 30 t (433 MWh x 0.057 kg/kWh x PUE 1.2 = 29.6 t). Once "CO2eq emissions" named the
    field, the two columns stopped the run (exit 2); the bracket describes another figure, not a unit."""
    path = tmp_path / "t.csv"
    path.write_text("Model name,Datacenter PUE,Carbon intensity,Energy,CO2eq emissions (IT only),CO2 emissions\n"
                    "BLOOM,1.2,57 gCO2eq/kWh,433 MWh,25 tonnes,30 tonnes\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    claim = report["claims"][0]
    assert claim["quantities"]["co2_tonnes"]["value"] == pytest.approx(30)
    assert claim["extra"]["CO2eq emissions (IT only)"] == "25 tonnes"
    notes = [n["message"] for n in report["summary"]["input"]["notes"]]
    assert any("'CO2eq emissions (IT only)' is kept as an extra field" in n for n in notes), notes
