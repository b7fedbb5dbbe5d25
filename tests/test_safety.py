"""Safety: input is data only, hostile input cannot crash or stall the reader, and output never damages a file.

(HTML escaping and what runs in a browser are tested in test_html.py and test_browser.py.)
"""

from __future__ import annotations

import ast
import errno
import json
import os
import pickle
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import audit
import audit.reading
from audit import cli as cli_module
from audit.reading import MAX_JSON_DEPTH, LoadError, read_path
from audit.cli import cli
from audit.units import UnitError, parse_value
from conftest import DATA

AUDIT = Path(audit.__file__).resolve().parent
GOOD = json.dumps([{"id": "safe-1", "params": "7B", "tokens": "140B", "compute_flops": "5.88e21"},
                   {"id": "safe-2", "params": "70B", "tokens": "1.4T", "hardware": "H100", "chips": 2048}])


def invoke(*args: str, input: str | bytes | None = None, color: bool = False):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=True, color=color)


@pytest.fixture
def good(tmp_path) -> Path:
    path = tmp_path / "claims.json"
    path.write_text(GOOD, encoding="utf-8")
    return path


def leftovers(folder: Path) -> list[str]:
    """Temporary files a write may have left (write_output names them .<target>.<random>.tmp)."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# ------------------------------------------------------------------------------------ input is data only


#: Modules and calls that could turn input into code or objects: none may appear in the package.
FORBIDDEN_MODULES = {"pickle", "cPickle", "dill", "marshal", "shelve", "yaml", "ruamel", "jsonpickle", "subprocess"}
FORBIDDEN_BUILTINS = {"eval", "exec", "compile", "__import__", "breakpoint"}
FORBIDDEN_METHODS = {"read_pickle", "to_pickle", "system", "popen", "spawnv", "execv", "load_module", "run_path",
                     "run_module", "unsafe_load", "full_load"}


def test_the_package_has_no_eval_no_pickle_no_yaml():
    found = []
    for path in sorted(AUDIT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [(path.name, a.name) for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module.split(".")[0] in FORBIDDEN_MODULES:
                    found.append((path.name, node.module))
            elif isinstance(node, ast.Call):
                fn = node.func
                if (isinstance(fn, ast.Name) and fn.id in FORBIDDEN_BUILTINS) or \
                        (isinstance(fn, ast.Attribute) and fn.attr in FORBIDDEN_METHODS):
                    found.append((path.name, ast.unparse(fn)))
                for kw in node.keywords:  # np.load(..., allow_pickle=True) and friends
                    if kw.arg == "allow_pickle" and not (isinstance(kw.value, ast.Constant) and not kw.value.value):
                        found.append((path.name, "allow_pickle"))
    assert found == []


class _Payload:
    """Unpickling this creates a folder: if the folder appears, something unpickled input."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv", ".parquet", ".pkl", ".pickle", ".npy"])
def test_a_pickle_is_never_unpickled_whatever_its_name(tmp_path, suffix):
    marker = tmp_path / "UNPICKLED"
    path = tmp_path / f"payload{suffix}"
    path.write_bytes(pickle.dumps(_Payload(marker), protocol=2))
    res = invoke("check", str(path))
    assert res.exit_code == 2, res.output
    assert str(path) in res.stderr and "Traceback" not in res.stderr
    assert not marker.exists()


def test_yaml_is_not_read_even_with_python_tags(tmp_path):
    marker = tmp_path / "YAML-RAN"
    path = tmp_path / "claims.yaml"
    path.write_text(f"- !!python/object/apply:os.mkdir ['{marker}']\n")
    res = invoke("check", str(path))
    assert res.exit_code == 2 and "unknown file type '.yaml'" in res.stderr
    assert not marker.exists()


