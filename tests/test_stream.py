"""Batches give what one piece gives: a dataset split into several Parquet files, audited a few claims at a time
(:mod:`audit.stream`, ``check --batch-size`` and a folder input), writes the same claims table, findings and
counts as the same claims audited at once."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from audit.api import check
from audit.cli import cli
from audit.records import summary
from audit.report import table
from audit.stream import claim_batches, stream_check

HARDWARE = ["H100", "A100 80GB", "TPU v4", "v4-2048", "MI300X", "no-such-chip", None]


def _claims(n: int, seed: int) -> pd.DataFrame:
    """Consistent and doctored claims: C = 6·N·D and chip-hours = C / (3600 · peak · MFU) hold for most; a third
    have the compute 1000x or GPU-days written as GPU-hours; some figures are text with units."""
    rng = np.random.default_rng(seed)
    params = 10 ** rng.uniform(8, 11, n)
    tokens = params * rng.uniform(10, 100, n)
    compute = 6 * params * tokens * np.where(rng.random(n) < 0.3, 1000, 1)
    chips = (2 ** rng.integers(3, 10, n)).astype(float)
    hours = compute / (chips * 3600 * 312e12 * 0.4)
    return pd.DataFrame({
        "id": [f"run-{seed}-{i}" for i in range(n)],
        "params": [f"{p / 1e9:.3g}B" for p in params],
        "tokens": tokens, "compute_flops": compute,
        "hardware": [HARDWARE[i] for i in rng.integers(0, len(HARDWARE), n)],
        "chips": chips,
        "chip_hours": [f"{h:.4g} GPU-hours" if i % 3 else f"{h:.6g}" for i, h in enumerate(chips * hours)],
        "mfu": [f"{m:.1f}%" for m in rng.uniform(20, 60, n)],
    })


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dataset")
    parts = [_claims(23, 0), _claims(17, 1), _claims(29, 2)]
    parts[1].loc[3, "id"] = "run-0-5"      # an id used in an earlier file: V002
    parts[2].loc[0, "id"] = "run-2-7"      # used again later in the same file: V002 on the second
    parts[2].loc[4, "tokens"] = -1.0       # a bad value: that claim is invalid
    files = []
    for k, part in enumerate(parts):
        path = folder / f"part-{k}.parquet"
        part.to_parquet(path, index=False)
        files.append(str(path))
    return folder, files


@pytest.fixture(scope="module")
def one(dataset):
    return check(dataset[1])


def test_batches_of_a_folder_equal_one_piece(dataset, one, tmp_path):
    folder, files = dataset
    out, found = tmp_path / "claims.parquet", tmp_path / "findings.csv"
    total = stream_check([str(folder)], str(out), "parquet", str(found), batch_size=10)
    assert total.batches == 3 + 2 + 3  # 23, 17 and 29 claims, 10 at a time
    pd.testing.assert_frame_equal(pd.read_parquet(out),
                                  pd.read_parquet(io.BytesIO(table.claims_bytes(one, "parquet"))))
    assert found.read_bytes() == table.findings_bytes(one, "findings.csv")
    assert total.as_dict() == summary(one)
    flagged = table.claims_frame(one)["rules"].str.split().map(lambda codes: "V002" in codes)
    assert flagged[flagged].index.tolist() == [23 + 3, 23 + 17 + 7]  # the second use of each id


def test_csv_batches_are_the_same_bytes(dataset, one, tmp_path):
    _, files = dataset
    out = tmp_path / "claims.csv"
    stream_check(files, str(out), "csv", batch_size=12)
    assert out.read_bytes() == table.claims_bytes(one, "csv")


def test_rows_keep_their_number_in_their_file(dataset):
    _, files = dataset
    batches = list(claim_batches([files[2]], batch_size=10))
    assert [len(b) for b in batches] == [10, 10, 9]
    assert batches[1].info["row"].tolist() == list(range(11, 21))


def test_command_line_in_batches(dataset, one, tmp_path):
    folder, files = dataset
    out = tmp_path / "claims.parquet"
    res = CliRunner().invoke(cli, ["check", str(folder), "-f", "parquet", "-o", str(out), "--batch-size", "20"])
    assert res.exit_code == (1 if (one.status.isin(["fail", "invalid"])).any() else 0), res.output
    assert len(pd.read_parquet(out)) == 23 + 17 + 29
    assert "69 claims in 5 batches" in res.output
    assert "auditing" not in res.output  # no progress bar when standard error is not a terminal
    bad = CliRunner().invoke(cli, ["check", str(folder), "-f", "html", "-o", str(tmp_path / "r.html"),
                                   "--batch-size", "20"])
    assert bad.exit_code == 2 and "csv or parquet" in bad.output
    assert not (tmp_path / "r.html").exists()
    inside = CliRunner().invoke(cli, ["check", str(folder), "-f", "csv", "-o", str(folder / "out.csv")])
    assert inside.exit_code == 2 and "inside the input folder" in inside.output
    assert not (folder / "out.csv").exists()


def test_a_parquet_file_larger_than_a_batch_is_audited_in_batches_by_default(dataset, tmp_path, monkeypatch):
    # The default batch is 100,000 claims; the rule is the same at 10: a 29-claim file written as a table to a
    # file goes in 3 batches, with the same claims table as one piece; a smaller file, or a text report, does not.
    # On one core: the batches are then those of one process (more cores share a batch out among workers,
    # tests/test_parallel.py).
    import audit.cli
    import audit.batching

    monkeypatch.setattr(audit.batching, "DEFAULT_BATCH_SIZE", 10)
    monkeypatch.setattr(audit.cli, "_cores", lambda: 1)
    _, files = dataset
    out = tmp_path / "claims.parquet"
    res = CliRunner().invoke(cli, ["check", files[2], "-f", "parquet", "-o", str(out)])
    assert "29 claims in 3 batches" in res.output, res.output
    pd.testing.assert_frame_equal(pd.read_parquet(out),
                                  pd.read_parquet(io.BytesIO(table.claims_bytes(check([files[2]]), "parquet"))))
    monkeypatch.setattr(audit.batching, "DEFAULT_BATCH_SIZE", 29)
    res = CliRunner().invoke(cli, ["check", files[2], "-f", "parquet", "-o", str(out)])
    assert "batches" not in res.output and "29 claims:" in res.output, res.output


def test_text_in_batches_is_the_text_of_one_piece(dataset, one, tmp_path, monkeypatch):
    # The text report shows the worst claims (by status, then input order) and counts all: with 5 shown of 69
    # in batches of 10, the batches keep each one's 5 worst and the report is the one-piece report, byte for byte.
    import audit.report.text as text
    import audit.batching

    folder, files = dataset
    monkeypatch.setattr(text, "MAX_SHOWN", 5)
    whole = text.render(one)
    assert whole.startswith("showing the 5 worst of 69 claims")
    total = stream_check([str(folder)], None, "text", batch_size=10)
    assert total.batches == 3 + 2 + 3 and total.text == whole
    # On the command line: a Parquet file above the default batch is audited in batches as text too.
    monkeypatch.setattr(audit.batching, "DEFAULT_BATCH_SIZE", 10)
    res = CliRunner().invoke(cli, ["check", files[2]])
    assert res.output.rstrip().endswith(text.render(check([files[2]])).rstrip().splitlines()[-1])
    assert res.output.startswith("showing the 5 worst of 29 claims"), res.output


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_an_interrupted_stream_leaves_nothing_and_says_nothing_more(dataset, tmp_path, monkeypatch, fmt):
    """Issue 10 (SIGTERM during a write): a streamed run stopped between batches removes its temporary files, and
    the Parquet writer it abandons does not later try to finish a file that is gone (an 'Exception ignored in
    ParquetWriter.__del__ ... write to closed file' traceback on stderr after 'train-audit: terminated')."""
    import gc
    import sys

    import audit.stream

    _, files = dataset
    real = audit.stream.audit_batches

    def stopped(*args, **kwargs):
        for k, result in enumerate(real(*args, **kwargs)):
            if k == 2:
                raise KeyboardInterrupt  # what the SIGTERM handler raises, between two batches
            yield result

    monkeypatch.setattr(audit.stream, "audit_batches", stopped)
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(KeyboardInterrupt):
        stream_check(files, str(out / f"claims.{fmt}"), fmt, findings_path=str(out / f"findings.{fmt}"),
                     batch_size=10)
    gc.collect()
    assert [u.exc_value for u in unraisable] == []
    assert list(out.iterdir()) == []


@pytest.fixture(scope="module")
def noted(tmp_path_factory):
    """Three files with columns the reader does not know (kept as extra fields, each named in the summary once per
    file; the second file has one more, before the others: read in one piece, a claim's extra fields come in the
    order the files met them), integer columns missing a value in one row of each file's last batch (read whole,
    Arrow gives them as float64, 512.0, so every batch of the file must too), and a two-phase run every fifth claim
    (a phase's input row is its row among the phases of the whole input)."""
    folder = tmp_path_factory.mktemp("noted")
    files = []
    for k, n in enumerate((23, 17, 29)):
        part = _claims(n, 10 + k)
        part["team"] = [f"team-{i % 4}" for i in range(n)]
        part["chips"] = pd.array([int(c) for c in part["chips"]], dtype="Int64")
        part["nodes"] = pd.array([i % 7 + 1 for i in range(n)], dtype="Int64")
        part.loc[n - 2, "chips"] = None
        part.loc[n - 1, "nodes"] = None
        if k == 1:
            part.insert(part.columns.get_loc("team"), "site", [f"site-{i % 3}" for i in range(n)])
        part["phases"] = [None if i % 5 else '[{"name": "pre-training", "chips": 64, "wall_clock_days": 3}, '
                          '{"name": "fine-tuning", "chips": 8, "wall_clock_days": 1}]' for i in range(n)]
        path = folder / f"part-{k}.parquet"
        part.to_parquet(path, index=False)
        files.append(str(path))
    return folder, files


@pytest.mark.parametrize("which", ["dataset", "noted"])
def test_json_in_batches_is_the_json_of_one_piece(request, which, tmp_path, monkeypatch):
    # Goal 1 of the JSON part of issue 12: the JSON report written batch by batch (10 claims a batch, records made
    # 4 claims at a time within a batch) is the one-piece report, byte for byte: claims, V002 across batches, the
    # counts, and the columns not read of every file (summary.input).
    import json

    import audit.records
    from audit.report import json_out

    folder, files = request.getfixturevalue(which)
    one = check(files)
    whole = json_out.render(one)
    monkeypatch.setattr(audit.records, "CHUNK_CLAIMS", 4)
    assert "".join(json_out.chunks(one)) == whole  # 18 chunks of one audit
    out = tmp_path / "claims.json"
    total = stream_check([str(folder)], str(out), "json", batch_size=10)
    assert total.batches == 3 + 2 + 3
    assert out.read_text(encoding="utf-8") == whole
    doc = json.loads(whole)
    assert len(doc["claims"]) == 23 + 17 + 29 and doc["summary"]["claims"] == 69
    if which == "noted":
        unread = doc["summary"]["input"]["unread_columns"]
        assert [(u["file"].rsplit("/", 1)[-1], u["column"]) for u in unread] == [
            (f"part-{k}.parquet", c) for k in range(3) for c in (("site",) if k == 1 else ()) + ("team", "nodes")]
        assert list(doc["claims"][23]["extra"]) == ["team", "nodes", "site"]
        phases = [p["input"] for c in doc["claims"] for p in c.get("phases", [])]
        assert len(phases) == 2 * (5 + 4 + 6) and {p["file"] for p in phases} == {"<phases>"}
        assert [p["row"] for p in phases] == list(range(1, len(phases) + 1))
        # A file read whole gives its chips and nodes as floats; so do its batches without a missing value.
        first = doc["claims"][0]
        assert first["quantities"]["chips"]["text"].endswith(".0") and first["extra"]["nodes"] == 1.0
        assert ' "nodes": 1}' not in whole
    else:
        v002 = [c["id"] for c in doc["claims"] if any(f["rule"] == "V002" for f in c["findings"])]
        assert v002 == ["run-0-5", "run-2-7"]


def test_json_on_the_command_line_in_batches_and_in_one_piece(dataset, tmp_path):
    folder, files = dataset
    batched, whole = tmp_path / "batched.json", tmp_path / "whole.json"
    res = CliRunner().invoke(cli, ["check", str(folder), "-f", "json", "-o", str(batched), "--batch-size", "20"])
    assert "69 claims in 5 batches" in res.output, res.output
    res = CliRunner().invoke(cli, ["check", *files, "-f", "json", "-o", str(whole)])
    assert "69 claims:" in res.output and "batches" not in res.output, res.output
    assert batched.read_bytes() == whole.read_bytes()
    res = CliRunner().invoke(cli, ["check", *files, "-f", "json"])  # to standard output, in pieces too
    assert res.stdout_bytes == whole.read_bytes()
    refused = CliRunner().invoke(cli, ["check", str(folder), "-f", "json", "--batch-size", "20"])
    assert refused.exit_code == 2 and "json, csv or parquet with -o FILE" in refused.output


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_a_stream_into_a_device_writes_into_it_and_leaves_it_there(dataset, tmp_path, fmt):
    # -o /dev/null (or a named pipe) is written in place, as a report of one piece is: renaming the temporary
    # file over it would replace the device (as root, /dev/null would become a regular file).
    import os
    import stat
    import threading

    _, files = dataset
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    stream_check(files, str(fifo), fmt, batch_size=10)
    reader.join(timeout=60)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and got[0].startswith(b'{"claims": [\n' if fmt == "json" else b"id,")
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_parquet_row_groups_do_not_depend_on_the_batches(dataset, one, tmp_path, monkeypatch):
    """The claims table of 69 claims written in batches of 10, 7 and 69: row groups of 20 rows (the last holds the
    other 9) each time, so the same file, byte for byte."""
    import pyarrow.parquet as pq

    from audit import stream

    monkeypatch.setattr(stream, "ROW_GROUP_ROWS", 20)
    folder, files = dataset
    written = []
    for size in (10, 7, 69):
        out = tmp_path / f"claims-{size}.parquet"
        stream_check(files, str(out), "parquet", batch_size=size)
        meta = pq.ParquetFile(out).metadata
        assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [20, 20, 20, 9]
        written.append(out.read_bytes())
    assert written[0] == written[1] == written[2]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "claims-7.parquet"),
                                  pd.read_parquet(io.BytesIO(table.claims_bytes(one, "parquet"))))


