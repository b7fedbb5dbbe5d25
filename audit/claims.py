"""The data model of claims as read: a raw table of cells, and the normalized claims frame.

Reading and normalizing live in :mod:`audit.reading`; this module only defines what they produce, so the engine
and the renderers can depend on the model without importing the readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from audit.lazy import pandas as pd  # imported on first use: quick start-up

__all__ = ["ArrowText", "Claims", "RawTable", "UnreadColumn"]

#: A column (or JSON key) of an input file that was not read: (file, column as written, did-you-mean or None).
UnreadColumn = tuple[str, str, "str | None"]


@dataclass
class RawTable:
    """Cells as read, one row per input row, plus structural problems found while reading.

    - ``frame``: one column per input column, cells as written. Only the file's own columns: where each row came
      from is kept apart (``rows``, ``files``), so a user column may have any name (``_row`` included). Once the
      columns are canonical (:func:`audit.reading.normalize.canonical_columns`), a known field is one column
      under its canonical name and every other column keeps its header;
    - ``problems`` rows: (row position, field or '', message), each making that row's claim invalid;
    - ``rows``: each row's number in its file (None: 1, 2, ...); ``files``: each row's file (None: not known);
    - ``sources``: for each canonical column, the header (or JSON key) each row's cell was read from, as a
      categorical (a JSON row may spell a field its own way). A unit named in that header (``Training time
      (hours)``) applies to the bare numbers read from it;
    - ``unread``: columns not understood, once per file, with a did-you-mean; ``notes``: (file, message) said
      about a file as it was read (which sheet, a column kept as an extra field, ...);
    - ``text_checked``: False when cells may hold text that cannot be written out (a lone surrogate from a JSON
      escape such as ``"\\ud800"``); :func:`canonical_columns` then escapes it;
    - ``header_units``: for headers read through a column map (:mod:`audit.reading.colmap`), the unit of their
      bare numbers (None: none), used instead of the unit the header's own brackets name;
    - ``arrow_text``: for a column of text converted from an Arrow string column (Parquet), that column
      (:class:`ArrowText`, by the frame's column name): the normalizer reads which cells hold text, their lengths
      and their distinct texts from it, not from the Python strings;
    - ``cut``: the rows are a part of their file, read in batches (:mod:`audit.stream`).
    """

    frame: pd.DataFrame
    problems: list[tuple[int, str, str]] = field(default_factory=list)
    rows: np.ndarray | None = None
    files: np.ndarray | None = None
    sources: dict[str, pd.Categorical] = field(default_factory=dict)
    unread: list[UnreadColumn] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    text_checked: bool = True
    header_units: dict[str, str | None] = field(default_factory=dict)
    arrow_text: dict[str, "ArrowText"] = field(default_factory=dict)
    cut: bool = False


@dataclass(frozen=True)
class ArrowText:
    """A frame column of text (Python strings, None where missing) and the Arrow string column it was converted
    from, cell for cell. Held only as long as the column is that very array: :meth:`of` gives the Arrow column
    only for a series over the same memory (a column copied, changed into a new array or sliced is not it)."""

    cells: np.ndarray
    array: Any

    def of(self, series: pd.Series) -> Any:
        """The Arrow column (one array, not chunked) when ``series`` holds the cells it was converted to, else
        None."""
        if series.dtype != object:
            return None
        values = series.to_numpy(dtype=object)
        # The same buffer, length and step: the same cells (``cells`` keeps the buffer alive, so its address is
        # not reused by another array).
        if (values.shape != self.cells.shape or values.strides != self.cells.strides
                or values.__array_interface__["data"][0] != self.cells.__array_interface__["data"][0]):
            return None
        array = self.array
        if hasattr(array, "num_chunks"):  # a ChunkedArray: one array (a single chunk is taken as it is)
            array = array.chunk(0) if array.num_chunks == 1 else array.combine_chunks()
        return array


@dataclass
class Claims:
    """The claims frame: one row per claim, in input order.

    - ``values``: float64 column per input quantity (NaN when unknown or invalid);
    - ``text``: the original cell text for each quantity (None when absent). A column of number cells is kept as
      its numbers (``numbers_written``) and its texts (each number's ``repr``) are made when first asked for: a
      batch written to a table never needs them (the engine reads the precision of a number from the number,
      :func:`audit.significance.log_half_widths_of_numbers`);
    - ``info``: id, name, source, hardware, precision (normalized), precision_text, file, row;
    - ``extras``: unknown input fields, kept for display;
    - ``invalid``: long table with columns row, field, message;
    - ``unread_columns``: every input column (or JSON key) that was not understood, once per file:
      (file, column as written, a did-you-mean naming canonical fields, or None). They are kept in ``extras``;
    - ``notes``: (file, message) said about an input as it was read (the sheet read from a workbook, a second
      column for a citation kept as an extra field, keys beside ``"claims"`` that were not read).
    """

    values: pd.DataFrame
    stated_text: pd.DataFrame
    info: pd.DataFrame
    extras: pd.DataFrame
    invalid: pd.DataFrame
    unread_columns: list[UnreadColumn] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    #: How cells were read where it needs saying (row, field, message, rule): read as *not stated*, with why (a
    #: fine-tune compute of 0, a cell listing two different figures: V003), or a figure written as a bound (V011).
    #: Reported as info findings, never silently.
    readings: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        {"row": pd.Series([], dtype=int), "field": pd.Series([], dtype=object), "message": pd.Series([], dtype=object),
         "rule": pd.Series([], dtype=object)}))
    #: Columns of ``stated_text`` left empty because their cells were numbers: each column's numbers as read
    #: (NaN where a cell was empty), whose reprs are the texts.
    numbers_written: dict[str, np.ndarray] = field(default_factory=dict)
    #: The claims are a part of their file, read in batches (:mod:`audit.stream`): what a file's rows give
    #: together (a total row's sum, V018) cannot be made from them.
    cut: bool = False
    #: ``text``, made by the first look at it (a copy made by ``dataclasses.replace`` starts without it).
    _text: pd.DataFrame | None = field(default=None, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.values)

    @property
    def text(self) -> pd.DataFrame:
        """The cell text of each quantity as written (None when absent); a number cell's text is its ``repr``."""
        if self._text is None:
            if not self.numbers_written:
                self._text = self.stated_text
            else:
                text = self.stated_text.copy()
                for name, numbers in self.numbers_written.items():
                    text[name] = texts_of_numbers(numbers)
                self._text = text
        return self._text

    def text_of(self, name: str) -> pd.Series:
        """``text[name]``, without making the texts of the other columns of number cells."""
        if self._text is not None:
            return self._text[name]
        if name in self.numbers_written:
            return pd.Series(texts_of_numbers(self.numbers_written[name]), index=self.stated_text.index, dtype=object)
        return self.stated_text[name]

    def has_text(self, name: str) -> bool:
        """Whether ``text`` has a column ``name`` (without making the texts of number cells)."""
        return name in self.stated_text.columns


def texts_of_numbers(numbers: np.ndarray) -> np.ndarray:
    """Each number's ``repr`` (None for NaN), as an object array: made once per distinct number when numbers repeat
    (chip counts, layer counts)."""
    arr = np.asarray(numbers, dtype=np.float64)
    present = np.flatnonzero(~np.isnan(arr))
    out = np.full(len(arr), None, dtype=object)
    out[present] = distinct_texts(arr[present].view(np.int64), lambda bits: bits.view(np.float64), repr)
    return out


def distinct_texts(keys: np.ndarray, numbers: Any, to_text: Any) -> np.ndarray:
    """``to_text`` of each number, made once per distinct number when numbers repeat (chip counts, layer
    counts). ``keys``: int64 keys that tell the numbers apart exactly (a float's bits, so ``-0.0`` is not ``0.0``);
    ``numbers(keys)`` turns keys back into the numbers."""
    # A strided sample of 1,024 mostly distinct (measured floats): the numbers are too, and are not looked up.
    sample = keys[:: max(1, len(keys) // 1024)]
    if len(keys) < 2 or len(np.unique(sample)) > len(sample) // 2:
        return np.array(list(map(to_text, numbers(keys).tolist())), dtype=object)
    codes, uniques = pd.factorize(keys)
    if len(uniques) > len(keys) // 2:  # mostly distinct: the look-up would cost more than it saves
        return np.array(list(map(to_text, numbers(keys).tolist())), dtype=object)
    return np.array(list(map(to_text, numbers(np.asarray(uniques)).tolist())), dtype=object)[codes]
