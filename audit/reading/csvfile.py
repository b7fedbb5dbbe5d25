"""CSV and TSV with a header row: every cell read as text, ragged rows kept, another separator recognised."""

from __future__ import annotations

import csv
import io
import re
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from audit.claims import RawTable
from audit.quantities import canonical_column
from audit.reading.common import first_line, header_words, mangle, read_text
from audit.reading.errors import LoadError
from audit.reading.fields import below_group_headings, drop_empty_unnamed, names_fields
from audit.reading.registry import Reader, register

__all__ = ["read_csv", "read_tsv"]


def read_csv(path: Path, file: str, data: bytes | None = None, sep: str = ",", _skipped: int = 0) -> RawTable:
    """CSV (or TSV) with a header row; every cell read as text, so the original is kept.

    A row with more cells than the header is kept and made invalid (its extra cells are named in the message);
    a row with fewer cells has its last fields missing. A header without rows is a whole-file problem. A title
    above the header is passed over, and said (:func:`_title`).
    """
    text = read_text(path, data, file)
    if not text.strip():
        raise LoadError(file, "empty file")
    hint = _SEP_LINE.match(text)
    if hint:  # Excel's "sep=;" first line names the separator; it is not the header
        sep, text = hint.group("sep"), text[hint.end():]
        if not text.strip():
            raise LoadError(file, f"no claims: the file has only the separator line {hint.group().strip()!r}")
    skipped, sep, text, said = _title(text, sep, file, bool(hint))
    if skipped:  # read again from the header on, its rows numbered after the ones passed over
        table = read_csv(path, file, data=text.encode("utf-8"), sep=sep, _skipped=_skipped + skipped)
        table.notes = [said, *table.notes]
        return table
    # Only an empty cell is missing ("NA", "null" stay text, read by the units parser); pandas' parser marks empty
    # cells itself, which costs less than comparing every cell with "" afterwards.
    options = dict(dtype=str, keep_default_na=False, na_values=[""], sep=sep, skipinitialspace=True,
                   index_col=False)
    problems: list[tuple[int, str, str]] = []
    if _header_width(text, sep) > WIDE:  # pandas builds one Series per column: 7 s for 100,000 of them
        frame, problems = _read_wide_csv(text, file, sep)
        table = _finish(frame, problems, file)
        table.rows = np.asarray(table.rows) + _skipped
        return table
    try:
        with warnings.catch_warnings():
            # pandas warns, and drops cells, when the first row is longer than the header: read it again.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(io.StringIO(text), **options)
    except pd.errors.EmptyDataError:
        raise LoadError(file, "empty file") from None
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "EOF inside string" in message or "EOF following escape" in message:
            raise LoadError(file, f"not readable as CSV: a quoted cell is never closed "
                                  f"({message.replace('Error tokenizing data. C error: ', '')})") from None
        frame, problems = _read_ragged_csv(text, file, options)
    except ValueError as exc:
        raise LoadError(file, f"not readable as CSV: {str(exc).strip().splitlines()[0]}") from None
    other = _other_separator(frame, sep) if sep == "," and not hint else None
    if other:  # "id;params;tokens" as one column: a spreadsheet export with another separator
        return read_csv(path, file, data=text.encode("utf-8"), sep=other, _skipped=_skipped)
    table = _finish(frame, problems, file, empty_is_missing=True)
    table.rows = np.asarray(table.rows) + _skipped
    if sep == ";":
        decimal = _decimal_commas(table.frame, np.asarray(table.rows), file)
        table.notes = [*(decimal or _comma_groups(table.frame, np.asarray(table.rows), file)), *table.notes]
    return table


#: A cell that opens with a figure (after "~", "<", a sign), as figures are written in a spreadsheet export.
_LEADING_FIGURE = re.compile(r"(?P<lead>\s*[~≈<>]?\s*[-+]?)(?P<int>[0-9]{1,3}(?:\.[0-9]{3})+|[0-9]+)"
                             r"(?:,(?P<frac>[0-9]+))?(?![0-9.,])")
#: A figure with a decimal comma that cannot be a thousands separator ("4,8", "58,96", "0,904", "1.024,5").
_DECIMAL_COMMA = (r"^\s*[~≈<>]?\s*[-+]?(?:[0-9]{1,3}(?:\.[0-9]{3})+,[0-9]+|0,[0-9]+|[0-9]+,(?:[0-9]{1,2}|[0-9]{4,}))"
                  r"(?![0-9.,])")
