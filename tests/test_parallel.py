"""Batches audited in several processes (``check --jobs``, :func:`audit.stream.stream_check` with ``jobs``) write
the files one process writes, byte for byte: the same claims in the same order, the same findings, the same
duplicate ids across batches, the same counts and exit code."""

from __future__ import annotations

import os
import signal
import threading

import pandas as pd
import pytest
from click.testing import CliRunner
from test_stream import _claims, noted  # noqa: F401  (a fixture of test_stream, used here too)

from audit.cli import cli
from audit.stream import BatchAuditor, stream_check
from audit.config import Config


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Three Parquet files of 23, 17 and 29 claims: an id of the first file used again in the second, one used
    twice in the third, a negative token count (an invalid claim)."""
    folder = tmp_path_factory.mktemp("dataset")
    parts = [_claims(23, 0), _claims(17, 1), _claims(29, 2)]
    parts[1].loc[3, "id"] = "run-0-5"
    parts[2].loc[0, "id"] = "run-2-7"
    parts[2].loc[4, "tokens"] = -1.0
    for k, part in enumerate(parts):
        part.to_parquet(folder / f"part-{k}.parquet", index=False)
    return folder


def _check(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["check", *args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    return res.exit_code, res.stderr


def test_two_processes_write_the_bytes_of_one(folder, tmp_path):
    runs = {}
    for jobs in ("1", "2"):
        out, found = tmp_path / f"claims-{jobs}.parquet", tmp_path / f"findings-{jobs}.csv"
        code, err = _check(str(folder), "-f", "parquet", "-o", str(out), "--findings", str(found),
                           "--batch-size", "10", "--jobs", jobs)
        runs[jobs] = code, out.read_bytes(), found.read_bytes(), err.splitlines()[-1].split(";")[0]
    assert runs["2"] == runs["1"]
    assert runs["2"][3].startswith("69 claims in 8 batches")  # 23, 17 and 29 claims, 10 at a time
    claims = pd.read_parquet(tmp_path / "claims-2.parquet")
    # The ids used a second time, written in by hand above: the second use is a duplicate (V002), whichever
    # process audited the batch of the first.
    flagged = claims.index[claims["rules"].fillna("").str.split().map(lambda codes: "V002" in codes)]
    assert flagged.tolist() == [23 + 3, 23 + 17 + 7]
    assert claims.loc[23 + 17 + 4, "status"] == "invalid"


def test_a_csv_input_and_a_csv_table(folder, tmp_path):
    """A file that is not Parquet is read whole and audited in batches: the same bytes with two processes."""
    src = tmp_path / "claims.csv"
    pd.concat([pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))]).to_csv(src, index=False)
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"claims-{jobs}.csv"
        code, _ = _check(str(src), "-f", "csv", "-o", str(out), "--batch-size", "25", "-j", jobs)
        outs.append((code, out.read_bytes()))
    assert outs[1] == outs[0]
    assert outs[1][1].count(b"\n") == 1 + 69  # the header once, then every claim


def test_the_library_takes_jobs(folder, tmp_path):
    one, two = tmp_path / "one.parquet", tmp_path / "two.parquet"
    a = stream_check([str(folder)], str(one), "parquet", batch_size=7)
    b = stream_check([str(folder)], str(two), "parquet", batch_size=7, audit=BatchAuditor(Config.default()),
                     jobs=2)
    assert b.as_dict() == a.as_dict() and b.batches == a.batches == 4 + 3 + 5
    assert two.read_bytes() == one.read_bytes()


@pytest.mark.parametrize("fmt, batches", [("html", ()), ("text", ())])
def test_other_reports_are_made_by_one_process_and_say_so(folder, tmp_path, monkeypatch, fmt, batches):
    """--jobs changes nothing else: a text or HTML report of a file stays one piece (not batches)."""
    # The HTML report says when it was made, to the minute: two runs straddling a minute differed (a flaky failure
    # under load). A fixed time, as reproducible builds set it.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    src = str(sorted(folder.glob("*.parquet"))[0])
    out1, out2 = tmp_path / f"r1.{fmt}", tmp_path / f"r2.{fmt}"
    _check(src, "-f", fmt, "-o", str(out1), *batches)
    code, err = _check(src, "-f", fmt, "-o", str(out2), *batches, "-j", "2")
    assert f"--jobs 2: a {fmt} report is made by one process" in err
    assert out2.read_bytes() == out1.read_bytes()


def test_a_table_of_an_input_read_in_batches_is_audited_on_every_core_by_default(folder, tmp_path, monkeypatch):
    """Without --jobs: a claims table of a dataset (read in batches anyway) is audited in one process per core
    (at most DEFAULT_MAX_JOBS), and says nothing about it; its bytes are those of one process. A report made by
    one process, or a table to standard output, starts no worker and says nothing either."""
    from audit import cli as cli_module

    asked = []
    real = cli_module._check_in_batches

    def spy(*args, **kwargs):
        asked.append(kwargs["jobs"])
        return real(*args, **kwargs)

    monkeypatch.setattr(cli_module, "_check_in_batches", spy)
    monkeypatch.setattr(cli_module, "_cores", lambda: 8)
    one, default = tmp_path / "one.parquet", tmp_path / "default.parquet"
    code1, _ = _check(str(folder), "-f", "parquet", "-o", str(one), "--batch-size", "10", "-j", "1")
    code, err = _check(str(folder), "-f", "parquet", "-o", str(default), "--batch-size", "10")
    assert asked == [1, cli_module.DEFAULT_MAX_JOBS] and "--jobs" not in err
    assert (code, default.read_bytes()) == (code1, one.read_bytes())
    asked.clear()
    _check(str(folder), "-f", "json", "-o", str(tmp_path / "r.json"))  # the JSON report too (written to a file)
    # A table to standard output needs every claim at once: a folder of fewer than a batch is read whole, with no
    # batches and no worker.
    code, _ = _check(str(folder), "-f", "csv")
    assert asked == [cli_module.DEFAULT_MAX_JOBS] and code in (0, 1)


@pytest.mark.parametrize("fmt, output, batched, claims, jobs", [
    ("parquet", "out.parquet", True, None, 2), ("csv", "out.csv", True, None, 2),
    ("parquet", "out.parquet", False, None, 1),  # one batch: workers would only add their start-up
    ("json", "out.json", True, None, 2),
    # The JSON report of a Parquet file of more than one JSON batch (5,000 claims) is made on every core; of one
    # batch, or of an input it cannot count, in one process.
    ("json", "out.json", False, 5_001, 2), ("json", "out.json", False, 5_000, 1), ("json", "out.json", False, None, 1),
    ("json", None, True, 20_000, 1), ("json", "-", False, 20_000, 1),
    ("html", "out.html", True, None, 1), ("csv", None, True, None, 1), ("csv", "-", True, None, 1)])
def test_default_jobs(fmt, output, batched, claims, jobs, monkeypatch):
    from audit import cli as cli_module

    monkeypatch.setattr(cli_module, "_cores", lambda: 2)
    assert cli_module.default_jobs(fmt, output, batched, claims) == jobs


@pytest.mark.parametrize("value, message", [("0", "give at least 1"), ("two", "is not a number of processes"),
                                            ("-3", "give at least 1")])
def test_a_number_of_processes_that_is_not_one_is_a_usage_error(value, message):
    res = CliRunner().invoke(cli, ["check", "--jobs", value])
    assert res.exit_code == 2 and message in res.stderr


def test_an_unreadable_file_stops_the_run_and_leaves_no_output(folder, tmp_path):
    bad = tmp_path / "in"
    bad.mkdir()
    for p in sorted(folder.glob("*.parquet")):
        (bad / p.name).write_bytes(p.read_bytes())
    (bad / "part-9.parquet").write_bytes(b"PAR1 not parquet")
    out = tmp_path / "out.parquet"
    code, err = _check(str(bad), "-f", "parquet", "-o", str(out), "--batch-size", "10", "-j", "2")
    assert code == 2 and "part-9.parquet" in err and "not a readable Parquet file" in err
    assert not out.exists() and not list(tmp_path.glob(".out.parquet.*"))


def test_an_error_found_by_a_worker_is_the_error_of_one_process(tmp_path):
    """Two columns for one field are found when a worker maps the batch's columns: the run stops with the message
    one process gives (not a hang on an error that cannot travel back), and leaves no output."""
    src = tmp_path / "two.parquet"
    pd.DataFrame({"id": [f"r{i}" for i in range(30)], "params": [7e9] * 30, "parameters": [7e9] * 30,
                  "tokens": [1e12] * 30}).to_parquet(src, index=False)
    results = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out-{jobs}.csv"
        code, err = _check(str(src), "-f", "csv", "-o", str(out), "--batch-size", "10", "-j", jobs)
        results.append((code, err))
        assert not out.exists() and not list(tmp_path.glob(f".out-{jobs}.csv.*"))
    assert results[1] == results[0]
    assert results[0][0] == 2 and "columns 'params' and 'parameters' both give params" in results[0][1]


class _Broken(BatchAuditor):
    """An auditor with a bug on the second batch (given to the workers by pickling, as the command line's is)."""

    def __call__(self, claims):
        if claims.info["row"].iloc[0] > 1:
            raise KeyError("no such column")
        return super().__call__(claims)


@pytest.mark.parametrize("fmt", ["parquet", "json"])
def test_a_bug_in_a_worker_stops_the_run_with_its_traceback(folder, tmp_path, fmt):
    from audit.stream import WorkerError

    out = tmp_path / f"out.{fmt}"
    with pytest.raises(WorkerError, match="in a worker process: KeyError: 'no such column'") as caught:
        stream_check([str(folder)], str(out), fmt, batch_size=10, audit=_Broken(Config.default()), jobs=2)
    assert "raise KeyError" in str(caught.value.__cause__)  # the worker's own traceback
    assert not out.exists() and not list(tmp_path.glob(f".out.{fmt}.*"))


class _Killed(BatchAuditor):
    """A worker that dies on the second batch, as one the kernel kills for memory does."""

    def __call__(self, claims):
        if claims.info["row"].iloc[0] > 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().__call__(claims)


def test_a_worker_that_dies_stops_the_run_instead_of_waiting_for_ever(folder, tmp_path):
    from audit.stream import WorkerError

    out = tmp_path / "out.parquet"
    caught: list[BaseException] = []

    def run() -> None:
        try:
            stream_check([str(folder)], str(out), "parquet", batch_size=10, audit=_Killed(Config.default()), jobs=2)
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            caught.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the run waited for a dead worker"
    assert len(caught) == 1 and isinstance(caught[0], WorkerError)
    assert "a worker process ended before its batch was done" in str(caught[0])
    assert not out.exists() and not list(tmp_path.glob(".out.parquet.*"))


@pytest.mark.parametrize("which", ["folder", "noted"])
def test_the_json_report_made_in_two_processes_is_the_json_of_one(request, which, tmp_path, monkeypatch):
    """The JSON report of batches audited in worker processes is the report of one process, byte for byte: ids used
    again across batches (V002), phases numbered across the whole input (the workers number each batch's from 1,
    the main process renumbers them) and extra fields in the order the files met them. A file whose new column
    comes before columns an earlier file had ("noted": site before team and nodes) has its batches audited again
    in the main process, and only those."""
    from audit.stream import JsonWriter

    folder = request.getfixturevalue(which)
    if isinstance(folder, tuple):  # test_stream's fixture: (folder, files)
        folder = folder[0]
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    stream_check([str(folder)], str(one), "json", batch_size=10)
    redone = []
    real = JsonWriter.write

    def spy(self, result):
        redone.append(sorted({str(f) for f in result.claims.info["file"]}))
        return real(self, result)

    monkeypatch.setattr(JsonWriter, "write", spy)
    total = stream_check([str(folder)], str(two), "json", batch_size=10, jobs=2)
    assert two.read_bytes() == one.read_bytes()
    assert total.batches == 3 + 2 + 3
    if which == "noted":
        assert len(redone) == 2 and all(files[0].endswith("part-1.parquet") for files in redone)
    else:
        assert redone == []


def test_phase_rows_are_renumbered_only_where_the_phases_alone_hold_such_an_input():
    from audit.stream import _phase_rows_after

    text = (b'{"id": "a", "phases": [{"id": "a/phase-1", "input": {"file": "<phases>", "row": 1}}, '
            b'{"id": "a/phase-2", "input": {"file": "<phases>", "row": 2}}]}')
    assert _phase_rows_after(text, 2, 40) == text.replace(b'"row": 1}', b'"row": 41}').replace(b'"row": 2}',
                                                                                               b'"row": 42}')
    # A claim's own field written like a phase's input: the text is not renumbered (the batch is made again).
    extra = text[:-1] + b', "extra": {"input": {"file": "<phases>", "row": 7}}}'
    assert _phase_rows_after(extra, 2, 40) is None
    assert _phase_rows_after(text, 3, 40) is None  # not the batch's count of phases
