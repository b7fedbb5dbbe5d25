"""The data model of claims as read: a raw table of cells, and the normalized claims frame.

Reading and normalizing live in :mod:`audit.reading`; this module only defines what they produce, so the engine
and the renderers can depend on the model without importing the readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from audit.lazy import pandas as pd  # imported on first use: quick start-up

__all__ = ["Claims", "RawTable", "UnreadColumn"]

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
      bare numbers (None: none), used instead of the unit the header's own brackets name.
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


@dataclass
class Claims:
    """The claims frame: one row per claim, in input order.

    - ``values``: float64 column per input quantity (NaN when unknown or invalid);
    - ``text``: the original cell text for each quantity (None when absent);
    - ``info``: id, name, source, hardware, precision (normalized), precision_text, file, row;
    - ``extras``: unknown input fields, kept for display;
    - ``invalid``: long table with columns row, field, message;
    - ``unread_columns``: every input column (or JSON key) that was not understood, once per file:
      (file, column as written, a did-you-mean naming canonical fields, or None). They are kept in ``extras``;
    - ``notes``: (file, message) said about an input as it was read (the sheet read from a workbook, a second
      column for a citation kept as an extra field, keys beside ``"claims"`` that were not read).
    """

    values: pd.DataFrame
    text: pd.DataFrame
    info: pd.DataFrame
    extras: pd.DataFrame
    invalid: pd.DataFrame
    unread_columns: list[UnreadColumn] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    #: Cells read as *not stated*, with why (row, field, message): a fine-tune compute of 0, a cell listing two
    #: different figures. Reported as info findings (V003), never silently.
    readings: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        {"row": pd.Series([], dtype=int), "field": pd.Series([], dtype=object), "message": pd.Series([], dtype=object)}))

    def __len__(self) -> int:
        return len(self.values)
