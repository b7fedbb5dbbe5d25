"""Tabular output (audit/report/table.py): one row per claim, one per finding, safe in a spreadsheet."""

from __future__ import annotations

import csv
import io
import json
import re

import pandas as pd
from click.testing import CliRunner

from audit.api import check_records
from audit.cli import cli
from audit.report import table

RECORDS = [
    {"id": "good", "params": "175B", "tokens": "300B", "compute_flops": "3640 PF-days"},
    {"id": "bad", "params": "175B", "tokens": "300B", "compute_flops": 3.15e26},  # 1000x
    {"id": "invalid", "chips": 1.5},
    {"id": "=HYPERLINK(\"http://evil\")", "name": "+SUM(A1)", "params": "7B"},
    {"id": "neg-number-name", "name": "-3.5", "params": "7B"},
]


def test_every_input_row_appears_once_in_order_with_status_and_codes():
    frame = pd.read_csv(io.BytesIO(table.claims_bytes(check_records(RECORDS), "csv")), keep_default_na=False)
    assert len(frame) == len(RECORDS)
    # The last two state only a size: nothing could be checked.
    assert frame["status"].tolist() == ["pass", "fail", "invalid", "unchecked", "unchecked"]
    assert frame.loc[1, "rules"] == "C001"
    assert frame.loc[2, "rules"] == "V001"
    # 6 x 175e9 x 300e9 for the derived-or-claimed compute of the good row.
    assert float(frame.loc[0, "compute_flops"]) == 3640 * 1e15 * 86400


def test_csv_writes_whole_numbers_without_a_point_and_large_figures_with_an_exponent():
    """LLaMA 65B as its paper states it (Touvron et al. 2023, Table 2 and Sec. 2.4): 65.2B parameters, 80 layers,
    2,048 A100s, 1.4T tokens. Counts are written as the integers they are ("2048", not "2048.0"), below 1e16
    without an exponent ("65200000000"); the compute, 6 x 65.2e9 x 1.4e12 = 5.4768e23 FLOP, with Python's
    exponent; a fraction as it is; a missing figure empty."""
    records = [{"id": "llama-65b", "params": "65.2B", "tokens": "1.4T", "layers": 80, "chips": 2048,
                "hardware": "A100 80GB", "compute_flops": 5.4768e23}]
    rows = list(csv.DictReader(io.StringIO(table.claims_bytes(check_records(records), "csv").decode("utf-8"),
                                           newline="")))
    assert (rows[0]["chips"], rows[0]["layers"], rows[0]["params"]) == ("2048", "80", "65200000000")
    assert rows[0]["tokens"] == "1400000000000"
    assert rows[0]["compute_flops"] == "5.4768e+23"
    # The A100's dense BF16 peak, 312 TFLOP/s (NVIDIA A100 datasheet), and its 80 GB: whole, below 1e16.
    assert (rows[0]["peak_flops_per_chip"], rows[0]["memory_per_chip"]) == ("312000000000000", "80000000000")
    assert rows[0]["energy_mwh"] == ""


def test_parquet_keeps_numbers_numeric():
    frame = pd.read_parquet(io.BytesIO(table.claims_bytes(check_records(RECORDS), "parquet")))
    assert len(frame) == len(RECORDS)
    assert frame["params"].dtype == "float64"
    assert frame.loc[0, "params"] == 175e9
    assert frame["chips"].dtype == "float64"  # typed columns: a count is still a float64 column in Parquet


def test_parquet_dictionary_encodes_text_and_counts_but_not_measured_figures():
    """Statuses, sources and chip counts repeat and are dictionary encoded; FLOPs and tokens are nearly all
    distinct and written plain (table.dictionary_columns), chosen from the columns, not the values."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(io.BytesIO(table.claims_bytes(check_records(RECORDS), "parquet"))).metadata
    group = meta.row_group(0)
    encodings = {group.column(i).path_in_schema: group.column(i).encodings for i in range(group.num_columns)}
    for name in ("status", "params_source", "chips", "errors"):
        assert "RLE_DICTIONARY" in encodings[name], name
    for name in ("compute_flops", "tokens", "mfu"):
        assert "RLE_DICTIONARY" not in encodings[name], name


def test_formula_like_text_is_defused_but_numbers_are_not():
    frame = pd.read_csv(io.BytesIO(table.claims_bytes(check_records(RECORDS), "csv")), keep_default_na=False)
    assert frame.loc[3, "id"] == "'=HYPERLINK(\"http://evil\")"
    assert frame.loc[3, "name"] == "'+SUM(A1)"
    assert str(frame.loc[4, "name"]) == "-3.5"


def test_findings_file_has_one_row_per_finding(tmp_path):
    src = tmp_path / "claims.json"
    src.write_text(json.dumps(RECORDS[:2]))
    out = tmp_path / "findings.csv"
    res = CliRunner().invoke(cli, ["check", str(src), "--format", "json", "--findings", str(out)])
    assert res.exit_code == 1  # the 1000x claim fails
    doc = json.loads(res.stdout)
    findings = pd.read_csv(out)
    assert len(findings) == sum(len(c["findings"]) for c in doc["claims"])
    assert set(findings["claim_id"]) == {"good", "bad"}
    assert {"rule", "severity", "claimed", "expected", "ratio", "message", "formula"} <= set(findings.columns)


def test_a_carriage_return_in_a_name_stays_in_its_cell_and_every_line_is_defused(tmp_path):
    # Issue 10: "Model X\r=cmd|' /C calc'!A0" was written unquoted; a spreadsheet took the CR as a new row whose
    # first cell ran the formula.
    name = "Model X\r=cmd|' /C calc'!A0"
    records = [{"id": "cr", "name": name, "params": "7B"}, {"id": "lf", "name": "a\n@SUM(1)", "params": "7B"}]
    result = check_records(records)
    data = table.claims_bytes(result, "csv")
    assert b'"Model X\r\'=cmd|\' /C calc\'!A0"' in data  # quoted, and the second line defused
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    assert [r[1] for r in rows[1:]] == ["Model X\r'=cmd|' /C calc'!A0", "a\n'@SUM(1)"]
    # A reader that splits rows at any line break still sees no cell starting a formula.
    for line in re.split(r"\r\n|\r|\n", data.decode("utf-8")):
        assert not line.startswith(("=", "+", "@", "-")) or line[:2] == "-3", line
    src = tmp_path / "claims.json"
    src.write_text(json.dumps(records))
    out = tmp_path / "findings.csv"
    res = CliRunner().invoke(cli, ["check", str(src), "--findings", str(out), "--fail-on", "never"])
    assert res.exit_code == 0
    with out.open(newline="", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == len(result.findings)
