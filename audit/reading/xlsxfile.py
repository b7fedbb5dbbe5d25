"""Spreadsheets (.xlsx, .xlsm): the first sheet, read with openpyxl (the optional ``xlsx`` extra)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from audit.claims import RawTable
from audit.reading.common import drop_empty_unnamed, first_line, header_words, with_origin
from audit.reading.errors import LoadError
from audit.reading.registry import Reader, register

__all__ = ["read_xlsx"]


def read_xlsx(path: Path, file: str, data: bytes | None = None) -> RawTable:
    """A spreadsheet's first sheet (needs openpyxl: ``pip install 'train-audit[xlsx]'``)."""
    try:
        frame = pd.read_excel(path if data is None else io.BytesIO(data), dtype=object)
    except ImportError:
        raise LoadError(file, "reading .xlsx needs openpyxl: pip install 'train-audit[xlsx]'") from None
    except Exception as exc:  # openpyxl raises many types for a damaged workbook
        raise LoadError(file, f"not a readable spreadsheet: {first_line(exc)}") from None
    if len(frame) == 0:
        raise LoadError(file, f"no claims: the first sheet has a header ({header_words(frame.columns)}) but no rows")
    frame = frame.astype(object).where(frame.notna(), None)
    frame.index = range(len(frame))
    frame = drop_empty_unnamed(frame)
    frame = with_origin(frame, np.arange(2, len(frame) + 2))
    return RawTable(frame)


register(Reader("xlsx", (".xlsx", ".xlsm"), read_xlsx))
