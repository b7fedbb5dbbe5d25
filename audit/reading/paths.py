"""Reading input paths: checks common to every file, then the reader its extension names."""

from __future__ import annotations

import errno
import io
import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from audit.claims import RawTable
from audit.reading.colmap import MapChoice, header_key
from audit.reading.common import printable
from audit.reading.errors import LoadError, NothingToRead
from audit.reading.fields import canonical_columns
from audit.reading.registry import extensions, reader_for, reader_named, readers
from audit.sheets import PASSED_OVER, every_sheet, split_sheet

__all__ = ["MAX_FILE_BYTES", "ReadOptions", "os_error", "read_mapped", "read_parts", "read_path", "read_paths"]

#: Largest input file read (bytes); larger files are refused with a message rather than exhausting memory.
MAX_FILE_BYTES = 2 * 1024**3


@dataclass(frozen=True)
class ReadOptions:
    """Options for the readers that take them (see :attr:`audit.reading.registry.Reader.options`)."""

    #: The sheet of a workbook to read (a name, or a number from 1; ``all`` or ``*``: every sheet shown); None: the
    #: first shown.
    sheet: str | None = None
    #: How headers are mapped (``--columns``, ``--profile``); None: built-in profiles recognised from the header.
    maps: MapChoice | None = None

    def for_reader(self, names: Sequence[str]) -> dict[str, str]:
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


def os_error(exc: OSError) -> str:
    """An operating-system error in words (``permission denied``, ``no space left on device``)."""
    reason = exc.strerror or (errno.errorcode.get(exc.errno or 0) if exc.errno else None) or str(exc) \
        or type(exc).__name__
    reason = reason[0].lower() + reason[1:] if reason[:2] != reason[:2].upper() else reason
    if exc.errno == errno.ELOOP:
        reason += " (a symbolic link loop)"
    return reason


def _stdin_format(data: bytes) -> str:
    """``jsonl`` when standard input holds JSON Lines (a first line that is a whole JSON object, and more lines
    after it: ``cat runs.jsonl | train-audit check -``), ``csv`` when it holds text that is not JSON (``cat
    runs.csv | train-audit check -``: it was refused as "not valid JSON"), else ``json``."""
    start = data.lstrip()[:1]
    if start and start not in (b"{", b"[") and not data.startswith((b"\xef\xbb\xbf{", b"\xef\xbb\xbf[")) \
            and b"\0" not in data[:1024]:
        return "csv"
    lines = data.lstrip().splitlines()
    if len(lines) < 2 or not lines[0].lstrip().startswith(b"{") or not any(x.strip() for x in lines[1:]):
        return "json"
    try:
        return "jsonl" if isinstance(json.loads(lines[0]), dict) else "json"
    except ValueError:
        return "json"


def read_path(path_text: str, stdin: io.BufferedReader | None = None, options: ReadOptions | None = None,
              display: str | None = None) -> RawTable:
    """Read one input path (``-`` reads JSON, JSON Lines or CSV from standard input). Raises :class:`LoadError`
    for unusable files, operating-system errors included (named, with the file).

    The columns are as the file names them; :func:`read_paths` gives them canonical names. ``display``: the name
    used in messages and reports (default: the path as given, with any byte that is not UTF-8 escaped). The
    sheets of a workbook read with ``--sheet all`` come one after the other, each row's file naming its sheet
    (:func:`read_parts` gives them apart).
    """
    parts = read_parts(path_text, stdin, options, display)
    if len(parts) == 1:
        return parts[0]
    table = join(parts)
    table.text_checked = all(p.text_checked for p in parts)
    return table


