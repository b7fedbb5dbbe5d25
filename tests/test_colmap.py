"""Column maps (``--columns MAP``) and the built-in Epoch AI profile (``--profile epoch``, recognised by itself).

Expected values are the published figures and unit arithmetic written out here, never the tool's own output.
"""

from __future__ import annotations

import json

import pytest

from audit.api import check, to_json
from audit.reading import LoadError, load_column_map
from audit.reading.colmap import MAP_FIELDS, profile
from conftest import DATA, PF_DAY, claim_by_id

EPOCH_EXTRACT = DATA / "epoch_extract.csv"  # ten rows of Epoch AI's notable_ai_models.csv as published (CC BY 4.0)

#: Touvron et al. 2023 (LLaMA), Table 15: 1,022,362 GPU-hours for LLaMA-65B (2,048 A100 80GB, 21 days).
LLAMA65_GPU_HOURS = 1_022_362
#: Brown et al. 2020 (GPT-3), Table D.1: 3.64e3 PF-days for GPT-3 175B.
GPT3_PF_DAYS = 3640

MAP_TOML = """
name = "team-runs"
keep = ["Owner"]

[columns]
"run" = "id"
"size" = "params"
"toks" = "tokens"
"GPU days" = { field = "chip_hours", unit = "GPU-days" }
"accel" = "hardware"
"n" = "chips"
"PF-days" = { field = "compute_flops", unit = "PF-days" }
"""


