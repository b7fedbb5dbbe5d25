"""How a ``check`` is split up: the batch sizes, the Parquet files an input stands for and their claims (read from
the footers), and the worker processes.

This module imports neither pandas nor the audit, so that ``check`` can decide from it alone whether it will audit
in worker processes, and start their server before it imports the audit itself: the server's imports (about 1.2 s
on this 2-core machine) then run beside the main process's own instead of after them (bench/scale.py).
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

#: Claims audited at once unless told otherwise: a peak of about 1.3-1.9 GiB on the benchmark's claims
#: (bench/scale.py; README, "Benchmarks").
DEFAULT_BATCH_SIZE = 100_000

#: The smallest batch given to a worker process by default (``jobs``): below it, a batch's fixed costs show.
MIN_JOB_BATCH_SIZE = 10_000

#: Claims a worker process makes the JSON report of at once (``jobs``): their text, about 8 kB a claim on the
#: benchmark's claims, comes back to the main process whole (5,000 claims: about 40 MB).
JSON_JOB_BATCH_SIZE = 5_000

#: Extensions read record batch by record batch.
PARQUET_EXTENSIONS = (".parquet", ".pq")

#: What the server of the worker processes imports once, before it forks each worker: the audit and the writers
#: of its tables (a worker forked from it starts with them imported), then a small audit that warms them up
#: (:mod:`audit.prewarm`: what a worker's first batch did once, done once for all of them).
WORKER_PRELOAD = ["audit.stream", "audit.report.table", "audit.prewarm"]


def default_batch_size(jobs: int = 1, fmt: str | None = None) -> int:
    """Claims audited at once unless told otherwise: :data:`DEFAULT_BATCH_SIZE` shared out among ``jobs`` worker
    processes (at least :data:`MIN_JOB_BATCH_SIZE`), so that two workers hold about the memory of one process
    (bench/scale.py: 1.2 GiB for two workers with batches of 50,000, 2.0 GiB with batches of 100,000); the JSON
    report (``fmt`` ``json``) in several processes: :data:`JSON_JOB_BATCH_SIZE`."""
    if jobs <= 1:
        return DEFAULT_BATCH_SIZE
    return JSON_JOB_BATCH_SIZE if fmt == "json" else max(MIN_JOB_BATCH_SIZE, DEFAULT_BATCH_SIZE // jobs)


def parquet_files(paths: Sequence[str]) -> list[str]:
    """Every input file: a folder stands for the Parquet files in it and its subfolders (a partitioned dataset),
    in sorted order. A folder with none is an unusable input (:class:`audit.reading.LoadError`)."""
    out: list[str] = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            # Listed here, not by Arrow's dataset discovery, which opens the first file it finds to read a schema
            # and so refused a whole folder for a CSV lying beside its Parquet files (unread_in_folders says it).
            try:
                files = sorted(os.path.join(root, f) for root, _dirs, names in _walk(p, onerror=_raise)
                               for f in names if f.lower().endswith(PARQUET_EXTENSIONS))
            except OSError as exc:
                _unusable(p, "cannot list the folder: {}", exc)
            if not files:
                _unusable(p, "a folder without Parquet files (.parquet, .pq)")
            out.extend(files)
        else:
            out.append(p)
    return out


def _raise(exc: OSError) -> None:
    raise exc


def _walk(folder: str, onerror: Any = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """The folders below ``folder`` (it included) with their subfolders and files, sorted, as a dataset holds
    them: names starting with "." or "_" are skipped, as Arrow skips them (_SUCCESS, .crc files, _temporary)."""
    for root, dirs, files in os.walk(folder, onerror=onerror):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        yield root, dirs, sorted(f for f in files if not f.startswith((".", "_")))


def unread_in_folders(paths: Sequence[str]) -> list[tuple[str, str]]:
    """What a folder given as input holds and the audit does not read, as (folder, note): files that are not
    Parquet (a CSV beside the Parquet files is not part of the dataset), and the keys of Hive-style partition
    folders ("year=2023"), whose values are in the folder names, not in the files' columns."""
    notes: list[tuple[str, str]] = []
    for p in paths:
        if p == "-" or not os.path.isdir(p):
            continue
        others: list[str] = []
        keys: dict[str, None] = {}
        parquet = False
        for root, dirs, files in _walk(p):
            keys.update((d.split("=", 1)[0], None) for d in dirs if "=" in d)
            others.extend(os.path.relpath(os.path.join(root, f), p) for f in files
                          if not f.lower().endswith(PARQUET_EXTENSIONS))
            parquet = parquet or any(f.lower().endswith(PARQUET_EXTENSIONS) for f in files)
        if not parquet:
            continue  # not a dataset: the reader says what the folder is
        if others:
            shown = ", ".join(others[:5]) + (f" and {len(others) - 5:,} more" if len(others) > 5 else "")
            notes.append((p, f"{len(others):,} file{'s' if len(others) != 1 else ''} in the folder "
                             f"{'are' if len(others) != 1 else 'is'} not Parquet and not read: {shown}"))
        if keys:
            notes.append((p, f"partition keys in its folder names are not read as fields: {', '.join(keys)} "
                             f"(only the Parquet files' own columns are)"))
    return notes


def _unusable(path: str, message: str, exc: BaseException | None = None) -> None:
    # Imported here: audit.reading imports pandas, which only an unusable input needs from this module.
    from audit.reading.common import first_line, printable
    from audit.reading.errors import LoadError

    raise LoadError(printable(path), message.format(first_line(exc)) if exc is not None else message) from None


def count_rows(files: Sequence[str]) -> int | None:
    """Rows of the input files from their Parquet footers (no data read); None when one is not Parquet."""
    import pyarrow.parquet as pq

    total = 0
    for path in files:
        if not path.lower().endswith(PARQUET_EXTENSIONS):
            return None
        try:
            total += pq.ParquetFile(path).metadata.num_rows
        except Exception:  # unreadable: the read itself says so, with the file
            return None
    return total


def worker_context() -> Any:
    """The way worker processes are started: forked from a server that has imported the audit
    (:data:`WORKER_PRELOAD`; Linux), else started anew. Not a plain fork: the main process has reading threads
    (Arrow's) that a fork would copy in an unknown state."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(WORKER_PRELOAD)
    return context


def start_workers_server() -> None:
    """Start the server that forks the worker processes now, without waiting for it: its imports run while the
    caller makes its own. The pool started later (:func:`worker_context`) uses this server."""
    if worker_context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()
