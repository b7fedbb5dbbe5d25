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


# ------------------------------------------------------------------------------------------- the corpus itself


def test_manifest_names_every_file_and_only_those():
    present = {p.name for p in BAD.iterdir()} - NOT_CORPUS
    expected_absent = {name for name, e in FILES.items() if "no such file" in e.get("message_contains", "")}
    assert present == set(FILES) - expected_absent
    assert all(not (BAD / name).exists() for name in expected_absent)


def test_every_entry_says_why_and_is_well_formed():
    for name, e in FILES.items():
        assert e.get("why"), name
        if e["exit"] == 2:
            assert e["message_contains"], name
            continue
        assert e["exit"] in (0, 1), name
        assert len(e["status"]) == len(e["invalid_fields"]) == e["claims"], name
        for status, fields in zip(e["status"], e["invalid_fields"]):
            assert (status == "invalid") == bool(fields), (name, status, fields)
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
        if ours.is_dir():
            assert theirs.is_dir()
        elif name in ("corrupt.parquet", "truncated.parquet"):
            continue  # damaged copies of a writer-versioned file: their bytes depend on the pyarrow version
        elif ours.read_bytes()[-4:] == b"PAR1":  # a Parquet file: its bytes carry the writer's version
            with pq.ParquetFile(ours) as a, pq.ParquetFile(theirs) as b:
                assert a.read().equals(b.read()), name
        else:
            assert ours.read_bytes() == theirs.read_bytes(), f"{name} differs from what make.py writes"


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
    text = _decode(path.read_bytes())
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


@pytest.mark.parametrize("name", ROWS)
def test_row_problems_keep_every_row_and_flag_the_bad_ones(name, cli_run, monkeypatch):
    e = FILES[name]
    monkeypatch.chdir(BAD)
    res = cli_run("check", name, "--format", "json")
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

