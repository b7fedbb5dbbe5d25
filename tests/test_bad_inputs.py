"""The bad-input corpus (tests/data/bad/): every file gets the outcome its manifest entry names.

Whole-file problems exit 2 with one line naming the file and what is wrong (never a traceback); row problems make
that claim ``invalid`` with a finding per field while every other row is audited; the number of claims out equals
the number of rows in, counted here independently of the loaders.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from audit.api import check as api_check
from audit.reading import LoadError
from audit.cli import cli
from conftest import DATA

BAD = DATA / "bad"
MANIFEST = json.loads((BAD / "expected.json").read_text(encoding="utf-8"))
FILES: dict[str, dict] = MANIFEST["files"]
WHOLE = sorted(name for name, e in FILES.items() if e["exit"] == 2)
ROWS = sorted(name for name, e in FILES.items() if e["exit"] != 2)
NOT_CORPUS = {"make.py", "expected.json", "__pycache__"}
#: The row-level files as test parameters, each in an xdist group of its own: the two tests that read a file's JSON
#: report (test_row_problems_keep_every_row_and_flag_the_bad_ones, test_every_output_shows_every_finding) run on one
#: pytest-xdist worker, which makes that report once (_json_report).
ROW_PARAMS = [pytest.param(name, marks=pytest.mark.xdist_group(f"bad/{name}")) for name in ROWS]


# ------------------------------------------------------------------------------------------- the corpus itself


def test_manifest_names_every_file_and_only_those():
    present = {p.name for p in BAD.iterdir()} - NOT_CORPUS
    expected_absent = {name for name, e in FILES.items()
                       if "no such file" in e.get("message_contains", "") or e.get("absent")}
    assert present == set(FILES) - expected_absent
    assert all(name not in present for name in expected_absent)


def test_every_entry_says_why_and_is_well_formed():
    for name, e in FILES.items():
        assert e.get("why"), name
        if e["exit"] == 2:
            assert e["message_contains"], name
            continue
        assert e["exit"] in (0, 1), name
        assert len(e["status"]) == len(e["invalid_fields"]) == e["claims"], name
        phase_fields = e.get("phase_invalid_fields", [[]] * e["claims"])
        for status, fields, in_phases in zip(e["status"], e["invalid_fields"], phase_fields):
            assert (status == "invalid") == bool(fields or in_phases), (name, status, fields)
        # exit 1 exactly when a claim fails or is invalid (default --fail-on fail)
        assert e["exit"] == int(any(s in ("fail", "invalid") for s in e["status"])), name


def test_committed_files_are_what_make_py_writes(tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "bad"
    subprocess.run([sys.executable, str(BAD / "make.py"), str(out)], check=True, capture_output=True)
    made = {p.name for p in out.iterdir()}
    assert made == {p.name for p in BAD.iterdir()} - NOT_CORPUS
    for name in sorted(made):
        ours, theirs = BAD / name, out / name
        if ours.is_symlink():
            assert theirs.is_symlink() and os.readlink(ours) == os.readlink(theirs), name
        elif ours.is_dir():
            assert theirs.is_dir()
        elif name.endswith(".xlsx"):  # a zip whose entries carry the time they were written: compare the cells
            assert _sheets(ours) == _sheets(theirs), name
        elif name in ("corrupt.parquet", "truncated.parquet"):
            continue  # damaged copies of a writer-versioned file: their bytes depend on the pyarrow version
        elif ours.read_bytes()[-4:] == b"PAR1":  # a Parquet file: its bytes carry the writer's version
            with pq.ParquetFile(ours) as a, pq.ParquetFile(theirs) as b:
                assert a.read().equals(b.read()), name
        else:
            assert ours.read_bytes() == theirs.read_bytes(), f"{name} differs from what make.py writes"


def _sheets(path: Path) -> dict[str, list[tuple]]:
    import openpyxl

    book = openpyxl.load_workbook(path)  # formulas as written, not their (absent) values
    return {ws.title: [tuple(c.value for c in row) for row in ws.iter_rows()] for ws in book.worksheets}


# ------------------------------------------------------------------------------ counting rows, independently


def _decode(raw: bytes) -> str:
    for bom, codec in ((codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if raw.startswith(bom):
            return raw.decode(codec)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252")


def rows_in(path: Path) -> int:
    """How many rows (claims) a file holds, by the format's own definition, without train-audit's loaders."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        with pq.ParquetFile(path) as f:
            return f.metadata.num_rows
    if path.suffix == ".xlsx":  # the first sheet's rows with a value, less the header
        first = next(iter(_sheets(path).values()))
        return sum(1 for row in first if any(v is not None for v in row)) - 1
    text = _decode(path.read_bytes())
    if path.suffix == ".csv" and text.startswith("sep="):  # Excel's separator hint is not a row
        text = text.split("\n", 1)[1]
    if path.suffix == ".jsonl":
        return sum(1 for line in text.splitlines() if line.strip())
    if path.suffix == ".json":
        doc = json.loads(text, parse_int=float)  # float: a 5,000-digit integer is past int()'s digit limit
        if isinstance(doc, dict) and "claims" in doc:
            return len(doc["claims"])
        return len(doc) if isinstance(doc, list) else 1
    limit = csv.field_size_limit(sys.maxsize)
    try:
        records = [r for r in csv.reader(io.StringIO(text, newline="")) if r]  # a blank line is not a record
    finally:
        csv.field_size_limit(limit)
    return len(records) - 1


