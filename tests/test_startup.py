"""Start-up stays quick: ``train-audit --help``, ``rules`` and ``hardware`` import neither pandas nor pyarrow
(together about 0.6 s of imports on the benchmark machine), checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Runs the command line in a fresh interpreter, then prints on standard error the loaded modules that WHICH keeps.
_RUN = """
import json, sys
from audit.cli import cli
try:
    cli(sys.argv[1:], prog_name="train-audit", standalone_mode=False)
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(sorted(m for m in sys.modules if WHICH)), file=sys.stderr)
"""
_PROBE = _RUN.replace("WHICH", 'm in ("pandas", "pyarrow")')


@pytest.mark.parametrize("args", [["--help"], ["rules"], ["rules", "C001"], ["rules", "-f", "json"], ["hardware"],
                                  ["hardware", "H100"], ["hardware", "-f", "json"]])
def test_light_commands_import_neither_pandas_nor_pyarrow(args):
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip(), proc.stderr  # the command did its work
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


def test_the_catalog_read_without_pandas_is_the_one_pandas_reads():
    import pandas as pd

    from audit.catalog import load_catalog
    from audit.resources import data_path

    frame = pd.read_csv(data_path("accelerators.csv"), dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(load_catalog().frame, frame)


_CHECK_PROBE = _RUN.replace("WHICH", 'm.split(".")[0] in ("jsonschema", "jinja2") '
                                     'or m in ("audit.report.html", "audit.report.svg", "audit.report.table")')


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_checking_one_claim_imports_no_schema_validator_and_no_other_renderer(tmp_path, fmt):
    """A one-claim check (issue 12: within 1 s) reads a valid claim without jsonschema (the quick check of
    audit.reading.schemacheck), the built-in profile without validating it, and imports only its own renderer."""
    claim = tmp_path / "one.json"
    claim.write_text('[{"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": 3.14e23}]')
    proc = subprocess.run([sys.executable, "-c", _CHECK_PROBE, "check", str(claim), "--isolated", "-f", fmt],
                          capture_output=True, text=True, timeout=60)
    assert "gpt3" in proc.stdout, proc.stderr
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


_SERVER_PROBE = """
import json, sys
import audit.batching
seen = []

def started():
    seen.append(sorted(m for m in sys.modules if m in ("pandas", "audit.pipeline", "audit.engine")))
    raise SystemExit(0)

audit.batching.start_workers_server = started
from audit.cli import cli
try:
    cli(sys.argv[1:], prog_name="train-audit", standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(seen), file=sys.stderr)
"""


def test_a_check_in_worker_processes_starts_their_server_before_importing_the_audit(tmp_path):
    """Issue 12: the workers' server imports the audit (about 1.2 s) while the main process imports its own, not
    after: check decides on workers from the Parquet footer alone (audit.batching), before pandas is imported."""
    import pandas as pd

    data = tmp_path / "claims.parquet"
    pd.DataFrame({"id": [f"r{i}" for i in range(30)], "params": 7e9, "tokens": 2e12}).to_parquet(data)
    out = tmp_path / "out.parquet"
    args = ["check", str(data), "--isolated", "-f", "parquet", "-o", str(out)]
    for more, expected in ((["--jobs", "2", "--batch-size", "10"], [[]]),  # 3 batches, 2 workers
                           (["--jobs", "2"], []),  # one batch: no worker is started
                           (["--batch-size", "10", "--jobs", "1"], [])):
        proc = subprocess.run([sys.executable, "-c", _SERVER_PROBE, *args, *more], capture_output=True, text=True,
                              timeout=60)
        assert json.loads(proc.stderr.strip().splitlines()[-1]) == expected, (more, proc.stderr)


def test_the_table_of_format_modules_is_what_the_modules_register():
    """report.FORMAT_MODULES names the formats without importing the renderers; it must say what they register."""
    import importlib
    import pkgutil

    from audit import report

    modules = [m.name for m in pkgutil.iter_modules(report.__path__)]
    for module in modules:
        importlib.import_module(f"audit.report.{module}")
    # each format belongs to the module that defines its render function
    registered = {m: tuple(sorted(name for name, r in report._REGISTRY.items()
                                  if r.render.__module__ == f"audit.report.{m}")) for m in modules}
    assert {m: tuple(sorted(f)) for m, f in report.FORMAT_MODULES.items()} == registered
    assert report.names() == sorted(report.renderers())
    assert report.get("json").name == "json"
    with pytest.raises(KeyError):
        report.get("no-such-format")


def test_the_shipped_profiles_are_valid_column_maps():
    """The built-in profiles are read without the JSON Schema (start-up); they are checked against it here."""
    from jsonschema import Draft202012Validator

    from audit.reading.colmap import tomllib  # tomllib, or tomli on Python 3.10
    from audit.resources import data_path, schema_path

    validator = Draft202012Validator(json.loads(schema_path("columns.schema.json").read_text(encoding="utf-8")))
    profiles = sorted(data_path("profiles").glob("*.toml"))
    assert profiles
    for path in profiles:
        errors = [e.message for e in validator.iter_errors(tomllib.loads(path.read_text(encoding="utf-8")))]
        assert errors == [], (path.name, errors)


# ---------------------------------------------------------------------------------- ending the process (exit_process)

_EXAMPLE_CLAIM = '[{"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": 3.14e23}]'
# Ten times the compute 6 · 70B · 1.4T = 5.88e23: a C001 fail (exit 1).
_FAILING_CLAIM = '[{"id": "x", "params": 70e9, "tokens": 1.4e12, "compute_flops": 5.88e24}]'


@pytest.mark.parametrize("content, args, status", [
    (_EXAMPLE_CLAIM, [], 0),
    (_FAILING_CLAIM, [], 1),
    (_FAILING_CLAIM, ["--fail-on", "never"], 0),
    (None, [], 2),  # a missing file
])
def test_the_console_entry_point_ends_with_the_exit_codes_of_the_command(tmp_path, content, args, status):
    path = tmp_path / "claims.json"
    if content is not None:
        path.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "audit", "check", str(path), "--isolated", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == status, proc.stderr
    if content is None:
        assert "no such file" in proc.stderr


def test_the_whole_report_reaches_a_pipe_and_the_exit_handlers_run(tmp_path):
    """The process ends without the interpreter's teardown (audit.cli.exit_process): what is buffered for standard
    output still arrives whole, and the handlers registered with atexit (coverage's, multiprocessing's) still run."""
    claims = [{"id": f"run-{i}", "params": 7e9, "tokens": 2e12, "compute_flops": 8.4e22} for i in range(300)]
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(claims))
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('exit handler ran', file=sys.stderr))\n"
            "from audit.cli import main\n"
            "sys.argv = ['train-audit', 'check', sys.argv[1], '--isolated', '-f', 'json']\n"
            "main()\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "exit handler ran" in proc.stderr
    report = json.loads(proc.stdout)  # the last byte arrived: the text parses
    assert [c["id"] for c in report["claims"]] == [f"run-{i}" for i in range(300)]


def test_a_running_thread_or_a_message_takes_the_normal_way_out(monkeypatch):
    import threading

    from audit.cli import exit_process

    monkeypatch.setattr(threading, "active_count", lambda: 2)  # a thread a normal exit would wait for
    with pytest.raises(SystemExit) as exc:
        exit_process(1)
    assert exc.value.code == 1
    with pytest.raises(SystemExit) as exc:
        exit_process("a message for stderr")  # sys.exit's own handling: the message, status 1
    assert exc.value.code == "a message for stderr"
