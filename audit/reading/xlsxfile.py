"""Spreadsheets (.xlsx, .xlsm), read with openpyxl (the optional ``xlsx`` extra).

One sheet is read: the first shown, or the one ``--sheet`` names; a workbook with several sheets gets a note naming
the sheet read and how to read every sheet (``--sheet all``: each sheet shown is then a table of its own, named
``book.xlsx[SHEET]``, and one with no claims is passed over with a note). Blank rows are not rows (as blank lines
in CSV), and each row keeps its number in the sheet. The header is the first row, unless that names no field and
one of the next rows names two: a title or remarks above the table are then passed over, and a note says so. A
formula cell whose value was never saved (a file written by a program that does not compute formulas) is an
invalid value that says so, not an empty cell.
"""

from __future__ import annotations

import io
import math
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from audit.claims import RawTable
from audit.reading.common import first_line, header_words, mangle, printable
from audit.reading.errors import LoadError
from audit.reading.fields import below_group_headings, drop_empty_unnamed, names_fields
from audit.reading.registry import Reader, register
from audit.sheets import PASSED_OVER, every_sheet, sheet_label

__all__ = ["read_xlsx"]


def read_xlsx(path: Path, file: str, data: bytes | None = None, sheet: str | None = None
              ) -> RawTable | list[RawTable]:
    """One sheet of a workbook (needs openpyxl: ``pip install 'train-audit[xlsx]'``): the first shown, or ``sheet``
    (a name, or a number counting from 1). ``sheet`` ``all`` (or ``*``): every sheet shown, each a table of its
    own named ``book.xlsx[SHEET]`` (:mod:`audit.sheets`); a sheet with no claims is passed over with a note."""
    try:
        import openpyxl
    except ImportError:
        raise LoadError(file, "reading .xlsx needs openpyxl: pip install 'train-audit[xlsx]'") from None
    raw = data if data is not None else path.read_bytes()
    try:
        book = openpyxl.load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many types for a damaged workbook
        raise LoadError(file, f"not a readable spreadsheet: {first_line(exc)}") from None
    every = every_sheet(sheet)
    try:
        names = list(book.sheetnames)
        # The first sheet a reader of the workbook sees: a hidden one (a lookup table) is skipped unless named.
        visible = [n for n in names if getattr(book[n], "sheet_state", "visible") == "visible"] or names
        if every:
            if not names:
                raise LoadError(file, "not a readable spreadsheet: it has no sheets")
            sheets = [(n, _cells(book[n])) for n in visible]
        else:
            title = _choose(visible if sheet is None else names, sheet, file)
            values = _cells(book[title])
    except LoadError:
        raise
    except Exception as exc:
        raise LoadError(file, f"not a readable spreadsheet: {first_line(exc)}") from None
    finally:
        book.close()
    hidden = [n for n in names if n not in visible]
    if every:
        return _every_sheet(raw, file, names, hidden, sheets)
    notes: list[tuple[str, str]] = []
    if len(names) > 1:
        how = (f"--sheet {sheet}" if sheet is not None else "the first" + (" shown" if hidden else "")
               + "; --sheet all reads every sheet, --sheet NAME another")
        notes.append((file, f"read sheet {title!r} ({names.index(title) + 1} of {len(names)}: {', '.join(names)}"
                            f"{'; hidden: ' + ', '.join(hidden) if hidden else ''}; {how})"))
    # What an error about the sheet read says of the others: the sheet may simply be the wrong one.
    others = [n for n in names if n != title]
    where = f"sheet {title!r}" if len(names) > 1 else "the sheet"
    elsewhere = (f" (its other sheets: {', '.join(repr(n) for n in others)}; --sheet NAME reads one, --sheet all "
                 f"every one)" if others else "")
    return _sheet_table(raw, file, title, values, where, elsewhere, notes)