CODE_LIKE = [
    "__import__('os').mkdir('{marker}')", "eval('7e9')", "7e9 + __import__('os').mkdir('{marker}')",
    "${{jndi:ldap://x}}", "{{7*7}}", "`touch {marker}`", "$(touch {marker})", "7e9; import os",
    "!!python/object/apply:os.mkdir ['{marker}']", "=HYPERLINK(\"http://x\")", "lambda: 1",
]


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_code_in_cells_is_text_that_fails_to_parse(tmp_path, fmt):
    marker = tmp_path / "CODE-RAN"
    cells = [c.format(marker=marker) for c in CODE_LIKE]
    if fmt == "json":
        path = tmp_path / "code.json"
        path.write_text(json.dumps([{"id": f"c{i}", "params": c, "name": c} for i, c in enumerate(cells)]))
    else:
        import csv

        path = tmp_path / "code.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["id", "params", "name"])
            w.writerows([f"c{i}", c, c] for i, c in enumerate(cells))
    res = invoke("check", str(path), "--format", "json")
    assert res.exit_code == 1
    claims = json.loads(res.stdout)["claims"]
    assert len(claims) == len(cells)
    assert all(c["status"] == "invalid" for c in claims)
    assert [c["name"] for c in claims] == cells  # kept as written, as text
    assert not marker.exists()


#: Values built to make a careless parser work hard: huge exponents and powers, long runs of digits and
#: separators, nested qualifiers, pathological unit text. Each must be answered at once.
ADVERSARIAL = [
    "9" * 200, "1" + ",000" * 49, "1e" + "9" * 150, "10^" + "9" * 150, "9**99999999", "2^1000000000",
    "10**-99999999", "~" * 200, "about " * 33, "1" + " " * 198 + "B", "1." + "0" * 197, "." * 200,
    "1" + "B" * 199, "1 " + "GPU-" * 49, "1 PF-" + "days-" * 39, "×10^" * 50, "1e-" + "0" * 190 + "1",
    "1" + "\u2009" * 199, "1" * 201, "1" * 100_000,
]


@pytest.mark.parametrize("kind", ["count", "flop", "days", "hours", "fraction", "tokens_rate", "flops_rate"])
def test_adversarial_values_are_answered_at_once(kind):
    start = time.perf_counter()
    for text in ADVERSARIAL:
        try:
            value = parse_value(text, kind)
        except UnitError as exc:
            assert len(str(exc)) < 400  # one short line, even for a 100,000-character cell
        else:
            assert isinstance(value, float)
    assert time.perf_counter() - start < 1.0


# ---------------------------------------------------------------------- the JSON parser's recursion is bounded


def test_nesting_up_to_the_limit_loads_and_one_more_is_refused(tmp_path):
    ok = tmp_path / "ok.json"
    ok.write_text('[{"id": "a", "notes": ' + "[" * (MAX_JSON_DEPTH - 2) + "]" * (MAX_JSON_DEPTH - 2) + "}]")
    assert len(read_path(str(ok)).frame) == 1
    deep = tmp_path / "deep.json"
    deep.write_text('[{"id": "a", "notes": ' + "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1) + "}]")
    with pytest.raises(LoadError, match="nested deeper than 64 levels"):
        read_path(str(deep))


@pytest.mark.parametrize("opener, closer", [("[", "]"), ('{"a":', "}")])
def test_a_million_levels_of_nesting_are_refused_before_parsing(tmp_path, opener, closer):
    path = tmp_path / "deep.json"
    path.write_text(opener * 1_000_000 + "1" + closer * 1_000_000)
    start = time.perf_counter()
    with pytest.raises(LoadError, match="nested deeper"):
        read_path(str(path))
    assert time.perf_counter() - start < 5


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path):
    path = tmp_path / "brackets.json"
    text = "[" * 10_000 + '\\"' + "{" * 10_000
    path.write_text(json.dumps([{"id": "b", "name": text, "notes": "]]]}}}\\\\"}]))
    table = read_path(str(path))
    assert table.frame["name"].iat[0] == text