# -------------------------------------------------------------------------------------- whole-file problems


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


@pytest.mark.parametrize("name", WHOLE)
def test_whole_file_problem_exits_2_with_one_line_naming_the_file(name, cli_run, monkeypatch):
    monkeypatch.chdir(BAD)
    res = cli_run("check", name)
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"train-audit: error: {name}: "), lines[0]
    assert FILES[name]["message_contains"] in lines[0]
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("name", WHOLE)
def test_the_library_raises_its_own_load_error_for_whole_file_problems(name, monkeypatch):
    monkeypatch.chdir(BAD)
    with pytest.raises(LoadError) as err:
        api_check([name])
    assert err.value.file == name
    assert FILES[name]["message_contains"] in str(err.value)


def test_a_bad_file_among_good_ones_stops_the_run_before_any_output(tmp_path, monkeypatch):
    monkeypatch.chdir(BAD)
    out = tmp_path / "report.json"
    res = _invoke("check", "ragged.csv", "header_only.csv", "bom.csv", "--format", "json", "-o", str(out),
                  "--findings", str(tmp_path / "findings.csv"))
    assert res.exit_code == 2
    assert "header_only.csv" in res.stderr
    assert list(tmp_path.iterdir()) == []  # no report, no findings, no temporary file


def test_debug_shows_the_traceback_of_a_whole_file_problem(monkeypatch):
    monkeypatch.chdir(BAD)
    plain = _invoke("check", "truncated.json")
    debug = _invoke("--debug", "check", "truncated.json")
    assert plain.exit_code == debug.exit_code == 2
    assert "Traceback" not in plain.stderr
    assert "Traceback" in debug.stderr and "truncated.json: not valid JSON" in debug.stderr


def test_deep_nesting_does_not_crash_a_real_process():
    # In a separate interpreter: a RecursionError or a C-stack overflow there would be a crash or a signal.
    for name in ("deep_array.json", "deep_object.json", "deep_in_claim.json"):
        proc = subprocess.run([sys.executable, "-m", "audit", "check", name], cwd=BAD, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr)
        assert proc.stderr.strip() == f"train-audit: error: {name}: JSON nested deeper than 64 levels; " \
                                      f"claims are flat records"
    data = (BAD / "deep_array.json").read_bytes()
    proc = subprocess.run([sys.executable, "-m", "audit", "check", "-"], input=data, capture_output=True,
                          timeout=60)
    assert proc.returncode == 2 and b"<stdin>: JSON nested deeper" in proc.stderr


# --------------------------------------------------------------------------------------------- row problems


#: ``train-audit check NAME --format json`` of each row-level file, run in tests/data/bad/ (the output is the same
#: bytes every time: tests/test_output.py), by name.
_JSON_REPORTS: dict = {}


def _json_report(name: str, cli_run):
    """``train-audit check NAME --format json`` in the corpus folder, run once per file and process."""
    if name not in _JSON_REPORTS:
        _JSON_REPORTS[name] = cli_run("check", name, "--format", "json")
    return _JSON_REPORTS[name]