def _every_sheet(raw: bytes, file: str, names: list[str], hidden: list[str],
                 sheets: list[tuple[str, list[tuple[int, tuple]]]]) -> list[RawTable]:
    """Every sheet shown of a workbook (``--sheet all``), each as a table named ``book.xlsx[SHEET]``; a sheet that
    is empty or has a header and no rows is passed over with a note, and a workbook none of whose sheets has
    claims is unusable (:class:`LoadError`)."""
    said = (f"{len(sheets)} of {len(names)}: " if hidden else "") + ", ".join(repr(n) for n, _ in sheets)
    notes: list[tuple[str, str]] = [(file, f"--sheet all: every sheet shown is read ({said}"
                                           + (f"; hidden, not read: {', '.join(repr(n) for n in hidden)}, "
                                              f"--sheet NAME reads one" if hidden else "") + ")")]
    tables: list[RawTable] = []
    passed: list[str] = []
    for title, values in sheets:
        label = sheet_label(file, printable(title))
        try:
            table = _sheet_table(raw, label, title, values, "the sheet", "", [])
        except LoadError as exc:
            reason = exc.message.removeprefix("no claims: ")
            notes.append((label, f"{PASSED_OVER}{reason}"))
            passed.append(f"{title!r} ({reason})")
            continue
        table.files = np.full(len(table.frame), label, dtype=object)
        tables.append(table)
    if not tables:
        raise LoadError(file, f"no claims in any sheet shown: {'; '.join(passed)}"
                              + (f" (hidden: {', '.join(repr(n) for n in hidden)}; --sheet NAME reads one)"
                                 if hidden else ""))
    tables[0].notes[:0] = notes
    return tables


def _sheet_table(raw: bytes, file: str, title: str, values: list[tuple[int, tuple]], where: str, elsewhere: str,
                 notes: list[tuple[str, str]]) -> RawTable:
    """The table of one sheet's cells (``values``, :func:`_cells`), named ``file`` in its notes; ``where``: the
    sheet in an error's words, ``elsewhere``: what an error says of the other sheets."""
    numbers = [r for r, row in values if any(_filled(v) for v in row)]
    rows = [row for _, row in values if any(_filled(v) for v in row)]
    if not rows:
        raise LoadError(file, f"no claims: {where} is empty{elsewhere}")
    top = _header_row(rows)
    if top:
        skipped = "; ".join(f"{numbers[i]}: {_shown(rows[i])}" for i in range(top))
        which = ("below a row of group headings that names fewer" if names_fields(rows[top - 1], 1)
                 else "the first naming fields")
        notes.append((file, f"read the header from row {numbers[top]} of {where}, {which}; the "
                            f"row{'s' if top > 1 else ''} above it ({skipped}) {'are' if top > 1 else 'is'} not "
                            f"read"))
    header, body, row_numbers = rows[top], rows[top + 1:], numbers[top + 1:]
    if not body:
        named = [str(h) for h in header if _filled(h)]
        raise LoadError(file, f"no claims: {where} has a header ({header_words(named)}) but no rows{elsewhere}")
    width = max(len(header), *(len(r) for r in body))
    columns = mangle([_header(h) for h in header] + [""] * (width - len(header)))
    cells = np.full((len(body), width), None, dtype=object)
    for i, row in enumerate(body):
        cells[i, : len(row)] = [v if _filled(v) else None for v in row]
    frame = pd.DataFrame(cells, columns=columns)
    problems = _formulas_without_values(raw, title, row_numbers, columns, cells)
    frame, unnamed = drop_empty_unnamed(frame, file)
    notes.extend(unnamed)
    # openpyxl turns an escape such as _xD800_ in a cell into a lone surrogate: looked at before it is written out.
    return RawTable(frame, problems, rows=np.asarray(row_numbers), notes=notes, text_checked=False)


#: How many non-blank rows a title and remarks above the header may take.
_TITLE_ROWS = 10


def _header_row(rows: list[tuple]) -> int:
    """Where the header is among the first non-blank rows: the first row when it names a field, else the first
    of the next :data:`_TITLE_ROWS` that names two (a report's sheet often opens with a title, a date or a remark
    above its table); 0 when none does (the first row is the header, and reading says what it could not read)."""
    if names_fields(rows[0], 1):
        return below_group_headings(rows[:_TITLE_ROWS + 2], 0)
    for i in range(1, min(len(rows) - 1, _TITLE_ROWS + 1)):
        if names_fields(rows[i], 2):
            return below_group_headings(rows[:_TITLE_ROWS + 2], i)
    return 0


