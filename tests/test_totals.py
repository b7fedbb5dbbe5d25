"""A table's total row (V018, audit/totals.py): read as the sum of the other rows, checked against it, and given no
check or note that takes it for one training run.

The figures are Llama 2's model card, "CO2 emissions during pretraining" (meta-llama/llama MODEL_CARD.md; Touvron et
al. 2023, Table 2), as printed: 7B 184,320 GPU hours, 31.22 tCO2eq; 13B 368,640, 62.44; 34B 1,038,336, 153.90;
70B 1,720,320, 291.42; Total 3,311,616, 539.00.
"""

from __future__ import annotations

import pytest

from audit.api import check_records
from audit.rules import RULES
from audit.totals import is_label

CARD = [
    {"name": "Llama 2 7B", "chip_hours": "184,320", "power_w_per_chip": "400 W", "co2_tonnes": "31.22",
     "params": "7B", "tokens": "2.0T", "hardware": "A100-80GB"},
    {"name": "Llama 2 13B", "chip_hours": "368,640", "power_w_per_chip": "400 W", "co2_tonnes": "62.44",
     "params": "13B", "tokens": "2.0T", "hardware": "A100-80GB"},
    {"name": "Llama 2 34B", "chip_hours": "1,038,336", "power_w_per_chip": "350 W", "co2_tonnes": "153.90",
     "params": "34B", "tokens": "2.0T", "hardware": "A100-80GB"},
    {"name": "Llama 2 70B", "chip_hours": "1,720,320", "power_w_per_chip": "400 W", "co2_tonnes": "291.42",
     "params": "70B", "tokens": "2.0T", "hardware": "A100-80GB"},
    {"name": "Total", "chip_hours": "3,311,616", "co2_tonnes": "539.00"},
]


def findings_of(result, row):
    f = result.findings
    return f[f["row"] == row]


def test_the_llama_2_cards_total_adds_up_and_passes_with_its_sum_check_alone():
    result = check_records(CARD)
    total = findings_of(result, 4)
    # 184,320 + 368,640 + 1,038,336 + 1,720,320 = 3,311,616 exactly; 31.22 + 62.44 + 153.90 + 291.42 = 538.98,
    # 0.02 below 539.00: within the precision of five figures stated to 0.01 (± 0.005 each, ± 0.025 together).
    assert sorted(zip(total["rule"].astype(str), total["quantity"].astype(str), total["severity"].astype(str))) == [
        ("V018", "chip_hours", "ok"), ("V018", "co2_tonnes", "ok")]
    by = dict(zip(total["quantity"], total["expected"]))
    assert by["chip_hours"] == pytest.approx(184_320 + 368_640 + 1_038_336 + 1_720_320)
    assert by["co2_tonnes"] == pytest.approx(31.22 + 62.44 + 153.90 + 291.42)
    assert result.status[4] == "pass"
    # Nothing was derived for it (no PUE assumed, no energy from power): its stated figures alone.
    assert result.source.loc[4, "pue"] is None or str(result.source.loc[4, "pue"]) in ("nan", "None")
    assert result.q.loc[4, "energy_mwh"] != result.q.loc[4, "energy_mwh"]  # NaN
    # The runs are audited as before.
    assert list(result.status[:4]) == ["pass"] * 4


def test_a_transcription_without_the_34b_row_fails_naming_what_is_missing():
    rows = [r for r in CARD if r["name"] != "Llama 2 34B"]
    result = check_records(rows)
    total = findings_of(result, 3)
    assert set(total["rule"].astype(str)) == {"V018"}
    assert set(total["severity"].astype(str)) == {"error"}
    assert result.status[3] == "fail"
    by = {str(r["quantity"]): r for _, r in total.iterrows()}
    # 184,320 + 368,640 + 1,720,320 = 2,273,280; 3,311,616 − 2,273,280 = 1,038,336 (the 34B row's GPU hours).
    assert by["chip_hours"]["expected"] == pytest.approx(2_273_280)
    # 31.22 + 62.44 + 291.42 = 385.08; 539.00 − 385.08 = 153.92 (the 34B row's 153.90, within the precision).
    assert by["co2_tonnes"]["expected"] == pytest.approx(385.08)
    words = {q: RULES["V018"].message(result, r) for q, r in by.items()}
    assert "1,038,336 h more" in words["chip_hours"] and "2,273,280 h" in words["chip_hours"]
    assert "153.9 t" in words["co2_tonnes"] and "385.1 t" in words["co2_tonnes"]
    for text in words.values():
        assert "Llama 2 7B, Llama 2 13B, Llama 2 70B" in text and "a row missing from the table" in text


def test_a_row_counted_twice_is_named():
    rows = [*CARD[:4], {"name": "Total", "chip_hours": str(3_311_616 + 368_640)}]  # 13B's 368,640 added twice
    result = check_records(rows)
    (row,) = [r for _, r in findings_of(result, 4).iterrows()]
    assert str(row["rule"]) == "V018" and str(row["severity"]) == "error"
    assert "the figure of Llama 2 13B: a row counted twice" in RULES["V018"].message(result, row)


