"""Loading claims: every input format, spreadsheet column names, extras, original text, and validation.

Values are checked against the numbers as the papers write them (LLaMA-65B: 65.2B parameters, 1.4T tokens,
2,048 GPUs, 1,022,362 GPU-hours; Llama 2: 184,320 and 1,720,320 GPU-hours; Pythia-12B: 299,892,736,000 tokens).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from audit.api import check, check_records, to_json
from audit.reading import LoadError
from conftest import DATA, PF_DAY, claim_by_id, findings_of

LLAMA65 = {"id": "llama-65b", "params": "65.2B", "tokens": "1.4T", "hardware": "A100 80GB", "chips": 2048,
           "wall_clock_days": "21 days", "chip_hours": "1,022,362"}


def audit_json(*paths) -> dict:
    return to_json(check([str(p) for p in paths]))


def assert_llama65(claim: dict) -> None:
    q = claim["quantities"]
    assert q["params"]["value"] == 65.2e9
    assert q["tokens"]["value"] == 1.4e12
    assert q["chips"]["value"] == 2048
    assert q["chip_hours"]["value"] == 1_022_362
    for name in ("params", "tokens", "chips", "chip_hours"):
        assert q[name]["source"] == "claimed"


# ------------------------------------------------------------------------------------------------- JSON


def test_json_single_object(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps(LLAMA65))
    doc = audit_json(path)
    assert [c["id"] for c in doc["claims"]] == ["llama-65b"]
    assert_llama65(doc["claims"][0])


def test_json_array(tmp_path):
    path = tmp_path / "many.json"
    path.write_text(json.dumps([LLAMA65, {**LLAMA65, "id": "copy"}]))
    doc = audit_json(path)
    assert [c["id"] for c in doc["claims"]] == ["llama-65b", "copy"]
    for c in doc["claims"]:
        assert_llama65(c)


def test_json_claims_object():
    doc = audit_json(DATA / "published.json")
    assert [c["id"] for c in doc["claims"]] == ["gpt3-175b", "llama-65b"]
    assert_llama65(doc["claims"][1])
    assert doc["claims"][1]["input"] == {"file": str(DATA / "published.json"), "row": 2}


def test_json_lines_skips_blank_lines():
    doc = audit_json(DATA / "runs.jsonl")
    assert [c["id"] for c in doc["claims"]] == ["llama2-7b", "llama2-70b"]
    seven, seventy = doc["claims"]
    assert seven["quantities"]["chip_hours"]["value"] == 184_320       # Llama 2 paper, Table 2
    assert seventy["quantities"]["chip_hours"]["value"] == 1_720_320
    assert seventy["quantities"]["tokens"]["value"] == 2.0e12
    # C001 derives compute = 6 · 70e9 · 2e12 and C003 the end-to-end MFU against the A100's 312 TF.
    assert seventy["quantities"]["compute_flops"]["value"] == pytest.approx(6 * 70e9 * 2e12, rel=1e-12)
    assert seventy["quantities"]["mfu"]["value"] == pytest.approx(
        6 * 70e9 * 2e12 / (1_720_320 * 3600 * 312e12), rel=1e-9)


def test_json_lines_bad_line_is_one_invalid_claim_and_the_rest_are_read(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"id": "ok1", "params": "7B", "tokens": "1T"}\n{"id": "broken", \n'
                    '{"id": "ok2", "params": "13B", "tokens": "1T"}\n')
    doc = audit_json(path)
    statuses = [c["status"] for c in doc["claims"]]
    assert len(doc["claims"]) == 3
    assert statuses.count("invalid") == 1 and statuses.count("unchecked") == 2  # N and D alone: nothing to check
    bad = next(c for c in doc["claims"] if c["status"] == "invalid")
    [v001] = findings_of(bad, "V001")
    assert "line 2" in v001["message"]
    # The line is the file's (2), the column the line's (the quote opening "tok is the 30th character), not the
    # parser's "line 1" of a one-line text.
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_text('{"id": "ok1", "params": "7B"}\n{"id": "c", "params": "70B", "tok\n')
    [v001] = findings_of(audit_json(truncated)["claims"][1], "V001")
    assert v001["message"].endswith("line 2: not valid JSON: Unterminated string starting at column 30"), \
        v001["message"]


# -------------------------------------------------------------------------------------------------- CSV


def test_csv_with_spreadsheet_column_names():
    doc = audit_json(DATA / "runs_spreadsheet.csv")
    assert [c["id"] for c in doc["claims"]] == ["llama-65b", "pythia-12b"]   # run_id is an id alias
    assert_llama65(doc["claims"][0])
    pythia = doc["claims"][1]["quantities"]
    assert pythia["tokens"]["value"] == 299_892_736_000
    assert pythia["chips"]["value"] == 256
    assert pythia["chip_hours"]["value"] == 72_300
    # chips × 24 × days = chip_hours → days = 72,300 / (24 × 256)
    assert pythia["wall_clock_days"]["value"] == pytest.approx(72_300 / (24 * 256), rel=1e-12)
    assert doc["claims"][0]["input"]["row"] == 2   # line 2 of the file (line 1 is the header)
    assert doc["claims"][0]["extra"] == {"team": "fair-llm"}


@pytest.mark.parametrize("column, quantity, cell, value", [
    ("gpus", "chips", "2048", 2048),
    ("num_gpus", "chips", "2,048", 2048),
    ("gpu_hours", "chip_hours", "1,022,362", 1_022_362),
    ("n_params", "params", "65.2B", 65.2e9),
    ("parameters", "params", "65.2 billion", 65.2e9),
    ("GPU Hours", "chip_hours", "1.022362M", 1_022_362),
])
def test_csv_column_aliases(tmp_path, column, quantity, cell, value):
    path = tmp_path / "alias.csv"
    path.write_text(f'id,{column}\nrun,"{cell}"\n')
    claim = audit_json(path)["claims"][0]
    assert claim["quantities"][quantity]["value"] == pytest.approx(value, rel=1e-12)
    assert claim["quantities"][quantity]["text"] == cell
    assert claim["extra"] == {}


# ---------------------------------------------------------------------------------------------- Parquet


def test_parquet(tmp_path):
    path = tmp_path / "runs.parquet"
    pd.DataFrame({
        "id": ["gpt3-175b", "llama-65b"],
        "params": ["175B", "65.2B"],                 # text with units
        "tokens": [300e9, 1.4e12],                   # numbers stay numbers
        "compute_flops": ["3640 PF-days", None],
        "num_gpus": pd.array([None, 2048], dtype="Int64"),
        "gpu_hours": [None, 1_022_362.0],
        "hardware": [None, "A100 80GB"],
        "wall_clock_days": [None, 21.0],
        "cluster": ["azure", "rsc"],
    }).to_parquet(path, index=False)
    doc = audit_json(path)
    gpt3, llama = doc["claims"]
    assert gpt3["quantities"]["compute_flops"]["value"] == pytest.approx(3640 * PF_DAY, rel=1e-12)
    assert gpt3["quantities"]["params"]["text"] == "175B"
    assert gpt3["status"] == "pass"
    assert_llama65(llama)
    assert llama["quantities"]["wall_clock_days"]["value"] == 21
    assert llama["extra"] == {"cluster": "rsc"}
    assert [c["input"]["row"] for c in doc["claims"]] == [1, 2]


# ------------------------------------------------------------------------------------ stdin and several paths


def test_stdin_dash(cli_run):
    res = cli_run("check", "-", "--format", "json", input=json.dumps(LLAMA65).encode())
    assert res.exit_code == 0, res.output
    doc = res.json()
    assert_llama65(doc["claims"][0])
    assert doc["claims"][0]["input"]["file"] == "<stdin>"


def test_several_paths_in_order():
    doc = audit_json(DATA / "gpt3_175b.json", DATA / "runs.jsonl", DATA / "runs_spreadsheet.csv")
    assert [c["id"] for c in doc["claims"]] == ["gpt3-175b", "llama2-7b", "llama2-70b", "llama-65b", "pythia-12b"]
    assert [c["input"]["file"].rsplit("/", 1)[-1] for c in doc["claims"]] == [
        "gpt3_175b.json", "runs.jsonl", "runs.jsonl", "runs_spreadsheet.csv", "runs_spreadsheet.csv"]
    assert doc["summary"]["claims"] == 5


def test_duplicate_id_across_files_is_flagged_once():
    doc = audit_json(DATA / "gpt3_175b.json", DATA / "published.json")
    dup = [c for c in doc["claims"] if findings_of(c, "V002")]
    assert len(dup) == 1 and dup[0]["input"]["file"].endswith("published.json")


# ------------------------------------------------------------------------------ extras and original text


def test_unknown_fields_are_kept_in_extra(tmp_path):
    path = tmp_path / "extra.json"
    path.write_text(json.dumps({**LLAMA65, "cluster_name": "RSC", "budget_usd": 2_400_000,
                                "tags": ["llama", "65b"]}))
    claim = audit_json(path)["claims"][0]
    assert claim["extra"] == {"cluster_name": "RSC", "budget_usd": 2_400_000, "tags": ["llama", "65b"]}


def test_original_text_is_kept(tmp_path):
    path = tmp_path / "text.json"
    path.write_text(json.dumps({"id": "t", "params": "~175 billion", "tokens": "300B tokens",
                                "compute_flops": "3.14×10^23 FLOP", "mfu": "21.3%", "chips": 1024}))
    q = audit_json(path)["claims"][0]["quantities"]
    assert q["params"] == {**q["params"], "text": "~175 billion", "value": 175e9}
    assert q["tokens"]["text"] == "300B tokens" and q["tokens"]["value"] == 300e9
    assert q["compute_flops"]["text"] == "3.14×10^23 FLOP"
    assert q["compute_flops"]["value"] == pytest.approx(3.14e23, rel=1e-12)
    assert q["mfu"]["text"] == "21.3%" and q["mfu"]["value"] == pytest.approx(0.213, rel=1e-12)
    assert q["chips"]["text"] == "1024"


# ------------------------------------------------------------------------------------------- validation


def test_three_bad_fields_give_three_v001_findings():
    doc = audit_json(DATA / "bad_fields.json")
    bad = claim_by_id(doc, "three-bad-fields")
    assert bad["status"] == "invalid"
    v001 = findings_of(bad, "V001")
    assert sorted(f["quantity"] for f in v001) == ["chips", "mfu", "params"]
    assert all(f["severity"] == "error" for f in v001)
    messages = {f["quantity"]: f["message"] for f in v001}
    assert "5 apples" in messages["params"]
    assert "whole number" in messages["chips"]
    assert "negative" in messages["mfu"]
    # The file and the claim are named in the record; the good claim in the same file is still audited.
    assert bad["input"] == {"file": str(DATA / "bad_fields.json"), "row": 1}
    assert claim_by_id(doc, "fine")["status"] == "unchecked"  # 7B on 1T alone: nothing to check
    # The valid field of the invalid claim is still read.
    assert bad["quantities"]["tokens"]["value"] == 1e12


def test_validation_errors_name_file_claim_and_field_in_text(cli_run):
    res = cli_run("check", str(DATA / "bad_fields.json"))
    assert res.exit_code == 1
    lines = res.stdout.splitlines()
    header = next(line for line in lines if line.startswith("three-bad-fields"))
    assert "bad_fields.json:1" in header
    v001 = [line for line in lines if "V001" in line]
    assert len(v001) == 3
    for field in ("params", "chips", "mfu"):
        assert any(field in line for line in v001), (field, v001)


def test_validation_errors_name_the_field_in_markdown(cli_run):
    res = cli_run("check", str(DATA / "bad_fields.json"), "--format", "markdown")
    v001 = [line for line in res.stdout.splitlines() if "V001" in line and line.startswith("- ")]
    assert len(v001) == 3
    for field in ("params", "chips", "mfu"):
        assert any(f"`{field}`" in line for line in v001), (field, v001)


@pytest.mark.parametrize("claim, field", [
    ({"params": -7e9}, "params"),
    ({"params": 0}, "params"),
    ({"chips": 0}, "chips"),
    ({"mfu": 0}, "mfu"),
    ({"tokens": "1e400"}, "tokens"),
    ({"compute_flops": "NaN"}, "compute_flops"),
    ({"params": True}, "params"),
    ({"wall_clock_days": "21 GPU-days"}, "wall_clock_days"),
])
def test_each_kind_of_bad_value_is_one_v001(tmp_path, claim, field):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"id": "x", **claim}))
    c = audit_json(path)["claims"][0]
    assert c["status"] == "invalid"
    assert [f["quantity"] for f in findings_of(c, "V001")] == [field]
    assert field not in c["quantities"] or c["quantities"][field]["source"] != "claimed"


def test_a_file_level_problem_is_a_load_error_naming_the_file():
    with pytest.raises(LoadError) as info:
        check([str(DATA / "malformed.json")])
    assert "malformed.json" in str(info.value)
    assert "not valid JSON" in str(info.value)


def test_a_precision_that_names_no_format_is_not_stated_not_invalid():
    # "int4" names no precision with a FLOP/s peak: read as not stated (issue 9), the peak assumed and said so.
    doc = to_json(check_records([{"id": "q", "precision": "int4", "hardware": "H100", "mfu": "40%"}]))
    claim = doc["claims"][0]
    assert claim["status"] != "invalid"
    assert [f for f in claim["findings"] if f["rule"] == "V001"] == []


def test_stdin_json_lines(cli_run):
    # `cat runs.jsonl | train-audit check -`: was "not valid JSON: Extra data at line 2", exit 2.
    lines = "\n".join(json.dumps({**LLAMA65, "id": f"llama-65b-{k}"}) for k in range(3)) + "\n"
    res = cli_run("check", "-", "--format", "json", input=lines.encode())
    assert res.exit_code == 0, res.output
    doc = res.json()
    assert [c["id"] for c in doc["claims"]] == ["llama-65b-0", "llama-65b-1", "llama-65b-2"]
    assert [c["input"]["row"] for c in doc["claims"]] == [1, 2, 3]  # JSON Lines rows are line numbers
    assert_llama65(doc["claims"][2])


def test_stdin_csv(cli_run):
    # `cat runs.csv | train-audit check -`: was "not valid JSON: Expecting value at line 1", exit 2.
    header = ",".join(LLAMA65)
    row = ",".join(f'"{v}"' if "," in str(v) else str(v) for v in LLAMA65.values())
    res = cli_run("check", "-", "--format", "json", input=f"{header}\n{row}\n".encode())
    assert res.exit_code == 0, res.output
    [claim] = res.json()["claims"]
    assert claim["id"] == "llama-65b" and claim["input"]["row"] == 2  # a CSV's rows count the header as 1
    assert_llama65(claim)


def test_a_parameter_count_may_say_which_count_it_is():
    """DeepSeek-V3 (arXiv:2412.19437, abstract): "671B total parameters with 37B activated for each token", typed
    as "37B activated" (and Llama 4's "17B (active)"): the word names the field's own count, and the claim was
    invalid. By hand: 6 x 37e9 x 14.8e12 = 3.29e24 FLOP over 2.788M H800 hours at the FP8 dense peak 1,978.9
    TFLOP/s is 16.5 %. The word of the other count is still refused ("37B active" as the total)."""
    doc = to_json(check_records([
        {"id": "dsv3", "params": "671B total", "active_params": "37B activated", "tokens": "14.8T",
         "hardware": "H800", "chip_hours": "2.788M", "precision": "fp8"},
        {"id": "llama4", "params": "109B", "active_params": "17B (active)"},
        {"id": "swapped", "params": "37B active"}]))
    dsv3, llama4, swapped = doc["claims"]
    assert dsv3["quantities"]["active_params"]["value"] == 37e9 and dsv3["quantities"]["params"]["value"] == 671e9
    assert dsv3["quantities"]["mfu"]["value"] == pytest.approx(6 * 37e9 * 14.8e12 / (2.788e6 * 3600 * 1978.9e12),
                                                             rel=1e-3)
    assert llama4["quantities"]["active_params"]["value"] == 17e9
    assert swapped["status"] == "invalid"
