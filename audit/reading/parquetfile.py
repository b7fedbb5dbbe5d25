"""Parquet: columns keep their types, so numeric columns are parsed with no Python loop."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from audit.claims import ArrowText, RawTable
from audit.reading.common import first_line, header_words, mangle
from audit.reading.errors import LoadError
from audit.reading.registry import Reader, register

if TYPE_CHECKING:  # pyarrow is imported on first Parquet input only
    import pyarrow as pa

__all__ = ["raw_from_arrow", "read_parquet"]


def read_parquet(path: Path, file: str, data: bytes | None = None) -> RawTable:
    """Parquet: columns keep their types; numbers stay numbers and strings are parsed as written text."""
    # Imported on first Parquet input only: pyarrow takes a noticeable part of a second to import.
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # ParquetFile.read, not read_table: the dataset reader behind read_table refuses a column name given
        # twice, which Parquet allows (the second is kept as an extra field here).
        with pq.ParquetFile(path if data is None else io.BytesIO(data)) as handle:
            table = handle.read()
    except (pa.ArrowException, OSError, ValueError, EOFError) as exc:
        raise LoadError(file, f"not a readable Parquet file: {first_line(exc)}") from None
    if table.num_rows == 0:
        columns = f"columns ({header_words(table.column_names)}) but " if table.column_names else ""
        raise LoadError(file, f"no claims: the file has {columns}no rows")
    return raw_from_arrow(table, file)


def raw_from_arrow(table: "pa.Table", file: str, first_row: int = 1) -> RawTable:
    """A raw table from an Arrow table read from ``file`` (all of it, or a record batch whose first row is row
    ``first_row`` of the file: :mod:`audit.stream` reads large files this way)."""
    import pyarrow as pa

    names = mangle([str(c) for c in table.column_names])  # Parquet allows a column name twice
    try:
        table = table.rename_columns(names)
        frame = _to_pandas(table)
    except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
        raise LoadError(file, f"Parquet columns cannot be read: {first_line(exc)}") from None
    types = {name: table.schema.field(i).type for i, name in enumerate(names)}
    frame = _object_columns(frame, types)
    frame.index = range(len(frame))
    # The text columns as Arrow holds them: the normalizer reads which cells are given, their lengths and their
    # distinct texts from these, with no look at the Python strings (nor converting them back to Arrow).
    arrow_text = {name: ArrowText(frame[name].to_numpy(dtype=object), table.column(i))
                  for i, name in enumerate(names)
                  if (pa.types.is_string(types[name]) or pa.types.is_large_string(types[name]))
                  and frame[name].dtype == object}
    return RawTable(frame, rows=np.arange(first_row, first_row + len(frame)), arrow_text=arrow_text)


#: Rows sampled to tell a text column of mostly distinct cells (ids, figures with their units) from one of few.
_SAMPLE = 2048


def _to_pandas(table: "pa.Table") -> pd.DataFrame:
    """``table.to_pandas(integer_object_nulls=False, date_as_object=True)``, with the text columns whose cells are
    mostly distinct converted without Arrow's sharing of one Python string per distinct text: it hashes every
    cell, which makes converting 100,000 distinct ids cost 36 ms instead of 10 ms. Columns of few distinct texts
    (hardware, precision) keep it: sharing makes them faster to convert and to factorize. The frame is the same
    (columns, order, dtypes, values); a file whose pandas metadata could make Arrow shape the frame otherwise (an
    index column, a column index with a name, text restored as another dtype) is converted whole as before."""
    import pyarrow as pa
    import pyarrow.compute as pc

    options = {"integer_object_nulls": False, "date_as_object": True}
    n = table.num_rows
    distinct = []
    if n > _SAMPLE and _plain_pandas_metadata(table.schema):
        for i, f in enumerate(table.schema):
            if pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
                sample = table.column(i).slice(0, _SAMPLE)
                given = len(sample) - sample.null_count
                if given and pc.count_distinct(sample).as_py() > given // 2:
                    distinct.append(i)
    if not distinct:
        return table.to_pandas(**options)
    rest = [i for i in range(table.num_columns) if i not in distinct]
    frame = table.select(rest).to_pandas(**options) if rest else pd.DataFrame(index=pd.RangeIndex(n))
    for i in distinct:  # in increasing order: each goes where it was in the table
        values = table.column(i).to_pandas(deduplicate_objects=False, **options).to_numpy(dtype=object)
        frame.insert(i, table.column_names[i], values)
    return frame


def _plain_pandas_metadata(schema: "pa.Schema") -> bool:
    """Whether Arrow converts the table as its columns alone: no pandas metadata, or metadata with no index column,
    an unnamed column index of text labels, and every text column restored as Python strings."""
    meta = schema.pandas_metadata
    if meta is None:
        return True
    if not all(isinstance(c, dict) for c in meta.get("index_columns", [])):
        return False
    if any(c.get("name") is not None or c.get("pandas_type") != "unicode" for c in meta.get("column_indexes", [])):
        return False
    columns = meta.get("columns", [])
    return (all(c.get("numpy_type") == "object" for c in columns if c.get("pandas_type") == "unicode")
            and not any(str(c.get("numpy_type")).startswith("str") for c in columns))  # pandas' string dtypes


def _as_is(arrow_type: "pa.DataType | None", dtype: object) -> bool:
    """Whether a column converted by Arrow is already as :func:`_object_columns` makes it: text (Arrow gives Python
    strings with None for missing) or only missing values, in an object column; or float64 numbers."""
    import pyarrow as pa

    if dtype == np.float64:
        return True
    return dtype == object and arrow_type is not None and (
        pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
        or getattr(pa.types, "is_string_view", lambda t: False)(arrow_type)  # pyarrow 16 and later
        or pa.types.is_null(arrow_type))


def _object_columns(frame: pd.DataFrame, arrow_types: dict[str, "pa.DataType"] | None = None) -> pd.DataFrame:
    """Numeric columns stay numeric (parsed with no Python loop); every other column becomes Python objects
    with None for missing (categoricals, dates and nested values included). Columns already so (text and float64,
    most of a file) are kept as they are, not copied; ``arrow_types``: each column's type in the Arrow table."""
    arrow_types = arrow_types or {}
    out = {}
    changed = False
    for col in frame.columns:
        series = frame[col]
        dtype = series.dtype
        if _as_is(arrow_types.get(col), dtype) or (pd.api.types.is_integer_dtype(dtype)
                                                    and not isinstance(dtype, pd.CategoricalDtype)):
            out[col] = series
        elif (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
                and not pd.api.types.is_complex_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype)):
            out[col], changed = series.astype("float64"), True
        else:
            out[col], changed = series.astype(object).where(series.notna(), None), True
    return pd.DataFrame(out, index=frame.index) if changed else frame


register(Reader("parquet", (".parquet", ".pq"), read_parquet))
