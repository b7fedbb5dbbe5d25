"""Formats for CI: ``concise`` (``file:row: CODE severity: message``), ``github`` (workflow annotations) and
``sarif`` (SARIF 2.1.0, validated against the official JSON Schema in ``tests/data/sarif/``, see its SOURCE.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from conftest import DATA, REPO, run_cli

#: 1B parameters on 20B tokens: 6·N·D = 6 × 1e9 × 20e9 = 1.2e20 FLOP; 1.2e21 is 10x that: a C001 error.
HEADER = "id,params,tokens,compute_flops\n"
AGREES = "agrees,1B,20B,1.2e20\n"
TEN_X = "ten-x,1B,20B,1.2e21\n"
SARIF_SCHEMA = DATA / "sarif" / "sarif-2.1.0-rtm.5.json"


@pytest.fixture
def claims_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A CSV whose line 3 (header on line 1) is the one claim in error."""
    monkeypatch.chdir(tmp_path)
    Path("claims.csv").write_text(HEADER + AGREES + TEN_X)
    return "claims.csv"


def test_concise_one_line_per_finding(claims_csv: str):
    result = run_cli("check", claims_csv, "--isolated", "-f", "concise", "--select", "C001")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("claims.csv:3: C001 error: Compute 1.2e21 FLOP (claimed) differs from 1.2e20 FLOP")
    assert lines[0].endswith("(claim ten-x)")
    assert lines[1] == "2 claims: 1 pass, 0 warn, 1 fail, 0 invalid, 0 unchecked"
    verbose = run_cli("check", claims_csv, "--isolated", "-f", "concise", "--select", "C001", "-v").stdout
    assert verbose.splitlines()[0].startswith("claims.csv:2: C001 ok: ")  # passing checks too with -v


def test_github_annotations(claims_csv: str):
    result = run_cli("check", claims_csv, "--isolated", "-f", "github", "--select", "C001")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    # GitHub's syntax: ::error file={name},line={line},title={title}::{message}; ',' in a property is %2C.
    assert lines[0].startswith("::error file=claims.csv,line=3,title=C001 compute-6nd (claim ten-x%2C row 3)::"
                               "Compute 1.2e21 FLOP (claimed) differs from 1.2e20 FLOP")
    assert lines[-1] == "2 claims: 1 pass, 0 warn, 1 fail, 0 invalid, 0 unchecked"


def test_github_json_array_names_the_item_not_a_line(tmp_path: Path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps([{"id": "x", "params": "1B", "tokens": "20B", "compute_flops": "1.2e21"}]))
    line = run_cli("check", str(path), "--isolated", "-f", "github", "--select", "C001").stdout.splitlines()[0]
    assert line.startswith(f"::error file={path},title=C001 compute-6nd (claim x%2C row 1)::")
    assert "line=" not in line


def test_no_input_text_can_start_a_workflow_command(tmp_path: Path):
    """An id or hardware name holding a line break and '::' stays inside one escaped annotation (GitHub runs
    workflow commands line by line: an unescaped newline would let a claims file issue commands)."""
    hostile = "x\n::add-mask::secret\r::stop-commands::token%0A"
    path = tmp_path / "c.json"
    path.write_text(json.dumps([{"id": hostile, "params": "1B", "tokens": "20B", "compute_flops": "1.2e21",
                                 "hardware": hostile}]))
    out = run_cli("check", str(path), "--isolated", "-f", "github").stdout
    lines = out.splitlines()
    assert len(lines) >= 3
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines[:-1]), out
    assert lines[-1].startswith("1 claim: ")
    assert "%0A" not in out.replace("%250A", "")  # the literal %0A in the input is escaped as %250A


def test_sarif_is_valid_against_the_official_schema(tmp_path: Path):
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    # An error (10x compute), a warning (an accelerator not in the catalog), an invalid value (half a chip), a
    # passing check, and a file name that needs percent-encoding in a URI.
    example = tmp_path / "my claims #1.json"
    example.write_text(json.dumps([
        {"id": "ten-x", "params": "1B", "tokens": "20B", "compute_flops": "1.2e21"},
        {"id": "agrees", "params": "1B", "tokens": "20B", "compute_flops": "1.2e20", "hardware": "H1000"},
        {"id": "half-a-chip", "chips": 0.5, "wall_clock_days": 1, "chip_hours": 12},
    ]))
    log = json.loads(run_cli("check", str(example), "--isolated", "-f", "sarif", "-v").stdout)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=str)
    assert not errors, errors[0]
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    for r in run["results"]:
        assert rules[r["ruleIndex"]] == r["ruleId"]
    # Every finding is one result, passing checks as kind "pass" (the JSON summary counts them by severity).
    summary = run_cli("check", str(example), "--isolated", "-f", "json").json()["summary"]
    by_level = {level: sum(1 for r in run["results"] if r["level"] == level) for level in ("error", "warning",
                                                                                           "note", "none")}
    assert by_level == {"error": summary["findings"]["error"], "warning": summary["findings"]["warning"],
                        "note": summary["findings"]["info"], "none": summary["findings"]["ok"]}
    assert by_level["error"] >= 2 and by_level["warning"] >= 1 and by_level["none"] >= 1
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("file:///") and uri.endswith("/my%20claims%20%231.json")


