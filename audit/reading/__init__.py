"""Reading claims: JSON, JSON Lines, CSV/TSV, Parquet and spreadsheets, normalized into a claims frame.

Each format is a module that registers a :class:`Reader` for its extensions (:mod:`audit.reading.registry`);
:func:`read_path` picks one by extension, :func:`read_paths` joins several files with canonical column names, and
:func:`normalize` turns the raw table into :class:`audit.claims.Claims`. A problem with a whole file raises
:class:`LoadError`; a problem with a row never stops the batch, it makes that claim invalid.
"""

from __future__ import annotations

import importlib
import io
import pkgutil
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from audit.claims import Claims, RawTable
from audit.reading.colmap import ColumnMap, MapChoice, load_column_map, profile_names, resolve_maps
from audit.reading.errors import LoadError
from audit.reading.fields import canonical_columns, did_you_mean
from audit.reading.jsonfile import MAX_JSON_DEPTH, frame_from_items, json_depth
from audit.reading.normalize import normalize
from audit.reading.paths import ReadOptions, join, mapped_columns, read_path, read_paths
from audit.reading.registry import Reader, extensions, reader_for, readers, register
from audit.resources import data_path

# Every module of this package is imported here, so a format module registers its reader (registry.register)
# just by being in the folder: adding an input format is one module.
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "BUNDLED_NAME",
    "ColumnMap",
    "MapChoice",
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
    "load_column_map",
    "normalize",
    "profile_names",
    "read_path",
    "read_paths",
    "reader_for",
    "readers",
    "register",
    "resolve_maps",
]

#: How the bundled corpus is named in reports (not its install path, so reports are the same on every machine).
BUNDLED_NAME = "corpus.csv (bundled)"


def bundled_corpus_path() -> Path:
    """The bundled corpus of published training runs (audited when no path is given)."""
    return data_path("corpus.csv")


def load(paths: Sequence[str], stdin: io.BufferedReader | None = None, sheet: str | None = None,
         columns: str | Path | ColumnMap | None = None, profile: str | None = None, mlflow: str | None = None,
         experiments: Sequence[str] = ()) -> Claims:
    """Read and normalize input paths (no paths and no ``mlflow``: the bundled corpus). ``sheet``: the sheet of a
    workbook to read (a name, or a number from 1; default the first). ``columns``: a column map (a .toml/.json
    file or a :class:`ColumnMap`) laid over ``profile`` (a built-in profile such as ``"epoch"``; without one, a
    profile is recognised from each file's headers; ``"none"``: never). ``mlflow``: also read the runs of this
    MLflow tracking store (``experiments``: only these; :mod:`audit.reading.mlflow`)."""
    options = ReadOptions(sheet=sheet, maps=resolve_maps(columns, profile))
    if not paths and mlflow is None:
        # Looked up in this module at call time, so the command line and a test that replaces it agree.
        corpus = str(bundled_corpus_path())
        return normalize(read_paths([corpus], options=options, display={corpus: BUNDLED_NAME}))
    tables = [read_paths(paths, stdin, options)] if paths else []
    if mlflow is not None:
        from audit.reading.mlflow import read_mlflow

        raw = read_mlflow(mlflow, experiments)
        tables.append(mapped_columns(raw, f"mlflow:{mlflow}", options.maps, per_row=True))
    return normalize(join(tables))


def claims_from_records(records: Sequence[Mapping[str, Any]], file: str = "<records>",
                        columns: ColumnMap | None = None) -> Claims:
    """Claims from in-memory dicts (the library API and ``estimate``). Keys are mapped record by record, through
    ``columns`` when given (a column map)."""
    table = frame_from_items(list(records), file)
    table.files = np.full(len(table.frame), file, dtype=object)
    return normalize(canonical_columns(table, file, per_row=True, columns=columns))