def read_parts(path_text: str, stdin: io.BufferedReader | None = None, options: ReadOptions | None = None,
               display: str | None = None) -> list[RawTable]:
    """:func:`read_path`, as the tables the reader gives: one, or one per sheet of a workbook read with ``--sheet
    all``, whose ``files`` name their sheet (``book.xlsx[SHEET]``, :mod:`audit.sheets`)."""
    options = options or ReadOptions()
    if path_text == "-":
        file = display or "<stdin>"
        stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise LoadError(file, "standard input is closed")
        try:
            data = stream.read()
        except OSError as exc:
            raise LoadError(file, f"cannot read standard input: {os_error(exc)}") from None
        except ValueError:  # a closed file object
            raise LoadError(file, "standard input is closed") from None
        table = reader_named(_stdin_format(data)).read(Path("-"), file, data)
        table.files = np.full(len(table.frame), file, dtype=object)
        return [table]
    path = Path(path_text)
    file = display or printable(str(path_text))
    try:
        info = os.stat(path)
    except FileNotFoundError:
        dangling = os.path.islink(path)
        raise LoadError(file, "no such file" + (" (a symbolic link to a file that does not exist)" if dangling
                                                else "")) from None
    except OSError as exc:  # a link loop, a name too long, permission denied on a folder on the way
        raise LoadError(file, os_error(exc)) from None
    except ValueError as exc:  # a NUL byte in the name
        raise LoadError(file, f"not a usable file name: {exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise LoadError(file, "is a folder, not a file")
    reader = reader_for(path.suffix)
    if reader is None:
        known = ", ".join(extensions())
        raise LoadError(file, f"unknown file type {path.suffix or '(none)'!r}; use one of {known}")
    try:
        if info.st_size > MAX_FILE_BYTES:
            raise LoadError(file, f"file is {info.st_size / 1e9:.1f} GB; the limit is {MAX_FILE_BYTES / 1e9:.0f} GB")
        if info.st_size == 0 and stat.S_ISREG(info.st_mode):
            raise LoadError(file, "empty file")
        read = reader.read(path, file, None, **options.for_reader(reader.options))
    except MemoryError:
        raise LoadError(file, "too large to read into memory") from None
    except OSError as exc:
        raise LoadError(file, f"cannot read it: {os_error(exc)}") from None
    parts = read if isinstance(read, list) else [read]
    for table in parts:
        if table.files is None:  # a sheet read with --sheet all is named by the reader
            table.files = np.full(len(table.frame), file, dtype=object)
    return parts


def read_mapped(path_text: str, stdin: io.BufferedReader | None = None, options: ReadOptions | None = None,
                display: str | None = None) -> RawTable:
    """One input path with canonical column names (:func:`mapped_columns`). Each sheet of a workbook read with
    ``--sheet all`` is mapped by its own header, its columns not read said for it; a sheet in which no column
    is understood is passed over with a note, unless no sheet has claims (:class:`LoadError`)."""
    options = options or ReadOptions()
    per_row = _keys_per_row(path_text)
    parts = read_parts(path_text, stdin, options, display)
    name = display or (printable(str(path_text)) if path_text != "-" else "<stdin>")
    if len(parts) == 1 and split_sheet(_file_of(parts[0], name))[1] is None:
        return mapped_columns(parts[0], _file_of(parts[0], name), options.maps, per_row=per_row)
    tables: list[RawTable] = []
    notes: list[tuple[str, str]] = []  # in the order of the sheets, those passed over among them
    for part in parts:
        label = _file_of(part, name)
        try:
            table = mapped_columns(part, label, options.maps, per_row=per_row)
        except NothingToRead as exc:
            notes.extend(part.notes)  # how the workbook was read (on its first sheet) is said all the same
            notes.append((label, f"{PASSED_OVER}{exc.message}"))
            continue
        notes.extend(table.notes)
        table.notes = []
        tables.append(table)
    if not tables:
        passed = [f"{split_sheet(f)[1]!r}: {m[len(PASSED_OVER):]}" for f, m in notes if m.startswith(PASSED_OVER)]
        raise LoadError(name, f"no claims in any sheet shown: {'; '.join(passed)}")
    joined = join(tables)
    joined.notes = notes
    return joined


def _file_of(raw: RawTable, default: str) -> str:
    return str(raw.files[0]) if raw.files is not None and len(raw.files) else default


def _keys_per_row(path_text: str) -> bool:
    if path_text == "-":
        return True
    reader = reader_for(Path(path_text).suffix)
    return bool(reader and reader.keys_per_row)


def read_paths(paths: Sequence[str], stdin: io.BufferedReader | None = None, options: ReadOptions | None = None,
               display: Mapping[str, str] | None = None) -> RawTable:
    """Read several inputs into one raw table (rows in input order), columns named by their canonical fields.

    A file in which no column is understood is unusable (:class:`LoadError`). ``display`` maps a path to the name
    reports give it."""
    tables: list[RawTable] = []
    options = options or ReadOptions()
    # --sheet all asks for every sheet of whatever workbooks there are (a setting kept for every run): no error.
    if options.sheet is not None and not every_sheet(options.sheet) \
            and not any(Path(p).suffix.lower() in _options_extensions("sheet") for p in paths):
        raise LoadError("--sheet", "applies to spreadsheets (.xlsx, .xlsm) only, and no input is one")
    for p in paths:
        tables.append(read_mapped(p, stdin, options, (display or {}).get(p)))
    if not tables:
        raise LoadError("(no input)", "no input files")
    return join(tables)


def mapped_columns(raw: RawTable, file: str, maps: MapChoice | None, per_row: bool = False) -> RawTable:
    """Canonical columns of one file's table, through the column map chosen for its headers (a profile recognised
    from them is said in a note)."""
    cmap, recognised = (maps or MapChoice()).for_headers(str(c) for c in raw.frame.columns)
    if recognised is not None:
        raw.notes.append((file, f"read with the built-in column profile {recognised.name!r} "
                                f"({recognised.description}), recognised from its header (--profile none: without)"))
    if maps is not None and maps.columns is not None:
        # A header of your map that the file does not have: most likely a misspelling, which would leave the
        # column it meant unread (a profile's headers are many, and files have some of them: not said).
        have = {header_key(str(c)) for c in raw.frame.columns}
        yours = maps.columns
        missing = [yours.headers.get(k, k) for k in yours.columns if k not in have] + \
            sorted(k for k in yours.keep if k not in have)
        if missing:
            shown = ", ".join(repr(h) for h in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5
                                                                else "")
            raw.notes.append((file, f"the column map ({yours.origin}) names {len(missing)} column"
                                    f"{'s' if len(missing) != 1 else ''} this file does not have: {shown}"))
    return canonical_columns(raw, file, per_row=per_row, require_known=True, columns=cmap)


def _options_extensions(option: str) -> set[str]:
    return {ext for r in readers() if option in r.options for ext in r.extensions}


def join(tables: Sequence[RawTable]) -> RawTable:
    """Tables with canonical columns, one after the other (rows in order; problems and sources follow them)."""
    if len(tables) == 1:
        return tables[0]
    frames = [t.frame for t in tables]
    frame = pd.concat(frames, ignore_index=True, sort=False)
    sizes = [len(f) for f in frames]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    problems = [(int(off) + pos, fld, msg) for t, off in zip(tables, offsets) for pos, fld, msg in t.problems]
    sources: dict[str, pd.Categorical] = {}
    for name in dict.fromkeys(k for t in tables for k in t.sources):
        parts = [t.sources.get(name, pd.Categorical.from_codes(np.zeros(size, dtype=np.int8), [name]))
                 for t, size in zip(tables, sizes)]
        sources[name] = pd.api.types.union_categoricals(parts)
    rows = np.concatenate([t.rows if t.rows is not None else np.arange(1, size + 1)
                           for t, size in zip(tables, sizes)])
    files = np.concatenate([t.files if t.files is not None else np.full(size, "", dtype=object)
                            for t, size in zip(tables, sizes)])
    header_units: dict[str, str | None] = {}
    for t in tables:
        for header, unit in t.header_units.items():
            if header in header_units and header_units[header] != unit:
                raise LoadError(header, f"this column is read in {header_units[header] or 'no unit'} in one file "
                                        f"and {unit or 'no unit'} in another (column maps); audit them separately")
            header_units[header] = unit
    return RawTable(frame, problems, rows=rows, files=files, sources=sources,
                    unread=[u for t in tables for u in t.unread], notes=[n for t in tables for n in t.notes],
                    header_units=header_units, cut=any(t.cut for t in tables))