def test_sarif_levels_and_line_locations(claims_csv: str):
    log = json.loads(run_cli("check", claims_csv, "--isolated", "-f", "sarif", "--select", "C001", "-v").stdout)
    results = {r["properties"]["claim"]: r for r in log["runs"][0]["results"]}
    bad, good = results["ten-x"], results["agrees"]
    assert bad["level"] == "error" and "kind" not in bad
    assert good["level"] == "none" and good["kind"] == "pass"
    where = bad["locations"][0]["physicalLocation"]
    assert where == {"artifactLocation": {"uri": "claims.csv"}, "region": {"startLine": 3}}
    assert bad["properties"]["claimed"] == 1.2e21 and bad["properties"]["expected"] == 1.2e20


def test_formats_are_listed_in_help():
    out = run_cli("check", "--help").stdout
    for name in ("concise", "github", "sarif"):
        assert name in out


def test_the_readme_workflow_step_annotates_the_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The README's GitHub Actions step, run on a claims file with one error: exit 1 (the build fails) and one
    ::error annotation on the claim's line."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    step = next(line for line in readme.splitlines() if "- run: train-audit check" in line)
    args = step.split("- run: train-audit ", 1)[1].split()
    monkeypatch.chdir(tmp_path)
    Path("data").mkdir()
    Path("data/claims.csv").write_text(HEADER + AGREES + TEN_X)
    result = run_cli(*args, "--isolated")
    assert result.exit_code == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and errors[0].startswith("::error file=data/claims.csv,line=3,title=C001 compute-6nd")


@pytest.mark.parametrize("fmt", ["github", "concise", "sarif"])
def test_a_row_after_cells_over_several_lines_is_annotated_at_its_own_line(tmp_path, monkeypatch, fmt):
    # Row 3 (the third record, header counted) starts on line 6: the notes cell of row 2 spans three lines and a
    # blank line follows it. GitHub put the annotation on line 3, another row's text.
    monkeypatch.chdir(tmp_path)
    Path("claims.csv").write_text("id,params,tokens,compute_flops,notes\n"
                                  'agrees,1B,20B,1.2e20,"one\ntwo\nthree"\n\n'
                                  "ten-x,1B,20B,1.2e21,plain\n")
    assert Path("claims.csv").read_text().splitlines()[5].startswith("ten-x")  # line 6
    out = run_cli("check", "claims.csv", "--isolated", "-f", fmt, "--select", "C001").stdout
    if fmt == "github":
        assert "::error file=claims.csv,line=6," in out and "row 3" in out
    elif fmt == "concise":
        assert out.startswith("claims.csv:6: C001 error")
    else:
        region = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
        assert region == {"startLine": 6}


def test_columns_not_read_are_said_in_github_and_sarif(tmp_path, monkeypatch):
    # 'n_toks' and 'train_hours' are not read: a code-scanning dashboard shows only what the report holds.
    monkeypatch.chdir(tmp_path)
    Path("runs.csv").write_text("id,params,n_toks,train_hours,compute_flops\nr,1B,20B,10,1.2e20\n")
    github = run_cli("check", "runs.csv", "--isolated", "-f", "github").stdout
    assert github.startswith("::warning file=runs.csv,title=input::2 columns not read")
    assert "'n_toks' (did you mean tokens?)" in github
    log = json.loads(run_cli("check", "runs.csv", "--isolated", "-f", "sarif").stdout)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["level"] == "warning" and "'train_hours'" in notes[0]["message"]["text"]


