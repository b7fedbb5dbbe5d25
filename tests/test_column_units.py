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
