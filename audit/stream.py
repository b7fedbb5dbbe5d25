"""Auditing large inputs in batches: read Parquet files (or folders of them) record batch by record batch, audit
each batch with the same pipeline as a whole file (:func:`audit.pipeline.audit_claims`), and write the claims
table (``csv`` or ``parquet``) or the JSON report, and the findings table, as each batch is done, so that memory
is bounded by the batch size, not by the input. The summary (counts by status, severity and rule, and the
columns not read and notes of each file) is added up across batches.

Every rule looks at one claim at a time (with its phases), except one: a duplicate id (``V002``) is an id used
by an earlier claim. Batches carry the ids seen so far as 64-bit hashes (8 bytes a claim; two different ids
share a hash with odds of about n² / 2⁶⁵, 3·10⁻⁶ for ten million claims), so a claim is flagged whether its
first use was in its own batch or an earlier one: the findings of every claim are the same as when the input
is audited in one piece.

Inputs that are not Parquet are read whole (their readers need the whole file) and audited batch by batch.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pandas as pd

from audit.claims import Claims, RawTable
from audit.config import Config
from audit.findings import SEVERITIES, STATUSES
from audit.pipeline import audit_claims
from audit.reading import LoadError, ReadOptions, normalize, read_path
from audit.reading.common import first_line, printable
from audit.reading.paths import _keys_per_row, mapped_columns
from audit.records import input_notes_of, summary
from audit.result import AuditResult

#: Claims audited at once unless told otherwise: a peak of about 1.3-1.9 GiB on the benchmark's claims
#: (bench/scale.py; README, "Benchmarks").
DEFAULT_BATCH_SIZE = 100_000

#: Extensions read record batch by record batch.
PARQUET_EXTENSIONS = (".parquet", ".pq")


def input_files(paths: Sequence[str]) -> list[tuple[str, str]]:
    """(path, name shown in reports) of every input file: a folder stands for the Parquet files in it and its
    subfolders (a partitioned dataset), in sorted order. A folder with none is an unusable input."""
    out: list[tuple[str, str]] = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            import pyarrow.dataset as ds

            try:
                files = sorted(ds.dataset(p, format="parquet", exclude_invalid_files=False).files)
            except (OSError, ValueError) as exc:
                raise LoadError(printable(p), f"cannot list the folder: {first_line(exc)}") from None
            files = [f for f in files if f.lower().endswith(PARQUET_EXTENSIONS)]
            if not files:
                raise LoadError(printable(p), "a folder without Parquet files (.parquet, .pq)")
            out.extend((f, printable(f)) for f in files)
        else:
            out.append((p, printable(p) if p != "-" else "<stdin>"))
    return out


def count_rows(files: Sequence[tuple[str, str]]) -> int | None:
    """Rows of the inputs from the Parquet footers (no data read); None when an input is not Parquet."""
    import pyarrow.parquet as pq

    total = 0
    for path, _ in files:
        if not path.lower().endswith(PARQUET_EXTENSIONS):
            return None
        try:
            total += pq.ParquetFile(path).metadata.num_rows
        except Exception:  # unreadable: the read itself says so, with the file
            return None
    return total


def _raw_batches(path: str, name: str, batch_size: int, options: ReadOptions) -> Iterator[RawTable]:
    """Raw tables of at most ``batch_size`` rows of one input file, with canonical columns."""
    if not path.lower().endswith(PARQUET_EXTENSIONS):
        raw = mapped_columns(read_path(path, None, options), name, options.maps, per_row=_keys_per_row(path))
        n = len(raw.frame)
        for start in range(0, n, batch_size):
            yield _slice(raw, start, min(n, start + batch_size))
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    from audit.reading.parquetfile import raw_from_arrow

    try:
        handle = pq.ParquetFile(path)
    except (pa.ArrowException, OSError, ValueError, EOFError) as exc:
        raise LoadError(name, f"not a readable Parquet file: {first_line(exc)}") from None
    with handle:
        if handle.metadata.num_rows == 0:
            raise LoadError(name, "no claims: the file has no rows")
        try:
            as_floats = _integers_with_nulls(handle)
        except (pa.ArrowException, OSError, ValueError, EOFError) as exc:
            raise LoadError(name, f"not a readable Parquet file: {first_line(exc)}") from None
        first = 1
        batches = handle.iter_batches(batch_size=batch_size)
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except (pa.ArrowException, OSError, ValueError, EOFError) as exc:
                raise LoadError(name, f"not a readable Parquet file: {first_line(exc)}") from None
            table = pa.Table.from_batches([batch])
            if as_floats:
                table = table.cast(pa.schema([pa.field(f.name, pa.float64(), f.nullable, f.metadata)
                                              if f.name in as_floats and pa.types.is_integer(f.type) else f
                                              for f in table.schema], metadata=table.schema.metadata), safe=False)
            raw = raw_from_arrow(table, name, first_row=first)
            raw.files = np.full(len(raw.frame), name, dtype=object)
            first += batch.num_rows
            yield mapped_columns(raw, name, options.maps)


def _integers_with_nulls(handle: Any) -> set[str]:
    """The integer columns of a Parquet file that miss a value somewhere in it. Read whole, the file gives them as
    float64 (Arrow's integers with nulls), so every batch must too: a batch without a missing value would give
    ``512`` where the whole file gives ``512.0``, another text and another figure (the claims, findings and JSON
    of the batches are those of the file in one piece). From the row groups' statistics, else read."""
    import pyarrow as pa

    names = {f.name for f in handle.schema_arrow if pa.types.is_integer(f.type)}
    if not names:
        return set()
    meta = handle.metadata
    paths = [meta.schema.column(j).path for j in range(meta.num_columns)]
    named = Counter(paths)
    leaf = {path: j for j, path in enumerate(paths) if named[path] == 1}
    out = set()
    for name in sorted(names):
        j = leaf.get(name)
        stats = [meta.row_group(g).column(j).statistics for g in range(meta.num_row_groups)] if j is not None \
            else [None]
        if all(s is not None and s.has_null_count for s in stats):
            nulls = any(s.null_count for s in stats)
        else:
            nulls = any(column.null_count for column in handle.read(columns=[name]).columns)
        if nulls:
            out.add(name)
    return out


def _slice(raw: RawTable, start: int, stop: int) -> RawTable:
    """Rows ``start:stop`` of a raw table (problems and sources follow their rows)."""
    problems = [(pos - start, fld, msg) for pos, fld, msg in raw.problems if start <= pos < stop]
    frame = raw.frame.iloc[start:stop].reset_index(drop=True)
    return dataclasses.replace(
        raw, frame=frame, problems=problems,
        rows=None if raw.rows is None else raw.rows[start:stop],
        files=None if raw.files is None else raw.files[start:stop],
        sources={k: v[start:stop] for k, v in raw.sources.items()},
        unread=raw.unread if start == 0 else [], notes=raw.notes if start == 0 else [])


def claim_batches(paths: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE,
                  options: ReadOptions | None = None) -> Iterator[Claims]:
    """The claims of ``paths`` (files, or folders of Parquet files) in batches of at most ``batch_size``, in input
    order. How a file was read (columns not read, notes) comes with its first batch only."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    options = options or ReadOptions()
    for path, name in input_files(paths):
        said = False
        for raw in _raw_batches(path, name, batch_size, options):
            if said:
                raw = dataclasses.replace(raw, unread=[], notes=[])
            said = True
            yield normalize(raw)


def _id_hashes(ids: pd.Series) -> np.ndarray:
    return pd.util.hash_array(ids.astype(str).to_numpy(dtype=object), categorize=False)


@dataclass
class StreamSummary:
    """Counts added up across batches, in the form of :func:`audit.records.summary`, and how the inputs were
    read (columns not read and notes, once per file)."""

    claims: int = 0
    status: Counter = field(default_factory=Counter)
    findings: Counter = field(default_factory=Counter)
    rules: Counter = field(default_factory=Counter)
    unread_columns: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    batches: int = 0
    #: The text report, when the batches were rendered as text (:class:`audit.report.text.TextCollector`).
    text: str | None = None

    def add(self, result: AuditResult) -> None:
        s = summary(result)
        self.claims += s["claims"]
        self.status.update(s["status"])
        self.findings.update(s["findings"])
        self.rules.update(s["rules"])
        self.unread_columns.extend(result.claims.unread_columns)
        self.notes.extend(result.claims.notes)
        self.batches += 1

    def as_dict(self) -> dict[str, Any]:
        """Like :func:`audit.records.summary` of the whole input."""
        return {"claims": self.claims, "status": {s: int(self.status.get(s, 0)) for s in STATUSES},
                "findings": {s: int(self.findings.get(s, 0)) for s in SEVERITIES},
                "rules": {k: int(self.rules[k]) for k in sorted(self.rules) if self.rules[k]}}

    def json_summary(self) -> dict[str, Any]:
        """Like :func:`audit.records.json_summary` of the whole input (the JSON report's ``summary``)."""
        return {**self.as_dict(), "input": input_notes_of(self.unread_columns, self.notes)}


def audit_batches(batches: Iterator[Claims], config: Config | None = None,
                  audit: Callable[[Claims], AuditResult] | None = None) -> Iterator[AuditResult]:
    """Audit claims batch by batch (``audit``: how one batch is audited, default
    :func:`audit.pipeline.audit_claims` with ``config``); an id used in an earlier batch is a duplicate
    (``V002``) as it is within one."""
    config = config or Config.default()
    audit = audit or (lambda c: audit_claims(c, config))
    seen = np.array([], dtype=np.uint64)  # sorted hashes of the ids given so far
    for claims in batches:
        info = claims.info
        given = info["id_given"].to_numpy(dtype=bool)
        hashes = _id_hashes(info["id"])
        pos = np.searchsorted(seen, hashes)
        found = (pos < len(seen)) & (seen[np.minimum(pos, max(len(seen) - 1, 0))] == hashes) if len(seen) \
            else np.zeros(len(hashes), dtype=bool)
        info = info.copy()
        info["id_seen"] = found & given
        claims = dataclasses.replace(claims, info=info)
        yield audit(claims)
        new = np.unique(hashes[given])
        at = np.searchsorted(seen, new)
        new = new[~((at < len(seen)) & (seen[np.minimum(at, max(len(seen) - 1, 0))] == new))] if len(seen) else new
        seen = np.insert(seen, np.searchsorted(seen, new), new)  # a merge: O(n) a batch, not a sort


class _AtomicFile:
    """A file written in pieces to a temporary file beside the target, renamed into place when complete (an
    interrupted run leaves the previous file and no partial one)."""

    def __init__(self, target: str) -> None:
        self.target = Path(target)
        self.tmp: str | None = None
        if self.target.exists() and not self.target.is_file():
            # /dev/null, a named pipe, /dev/stdout: written in place. Renaming a file over them would replace the
            # device itself (as root, -o /dev/null would leave a regular file there), as audit.cli does.
            self.handle = open(self.target, "wb")
            return
        parent = self.target.parent if str(self.target.parent) else Path(".")
        fd, self.tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".tmp", dir=parent)
        self.handle = os.fdopen(fd, "wb")

    def commit(self) -> None:
        if self.tmp is None:
            self.handle.close()
            return
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()
        try:
            mode = self.target.stat().st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(self.tmp, mode)
        os.replace(self.tmp, self.target)

    def abort(self) -> None:
        try:
            self.handle.close()
        finally:
            if self.tmp is not None:
                Path(self.tmp).unlink(missing_ok=True)


class TableWriter:
    """Writes a table (a DataFrame per batch) as Parquet or CSV, batch by batch, into ``target``."""

    def __init__(self, target: str, fmt: str) -> None:
        if fmt not in ("csv", "parquet"):
            raise ValueError(f"cannot stream format {fmt!r} (csv or parquet)")
        self.fmt = fmt
        self.file = _AtomicFile(target)
        self._parquet: Any = None
        self._schema: Any = None
        self._header = True

    def write(self, frame: pd.DataFrame) -> None:
        from audit.report import table

        if self.fmt == "csv":
            self.file.handle.write(table.csv_text(frame, header=self._header).encode("utf-8"))
            self._header = False
            return
        import pyarrow.parquet as pq

        if self._schema is None:
            self._schema = table.arrow_schema(frame)
            self._parquet = pq.ParquetWriter(self.file.handle, self._schema)
        self._parquet.write_table(table.arrow_table(frame, self._schema))

    def close(self, empty: pd.DataFrame | None = None) -> None:
        """Finish the file (``empty``: the table's columns, written when no batch came)."""
        if self._header and self._schema is None and empty is not None:
            self.write(empty)
        if self._parquet is not None:
            self._parquet.close()
        self.file.commit()

    def abort(self) -> None:
        """Drop the file. The Parquet writer is closed first (its footer goes into the temporary file about to be
        removed): left open, it would try to finish the closed file when collected and print a traceback."""
        parquet, self._parquet = self._parquet, None
        try:
            if parquet is not None:
                try:
                    parquet.close()
                except Exception:  # the file is dropped anyway; the error that stopped the run is the one raised
                    parquet.is_open = False
        finally:
            self.file.abort()


class JsonWriter:
    """Writes the JSON report (:mod:`audit.report.json_out`) into ``target`` batch by batch, a chunk of claims at a
    time: the text is that of the whole input audited in one piece, byte for byte."""

    def __init__(self, target: str) -> None:
        from audit.report.json_out import JsonText

        self.file = _AtomicFile(target)
        self.text = JsonText()
        #: What a batch's records need from the batches before it to read as the input in one piece
        #: (:func:`audit.records.claim_chunks`): the extra fields met so far, in order, and the number of phases.
        self.extra_order: dict[str, None] = {}
        self.phases = 0

    def write(self, result: AuditResult) -> None:
        from audit.records import claim_chunks

        for records in claim_chunks(result, extra_order=self.extra_order, phase_rows_before=self.phases):
            self.file.handle.write(self.text.claims(records).encode("utf-8"))
        self.phases += 0 if result.phase_result is None else len(result.phase_result)

    def close(self, summary: StreamSummary) -> None:
        """Finish the file with the summary of the whole input."""
        self.file.handle.write(self.text.end(summary.json_summary()).encode("utf-8"))
        self.file.commit()

    def abort(self) -> None:
        """Drop the file."""
        self.file.abort()


def stream_check(paths: Sequence[str], output: str | None, fmt: str, findings_path: str | None = None,
                 config: Config | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
                 options: ReadOptions | None = None,
                 progress: Callable[[int], None] | None = None,
                 audit: Callable[[Claims], AuditResult] | None = None,
                 show_ok: bool = False) -> StreamSummary:
    """Audit ``paths`` batch by batch, writing the claims table (``fmt``: ``csv`` or ``parquet``) or the JSON report
    (``json``) to ``output`` and, when given, the findings table to ``findings_path`` (.parquet, else CSV) as each
    batch is done. With ``fmt`` ``text`` nothing is written to ``output``: the text report of the whole input (its
    worst claims in full, the counts of all; ``show_ok``: the ok findings too) is returned in the summary's
    ``text``. ``progress`` is called with the number of claims of each batch when it is written; ``audit`` audits
    one batch (default :func:`audit.pipeline.audit_claims` with ``config``). Returns the summary of the whole
    input; a fail status is in its counts. Both files appear complete, or not at all."""
    from audit.report import table
    from audit.report.text import TextCollector

    collector = TextCollector(show_ok=show_ok) if fmt == "text" else None
    writer: TableWriter | JsonWriter | None = None
    if fmt == "json" and output is not None:
        writer = JsonWriter(output)
    elif collector is None and output is not None:
        writer = TableWriter(output, fmt)
    f_fmt = "parquet" if findings_path and findings_path.lower().endswith((".parquet", ".pq")) else "csv"
    fwriter = TableWriter(findings_path, f_fmt) if findings_path else None
    total = StreamSummary()
    try:
        for result in audit_batches(claim_batches(paths, batch_size, options), config, audit):
            if isinstance(writer, JsonWriter):
                writer.write(result)
            elif writer is not None:
                writer.write(table.claims_frame(result))
            if collector is not None:
                collector.add(result)
            if fwriter is not None:
                fwriter.write(table.findings_frame(result))
            total.add(result)
            if progress is not None:
                progress(len(result))
        if isinstance(writer, JsonWriter):
            writer.close(total)
        elif writer is not None:
            writer.close()
        if fwriter is not None:
            fwriter.close()
    except BaseException:
        for w in (writer, fwriter):
            if w is not None:
                w.abort()
        raise
    if collector is not None:
        total.text = collector.text(total.claims, total.as_dict()["status"])
    return total