@pytest.mark.parametrize("fmt", ["github", "concise", "sarif"])
def test_rows_after_a_blank_row_of_separators_and_a_blank_line_keep_their_lines(tmp_path, monkeypatch, fmt):
    """A spreadsheet's blank row exported as ",,,," (line 3, a claim that states nothing), then an empty line (4, no
    row): the rows on lines 5 and 7 are annotated there (a helper's batch audit: an error landed on line 6, an honest
    row, and line 7 got none)."""
    monkeypatch.chdir(tmp_path)
    Path("runs.csv").write_text("Run,GPUs,GPU type,Days,GPU hours\n"
                                "b1,8,H100,1,19\n"   # line 2: 8 × 24 × 1 = 192 GPU-hours, 19 stated
                                ",,,,\n"            # line 3
                                "\n"                # line 4
                                "b2,8,H100,1,19\n"   # line 5
                                "g,8,H100,1,192\n"   # line 6: honest
                                "b3,8,H100,1,19\n")  # line 7
    out = run_cli("check", "runs.csv", "--isolated", "-f", fmt, "--select", "C002").stdout
    if fmt == "github":
        lines = [int(m) for m in re.findall(r"^::error file=runs\.csv,line=(\d+),", out, re.M)]
    elif fmt == "concise":
        lines = [int(m) for m in re.findall(r"^runs\.csv:(\d+): C002 error", out, re.M)]
    else:
        results = json.loads(out)["runs"][0]["results"]
        lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]
    assert lines == [2, 5, 7]


@pytest.mark.parametrize("fmt", ["github", "concise"])
def test_an_excel_separator_line_is_not_counted_as_a_row_of_the_annotations(tmp_path, monkeypatch, fmt):
    """Excel's 'sep=;' first line is not a row, but it is a line: the claim on line 3 is annotated on line 3 (it was
    on line 2, the header). GPT-3 175B (Brown et al. 2020): 6 x 175B x 300B = 3.15e23 FLOP, here stated 10x."""
    monkeypatch.chdir(tmp_path)
    Path("runs.csv").write_text("sep=;\nid;params;tokens;compute_flops\ngpt3-10x;175B;300B;3.14e24\n")
    out = run_cli("check", "runs.csv", "--isolated", "-f", fmt, "--select", "C001").stdout
    found = re.findall(r"^::error file=runs\.csv,line=(\d+)," if fmt == "github" else r"^runs\.csv:(\d+): C001", out,
                       re.M)
    assert found == ["3"]


def test_every_sheet_of_a_workbook_is_annotated_on_the_workbook_naming_its_sheet(tmp_path, monkeypatch):
    """--sheet all: a finding on the second sheet is a GitHub error on the workbook itself (file=, as a link finds
    it), its title naming the sheet as the text report does (runs.xlsx[q2] row 2), and a SARIF result located on
    the workbook with the sheet as a property (a valid SARIF log); a sheet's columns not read are said for it."""
    openpyxl = pytest.importorskip("openpyxl")
    monkeypatch.chdir(tmp_path)
    book = openpyxl.Workbook()
    book.active.title = "q1"
    book.active.append(["id", "params", "tokens", "compute_flops"])
    book.active.append(["ok", "1B", "20B", "1.2e20"])  # 6 × 1e9 × 20e9 = 1.2e20
    q2 = book.create_sheet("q2")
    q2.append(["id", "params", "tokens", "compute_flops", "ticket"])
    q2.append(["ten-x", "1B", "20B", "1.2e21"])  # ten times 1.2e20
    book.save(tmp_path / "runs.xlsx")
    res = run_cli("check", "runs.xlsx", "--isolated", "--sheet", "all", "-f", "github")
    assert res.exit_code == 1
    errors = [line for line in res.stdout.splitlines() if line.startswith("::error")]
    assert errors == [f"::error file=runs.xlsx,title=C001 compute-6nd (claim ten-x%2C runs.xlsx[q2] row 2)::"
                      f"{errors[0].split('::', 2)[2]}"]
    assert "::warning file=runs.xlsx,title=input runs.xlsx[q2]::1 column not read" in res.stdout
    log = json.loads(run_cli("check", "runs.xlsx", "--isolated", "--sheet", "all", "-f", "sarif").stdout)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    assert not list(jsonschema.Draft4Validator(schema).iter_errors(log))
    (error,) = [r for r in log["runs"][0]["results"] if r["level"] == "error"]
    assert error["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "runs.xlsx"
    assert error["properties"]["sheet"] == "q2" and error["properties"]["row"] == 2
    concise = run_cli("check", "runs.xlsx", "--isolated", "--sheet", "all", "-f", "concise").stdout
    assert "\nruns.xlsx[q2]:2: C001 error: " in concise
