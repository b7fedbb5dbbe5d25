"""The input formats: each reader module registers a :class:`Reader` for its file extensions.

Adding a format is one module in ``audit/reading/`` that calls :func:`register` when imported (the package
imports every module of its folder); :func:`audit.reading.paths.read_path` finds the reader by the file's
extension.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from audit.claims import RawTable

__all__ = ["ReadFunction", "Reader", "extensions", "reader_for", "reader_named", "readers", "register"]

#: ``read(path, file, data)``: ``file`` is the name used in messages; ``data``, when given, holds the file's bytes
#: (standard input) and ``path`` is not opened. Raises :class:`audit.reading.errors.LoadError` for a file that
#: cannot be used. A reader that takes options (``--sheet``) names them in :attr:`Reader.options`; they are
#: passed as keyword arguments.
ReadFunction = Callable[..., RawTable]


@dataclass(frozen=True)
class Reader:
    """One input format: its name, the file extensions it reads (lowercase, with the dot) and its read function.

    ``keys_per_row``: each row names its own fields (JSON objects), so fields are mapped row by row; otherwise a
    column's header names the field of every cell below it. ``options``: the reading options its read function
    takes (keyword arguments), e.g. ``("sheet",)``."""

    name: str
    extensions: tuple[str, ...]
    read: ReadFunction
    keys_per_row: bool = False
    options: tuple[str, ...] = ()


_BY_NAME: dict[str, Reader] = {}
_BY_EXTENSION: dict[str, Reader] = {}


def register(reader: Reader) -> Reader:
    """Make ``reader`` read its extensions. Registering a reader of the same name again replaces it (a module
    reload); an extension already read by another format is refused, since the choice would depend on import
    order."""
    for ext in reader.extensions:
        if not ext.startswith(".") or ext != ext.lower():
            raise ValueError(f"extension {ext!r} of reader {reader.name!r}: use a lowercase suffix with its dot")
        other = _BY_EXTENSION.get(ext)
        if other is not None and other.name != reader.name:
            raise ValueError(f"extension {ext!r} is already read by {other.name!r}")
    old = _BY_NAME.pop(reader.name, None)
    if old is not None:
        for ext in old.extensions:
            _BY_EXTENSION.pop(ext, None)
    _BY_NAME[reader.name] = reader
    for ext in reader.extensions:
        _BY_EXTENSION[ext] = reader
    return reader


def reader_for(extension: str) -> Reader | None:
    """The reader of a file extension (``".CSV"`` as ``".csv"``), or None when no format claims it."""
    return _BY_EXTENSION.get(extension.lower())


def reader_named(name: str) -> Reader:
    """The reader registered under ``name`` (``"json"``); KeyError when there is none."""
    return _BY_NAME[name]


def readers() -> tuple[Reader, ...]:
    """Every registered reader, by name."""
    return tuple(_BY_NAME[name] for name in sorted(_BY_NAME))


def extensions() -> list[str]:
    """Every extension some reader claims, sorted (the list an unknown file type is told to use)."""
    return sorted(_BY_EXTENSION)
