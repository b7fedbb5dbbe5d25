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


def test_a_header_unit_that_does_not_fit_the_quantity_is_ignored(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("id,params (hours)\na,7B\n", encoding="utf-8")
    claim = to_json(check([str(path)]))["claims"][0]
    assert claim["quantities"]["params"]["value"] == pytest.approx(7e9)