def test_the_ids_a_main_process_reads_are_those_normalize_makes(tmp_path):
    """check --jobs marks duplicate ids in the main process from the id column alone (ArrowBatch.ids): for every
    kind of id cell (text, blank, missing, a number, one longer than the schema's limit) the ids and whether they
    were given are those the worker's normalize makes."""
    from audit.reading import ReadOptions, normalize
    from audit.stream import _pieces_read

    ids = ["run-1", "  ", None, "", "x" * 600, "run-1", "\u00e9t\u00e9"]
    path = tmp_path / "ids.parquet"
    pd.DataFrame({"run_id": ids, "params": ["7B"] * len(ids)}).to_parquet(path, index=False)
    [batch] = list(_pieces_read([str(path)], 100, ReadOptions()))
    got, given = batch.ids()
    info = normalize(batch.raw()).info
    assert got.tolist() == info["id"].tolist() and given.tolist() == info["id_given"].tolist()
    assert given.tolist() == [True, False, False, False, True, True, True]
    from audit.reading.normalize import text_limit

    assert got[1] == "ids.parquet#2" and got[4] == "x" * text_limit("id") + "…"  # a Parquet file's rows count from 1
    numbers = tmp_path / "numbers.parquet"
    pd.DataFrame({"id": [1.5, None, 3.0], "params": ["7B"] * 3}).to_parquet(numbers, index=False)
    [batch] = list(_pieces_read([str(numbers)], 100, ReadOptions()))
    assert batch.ids()[0].tolist() == normalize(batch.raw()).info["id"].tolist()