def _shown(row: tuple) -> str:
    """A skipped row's cells, shortened: "'Training runs Q3 2026 (internal)'"."""
    cells = [repr(_header(v)) for v in row if _filled(v)]
    text = ", ".join(cells[:3]) + (", ..." if len(cells) > 3 else "")
    return text if len(text) <= 80 else text[:77] + "..."


def _choose(names: list[str], sheet: str | None, file: str) -> str:
    if sheet is None:
        if not names:
            raise LoadError(file, "not a readable spreadsheet: it has no sheets")
        return names[0]
    if sheet in names:
        return sheet
    if sheet.strip().isdigit() and 1 <= int(sheet) <= len(names):
        return names[int(sheet) - 1]
    raise LoadError(file, f"no sheet {sheet!r}; its sheets are {', '.join(repr(n) for n in names)} (--sheet takes a "
                          f"name or a number from 1)")


def _cells(ws: Any) -> list[tuple[int, tuple]]:
    """Every row of a sheet with its row number (blank rows included: they are dropped, not renumbered); a number
    shown as a percentage as the text it shows (:func:`_shown_value`)."""
    ws.reset_dimensions()  # the saved dimensions may be wrong; read what is there
    return [(number, tuple(_shown_value(c) for c in row)) for number, row in enumerate(ws.iter_rows(), start=1)]


#: A number format that shows a percentage ("0%", "0.0%"): a "%" outside quoted text and not escaped.
_PERCENT_FORMAT = re.compile(r'^(?:[^"\\%]|"[^"]*"|\\.)*%')


def _shown_value(cell: Any) -> Any:
    """A cell's value; a number formatted as a percentage as the percentage it shows ("35%" for 0.35 under "0%"):
    Excel stores the fraction, so under a header that says "%" ("MFU %") the stored 0.35 would read as 0.35 %,
    while the sheet shows, and means, 35 %. A cell's own unit wins over its header's."""
    value = getattr(cell, "value", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        if _PERCENT_FORMAT.match(getattr(cell, "number_format", None) or ""):
            return f"{value * 100:.12g}%"
    return value


def _filled(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def _header(value: Any) -> str:
    if not _filled(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


#: A formula in a sheet's XML (``<f>...</f>`` or ``<f t="shared" .../>``).
_FORMULA_TAG = re.compile(rb"<(?:\w+:)?f[\s>/]")


def _formulas_without_values(raw: bytes, title: str, row_numbers: list[int], columns: list[str],
                             cells: np.ndarray) -> list[tuple[int, str, str]]:
    """Rows whose cell holds a formula with no saved value: read again with formulas, only when the workbook has
    any (a search of its sheets' XML), and only the cells that came out empty."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            if not any(_FORMULA_TAG.search(z.read(n)) for n in z.namelist() if n.startswith("xl/worksheets/")):
                return []
    except (zipfile.BadZipFile, OSError, KeyError):
        return []
    import openpyxl

    book = openpyxl.load_workbook(io.BytesIO(raw), read_only=True, data_only=False)
    try:
        formulas = _cells(book[title])
    finally:
        book.close()
    position = {number: i for i, number in enumerate(row_numbers)}
    problems: list[tuple[int, str, str]] = []
    for number, row in formulas:
        i = position.get(number)
        if i is None:
            continue
        for j, value in enumerate(row[: cells.shape[1]]):
            if cells[i, j] is None and isinstance(value, str) and value.startswith("="):
                shown = value if len(value) <= 40 else value[:37] + "..."
                problems.append((i, columns[j], f"the cell holds a formula ({shown}) with no saved value: open and "
                                                f"save the file in a spreadsheet program, or give the value"))
    return problems


register(Reader("xlsx", (".xlsx", ".xlsm"), read_xlsx, options=("sheet",)))
