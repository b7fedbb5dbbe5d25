"""Reading input paths: checks common to every file, then the reader its extension names."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Sequence

import pandas as pd

from audit.claims import RawTable
from audit.reading.errors import LoadError
from audit.reading.normalize import canonical_columns
from audit.reading.registry import extensions, reader_for, reader_named

__all__ = ["MAX_FILE_BYTES", "read_path", "read_paths"]

#: Largest input file read (bytes); larger files are refused with a message rather than exhausting memory.
MAX_FILE_BYTES = 2 * 1024**3


def read_path(path_text: str, stdin: io.BufferedReader | None = None) -> RawTable:
    """Read one input path (``-`` reads JSON from standard input). Raises :class:`LoadError` for unusable files.

    The columns are as the file names them; :func:`read_paths` renames them to canonical names.
    """
    if path_text == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = stream.read()
        table = reader_named("json").read(Path("-"), "<stdin>", data)
        table.frame["_file"] = "<stdin>"
        return table
    path = Path(path_text)
    file = str(path_text)
    if not path.exists():
        raise LoadError(file, "no such file")
    if path.is_dir():
        raise LoadError(file, "is a folder, not a file")
    reader = reader_for(path.suffix)
    if reader is None:
        known = ", ".join(extensions())
        raise LoadError(file, f"unknown file type {path.suffix or '(none)'!r}; use one of {known}")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise LoadError(file, f"file is {size / 1e9:.1f} GB; the limit is {MAX_FILE_BYTES / 1e9:.0f} GB")
        if size == 0:
            raise LoadError(file, "empty file")
        table = reader.read(path, file, None)
    except PermissionError:
        raise LoadError(file, "permission denied") from None
    except MemoryError:
        raise LoadError(file, "too large to read into memory") from None
    table.frame["_file"] = file
    return table


def read_paths(paths: Sequence[str], stdin: io.BufferedReader | None = None) -> RawTable:
    """Read several inputs into one raw table (rows in input order), columns renamed to canonical names."""
    frames: list[pd.DataFrame] = []
    problems: list[tuple[int, str, str]] = []
    header_units: dict[str, list[tuple[int, int, str]]] = {}
    offset = 0
    for p in paths:
        table = canonical_columns(read_path(p, stdin))
        frames.append(table.frame)
        problems.extend((offset + pos, fld, msg) for pos, fld, msg in table.problems)
        # Each file's header units cover its own rows only: another file may name the column without a unit.
        for name, spans in table.header_units.items():
            header_units.setdefault(name, []).extend((offset + a, offset + b, u) for a, b, u in spans)
        offset += len(table.frame)
    if not frames:
        raise LoadError("(no input)", "no input files")
    frame = pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0]
    frame = frame.reset_index(drop=True)
    return RawTable(frame, problems, header_units)
