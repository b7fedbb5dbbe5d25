"""The data model of claims as read: a raw table of cells, and the normalized claims frame.

Reading and normalizing live in :mod:`audit.reading`; this module only defines what they produce, so the engine
and the renderers can depend on the model without importing the readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

__all__ = ["Claims", "RawTable"]


@dataclass
class RawTable:
    """Cells as read, one row per input row, plus structural problems found while reading.

    - ``frame``: one column per input column (known ones renamed to their canonical names once the columns are
      canonical), cells as written, plus the origin columns ``_row`` and (once known) ``_file``;
    - ``problems`` rows: (row position, field or '', message), each making that row's claim invalid;
    - ``header_units``: for a canonical column whose header named a unit (``Training time (hours)``), the row
      ranges ``(start, stop, unit)`` (positions, stop excluded) read under that header. A bare number in those
      rows is in that unit. Ranges, not one unit per column, because files with different headers are read
      into one table.
    """

    frame: pd.DataFrame
    problems: list[tuple[int, str, str]] = field(default_factory=list)
    header_units: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)


@dataclass
class Claims:
    """The claims frame: one row per claim, in input order.

    - ``values``: float64 column per input quantity (NaN when unknown or invalid);
    - ``text``: the original cell text for each quantity (None when absent);
    - ``info``: id, name, source, hardware, precision (normalized), precision_text, file, row;
    - ``extras``: unknown input fields, kept for display;
    - ``invalid``: long table with columns row, field, message.
    """

    values: pd.DataFrame
    text: pd.DataFrame
    info: pd.DataFrame
    extras: pd.DataFrame
    invalid: pd.DataFrame

    def __len__(self) -> int:
        return len(self.values)
