"""Auditing large inputs in batches: read Parquet files (or folders of them) record batch by record batch, audit
each batch with the same pipeline as a whole file (:func:`audit.pipeline.audit_claims`), and write the claims
table (``csv`` or ``parquet``) or the JSON report, and the findings table, as each batch is done, so that memory
is bounded by the batch size, not by the input. The summary (counts by status, severity and rule, and the
columns not read and notes of each file) is added up across batches.

Every rule looks at one claim at a time (with its phases), except one: a duplicate id (``V002``) is an id used
by an earlier claim. Batches carry the ids seen so far as 64-bit hashes (8 bytes a claim, the latest two
million in memory and the others in sorted runs on disk; two different ids share a hash with odds of about
n² / 2⁶⁵, 3·10⁻⁶ for ten million claims), so a claim is flagged whether its
first use was in its own batch or an earlier one: the findings of every claim are the same as when the input
is audited in one piece.

Inputs that are not Parquet are read whole (their readers need the whole file) and audited batch by batch.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import tempfile
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pandas as pd

from audit.allocator import keep_freed_memory
from audit.batching import DEFAULT_BATCH_SIZE, PARQUET_EXTENSIONS, count_rows, parquet_files, worker_context
from audit.catalog import Catalog
from audit.claims import Claims, RawTable
from audit.columns import objects_of
from audit.config import Config
from audit.findings import SEVERITIES, STATUSES
from audit.pipeline import audit_claims
from audit.reading import LoadError, ReadOptions, normalize
from audit.reading.common import first_line, printable
from audit.reading.paths import mapped_columns, read_mapped
from audit.records import input_notes_of, summary
from audit.result import AuditResult

def input_files(paths: Sequence[str]) -> list[tuple[str, str]]:
    """(path, name shown in reports) of every input file (:func:`audit.batching.parquet_files`)."""
    return [(f, printable(f) if f != "-" else "<stdin>") for f in parquet_files(paths)]


def _raw_batches(path: str, name: str, batch_size: int, options: ReadOptions) -> Iterator[RawTable | ArrowBatch]:
    """Batches of at most ``batch_size`` rows of one input file: raw tables with canonical columns, or a Parquet
    file's record batches as read."""
    if not path.lower().endswith(PARQUET_EXTENSIONS):
        raw = read_mapped(path, None, options, name)
        n = len(raw.frame)
        for start in range(0, n, batch_size):
            yield _slice(raw, start, min(n, start + batch_size), cut=n > batch_size)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

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
            yield ArrowBatch(table, name, first, options.maps, said=first > 1,
                             cut=handle.metadata.num_rows > batch.num_rows)
            first += batch.num_rows


@dataclass
class ArrowBatch:
    """A record batch of a Parquet file as read, not yet made into claims: :meth:`raw` does that, in the main
    process or in a worker process (``jobs``), which then receives Arrow's buffers and not Python objects."""

    table: Any
    name: str
    first_row: int
    maps: Any
    #: The file's columns not read and notes came with an earlier batch.
    said: bool = False
    #: The batch is a part of its file (:attr:`audit.claims.RawTable.cut`).
    cut: bool = False

    def raw(self) -> RawTable:
        """The batch as a raw table with canonical columns."""
        from audit.reading.parquetfile import raw_from_arrow

        raw = raw_from_arrow(self.table, self.name, first_row=self.first_row)
        raw.files = objects_of(len(raw.frame), self.name)
        raw = mapped_columns(raw, self.name, self.maps)
        raw.cut = self.cut
        return dataclasses.replace(raw, unread=[], notes=[]) if self.said else raw

    def ids(self) -> tuple[np.ndarray, np.ndarray]:
        """Each claim's id as :func:`audit.reading.normalize` reads it, and whether the claim gave it, read from
        the id column alone (the column the whole file's headers map to ``id``)."""
        from audit.reading.colmap import MapChoice
        from audit.reading.common import mangle
        from audit.reading.fields import canonical_columns, header_field
        from audit.reading.normalize import arrow_of, column_texts, cut_texts, named_ids, text_limit, whole_numbers
        from audit.reading.parquetfile import raw_from_arrow

        headers = mangle([str(c) for c in self.table.column_names])
        cmap, _ = (self.maps or MapChoice()).for_headers(headers)
        keep = [i for i, h in enumerate(headers) if header_field(h, cmap) == "id"]
        n = self.table.num_rows
        if not keep:
            return np.full(n, None, dtype=object), np.zeros(n, dtype=bool)
        sub = raw_from_arrow(self.table.rename_columns(headers).select(keep), self.name, first_row=self.first_row)
        sub.files = objects_of(n, self.name)
        raw = canonical_columns(sub, self.name, columns=cmap)
        # As normalize reads the id column (and nothing else: the batch's other columns are a worker's to read),
        # from Arrow's strings where the cells came from them: their validity, lengths and first characters, not a
        # look at each Python string (0.9 s of the main process's 6.6 s of CPU for 1,000,000 claims).
        if "id" not in raw.frame.columns:
            ids = np.empty(n, dtype=object)  # all None
            present, arrow = np.zeros(n, dtype=bool), None
        else:
            arrow = arrow_of(raw, "id", raw.frame["id"])
            texts, present, _ = column_texts(whole_numbers(raw.frame["id"]), arrow)
            ids, too_long = cut_texts(texts, text_limit("id"), present, arrow)
            if too_long.any():
                arrow = None  # no longer its cells
        rows = raw.rows if raw.rows is not None else np.arange(1, n + 1)
        return named_ids(ids, raw.files, np.asarray(rows), present, arrow)


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