#: A figure with a decimal point that cannot separate thousands ("4.8", "1.4T", "0.904"), a date excepted.
_DECIMAL_POINT = r"^\s*[~≈<>]?\s*[-+]?(?:[0-9]+\.(?:[0-9]{1,2}|[0-9]{4,})|0\.[0-9]+)(?![0-9.,])"


def _decimal_commas(frame: pd.DataFrame, rows: np.ndarray, file: str) -> list[tuple[str, str]]:
    """A ';'-separated file (a spreadsheet export in a European locale) whose figures write decimal commas that
    cannot be thousands ("4,8", "58,96", "0,904") and no decimal point is read in its own locale: in every cell
    that opens with a figure, the comma is the decimal point and a dot separates thousands ("1.024" is 1,024);
    the cells are rewritten so ("4.8", "1024"), and the note says so with the first of them. A file that writes
    both, or neither, is left as written (:func:`_comma_groups` notes its figures; a decimal comma is refused)."""
    comma = point = 0
    first: tuple[str, int, str] | None = None
    texts: dict[str, pd.Series] = {}
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object:
            continue
        text = values.astype("string")
        found = text.str.contains(_DECIMAL_COMMA, regex=True).fillna(False).to_numpy(dtype=bool)
        point += int(text.str.contains(_DECIMAL_POINT, regex=True).fillna(False).to_numpy(dtype=bool).sum())
        if found.any():
            comma += int(found.sum())
            at = int(np.flatnonzero(found)[0])
            if first is None or at < first[1]:
                first = (str(column), at, str(values.iat[at]))
        texts[column] = text
    if not comma or point or first is None:
        return []
    changed: list[str] = []
    for column, text in texts.items():
        rewritten = text.str.replace(_LEADING_FIGURE, _point_figure, n=1, regex=True)
        differs = (rewritten != text).fillna(False).to_numpy(dtype=bool)
        if differs.any():
            cells = frame[column].to_numpy(dtype=object).copy()
            cells[differs] = rewritten.to_numpy(dtype=object)[differs]
            frame[column] = cells
            at = int(np.flatnonzero(differs)[0])
            changed.append(f"{column!r}: {text.iat[at]!r} as {rewritten.iat[at]!r}")
    column, at, cell = first
    return [(file, f"figures are written with decimal commas ({cell!r} in {column!r}, row {rows[at]}) and none with a "
                   f"decimal point, as spreadsheets in many European locales export them with ';' between cells: "
                   f"read so, the comma as the decimal point and a dot as a thousands separator ("
                   f"{'; '.join(changed[:4])}{'; ...' if len(changed) > 4 else ''})")]


def _point_figure(m: "re.Match[str]") -> str:
    """A figure of a decimal-comma locale with a decimal point and no thousands separator: "1.024,5" -> "1024.5"."""
    whole = m.group("int").replace(".", "")
    frac = m.group("frac")
    return f"{m.group('lead')}{whole}{'.' + frac if frac is not None else ''}"


#: A figure whose only separators are commas between groups of three digits ("7,000", "1,024"): thousands in
#: English, but a decimal comma and three decimals where ';' separates the cells (a European spreadsheet export).
#: A leading 0 ("0,213") cannot be thousands: such a cell is refused as a decimal comma when read, not noted here.
_COMMA_GROUPED = r"^\s*[1-9][0-9]{0,2}(?:,[0-9]{3})+\s*$"
#: A figure with one dot before three digits ("10.000", "1.000"): a decimal point in English, but a thousands
#: separator in the same European exports (10.000 chips are ten thousand there).
_DOT_GROUPED = r"^\s*[1-9][0-9]{0,2}\.[0-9]{3}\s*$"


def _comma_groups(frame: pd.DataFrame, rows: np.ndarray, file: str) -> list[tuple[str, str]]:
    """Notes on a ';'-separated file whose cells write a figure such as "7,000" (read as 7000, the comma taken for
    a thousands separator) or "10.000" (read as 10, the dot taken for a decimal point), where the file's locale
    may mean the other; the first such cell of a column is quoted. A decimal comma that cannot be thousands
    ("0,45") is refused cell by cell when read."""
    notes = []
    for pattern, read, other in ((_COMMA_GROUPED, "a comma between groups of three digits are read as thousands",
                                  "the comma may be a decimal point"),
                                 (_DOT_GROUPED, "a dot before three digits are read as decimals",
                                  "the dot may separate thousands")):
        seen: list[tuple[str, int, str]] = []  # (column, the number of such cells, the first one with its row)
        for column in frame.columns:
            values = frame[column]
            if values.dtype != object:
                continue
            found = values.astype("string").str.fullmatch(pattern).fillna(False).to_numpy(dtype=bool)
            if found.any():
                first = int(np.flatnonzero(found)[0])
                seen.append((str(column), int(found.sum()), f"{values.iat[first]!r} (row {int(rows[first])})"))
        if seen:
            where = ", ".join(f"{column!r}: {count:,}, such as {shown}" for column, count, shown in seen[:5])
            notes.append((file, f"figures with {read} ({where}); in a file separated by ';', as spreadsheets in "
                                f"many European locales write it, {other}: check those figures"))
    return notes