def test_a_run_whose_name_starts_with_total_is_a_run():
    rows = [*CARD[:2], {"name": "Total compute cluster A", "chip_hours": "552,960", "co2_tonnes": "93.66"}]
    result = check_records(rows)
    f = result.findings
    assert not (f["rule"].astype(str) == "V018").any()
    # Read as a run: notes that assume one run (nothing could be checked) are said of it.
    assert "V014" in set(findings_of(result, 2)["rule"].astype(str))
    assert result.status[2] == "unchecked"


def test_a_figure_no_other_row_states_is_not_checked():
    rows = [{"name": "a", "chip_hours": "100"}, {"name": "b", "chip_hours": "200"},
            {"name": "Total", "chip_hours": "300", "energy_mwh": "12.5 MWh"}]
    result = check_records(rows)
    total = findings_of(result, 2)
    # 100 + 200 = 300: checked; no other row states an energy: not summed, not said to add up or not.
    assert list(zip(total["rule"].astype(str), total["quantity"].astype(str))) == [("V018", "chip_hours")]
    assert result.status[2] == "pass"
    assert result.q.loc[2, "energy_mwh"] == pytest.approx(12.5)


def test_the_other_runs_that_state_a_figure_give_a_floor():
    # Only a and b state chip-hours; c states its chips and days (derived chip-hours are not summed).
    rows = [{"name": "a", "chip_hours": "100"}, {"name": "b", "chip_hours": "200"},
            {"name": "c", "chips": 8, "wall_clock_days": "1 day"}]
    ok = check_records([*rows, {"name": "Total", "chip_hours": "492"}])  # 100 + 200 + 8 × 24 = 492
    low = check_records([*rows, {"name": "Total", "chip_hours": "250"}])  # below 100 + 200
    assert [str(s) for s in findings_of(ok, 3)["severity"]] == ["ok"] and ok.status[3] == "pass"
    assert [str(s) for s in findings_of(low, 3)["severity"]] == ["error"] and low.status[3] == "fail"


@pytest.mark.parametrize("text", ["Total", "TOTAL", "total:", "Totals", "Sum", "Overall", "All", "Grand total",
                                  "Total (all models)", " Grand Total: "])
def test_a_totals_label(text):
    assert is_label(text)


@pytest.mark.parametrize("text", ["Total compute cluster A", "All-reduce run", "Summary", "Llama 2 7B", "", None])
def test_not_a_totals_label(text):
    assert not is_label(text)


def test_a_file_of_totals_only_or_a_total_with_phases_is_a_run():
    alone = check_records([{"name": "Total", "chip_hours": "300"}])
    assert not (alone.findings["rule"].astype(str) == "V018").any()
    phased = check_records([{"name": "a", "chip_hours": "100"},
                            {"name": "Total", "chip_hours": "300", "hardware": "H100",
                             "phases": [{"chips": 8, "wall_clock_days": "1 day"}]}])
    assert not (phased.findings["rule"].astype(str) == "V018").any()


def test_the_card_as_a_csv_file(tmp_path):
    path = tmp_path / "llama2_carbon.csv"
    path.write_text(",Time (GPU hours),Power Consumption (W),Carbon Emitted(tCO2eq)\n"
                    "Llama 2 7B,184320,400,31.22\nLlama 2 13B,368640,400,62.44\nLlama 2 34B,1038336,350,153.90\n"
                    "Llama 2 70B,1720320,400,291.42\nTotal,3311616,,539.00\n", encoding="utf-8")
    from audit.api import check

    result = check([str(path)])
    assert len(result) == 5  # every input row is in the output
    assert result.status[4] == "pass"
    assert set(findings_of(result, 4)["rule"].astype(str)) == {"V018"}


def test_a_file_read_in_batches_has_no_total_row(tmp_path):
    """Summed within the batch that holds it, the Total of a file cut in batches would be compared with part of its
    rows: 184,320 + 368,640 + 1,038,336 + 1,720,320 = 3,311,616 over the whole card, but a batch of the last two rows
    sums 2,758,656 (a false failure). Cut files and distributed partitions read it as a run, as before V018."""
    import pandas as pd

    from audit.api import audit_partition
    from audit.stream import stream_check

    path = tmp_path / "card.csv"
    path.write_text("name,chip_hours,co2_tonnes\n" + "".join(
        f"{r['name']},\"{r['chip_hours']}\",{r['co2_tonnes']}\n" for r in CARD), encoding="utf-8")
    whole = stream_check([str(path)], str(tmp_path / "whole.csv"), "csv", batch_size=100)
    cut = stream_check([str(path)], str(tmp_path / "cut.csv"), "csv", batch_size=2)
    assert whole.as_dict()["status"]["pass"] == 1  # the total adds up; the four runs state too little to check
    assert "V018" not in cut.rules and cut.as_dict()["status"]["fail"] == 0
    out = pd.read_csv(tmp_path / "cut.csv")
    assert out.loc[4, "name"] == "Total" and out.loc[4, "status"] == "unchecked"
    part = audit_partition(pd.DataFrame(CARD[2:]), "findings")
    assert "V018" not in set(part["rule"])