def _slice(raw: RawTable, start: int, stop: int, cut: bool = False) -> RawTable:
    """Rows ``start:stop`` of a raw table (problems and sources follow their rows); ``cut``: a part of its file."""
    problems = [(pos - start, fld, msg) for pos, fld, msg in raw.problems if start <= pos < stop]
    frame = raw.frame.iloc[start:stop].reset_index(drop=True)
    return dataclasses.replace(
        raw, frame=frame, problems=problems,
        rows=None if raw.rows is None else raw.rows[start:stop],
        files=None if raw.files is None else raw.files[start:stop],
        sources={k: v[start:stop] for k, v in raw.sources.items()},
        unread=raw.unread if start == 0 else [], notes=raw.notes if start == 0 else [], cut=cut)


def claim_batches(paths: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE,
                  options: ReadOptions | None = None) -> Iterator[Claims]:
    """The claims of ``paths`` (files, or folders of Parquet files) in batches of at most ``batch_size``, in input
    order. How a file was read (columns not read, notes) comes with its first batch only."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    options = options or ReadOptions()
    for piece in _pieces_read(paths, batch_size, options):
        yield normalize(piece.raw() if isinstance(piece, ArrowBatch) else piece)


def _pieces_read(paths: Sequence[str], batch_size: int, options: ReadOptions) -> Iterator[RawTable | ArrowBatch]:
    """The batches of ``paths`` as read (a Parquet file's as :class:`ArrowBatch`), in input order; how a file was
    read comes with its first batch only."""
    for path, name in input_files(paths):
        said = False
        for raw in _raw_batches(path, name, batch_size, options):
            if said and isinstance(raw, RawTable):
                raw = dataclasses.replace(raw, unread=[], notes=[])
            said = True
            yield raw


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
    _noted: set = field(default_factory=set, repr=False)

    def add(self, result: AuditResult) -> None:
        self.add_counts(summary(result), result.claims.unread_columns, result.claims.notes)

    def add_counts(self, counts: dict[str, Any], unread_columns: Sequence[Any], notes: Sequence[Any]) -> None:
        """Add one batch: its :func:`audit.records.summary` and how its file was read."""
        self.claims += counts["claims"]
        self.status.update(counts["status"])
        self.findings.update(counts["findings"])
        self.rules.update(counts["rules"])
        self.unread_columns.extend(unread_columns)
        # A note made as each batch is read (a utilization read as percentages) is said once per file.
        self.notes.extend(n for n in dict.fromkeys(map(tuple, notes)) if n not in self._noted)
        self._noted.update(map(tuple, notes))
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
    return map(audit, with_seen_ids(batches))


def with_seen_ids(batches: Iterator[Claims]) -> Iterator[Claims]:
    """The batches, each claim marked with whether its id was given by a claim of an earlier batch (``id_seen``,
    which :func:`audit.pipeline.audit_claims` reads for ``V002``): the one thing a batch needs from the others."""
    seen = _SeenIds()
    for claims in batches:
        yield seen.mark_claims(claims)


def _marked(claims: Claims, id_seen: np.ndarray) -> Claims:
    info = claims.info.copy()
    info["id_seen"] = id_seen
    return dataclasses.replace(claims, info=info)


class _SeenIds:
    """The ids given by the claims of the batches so far, as sorted 64-bit hashes: the latest in memory, up to
    :attr:`memory_ids` of them, and the older ones in sorted runs on disk (a temporary folder), read back a chunk
    at a time to look each batch's ids up. So memory does not grow with the input: ten million claims held 80 MB
    of hashes, and inserting a batch into them copied them all (160 MB at the peak, 1.6 GB for a hundred million).
    Looking a batch up reads every run once (from the page cache: 80 MB a batch for ten million ids)."""

    #: Hashes held in memory before they are written out as a run (16 MiB).
    memory_ids = 1 << 21
    #: Hashes read from a run at a time (8 MiB).
    chunk_ids = 1 << 20

    def __init__(self) -> None:
        self.seen = np.array([], dtype=np.uint64)
        self.runs: list[str] = []
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def mark_claims(self, claims: Claims) -> Claims:
        """The claims with ``id_seen`` (:meth:`mark` of their ids)."""
        return _marked(claims, self.mark(claims.info["id"], claims.info["id_given"].to_numpy(dtype=bool)))

    def mark(self, ids: Any, given: np.ndarray) -> np.ndarray:
        """Which claims of the next batch give an id that an earlier batch gave; then remember the batch's ids."""
        seen = self.seen
        hashes = _id_hashes(pd.Series(ids, dtype=object))
        # One search of the batch's hashes, sorted (searching sorted keys walks the seen ones in order: about 3x
        # faster than the batch's order against a million seen ids), then a merge: O(n) a batch, not a sort.
        order = np.argsort(hashes, kind="stable")
        sorted_hashes = hashes[order]
        pos = np.searchsorted(seen, sorted_hashes)
        known = seen[np.minimum(pos, len(seen) - 1)] == sorted_hashes if len(seen) else \
            np.zeros(len(hashes), dtype=bool)
        for run in self.runs:
            known |= self._in_run(run, sorted_hashes)
        found = np.empty(len(hashes), dtype=bool)
        found[order] = known
        new = np.flatnonzero(given[order] & ~known)  # ids given here and not before, in sorted order
        new = new[np.concatenate(([True], sorted_hashes[new[1:]] != sorted_hashes[new[:-1]]))] if len(new) else new
        self.seen = np.insert(seen, pos[new], sorted_hashes[new])  # each distinct one once
        if len(self.seen) >= self.memory_ids:
            self._spill()
        return found & given

    def _in_run(self, run: str, sorted_hashes: np.ndarray) -> np.ndarray:
        """Which of the sorted hashes a run on disk holds, the run read :attr:`chunk_ids` at a time."""
        found = np.zeros(len(sorted_hashes), dtype=bool)
        with open(run, "rb") as handle:
            while len(chunk := np.fromfile(handle, dtype=np.uint64, count=self.chunk_ids)):
                lo = int(np.searchsorted(sorted_hashes, chunk[0], side="left"))
                hi = int(np.searchsorted(sorted_hashes, chunk[-1], side="right"))
                if lo < hi:
                    part = sorted_hashes[lo:hi]
                    at = np.minimum(np.searchsorted(chunk, part), len(chunk) - 1)
                    found[lo:hi] |= chunk[at] == part
        return found

    def _spill(self) -> None:
        """Write the hashes held in memory out as a run; kept in memory where no temporary folder can be written."""
        try:
            if self._folder is None:
                self._folder = tempfile.TemporaryDirectory(prefix="train-audit-ids-")
            run = os.path.join(self._folder.name, f"run-{len(self.runs):06d}.u64")
            self.seen.tofile(run)
        except OSError:
            self.memory_ids = np.iinfo(np.int64).max  # no folder to write in (or a full disk): memory it is
            return
        self.runs.append(run)
        self.seen = np.array([], dtype=np.uint64)


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


#: Rows of a Parquet row group written batch by batch: the file is the same whatever the batches (one process with
#: batches of 100,000, two with batches of 50,000 each), and a row group is what a reader reads at once.
ROW_GROUP_ROWS = DEFAULT_BATCH_SIZE


class TableWriter:
    """Writes a table (a DataFrame per batch) as Parquet or CSV, batch by batch, into ``target``. Parquet row groups
    hold :data:`ROW_GROUP_ROWS` rows (the last one the rest), whatever the batches."""

    def __init__(self, target: str, fmt: str) -> None:
        if fmt not in ("csv", "parquet"):
            raise ValueError(f"cannot stream format {fmt!r} (csv or parquet)")
        self.fmt = fmt
        self.file = _AtomicFile(target)
        self._parquet: Any = None
        self._schema: Any = None
        self._header = True
        self._held: list[Any] = []  # Arrow tables of fewer than ROW_GROUP_ROWS rows in all, not yet written
        self._held_rows = 0
        # The first table held starts within a batch (the rest of one cut at the end of a row group): its
        # dictionaries may hold texts of the rows written (report.table.parquet_group remakes them).
        self._held_cut = False

    def write(self, frame: pd.DataFrame) -> None:
        self.write_piece(table_piece(frame, self.fmt, header=self._header))

    def write_piece(self, piece: Any) -> None:
        """Write a batch made by :func:`table_piece` (CSV text, or an Arrow table): in a worker process, when
        batches are audited in several (``jobs``)."""
        if self.fmt == "csv":
            self.file.handle.write(piece.encode("utf-8"))
            self._header = False
            return
        from audit.report import table

        if self._schema is None:
            self._schema = piece.schema
            self._parquet = table.parquet_writer(self.file.handle, self._schema)
        elif not piece.schema.equals(self._schema):  # the columns are fixed (report.table): not expected
            piece = piece.select(self._schema.names).cast(self._schema)
        self._held.append(piece)
        self._held_rows += piece.num_rows
        if self._held_rows >= ROW_GROUP_ROWS:
            self._flush(whole_groups=True)

    def _flush(self, whole_groups: bool) -> None:
        """Write the rows held: in whole row groups only (the rest held for the next batch), or all of them. Each
        row group's dictionaries are made one (:func:`audit.report.table.parquet_group`): remade from its codes
        when it holds part of a batch only."""
        import pyarrow as pa

        from audit.report.table import parquet_group

        if not self._held:
            return
        held = self._held[0] if len(self._held) == 1 else pa.concat_tables(self._held)
        ends = set(np.cumsum([t.num_rows for t in self._held]).tolist())  # where a batch ends
        cut = held.num_rows - held.num_rows % ROW_GROUP_ROWS if whole_groups else held.num_rows
        for start in range(0, cut, ROW_GROUP_ROWS):
            stop = min(cut, start + ROW_GROUP_ROWS)
            whole = (start == 0 and not self._held_cut or start in ends) and stop in ends
            self._parquet.write_table(parquet_group(held.slice(start, stop - start), whole=whole),
                                      row_group_size=ROW_GROUP_ROWS)
        if not cut and not whole_groups:  # at the end, no rows: the file of a batch without claims has its columns
            self._parquet.write_table(parquet_group(held), row_group_size=ROW_GROUP_ROWS)
        rest = held.slice(cut)
        self._held, self._held_rows = ([rest] if rest.num_rows else []), rest.num_rows
        self._held_cut = cut not in ends and bool(rest.num_rows)  # the rest starts within a batch

    def close(self, empty: pd.DataFrame | None = None) -> None:
        """Finish the file (``empty``: the table's columns, written when no batch came)."""
        if self._header and self._schema is None and empty is not None:
            self.write(empty)
        if self._parquet is not None:
            self._flush(whole_groups=False)
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

    def write_rendered(self, rendered: "RenderedClaims") -> bool:
        """Write a batch's claims as a worker process made their text (:func:`rendered_claims`), which is the text
        :meth:`write` makes when the batch's extra fields come in the order the batches so far met them, its
        phases' input rows numbered from 1 here renumbered after the phases of the batches before it. False (and
        nothing written) when the text cannot be used so: the caller then audits the batch here and calls
        :meth:`write`."""
        order = dict(self.extra_order)
        order.update(dict.fromkeys(rendered.extras))
        place = {name: k for k, name in enumerate(order)}
        if sorted(rendered.extras, key=place.__getitem__) != rendered.extras:
            return False  # a file whose new columns come before columns an earlier file had (rare)
        text = rendered.text
        if rendered.phases and self.phases:
            renumbered = _phase_rows_after(text, rendered.phases, self.phases)
            if renumbered is None:
                return False
            text = renumbered
        if rendered.count:
            self.file.handle.write(self.text.opening().encode("utf-8") + text)
            self.text.count += rendered.count
        self.extra_order.update(order)
        self.phases += rendered.phases
        return True

    def close(self, summary: StreamSummary) -> None:
        """Finish the file with the summary of the whole input."""
        self.file.handle.write(self.text.end(summary.json_summary()).encode("utf-8"))
        self.file.commit()

    def abort(self) -> None:
        """Drop the file."""
        self.file.abort()


#: A phase's input in a claim's JSON record: its input row is its row among the phases of the whole input.
_PHASE_INPUT = re.compile(rb'"input": \{"file": "<phases>", "row": (\d+)\}')


def _phase_rows_after(text: bytes, phases: int, before: int) -> bytes | None:
    """``text`` (a batch's claims, its phases' input rows numbered 1 to ``phases``) with those rows numbered after
    ``before``, or None unless exactly the batch's phases, in order, hold such an input (a field of a claim could
    hold an object written the same way: then the text is not used)."""
    found = _PHASE_INPUT.findall(text)
    if len(found) != phases or [int(row) for row in found] != list(range(1, phases + 1)):
        return None
    return _PHASE_INPUT.sub(lambda m: b'"input": {"file": "<phases>", "row": %d}' % (int(m.group(1)) + before), text)


@dataclass
class RenderedClaims:
    """A batch's claims as a worker process writes them for the JSON report (:func:`rendered_claims`)."""

    #: The claims' records as :class:`audit.report.json_out.JsonText` writes them, without the document's opening
    #: or the comma before the first: UTF-8.
    text: bytes
    count: int
    #: The batch's extra fields, in the order its records write them (the batch's own).
    extras: list[str]
    #: The phases of the batch's claims (their input rows are numbered from 1 in ``text``).
    phases: int


def rendered_claims(result: AuditResult) -> RenderedClaims:
    """The JSON text of a batch's claims, made in a worker process: :func:`audit.records.claim_chunks` with the
    batch's extra fields in its own order and its phases numbered from 1, which the main process checks and
    renumbers (:meth:`JsonWriter.write_rendered`)."""
    from audit.records import claim_chunks
    from audit.report.json_out import claims_text

    text = ",\n".join(claims_text(records) for records in claim_chunks(result))
    extras = [str(name) for name in result.claims.extras.columns if name != "phases"]
    phases = 0 if result.phase_result is None else len(result.phase_result)
    return RenderedClaims(text=text.encode("utf-8"), count=len(result), extras=extras, phases=phases)


def table_piece(frame: pd.DataFrame, fmt: str, header: bool = True) -> Any:
    """A claims or findings table of one batch as :class:`TableWriter` writes it: CSV text (with the header line
    when ``header``), or an Arrow table (:func:`audit.report.table.arrow_piece`: the same schema for every
    batch)."""
    from audit.report import table

    if fmt == "csv":
        return table.csv_text(frame, header=header)
    return table.arrow_piece(frame)


@dataclass(frozen=True)
class BatchAuditor:
    """How one batch is audited: :func:`audit.pipeline.audit_claims` with ``config``, the accelerators of
    ``catalog`` (your own, with its prices and powers; None: the bundled catalog) and, when ``codes`` is given,
    only the findings of those rules (:func:`audit.selection.apply`). An object rather than a closure so that a
    worker process can be given a copy (``jobs``)."""

    config: Config
    catalog: Catalog | None = None
    codes: frozenset[str] | None = None
    words: bool = True

    def __call__(self, claims: Claims) -> AuditResult:
        from audit.api import _catalog_prefill

        result = audit_claims(claims, self.config, self.catalog, prefill=_catalog_prefill(claims, self.catalog),
                              words=self.words)
        if self.codes is not None:
            from audit.selection import apply

            result = apply(result, self.codes)  # ignored rules ran (their values are kept); their findings dropped
        return result


@dataclass
class _Piece:
    """What a worker process sends back for one batch: its tables, ready to write, and its counts."""

    counts: dict[str, Any]
    unread_columns: list[Any]
    notes: list[Any]
    table: Any
    findings: Any


#: A worker process's auditor and formats (:func:`_start_worker`).
_WORKER: dict[str, Any] = {}


def _start_worker(audit: Callable[[Claims], AuditResult], fmt: str | None, findings_fmt: str | None) -> None:
    # Ctrl-C reaches every process of the terminal's group: the main process stops the workers and says so once.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    keep_freed_memory()  # as the main process of a check does (audit.allocator)
    _WORKER.update(audit=audit, fmt=fmt, findings_fmt=findings_fmt)


class WorkerError(RuntimeError):
    """An unexpected error in a worker process (a bug), raised again in the main process with the worker's
    traceback as its cause."""


class _RemoteTraceback(Exception):
    def __str__(self) -> str:
        return str(self.args[0])


@dataclass
class _Failed:
    """A batch that raised in a worker process: the error as text (any exception object may not survive the way
    back), or the file and message of a :class:`LoadError`."""

    error: str
    trace: str
    load_error: tuple[str, str] | None = None

    def raise_(self) -> None:
        if self.load_error is not None:
            raise LoadError(*self.load_error)
        raise WorkerError(f"in a worker process: {self.error}") from _RemoteTraceback(self.trace)


def _audit_piece(batch: Claims | ArrowBatch, id_seen: np.ndarray | None, first: bool) -> _Piece | _Failed:
    """Audit one batch in a worker process and make its tables, or say what stopped it."""
    try:
        return _audit_batch(batch, id_seen, first)
    except LoadError as exc:
        return _Failed(str(exc), "", (exc.file, exc.message))
    except Exception as exc:
        import traceback

        return _Failed(f"{type(exc).__name__}: {exc}", traceback.format_exc())


def _audit_batch(batch: Claims | ArrowBatch, id_seen: np.ndarray | None, first: bool) -> _Piece:
    """Audit one batch in a worker process and make its tables (the same functions as in one process)."""
    from audit.report import table

    result = _WORKER["audit"](_claims_of(batch, id_seen))
    fmt, findings_fmt = _WORKER["fmt"], _WORKER["findings_fmt"]
    made = None if fmt is None else rendered_claims(result) if fmt == "json" else \
        table_piece(table.claims_frame(result), fmt, header=first)
    return _Piece(counts=summary(result), unread_columns=list(result.claims.unread_columns),
                  notes=list(result.claims.notes), table=made,
                  findings=None if findings_fmt is None else table_piece(table.findings_frame(result), findings_fmt,
                                                                        header=first))


def _claims_of(batch: Claims | ArrowBatch, id_seen: np.ndarray | None) -> Claims:
    """A batch for a worker as claims: a Parquet file's record batch made into claims and marked with the ids
    earlier batches gave; any other batch came as claims, marked."""
    if isinstance(batch, Claims):
        return batch
    claims = normalize(batch.raw())
    # The claims were made here and nothing else holds them: the column is added in place, where _marked's copy
    # of the info frame (a copy of every column, and merging its blocks) cost as much as parsing a column.
    claims.info["id_seen"] = id_seen
    return claims


def _batches_to_audit(paths: Sequence[str], batch_size: int, options: ReadOptions
                      ) -> Iterator[tuple[Claims | ArrowBatch, np.ndarray | None]]:
    """The batches for worker processes: a Parquet file's as read, with whether each claim's id was given by an
    earlier batch (read from the id column alone: a worker makes the claims); any other file's made into claims
    here (its reader read it whole), marked so."""
    seen = _SeenIds()
    for piece in _pieces_read(paths, batch_size, options):
        if isinstance(piece, ArrowBatch):
            yield piece, seen.mark(*piece.ids())
        else:
            claims = normalize(piece)
            yield seen.mark_claims(claims), None


def _pieces(batches: Iterator[tuple[Claims | ArrowBatch, np.ndarray | None]],
            audit: Callable[[Claims], AuditResult], fmt: str | None, findings_fmt: str | None,
            jobs: int) -> Iterator[tuple[_Piece, Claims | ArrowBatch, np.ndarray | None]]:
    """The batches audited in ``jobs`` worker processes, in input order, with at most ``jobs`` batches ahead of the
    one being written (memory: about ``jobs + 1`` batches): each with the batch and its ids seen before."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # A fresh process per worker (audit.batching.worker_context; check may have started their server already).
    context = worker_context()
    # concurrent.futures rather than multiprocessing.Pool: a worker that dies (killed, out of memory) breaks the
    # pool and every waiting batch says so, where Pool would wait for its result for ever.
    executor = ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_worker,
                                   initargs=(audit, fmt, findings_fmt))
    finished = False
    try:
        pending: deque[Any] = deque()
        for i, (batch, id_seen) in enumerate(batches):
            try:
                future = executor.submit(_audit_piece, batch, id_seen, i == 0)
            except BrokenProcessPool:  # a worker died before this batch was handed out (a race with _done)
                raise WorkerError(_DIED) from None
            pending.append((future, batch, id_seen))
            if len(pending) > jobs:
                future, done_batch, done_seen = pending.popleft()
                yield _done(future), done_batch, done_seen
        while pending:
            future, done_batch, done_seen = pending.popleft()
            yield _done(future), done_batch, done_seen
        finished = True
    finally:
        if finished:
            executor.shutdown(wait=True)
        else:  # an error or an interrupt: no worker is left running
            _stop(executor)


#: What a run says when a worker process died under it.
_DIED = ("a worker process ended before its batch was done (killed, or out of memory?); try fewer --jobs or a "
         "smaller --batch-size")


def _done(future: Any) -> _Piece:
    from concurrent.futures.process import BrokenProcessPool

    try:
        piece = future.result()
    except BrokenProcessPool:
        raise WorkerError(_DIED) from None
    if isinstance(piece, _Failed):
        piece.raise_()
    assert isinstance(piece, _Piece)
    return piece


def _stop(executor: Any) -> None:
    """Stop the workers now, batches under way included (Python 3.14's ``terminate_workers``, else each process)."""
    terminate = getattr(executor, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=10)


def stream_check(paths: Sequence[str], output: str | None, fmt: str, findings_path: str | None = None,
                 config: Config | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
                 options: ReadOptions | None = None,
                 progress: Callable[[int], None] | None = None,
                 audit: Callable[[Claims], AuditResult] | None = None,
                 show_ok: bool = False, jobs: int = 1) -> StreamSummary:
    """Audit ``paths`` batch by batch, writing the claims table (``fmt``: ``csv`` or ``parquet``) or the JSON report
    (``json``) to ``output`` and, when given, the findings table to ``findings_path`` (.parquet, else CSV) as each
    batch is done. With ``fmt`` ``text`` nothing is written to ``output``: the text report of the whole input (its
    worst claims in full, the counts of all; ``show_ok``: the ok findings too) is returned in the summary's
    ``text``. ``progress`` is called with the number of claims of each batch when it is written; ``audit`` audits
    one batch (default :func:`audit.pipeline.audit_claims` with ``config``). Returns the summary of the whole
    input; a fail status is in its counts. Both files appear complete, or not at all.

    ``jobs`` > 1 audits the batches of a claims table (``csv``, ``parquet``), of the JSON report and of the
    findings table in that many worker processes (``audit`` must then be picklable, e.g. a :class:`BatchAuditor`);
    the files are those of one process, byte for byte. The text report is made in one process."""
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
    if jobs > 1 and (count_rows(parquet_files(paths)) or batch_size + 1) <= batch_size:
        jobs = 1  # one batch: starting worker processes would only add their start-up
    if jobs > 1 and collector is None:
        auditor = audit or BatchAuditor(config or Config.default())
        try:
            for piece, batch, id_seen in _pieces(_batches_to_audit(paths, batch_size, options or ReadOptions()),
                                                 auditor, None if writer is None else fmt,
                                                 f_fmt if fwriter is not None else None, jobs):
                if isinstance(writer, JsonWriter):
                    if not writer.write_rendered(piece.table):  # the batch again, here (JsonWriter.write_rendered)
                        writer.write(auditor(_claims_of(batch, id_seen)))
                elif isinstance(writer, TableWriter):
                    writer.write_piece(piece.table)
                if fwriter is not None:
                    fwriter.write_piece(piece.findings)
                total.add_counts(piece.counts, piece.unread_columns, piece.notes)
                if progress is not None:
                    progress(piece.counts["claims"])
            _close(writer, fwriter, total)
        except BaseException:
            _abort(writer, fwriter)
            raise
        return total
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
        _close(writer, fwriter, total)
    except BaseException:
        _abort(writer, fwriter)
        raise
    if collector is not None:
        total.text = collector.text(total.claims, total.as_dict()["status"])
    return total


def _close(writer: TableWriter | JsonWriter | None, fwriter: TableWriter | None, total: StreamSummary) -> None:
    if isinstance(writer, JsonWriter):
        writer.close(total)
    elif writer is not None:
        writer.close()
    if fwriter is not None:
        fwriter.close()


def _abort(*writers: TableWriter | JsonWriter | None) -> None:
    for w in writers:
        if w is not None:
            w.abort()