def _finish(frame: pd.DataFrame, problems: list[tuple[int, str, str]], file: str,
            empty_is_missing: bool = False) -> RawTable:
    """Cells as Python strings with None for missing: an empty cell is missing (``empty_is_missing``: the parser
    already made every empty cell missing)."""
    if len(frame) == 0:
        raise LoadError(file, f"no claims: the file has a header ({header_words(frame.columns)}) but no rows")
    frame = frame.astype(object)
    frame = frame.where(frame.notna() if empty_is_missing else frame.notna() & (frame != ""), None)
    frame, notes = drop_empty_unnamed(frame, file)
    # Row numbers count the header as 1 (blank lines are skipped, as in a spreadsheet import).
    return RawTable(frame, problems, rows=np.arange(2, len(frame) + 2), notes=notes)


#: How many records a title and remarks above the header may take.
_TITLE_RECORDS = 10
#: How much of the text the title test reads: the first records of any file (a header of 100,000 columns is
#: about 700 kB).
_TITLE_TEXT = 4_000_000


def _title(text: str, sep: str, file: str, sep_given: bool) -> tuple[int, str, str, tuple[str, str]]:
    """A title or remarks above the table ("Training runs Q3 2026", a date, a blank line): when the first record
    names no field and one of the next :data:`_TITLE_RECORDS` names two (split by ``sep``, or by another usual
    separator unless a ``sep=`` line gave it), the records above it are passed over. Returns how many records
    (blank lines are no records), the separator, the text from the header on, and the note that says so; (0, sep,
    text, ...) when the first record is the header."""
    nothing = (0, sep, text, (file, ""))
    head = text[:_TITLE_TEXT]  # the first records, not a copy of a large file for each separator tried
    for other in (sep,) if sep_given or sep != "," else (",", ";", "\t", "|"):
        try:
            with _any_cell_size():
                reader = csv.reader(io.StringIO(head, newline=""), delimiter=other, skipinitialspace=True)
                # (the line it starts on, counting from 0; its cells; the rows before it, as rows are numbered: a
                # row of separators alone is one, a blank line none)
                records: list[tuple[int, list[str], int]] = []
                line = counted = 0
                for record in reader:
                    start, line = line, reader.line_num
                    if any(cell.strip() for cell in record):
                        records.append((start, record, counted))
                    if len(record) > 1 or (record and record[0].strip()):
                        counted += 1
                    if len(records) > _TITLE_RECORDS + 1:
                        break
        except csv.Error:
            continue
        if not records:
            return nothing
        cells = [record for _, record, _ in records]
        if other == sep and names_fields(cells[0], 1):
            first = 0
        else:
            first = next((k for k in range(1, len(records) - 1) if names_fields(cells[k], 2)), -1)
            if first < 0:
                continue
        k = below_group_headings(cells, first)
        if k == 0:
            return nothing
        lines = text.splitlines(keepends=True)  # only when there is a title to pass over
        start = records[k][0]
        while start < len(lines) and not lines[start].strip():  # blank lines before the header
            start += 1
        shown = "; ".join(f"{line + 1}: " + ", ".join(repr(c.strip()[:40]) for c in row if c.strip())[:80]
                          for line, row, _ in records[:k])
        which = "the first naming fields" if k == first else "below a row of group headings that names fewer"
        said = (file, f"read the header from line {start + 1}, {which}; the line{'s' if k > 1 else ''} above it "
                      f"({shown}) {'are' if k > 1 else 'is'} not read")
        return records[k][2], other, "".join(lines[start:]), said
    return nothing


@contextmanager
def _any_cell_size() -> Iterator[None]:
    """The csv module reading cells of any size (it refuses cells over 128 KiB; pandas does not), as before after."""
    limit = csv.field_size_limit(sys.maxsize)
    try:
        yield
    finally:
        csv.field_size_limit(limit)


#: Above this many columns a CSV file is read by the csv module into one block of cells (pandas' parser makes one
#: Series per column, about 70 µs each); the cells are the same text either way.
WIDE = 2000