def test_deep_nesting_on_standard_input_and_in_json_lines(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    res = invoke("check", "-", input=deep)
    assert res.exit_code == 2 and "<stdin>: JSON nested deeper" in res.stderr
    lines = tmp_path / "deep.jsonl"
    lines.write_text('{"id": "ok", "params": "7B", "tokens": "140B"}\n' + deep + "\n")
    res = invoke("check", str(lines), "--format", "json")
    assert res.exit_code == 1
    claims = json.loads(res.stdout)["claims"]
    assert [c["status"] for c in claims] == ["unchecked", "invalid"]  # 7B on 140B tokens: nothing to check


# ------------------------------------------------------------------------------ writing output files safely


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "csv", "html", "parquet"])
def test_refuses_to_write_the_report_over_an_input(good, fmt):
    before = good.read_bytes()
    for spelling in (str(good), f"{good.parent}/./{good.name}", os.path.relpath(good)):
        res = invoke("check", str(good), "--format", fmt, "-o", spelling)
        assert res.exit_code == 2, res.output
        assert "is one of the inputs; refusing to overwrite it" in res.stderr
        assert good.read_bytes() == before
    assert leftovers(good.parent) == []


def test_refuses_an_input_reached_through_a_link(good, tmp_path):
    before = good.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(good)
    hard = tmp_path / "hard.json"
    os.link(good, hard)
    for target in (link, hard):
        res = invoke("check", str(good), "-o", str(target))
        assert res.exit_code == 2 and "one of the inputs" in res.stderr
    res = invoke("check", str(link), "-o", str(good))
    assert res.exit_code == 2
    assert good.read_bytes() == before and link.is_symlink()


def test_refuses_findings_over_an_input_and_writes_nothing(good, tmp_path):
    before = good.read_bytes()
    report = tmp_path / "report.json"
    res = invoke("check", str(good), "--format", "json", "-o", str(report), "--findings", str(good))
    assert res.exit_code == 2
    assert "--findings" in res.stderr and "one of the inputs" in res.stderr
    assert good.read_bytes() == before
    assert not report.exists()  # checked before any work: a refused run writes nothing


def test_refuses_the_same_file_for_report_and_findings(good, tmp_path):
    out = tmp_path / "out.csv"
    res = invoke("check", str(good), "--format", "csv", "-o", str(out), "--findings", str(out))
    assert res.exit_code == 2 and "name the same file" in res.stderr
    assert not out.exists()