def test_an_id_is_a_duplicate_of_an_earlier_batch_only_when_both_gave_it():
    """_SeenIds, written out by hand: an id counts as seen once a claim gave it (not when the tool named a claim
    that had none), whichever of a batch's equal ids gave it."""
    from audit.stream import _SeenIds

    seen = _SeenIds()
    first = seen.mark(np.array(["x", "x", "y"], dtype=object), np.array([False, True, True]))
    assert first.tolist() == [False, False, False]  # nothing before the first batch
    second = seen.mark(np.array(["x", "z", "y", "w"], dtype=object), np.array([True, True, False, True]))
    assert second.tolist() == [True, False, False, False]  # "x" was given by the first batch's second claim
    third = seen.mark(np.array(["z", "w", "q"], dtype=object), np.array([True, True, True]))
    assert third.tolist() == [True, True, False]


def test_ids_seen_long_ago_are_found_in_the_runs_written_to_disk(monkeypatch):
    """Beyond ``memory_ids`` the hashes go to sorted runs on disk, read back ``chunk_ids`` at a time: the answers
    are those of a Python set of the ids given so far, batch after batch (runs of 5 ids, read 2 at a time, so an
    id is looked up across chunk and run boundaries), and memory holds fewer than 5 hashes at any time."""
    from audit.stream import _SeenIds

    monkeypatch.setattr(_SeenIds, "memory_ids", 5)
    monkeypatch.setattr(_SeenIds, "chunk_ids", 2)
    rng = np.random.default_rng(7)
    seen, given_so_far = _SeenIds(), set()
    for _ in range(40):
        ids = np.array([f"run-{k}" for k in rng.integers(0, 60, 7)], dtype=object)
        given = rng.random(7) < 0.8
        want = [bool(g) and i in given_so_far for i, g in zip(ids, given)]
        assert seen.mark(ids, given).tolist() == want
        given_so_far.update(i for i, g in zip(ids, given) if g)
        assert len(seen.seen) < 5
    assert len(seen.runs) >= 5  # the 60 possible ids went to disk in runs of 5
    assert sum(np.fromfile(r, dtype=np.uint64).size for r in seen.runs) + len(seen.seen) == len(given_so_far)