@pytest.mark.parametrize("name", ROW_PARAMS)
def test_row_problems_keep_every_row_and_flag_the_bad_ones(name, cli_run, monkeypatch):
    e = FILES[name]
    monkeypatch.chdir(BAD)
    res = _json_report(name, cli_run)
    assert res.exit_code == e["exit"], res.output
    doc = res.json()
    claims = doc["claims"]
    assert len(claims) == e["claims"] == rows_in(BAD / name) == doc["summary"]["claims"]
    assert [c["status"] for c in claims] == e["status"]
    invalid = [sorted({f["quantity"] for f in c["findings"] if f["rule"] == "V001"}) for c in claims]
    assert invalid == e["invalid_fields"]
    for c, fields in zip(claims, invalid):
        # one finding per invalid field, each an error with a message
        v001 = [f for f in c["findings"] if f["rule"] == "V001"]
        assert len(v001) == len(fields)
        assert all(f["severity"] == "error" and f["message"] for f in v001)
    if "flags" in e:
        for c, flags in zip(claims, e["flags"]):
            raised = {f["rule"] for f in c["findings"] if f["severity"] in ("warning", "error")}
            assert set(flags) <= raised, (c["id"], flags, raised)
    if "ids" in e:
        assert [c["id"] for c in claims] == e["ids"]
    if "names" in e:
        assert [c["name"] for c in claims] == e["names"]
    if "extra" in e:
        assert [c["extra"] for c in claims] == e["extra"]
    rows = e.get("rows_in_file")
    if rows:
        assert [c["input"]["row"] for c in claims] == rows
    assert {c["input"]["file"] for c in claims} == {name}
    for c, values in zip(claims, e.get("values", [{}] * len(claims))):
        assert {q: c["quantities"][q]["value"] for q in values} == values, c["id"]
    for c, texts in zip(claims, e.get("texts", [{}] * len(claims))):
        assert {q: c["quantities"][q]["text"] for q in texts} == texts, c["id"]
    for c, words in zip(claims, e.get("messages_contain", [[]] * len(claims))):
        messages = " ".join(f["message"] for f in c["findings"] if f["severity"] in ("warning", "error"))
        assert all(w in messages for w in words), (c["id"], words, messages)
    if "phase_invalid_fields" in e:
        in_phases = [sorted(f"{k}.{f['quantity']}" for k, p in enumerate(c.get("phases", []), start=1)
                            for f in p["findings"] if f["rule"] == "V001") for c in claims]
        assert in_phases == e["phase_invalid_fields"]
    for note in e.get("notes_contain", []):
        assert any(note in line for line in res.stderr.splitlines() if line.startswith(f"train-audit: note: {name}: ")), \
            (note, res.stderr)
    if "unread" in e:
        # Every column not understood is named once, on one line per file, with its did-you-mean.
        lines = [line for line in res.stderr.splitlines() if line.startswith(f"train-audit: warning: {name}: ")]
        assert len(lines) == 1, res.stderr
        for column, suggestions in e["unread"]:
            assert lines[0].count(repr(column)) == 1, (column, lines[0])
            said = re.search(re.escape(repr(column)) + r" \(did you mean ([^)]*)\?\)", lines[0])
            assert said and said.group(1) == " or ".join(suggestions), (column, lines[0])
        from audit.api import check as check_files

        unread = check_files([name]).claims.unread_columns
        assert [(f, col) for f, col, _ in unread if col in dict(e["unread"])] == [(name, c) for c, _ in e["unread"]]


def test_all_row_level_files_at_once_keep_every_row_in_order(cli_run, monkeypatch):
    monkeypatch.chdir(BAD)
    res = cli_run("check", *ROWS, "--format", "json", "--fail-on", "never")
    assert res.exit_code == 0
    claims = res.json()["claims"]
    expected_files = [name for name in ROWS for _ in range(FILES[name]["claims"])]
    assert [c["input"]["file"] for c in claims] == expected_files
    # Row by row the same verdicts as file by file, except that ids repeated across files are now duplicates.
    expected = [s for name in ROWS for s in FILES[name]["status"]]
    for c, status in zip(claims, expected):
        dup = any(f["rule"] == "V002" for f in c["findings"])
        assert c["status"] == status or (dup and (status, c["status"]) in (("pass", "warn"), ("unchecked", "warn"))), (c["id"], status)


