"""``train-audit diff OLD NEW``: claims added and removed, figures changed, verdicts changed; exit codes as check.

Expected values come from the edits the tests make and from the published figures, never from the tool's output.
"""

from __future__ import annotations

import csv
import json

import pytest

from audit.api import check
from audit.diff import diff_results, exit_status
from conftest import DATA

EPOCH_EXTRACT = DATA / "epoch_extract.csv"  # ten rows of Epoch AI's notable_ai_models.csv as published


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        return next(reader), list(reader)


def _write(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


@pytest.fixture(scope="module")
def epoch_versions(tmp_path_factory):
    """v1: the extract without OPT-175B; v2: OPT-175B added, Gopher removed, and Llama 2-70B's compute written as
    8.1e24 instead of 8.1e23 (a slip of 10x). Touvron et al. 2023 (Llama 2): 70B parameters, 2T tokens, so
    6ND = 6 x 70e9 x 2e12 = 8.4e23 FLOP: Epoch's 8.1e23 agrees, 8.1e24 is 9.6x too much."""
    folder = tmp_path_factory.mktemp("epoch")
    header, rows = _rows(EPOCH_EXTRACT)
    model, compute = header.index("Model"), header.index("Training compute (FLOP)")
    v1 = [r for r in rows if r[model] != "OPT-175B"]
    v2 = []
    for r in rows:
        if r[model] == "Gopher (280B)":
            continue
        if r[model] == "Llama 2-70B":
            assert float(r[compute]) == 8.1e23
            r = list(r)
            r[compute] = "8.1e+24"
        v2.append(r)
    _write(folder / "v1.csv", header, v1)
    _write(folder / "v2.csv", header, v2)
    return folder / "v1.csv", folder / "v2.csv"


def test_two_versions_of_epochs_file(epoch_versions):
    old, new = (check([str(p)]) for p in epoch_versions)
    record = diff_results(old, new)
    assert record["matched_by"] == "name"  # Epoch's rows have no ids: a model is its name, not its row
    assert [c["key"] for c in record["added"]] == ["OPT-175B"]
    assert [c["key"] for c in record["removed"]] == ["Gopher (280B)"]
    assert [c["key"] for c in record["changed"]] == ["Llama 2-70B"]
    change = record["changed"][0]
    assert [(f["field"], f["old_value"], f["new_value"]) for f in change["figures"]] == [
        ("compute_flops", 8.1e23, 8.1e24)]
    assert change["status"] == {"old": "pass", "new": "fail"}
    appeared = {(f["rule"], f["severity"]) for f in change["findings"]["appeared"]}
    assert ("C001", "error") in appeared  # compute against 6ND
    assert record["summary"]["unchanged"] == 8 - 1  # eight models in both versions, one of them changed
    assert exit_status(record) == 1  # a claim newly failing
    assert exit_status(diff_results(new, old)) == 0  # the reverse fixes it: nothing newly fails
    same = diff_results(old, old)["summary"]
    assert same == {"added": 0, "removed": 0, "matched": 9, "figures_changed": 0, "verdicts_changed": 0,
                    "unchanged": 9}


def test_the_command_line_in_text_and_json(epoch_versions, cli_run):
    old, new = map(str, epoch_versions)
    text = cli_run("diff", old, new)
    assert text.exit_code == 1
    assert "+ OPT-175B" in text.stdout and "- Gopher (280B)" in text.stdout
    assert "~ Llama 2-70B  [pass -> fail]" in text.stdout
    assert "compute_flops: 8.1e+23 FLOP -> 8.1e+24 FLOP" in text.stdout
    res = cli_run("diff", old, new, "--format", "json", "--fail-on", "never")
    assert res.exit_code == 0
    assert res.json()["summary"]["added"] == 1
    missing = cli_run("diff", old, str(epoch_versions[0].parent / "nope.csv"))
    assert missing.exit_code == 2 and "nope.csv: no such file" in missing.stderr


def test_a_papers_v1_and_v2(tmp_path, cli_run):
    """A LLaMA report revised: v1 states LLaMA-65B's GPU-hours in GPU-days (1,022,362 / 24 = 42,598, the slip of
    tests/data/doctored.json); v2 states the published 1,022,362 GPU-hours (Touvron et al. 2023, Table 15) and adds
    LLaMA-33B (Table 15: 530,432 GPU-hours; 32.5B parameters, 1.4T tokens)."""
    llama65 = {"id": "llama-65b", "params": "65.2B", "tokens": "1.4T", "hardware": "A100 80GB", "chips": 2048,
               "wall_clock_days": "21 days"}
    v1 = [{**llama65, "chip_hours": "42,598 GPU-hours"}]
    v2 = [{**llama65, "chip_hours": "1,022,362 GPU-hours"},
          {"id": "llama-33b", "params": "32.5B", "tokens": "1.4T", "hardware": "A100 80GB",
           "chip_hours": "530,432 GPU-hours"}]
    (tmp_path / "v1.json").write_text(json.dumps(v1), encoding="utf-8")
    (tmp_path / "v2.json").write_text(json.dumps(v2), encoding="utf-8")
    res = cli_run("diff", str(tmp_path / "v1.json"), str(tmp_path / "v2.json"), "--format", "json")
    record = res.json()
    assert record["matched_by"] == "id"
    assert [c["key"] for c in record["added"]] == ["llama-33b"]
    (change,) = record["changed"]
    assert change["figures"] == [{"field": "chip_hours", "old": "42,598 GPU-hours", "new": "1,022,362 GPU-hours",
                                  "old_value": 42598.0, "new_value": 1022362.0}]
    assert change["status"]["old"] == "fail" and change["status"]["new"] == "pass"
    assert change["findings"]["appeared"] == [] and change["findings"]["resolved"]
    assert res.exit_code == 0  # the revision fixes an error and adds a passing claim


def test_a_figure_written_back_with_another_float_repr_is_not_a_change(tmp_path):
    # A database written back by pandas: 9.618950880000001e+21 (Epoch's cell) becomes 9.61895088e+21, one ulp apart;
    # equal to the 12 significant digits every output carries, so not a changed figure.
    (tmp_path / "a.csv").write_text("id,params,tokens,compute_flops\nfgn,1B,1T,9.618950880000001e+21\n")
    (tmp_path / "b.csv").write_text("id,params,tokens,compute_flops\nfgn,1B,1T,9.61895088e+21\n")
    assert 9.618950880000001e+21 != 9.61895088e+21
    d = diff_results(check([str(tmp_path / "a.csv")]), check([str(tmp_path / "b.csv")]))
    assert d["summary"]["figures_changed"] == 0 and d["summary"]["unchanged"] == 1


def test_two_workbooks_compared_sheet_by_sheet(tmp_path, cli_run):
    """diff --sheet all reads every sheet of both versions; matched by row, a row is matched in its own sheet: a
    sheet added in front of the others in v2 does not pair its row 2 with v1's first sheet's row 2."""
    openpyxl = pytest.importorskip("openpyxl")

    def save(name: str, sheets: list[tuple[str, str]]) -> str:
        book = openpyxl.Workbook()
        book.remove(book.active)
        for title, compute in sheets:
            ws = book.create_sheet(title)
            ws.append(["params", "tokens", "compute_flops"])
            ws.append(["7B", "1T", compute])  # 6 × 7e9 × 1e12 = 4.2e22
        book.save(tmp_path / name)
        return str(tmp_path / name)

    v1 = save("v1.xlsx", [("a", "4.2e22")])
    v2 = save("v2.xlsx", [("new", "4.2e23"), ("a", "4.2e22")])
    res = cli_run("diff", v1, v2, "--sheet", "all", "--key", "row", "--format", "json")
    record = res.json()
    assert [c["key"] for c in record["added"]] == ["[new]#2"]
    assert record["changed"] == [] and record["removed"] == []
    assert res.exit_code == 1  # the new sheet's run fails (4.2e23 is ten times 6·N·D)