@pytest.mark.parametrize("fmt", ["github", "sarif", "markdown", "json"])
def test_a_small_folder_is_read_whole_for_a_report_that_needs_every_claim(dataset, fmt):
    # 69 claims in three files, far below a batch: a CI report of the folder is the report of its files named one
    # by one (it was refused, exit 2, as if the input were unusable).
    folder, files = dataset
    runner = CliRunner()
    whole = runner.invoke(cli, ["check", str(folder), "-f", fmt])
    named = runner.invoke(cli, ["check", *files, "-f", fmt])
    assert whole.exit_code == named.exit_code == 1  # an invalid claim: the fail level is reached
    assert whole.stdout == named.stdout


def test_a_folder_in_batches_still_needs_a_streamable_report(dataset):
    res = CliRunner().invoke(cli, ["check", str(dataset[0]), "-f", "github", "--batch-size", "10"])
    assert res.exit_code == 2 and "need the whole input at once" in res.output


def test_a_folder_says_what_it_holds_that_is_not_read(tmp_path):
    """A folder input is its Parquet files: a CSV beside them and the keys of Hive-style partition folders
    ("year=2023", whose values are in the folder names, not the files) are not read, and said so once."""
    from audit.batching import unread_in_folders

    folder = tmp_path / "runs"
    for year in (2023, 2024):
        (folder / f"year={year}").mkdir(parents=True)
        _claims(3, year).to_parquet(folder / f"year={year}" / "part-0.parquet", index=False)
    _claims(2, 9).to_csv(folder / "extra.csv", index=False)
    assert unread_in_folders([str(folder)]) == [
        (str(folder), "1 file in the folder is not Parquet and not read: extra.csv"),
        (str(folder), "partition keys in its folder names are not read as fields: year (only the Parquet files' own "
                      "columns are)")]
    res = CliRunner().invoke(cli, ["check", str(folder), "-f", "csv", "-o", str(tmp_path / "out.csv")])
    assert "not Parquet and not read: extra.csv" in res.output and "partition keys" in res.output
    assert len(pd.read_csv(tmp_path / "out.csv")) == 6