@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "html"])
def test_every_output_format_renders_the_bad_rows(fmt, cli_run, monkeypatch, tmp_path):
    monkeypatch.chdir(BAD)
    out = tmp_path / f"report.{fmt}"
    res = cli_run("check", *ROWS, "--format", fmt, "-o", str(out), "--findings", str(tmp_path / "f.csv"),
                  "--fail-on", "never")
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 0
    if fmt == "csv":
        with out.open(newline="", encoding="utf-8") as fh:
            assert sum(1 for _ in csv.DictReader(fh)) == sum(FILES[n]["claims"] for n in ROWS)



# ------------------------------------------------------------------------- every output shows every finding


def _findings_everywhere(name: str, tmp_path: Path, cli_run) -> tuple[dict, str, list[dict], list[dict]]:
    """The JSON, Markdown, claims CSV and findings CSV of one corpus file."""
    findings_csv = tmp_path / f"{name}.findings.csv"
    claims_csv = tmp_path / f"{name}.claims.csv"
    doc = _json_report(name, cli_run).json()  # the JSON report does not depend on --fail-on
    markdown = cli_run("check", name, "--format", "markdown", "--fail-on", "never").stdout
    assert cli_run("check", name, "--format", "csv", "-o", str(claims_csv), "--findings", str(findings_csv),
                   "--fail-on", "never").exit_code == 0
    with claims_csv.open(newline="", encoding="utf-8") as fh:
        claims_rows = list(csv.DictReader(fh))
    with findings_csv.open(newline="", encoding="utf-8") as fh:
        finding_rows = list(csv.DictReader(fh))
    return doc, markdown, claims_rows, finding_rows


@pytest.mark.parametrize("name", ROW_PARAMS)
def test_every_output_shows_every_finding(name, cli_run, monkeypatch, tmp_path):
    """Issue 10: a phase's invalid value was in the text output only. Every finding of a claim, its phases' included,
    is counted in the JSON summary, listed in --findings, named in the claims CSV and shown in Markdown."""
    monkeypatch.chdir(BAD)
    doc, markdown, claims_rows, finding_rows = _findings_everywhere(name, tmp_path, cli_run)
    claims = doc["claims"]
    every = [(c["id"], f) for c in claims for f in c["findings"]]
    every += [(p["id"], f) for c in claims for p in c.get("phases", []) for f in p["findings"]]
    by_severity = {s: sum(1 for _, f in every if f["severity"] == s) for s in doc["summary"]["findings"]}
    assert doc["summary"]["findings"] == by_severity
    assert len(finding_rows) == len(every)
    assert sorted((r["claim_id"], r["rule"]) for r in finding_rows) == sorted((i, f["rule"]) for i, f in every)
    assert len(claims_rows) == len(claims)
    for c, row in zip(claims, claims_rows):
        bad = {f["rule"] for f in c["findings"] + [f for p in c.get("phases", []) for f in p["findings"]]
               if f["severity"] in ("warning", "error")}
        assert set(row["rules"].split()) == bad, (c["id"], row["rules"], bad)
    # Markdown lists each warning and error as one bullet under its claim (a phase's under its run), and the info
    # findings of those claims with them; the info findings of the other claims are counted in one sentence.
    bullets = sorted(re.findall(r"^- \*\*(warning|error|info)\*\* `(\w+)`", markdown, flags=re.M))
    flagged, quiet = [], []
    for c in claims:
        found = c["findings"] + [f for p in c.get("phases", []) for f in p["findings"]]
        loud = any(f["severity"] in ("warning", "error") for f in found)
        for f in found:
            if f["severity"] in ("warning", "error") or (f["severity"] == "info" and loud):
                flagged.append((f["severity"], f["rule"]))
            elif f["severity"] == "info":
                quiet.append(c["id"])
    assert bullets == sorted(flagged)
    counted = re.search(r"^(\d+) info findings? on (\d+) claims? with no warning or error", markdown, flags=re.M)
    assert (int(counted[1]), int(counted[2])) == (len(quiet), len(set(quiet))) if quiet else counted is None