def _runs_csv(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("run,size,toks,GPU days,accel,n,PF-days,Owner\n"
                    f"llama-65b,65.2B,1.4T,{LLAMA65_GPU_HOURS / 24},A100 80GB,2048,,Meta\n"
                    f"gpt3,175B,300B,,,,{GPT3_PF_DAYS},OpenAI\n", encoding="utf-8")
    return path


def test_a_toml_map_names_headers_and_their_units(tmp_path):
    (tmp_path / "map.toml").write_text(MAP_TOML, encoding="utf-8")
    result = check([str(_runs_csv(tmp_path))], columns=str(tmp_path / "map.toml"))
    doc = to_json(result)
    llama = claim_by_id(doc, "llama-65b")["quantities"]
    # GPU-days x 24 = GPU-hours: 42,598.4 GPU-days is LLaMA-65B's 1,022,362 GPU-hours.
    assert llama["chip_hours"]["value"] == pytest.approx(LLAMA65_GPU_HOURS)
    assert llama["chip_hours"]["text"].endswith("GPU-days")  # the number is shown with the unit it was read in
    assert llama["params"]["value"] == pytest.approx(65.2e9) and llama["chips"]["value"] == 2048
    gpt3 = claim_by_id(doc, "gpt3")["quantities"]
    assert gpt3["compute_flops"]["value"] == pytest.approx(GPT3_PF_DAYS * PF_DAY)  # 3.1449e23 FLOP
    assert claim_by_id(doc, "gpt3")["status"] == "pass"
    # "Owner" is listed under keep: an extra field, not an unread column; every other header was mapped.
    assert result.claims.unread_columns == []
    assert any("team-runs" not in m and "kept as extra fields" in m for _, m in result.claims.notes)


def test_a_json_map_lets_the_header_name_the_unit(tmp_path):
    (tmp_path / "map.json").write_text(json.dumps({"columns": {"model": "id", "N": "params", "D": "tokens",
                                                               "compute (ZFLOP)": "compute_flops"}}),
                                       encoding="utf-8")
    path = tmp_path / "c.csv"
    path.write_text("model,N,D,compute (ZFLOP)\ngpt3,175B,300B,314\n", encoding="utf-8")
    claim = to_json(check([str(path)], columns=str(tmp_path / "map.json")))["claims"][0]
    # 1 ZFLOP = 1e21 FLOP; 314 ZFLOP = 3.14e23 FLOP (Brown et al. 2020: 3.14e23).
    assert claim["quantities"]["compute_flops"]["value"] == pytest.approx(3.14e23)
    assert claim["status"] == "pass"


@pytest.mark.parametrize(("text", "suffix", "expected"), [
    ('[columns]\n"GPU days" = { field = "chip_hour", unit = "GPU-days" }\n', ".toml",
     'columns."GPU days".field: \'chip_hour\' is not a field (did you mean chip_hours'),
    ('[columns]\n"size" = { field = "params", unit = "GPU-days" }\n', ".toml", 'columns.size.unit: '),
    ('colums = {}\n', ".toml", "'colums' was unexpected"),
    ('[columns]\n"a" = "params"\n"A" = "tokens"\n', ".toml", 'columns.A: the same header as "a"'),
    ('[columns\n', ".toml", "not valid TOML"),
    ('{"columns": {"n": {"field": "chips", "units": "x"}}}', ".json", "columns.n: "),
    ('{"columns": ', ".json", "not valid JSON"),
])
def test_a_map_that_cannot_be_used_names_the_file_and_the_key(tmp_path, text, suffix, expected):
    path = tmp_path / f"map{suffix}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LoadError) as info:
        load_column_map(path)
    assert str(info.value).startswith(str(path)), info.value
    assert expected in str(info.value), info.value


def test_a_map_may_only_keep_descriptive_columns(tmp_path):
    """A team that only wants its descriptive columns kept without the unread-column warning writes a map of
    ``keep`` alone: it was refused ("'columns' is a required property")."""
    (tmp_path / "keep.toml").write_text('keep = ["Owner", "Ticket"]\n', encoding="utf-8")
    path = tmp_path / "runs.csv"
    path.write_text("id,params,tokens,Owner,Ticket\na,7B,1.4T,ann,OPS-1\n", encoding="utf-8")
    result = check([str(path)], columns=str(tmp_path / "keep.toml"))
    assert result.claims.unread_columns == []
    assert to_json(result)["claims"][0]["extra"] == {"Owner": "ann", "Ticket": "OPS-1"}
    (tmp_path / "empty.toml").write_text('name = "nothing"\n', encoding="utf-8")
    with pytest.raises(LoadError):  # neither columns nor keep: no map
        load_column_map(tmp_path / "empty.toml")


def test_a_header_of_the_map_that_the_file_lacks_is_said(tmp_path):
    """A misspelled header in a map ("Jobb" for the file's "Job") was accepted without a word, its column left
    unread: the note names it, per file."""
    (tmp_path / "map.toml").write_text('[columns]\nJobb = "id"\n"N (B)" = "params"\n', encoding="utf-8")
    path = tmp_path / "runs.csv"
    path.write_text("Job,N (B),tokens\nj1,7,1.4T\n", encoding="utf-8")
    result = check([str(path)], columns=str(tmp_path / "map.toml"))
    said = [m for _, m in result.claims.notes if "does not have" in m]
    assert len(said) == 1 and said[0].endswith("map.toml) names 1 column this file does not have: 'Jobb'")
    assert [c for _, c, _ in result.claims.unread_columns] == ["Job"]


def test_the_command_line_reports_a_bad_map_with_exit_2(tmp_path, cli_run):
    (tmp_path / "map.toml").write_text('[columns]\n"n" = "gpus"\n', encoding="utf-8")
    res = cli_run("check", str(_runs_csv(tmp_path)), "--columns", str(tmp_path / "map.toml"))
    assert res.exit_code == 2
    assert "map.toml: columns.n: 'gpus' is not a field" in res.stderr


def test_every_field_may_be_mapped_and_nothing_else(tmp_path):
    path = tmp_path / "all.json"
    path.write_text(json.dumps({"columns": {f"col {name}": name for name in MAP_FIELDS}}), encoding="utf-8")
    assert {fld for fld, _ in load_column_map(path).columns.values()} == set(MAP_FIELDS)
    assert {"params", "chip_hours", "hardware", "phases"} <= set(MAP_FIELDS)
    assert "flops_per_token" not in MAP_FIELDS  # derived only: never read from input


# ------------------------------------------------------------------------------------------- the Epoch profile


def test_epochs_file_is_recognised_and_read_by_its_profile():
    result = check([str(EPOCH_EXTRACT)])
    assert any("built-in column profile 'epoch'" in m and "recognised" in m for _, m in result.claims.notes)
    doc = to_json(result)
    by_name = {c["name"]: c for c in doc["claims"]}
    # Epoch's published row for PaLM (540B): MFU 0.462 (Chowdhery et al. 2022, Table 3: 46.2 %), 6,144 TPU v4,
    # 1,536 training hours = 64 days.
    palm = by_name["PaLM (540B)"]["quantities"]
    assert palm["mfu"]["value"] == pytest.approx(0.462)
    assert palm["chips"]["value"] == 6144
    assert palm["wall_clock_days"]["value"] == pytest.approx(1536 / 24)
    # Epoch's descriptive columns are known to the profile: none is reported as unread.
    assert result.claims.unread_columns == []


def test_without_the_profile_epochs_utilization_column_is_not_read():
    result = check([str(EPOCH_EXTRACT)], profile="none")
    unread = {column for _, column, _ in result.claims.unread_columns}
    assert "Hardware utilization (MFU)" in unread and "Organization" in unread
    assert not any("profile" in m for _, m in result.claims.notes)


def test_the_profile_can_be_asked_for_when_the_header_is_too_short_to_recognise(tmp_path, cli_run):
    path = tmp_path / "few.csv"
    path.write_text("Model,Parameters,Hardware utilization (MFU)\nPaLM,540.35B,0.462\n", encoding="utf-8")
    assert "Hardware utilization (MFU)" in {c for _, c, _ in check([str(path)]).claims.unread_columns}
    claim = to_json(check([str(path)], profile="epoch"))["claims"][0]
    assert claim["quantities"]["mfu"]["value"] == pytest.approx(0.462)
    res = cli_run("check", str(path), "--profile", "epok")
    assert res.exit_code == 2 and "--profile: no built-in profile 'epok' (did you mean epoch?)" in res.stderr


def test_a_map_laid_over_the_profile_wins(tmp_path):
    (tmp_path / "map.toml").write_text('[columns]\n"Organization" = "source"\n', encoding="utf-8")
    result = check([str(EPOCH_EXTRACT)], columns=str(tmp_path / "map.toml"))
    by_name = {c["name"]: c for c in to_json(result)["claims"]}
    assert by_name["LLaMA-65B"]["source"] == "Meta AI"


def test_the_shipped_profile_is_a_valid_map():
    epoch = profile("epoch")
    assert epoch.lookup("Training time (hours)") == ("wall_clock_days", "hours")
    assert epoch.lookup("training_time_hours") == ("wall_clock_days", "hours")  # case and punctuation ignored
    assert epoch.lookup("Hardware quantity") == ("chips", None)