def _header_width(text: str, sep: str) -> int:
    """How many cells the header (the first record that is not blank) has."""
    try:
        with _any_cell_size():
            for record in csv.reader(io.StringIO(text, newline=""), delimiter=sep, skipinitialspace=True):
                if record:
                    return len(record)
    except csv.Error:
        return 0  # pandas' parser then says what is wrong
    return 0


def _read_wide_csv(text: str, file: str, sep: str) -> tuple[pd.DataFrame, list[tuple[int, str, str]]]:
    """A CSV file with thousands of columns, read by the csv module: cells as text, one object block. Rows longer
    than the header are kept and made invalid, as by :func:`_read_ragged_csv`."""
    try:
        with _any_cell_size():
            records = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=sep, skipinitialspace=True)
                       if r]
    except csv.Error as exc:
        raise LoadError(file, f"not readable as CSV: {first_line(exc)}") from None
    header, body = records[0], records[1:]
    width = len(header)
    cells = np.full((len(body), width), None, dtype=object)
    problems: list[tuple[int, str, str]] = []
    for i, record in enumerate(body):
        cells[i, : min(len(record), width)] = record[:width]
        extra = [c for c in record[width:]]
        while extra and extra[-1] == "":
            extra.pop()
        if extra:
            shown = ", ".join(repr(c[:20]) for c in extra[:3]) + (", ..." if len(extra) > 3 else "")
            problems.append((i, "", f"the row has {width + len(extra)} cells but the header has {width}; the extra "
                                    f"cells ({shown}) belong to no column"))
    return pd.DataFrame(cells, columns=mangle(header)), problems


#: Excel's separator hint: a first line ``sep=;`` (any one character), optionally quoted.
_SEP_LINE = re.compile(r'"?sep=(?P<sep>[^\r\n"])"?[ \t]*(?:\r\n|\r|\n)')


def read_tsv(path: Path, file: str, data: bytes | None = None) -> RawTable:
    """TSV: :func:`read_csv` with tabs between cells."""
    return read_csv(path, file, data, sep="\t")


def _other_separator(frame: pd.DataFrame, sep: str) -> str | None:
    """The separator a one-column header is really split by (``;`` from spreadsheets set to a European locale,
    a tab, a bar), or None. Only a header naming several known fields that way counts."""
    if len(frame.columns) != 1:
        return None
    name = str(frame.columns[0])
    for other in (";", "\t", "|"):
        if other != sep and other in name:
            fields = [f.strip() for f in name.split(other)]
            if sum(canonical_column(f) is not None for f in fields) >= 2:
                return other
    return None


def _read_ragged_csv(text: str, file: str, options: dict) -> tuple[pd.DataFrame, list[tuple[int, str, str]]]:
    """Read a CSV whose rows have more cells than its header: every row kept, the long ones made invalid.

    Only for malformed files: the csv module counts the cells per row, then pandas reads the file again with
    that many columns so cells are read exactly as in the normal path.
    """
    try:
        with _any_cell_size():
            widths = [len(r) for r in csv.reader(io.StringIO(text, newline=""), delimiter=options["sep"],
                                                 skipinitialspace=True) if r]
        header_width, width = (widths[0], max(widths)) if widths else (0, 0)
        wide = pd.read_csv(io.StringIO(text), header=None, names=range(width),
                           **{k: v for k, v in options.items() if k != "index_col"})
    except (csv.Error, pd.errors.ParserError, ValueError) as exc:
        raise LoadError(file, f"not readable as CSV: {first_line(exc)}") from None
    header = [str(h) if isinstance(h, str) else "" for h in wide.iloc[0].tolist()]
    n_named = max(header_width, 1)
    names = mangle(header[:n_named])
    body = wide.iloc[1:].reset_index(drop=True)
    extra = body.iloc[:, n_named:]
    problems: list[tuple[int, str, str]] = []
    if extra.shape[1]:
        filled = extra.where(extra.notna(), "").astype(str).to_numpy()
        for pos in np.flatnonzero((filled != "").any(axis=1)):
            cells = filled[pos]
            used = cells[: np.flatnonzero(cells != "").max() + 1]
            shown = ", ".join(repr(c[:20]) for c in used[:3]) + (", ..." if len(used) > 3 else "")
            problems.append((int(pos), "", f"the row has {n_named + len(used)} cells but the header has {n_named}; "
                                           f"the extra cells ({shown}) belong to no column"))
    frame = body.iloc[:, :n_named].copy()
    frame.columns = names
    return frame, problems


register(Reader("csv", (".csv",), read_csv))
register(Reader("tsv", (".tsv",), read_tsv))
