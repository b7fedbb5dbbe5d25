"""Reading claims: JSON, JSON Lines, CSV/TSV, Parquet and spreadsheets, normalized into a claims frame.

Each format is a module that registers a :class:`Reader` for its extensions (:mod:`audit.reading.registry`);
:func:`read_path` picks one by extension, :func:`read_paths` joins several files with canonical column names, and
:func:`normalize` turns the raw table into :class:`audit.claims.Claims`. A problem with a whole file raises
:class:`LoadError`; a problem with a row never stops the batch, it makes that claim invalid.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from audit.claims import Claims, RawTable
# The format modules register their readers when imported.
from audit.reading import csvfile, jsonfile, parquetfile, xlsxfile  # noqa: F401
from audit.reading.errors import LoadError
from audit.reading.fields import canonical_columns, did_you_mean
from audit.reading.jsonfile import MAX_JSON_DEPTH, frame_from_items, json_depth
from audit.reading.normalize import normalize
from audit.reading.paths import ReadOptions, read_path, read_paths
from audit.reading.registry import Reader, extensions, reader_for, readers, register
from audit.resources import data_path

__all__ = [
    "BUNDLED_NAME",
    "MAX_JSON_DEPTH",
    "LoadError",
    "RawTable",
    "ReadOptions",
    "Reader",
    "bundled_corpus_path",
    "canonical_columns",
    "claims_from_records",
    "did_you_mean",
    "extensions",
    "json_depth",
    "load",
    "normalize",
    "read_path",
    "read_paths",
    "reader_for",
    "readers",
    "register",
]

#: How the bundled corpus is named in reports (not its install path, so reports are the same on every machine).
BUNDLED_NAME = "corpus.csv (bundled)"


def bundled_corpus_path() -> Path:
    """The bundled corpus of published training runs (audited when no path is given)."""
    return data_path("corpus.csv")


def load(paths: Sequence[str], stdin: io.BufferedReader | None = None, sheet: str | None = None) -> Claims:
    """Read and normalize input paths (no paths: the bundled corpus). ``sheet``: the sheet of a workbook to read
    (a name, or a number from 1; default the first)."""
    options = ReadOptions(sheet=sheet)
    if not paths:
        # Looked up in this module at call time, so the command line and a test that replaces it agree.
        corpus = str(bundled_corpus_path())
        return normalize(read_paths([corpus], options=options, display={corpus: BUNDLED_NAME}))
    return normalize(read_paths(paths, stdin, options))


def claims_from_records(records: list[dict[str, Any]], file: str = "<records>") -> Claims:
    """Claims from in-memory dicts (the library API and ``estimate``). Keys are mapped record by record."""
    table = frame_from_items(list(records), file)
    table.files = np.full(len(table.frame), file, dtype=object)
    return normalize(canonical_columns(table, file, per_row=True))