def test_refuses_to_overwrite_the_bundled_corpus(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus.csv"
    corpus.write_bytes(audit.reading.bundled_corpus_path().read_bytes())
    before = corpus.read_bytes()
    monkeypatch.setattr(audit.reading, "bundled_corpus_path", lambda: corpus)
    for option in ("-o", "--findings"):
        res = invoke("check", option, str(corpus))
        assert res.exit_code == 2 and "one of the inputs" in res.stderr
    assert corpus.read_bytes() == before


def test_refuses_a_folder_or_a_missing_folder_as_output(good, tmp_path):
    assert invoke("check", str(good), "-o", str(tmp_path)).exit_code == 2
    res = invoke("check", str(good), "-o", str(tmp_path / "no" / "such" / "report.json"))
    assert res.exit_code == 2 and "does not exist" in res.stderr
    assert not (tmp_path / "no").exists()


def test_a_renderer_that_fails_midway_leaves_the_previous_report(good, tmp_path, monkeypatch):
    report = tmp_path / "report.json"
    report.write_text("previous report\n")

    def broken(result, *args, **kwargs):
        raise RuntimeError("renderer died half-way")

    monkeypatch.setattr(cli_module, "_render", broken)
    res = invoke("check", str(good), "--format", "json", "-o", str(report))
    assert res.exit_code == 2 and "internal error" in res.stderr and "Traceback" not in res.stderr
    assert report.read_text() == "previous report\n"
    assert leftovers(tmp_path) == []


class _DyingFile:
    """A file object that writes half of what it is given, then is interrupted (Ctrl-C)."""

    def __init__(self, fh) -> None:
        self.fh = fh

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fh.close()
        return False

    def write(self, data: bytes) -> int:
        self.fh.write(data[: len(data) // 2])
        self.fh.flush()
        raise KeyboardInterrupt

    def __getattr__(self, name):
        return getattr(self.fh, name)


@pytest.mark.parametrize("existing", [True, False])
def test_an_interrupted_write_leaves_no_partial_report_and_no_temporary_file(good, tmp_path, monkeypatch,
                                                                             existing):
    report = tmp_path / "report.html"
    if existing:
        report.write_text("previous report\n")
    real_fdopen = os.fdopen
    monkeypatch.setattr(cli_module.os, "fdopen", lambda fd, mode="r", *a, **k: _DyingFile(real_fdopen(fd, mode)))
    res = invoke("check", str(good), "--format", "html", "-o", str(report))
    assert res.exit_code == 130  # interrupted: neither 0 (clean) nor 1 (a claim failed)
    assert "interrupted" in res.stderr
    if existing:
        assert report.read_text() == "previous report\n"
    else:
        assert not report.exists()
    assert leftovers(tmp_path) == []


def test_a_failed_rename_leaves_no_temporary_file(good, tmp_path, monkeypatch):
    report = tmp_path / "report.json"

    def no_rename(src, dst):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(cli_module.os, "replace", no_rename)
    res = invoke("check", str(good), "--format", "json", "-o", str(report))
    assert res.exit_code == 2 and "Traceback" not in res.stderr
    assert not report.exists() and leftovers(tmp_path) == []


def test_an_interrupted_audit_exits_130_not_1(good, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("audit.api.check", interrupted)
    res = invoke("check", str(good))
    assert res.exit_code == 130 and "interrupted" in res.stderr


def test_a_written_report_gets_the_usual_file_mode(good, tmp_path):
    report = tmp_path / "report.json"
    old = os.umask(0o022)
    try:
        assert invoke("check", str(good), "--format", "json", "-o", str(report)).exit_code == 0
        assert stat.S_IMODE(report.stat().st_mode) == 0o644  # not mkstemp's private 0600
        report.chmod(0o640)
        assert invoke("check", str(good), "--format", "json", "-o", str(report)).exit_code == 0
        assert stat.S_IMODE(report.stat().st_mode) == 0o640  # a replaced report keeps its mode
    finally:
        os.umask(old)


def test_a_text_report_written_to_a_file_has_no_colour_codes(good, tmp_path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(cli_module, "_use_color", lambda stream: True)  # as if stdout were a terminal
    report = tmp_path / "report.txt"
    assert invoke("check", str(DATA / "doctored.json"), "-o", str(report)).exit_code == 1
    assert "\x1b[" not in report.read_text(encoding="utf-8")
    on_terminal = invoke("check", str(DATA / "doctored.json"), color=True)
    assert "\x1b[" in on_terminal.stdout  # the same run to a terminal is coloured


def test_a_closed_pipe_ends_the_run_quietly(good, monkeypatch):
    # `train-audit check big.csv | head`: the reader goes away mid-report. No traceback, no second error while
    # Python flushes stdout at exit; exit 2, as for any output that could not be written.
    def closed(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")
        yield  # a generator, as _pieces is

    monkeypatch.setattr(cli_module, "_pieces", closed)  # the report's pieces, however they are written
    res = invoke("check", str(good))
    assert res.exit_code == 2
    assert "Traceback" not in res.output and "internal error" not in res.output


def test_a_device_or_pipe_as_output_is_written_in_place_not_replaced(good, tmp_path):
    # -o /dev/null must not rename a regular file over the device (as root it would succeed). A named pipe
    # stands in for the device here: after the run it is still a pipe, and the reader got the whole report.
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    res = invoke("check", str(good), "--format", "json", "-o", str(fifo))
    reader.join(timeout=30)
    assert res.exit_code == 0, res.output
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert json.loads(received[0])["summary"]["claims"] == 2
    assert leftovers(tmp_path) == []
    assert os.path.exists(os.devnull) and stat.S_ISCHR(os.stat(os.devnull).st_mode)


# ------------------------------------------------------------------- operating-system errors name the file (issue 10)


def _no_internal_error(res) -> None:
    assert "internal error" not in res.stderr and "please report it" not in res.stderr and "Traceback" not in res.stderr


def test_an_input_the_system_cannot_read_is_named_with_the_error(good, monkeypatch):
    from audit.reading import registry

    def failing(path, file, data=None):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(registry, "_BY_EXTENSION", {**registry._BY_EXTENSION,
                                                    ".json": registry.Reader("json", (".json",), failing)})
    res = invoke("check", str(good))
    assert res.exit_code == 2
    assert res.stderr.strip() == f"train-audit: error: {good}: cannot read it: input/output error"
    _no_internal_error(res)


def test_permission_denied_on_an_input_is_named(good, monkeypatch):
    from audit.reading import registry

    def denied(path, file, data=None):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(registry, "_BY_EXTENSION", {**registry._BY_EXTENSION,
                                                    ".json": registry.Reader("json", (".json",), denied)})
    res = invoke("check", str(good))
    assert res.exit_code == 2 and f"{good}: cannot read it: permission denied" in res.stderr
    _no_internal_error(res)


def test_closed_standard_input_is_named():
    proc = subprocess.run(["bash", "-c", f"{sys.executable} -m audit check - <&-"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "train-audit: error: <stdin>: standard input is closed"


@pytest.mark.parametrize("how", ["device", "temporary file"])
def test_no_space_left_names_the_output_and_leaves_nothing(good, tmp_path, monkeypatch, how):
    if how == "device":
        target = "/dev/full"  # every write fails with ENOSPC
        if not os.path.exists(target):
            pytest.skip("no /dev/full")
    else:
        target = str(tmp_path / "report.json")
        real_fdopen = os.fdopen

        class Full:
            def __init__(self, fh):
                self.fh = fh

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()
                return False

            def write(self, data):
                raise OSError(errno.ENOSPC, "No space left on device")

            def __getattr__(self, name):
                return getattr(self.fh, name)

        monkeypatch.setattr(cli_module.os, "fdopen", lambda fd, mode="r", *a, **k: Full(real_fdopen(fd, mode)))
    res = invoke("check", str(good), "--format", "json", "-o", target)
    assert res.exit_code == 2
    assert res.stderr.strip() == f"train-audit: error: cannot write {target}: no space left on device"
    _no_internal_error(res)
    assert leftovers(tmp_path) == [] and not (tmp_path / "report.json").exists()


def test_permission_denied_and_name_too_long_on_the_output_are_named(good, tmp_path, monkeypatch):
    long_name = str(tmp_path / ("r" * 300 + ".json"))
    res = invoke("check", str(good), "-o", long_name)
    assert res.exit_code == 2 and res.stderr.strip() == f"train-audit: error: cannot write {long_name}: file name too long"
    _no_internal_error(res)

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(cli_module.tempfile, "mkstemp", denied)
    target = tmp_path / "report.json"
    res = invoke("check", str(good), "-o", str(target))
    assert res.exit_code == 2 and res.stderr.strip() == f"train-audit: error: cannot write {target}: permission denied"
    _no_internal_error(res)
    assert list(tmp_path.iterdir()) == [good]


def test_a_closed_or_full_standard_output_is_an_error_not_a_lost_report(good):
    closed = subprocess.run(["bash", "-c", f"{sys.executable} -m audit check {good} >&-"], capture_output=True,
                            text=True, timeout=60)
    assert closed.returncode == 2, closed.stderr
    assert closed.stderr.strip() == "train-audit: error: cannot write the report: standard output is closed"
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            proc = subprocess.run([sys.executable, "-m", "audit", "check", str(good)], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == ("train-audit: error: cannot write the report to standard output: "
                                       "no space left on device")


def test_an_output_named_as_a_folder_is_refused(good, tmp_path):
    target = tmp_path / "reports"
    res = invoke("check", str(good), "-o", f"{target}/")
    assert res.exit_code == 2 and "is a folder; give a file name" in res.stderr
    assert not target.exists() and leftovers(tmp_path) == []


_SLOW_WRITE = """
import os, sys, time
from audit import cli
claims, ready, report = sys.argv[1:4]
real_fsync = os.fsync
def slow_fsync(fd):
    real_fsync(fd)
    open(ready, "w").close()  # tell the test the temporary file is written
    time.sleep(60)
cli.os.fsync = slow_fsync
sys.argv = ["train-audit", "check", claims, "--format", "json", "-o", report]
cli.main()
"""


@pytest.mark.parametrize("existing", [True, False])
def test_sigterm_during_a_write_leaves_no_temporary_file(good, tmp_path, existing):
    out = tmp_path / "out"
    out.mkdir()
    report = out / "report.json"
    if existing:
        report.write_text("previous report\n")
    ready = tmp_path / "ready"
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITE, str(good), str(ready), str(report)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert ready.exists(), proc.communicate()
    assert leftovers(out) != []  # the temporary file is there, being written
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr  # 128 + SIGTERM: no verdict
    assert stderr.strip() == "train-audit: terminated"
    assert leftovers(out) == []
    assert (report.read_text() == "previous report\n") if existing else not report.exists()


def test_a_file_name_that_is_not_utf8_is_shown_escaped_in_every_output(tmp_path):
    name = os.fsdecode(b"runs-\xff.json")  # "runs-\udcff.json": a lone surrogate once decoded
    (tmp_path / name).write_text(GOOD, encoding="utf-8")
    for fmt in ("json", "text", "markdown", "csv", "html"):
        proc = subprocess.run([sys.executable, "-m", "audit", "check", name, "--format", fmt,
                               "--title", os.fsdecode(b"t\xfe")], cwd=tmp_path, capture_output=True, timeout=120)
        assert proc.returncode == 0, (fmt, proc.stderr)
        out = proc.stdout.decode("utf-8")  # strict: valid UTF-8
        if fmt == "json":
            assert {c["input"]["file"] for c in json.loads(out)["claims"]} == {"runs-\\udcff.json"}


# ------------------------------------------------------------- headers are not quadratic (issue 10: 144 s, 170 s)


def _load_seconds(path: Path) -> float:
    start = time.perf_counter()
    claims = audit.reading.load([str(path)])
    elapsed = time.perf_counter() - start
    assert len(claims) == 1
    return elapsed


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_hundred_thousand_columns_load_in_seconds(tmp_path, fmt):
    times = {}
    for n in (25_000, 100_000):
        path = tmp_path / f"wide{n}.{fmt}"
        if fmt == "csv":
            path.write_text(",".join(["id", "params", *(f"c{i}" for i in range(n))]) + "\n"
                            + ",".join(["a", "7B", *["1"] * n]) + "\n")
        else:
            path.write_text(json.dumps({"id": "a", "params": "7B", **{f"k{i}": i for i in range(n)}}))
        times[n] = _load_seconds(path)
    # A ratio within the run, not a wall-clock limit (bench/ measures speed): quadratic handling took 144 s (CSV)
    # and 170 s (JSON) at 100,000 columns, 16x its time at 25,000.
    assert times[100_000] < 8 * times[25_000] + 1, times  # linear: 4x the columns, about 4x the time
