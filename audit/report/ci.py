"""Formats for continuous integration: ``concise`` (one line per finding, ``file:row: CODE severity: message``,
as linters print) and ``github`` (GitHub Actions workflow commands, which GitHub shows as annotations on the
file). Both list every finding worse than ``ok`` (with ``-v``, passing checks too), the phases' findings of a
multi-phase run under the run's row, and end with the summary line.

Where a finding is: the file and the claim's row in it (a CSV row, a JSON Lines line, a JSON array item, a
spreadsheet row). GitHub's ``line=`` is given only for line-oriented files (CSV, TSV, JSON Lines): the line the row
starts on (a CSV row is a record, which a quoted cell may spread over several lines); a JSON array item or a
Parquet row is named in the title instead.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any, Iterator

from audit.findings import Finding
from audit.records import findings_by_row, input_notes, place, summary
from audit.report import Options, register
from audit.report.text import _message, _safe
from audit.result import AuditResult
from audit.sheets import split_sheet

#: Inputs whose row numbers are line numbers (a CSV header is line 1, so its first claim is row 2).
LINE_ORIENTED = frozenset({".csv", ".tsv", ".jsonl", ".ndjson"})
#: GitHub's annotation level for each severity (``::error``, ``::warning``, ``::notice``).
GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice", "ok": "notice"}


@dataclass(frozen=True)
class Located:
    """A finding with where its claim was read: file, row in that file, and the claim's id."""

    file: str
    row: int
    claim_id: str
    finding: Finding

    @property
    def path(self) -> str:
        """The file itself: a sheet of a workbook read with ``--sheet all`` (``book.xlsx[cluster-b]``) is in it."""
        return split_sheet(self.file)[0]

    @property
    def sheet(self) -> str | None:
        """The sheet of a workbook the claim was read from with ``--sheet all``, else None."""
        return split_sheet(self.file)[1]

    @property
    def line(self) -> int | None:
        """The line the claim's row starts on when the file is line-oriented, else None: its row number, unless a
        CSV file has quoted cells over several lines or blank lines (its rows are records; :func:`record_lines`)."""
        suffix = PurePath(self.file).suffix.lower()
        if suffix not in LINE_ORIENTED:
            return None
        if suffix in (".csv", ".tsv"):
            starts = record_lines(self.file)
            if starts is not None and 1 <= self.row <= len(starts):
                return starts[self.row - 1]
        return self.row


def record_lines(file: str) -> tuple[int, ...] | None:
    """The line each record of a CSV or TSV file starts on, records numbered as the reader numbers its rows (the
    header is 1, blank lines are skipped); None when every record is one line and no line is blank (the row is
    the line), or the file cannot be read again. Read once per file (as it is now), only for the reports that give
    lines."""
    try:
        stat = os.stat(file)
    except OSError:
        return None
    return _record_lines(os.path.realpath(file), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _record_lines(file: str, _mtime: int, _size: int) -> tuple[int, ...] | None:
    try:
        text = Path(file).read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return None
    lines = text.splitlines()
    hint = _SEP_LINE.match(text)  # Excel's "sep=;" first line: not a row (the reader passes over it)
    if not hint and "\"" not in text and all(line.strip() for line in lines):
        return None
    # The header is the first line with a separator in it (a title above the table has none, as a rule).
    header = next((line for line in lines[1 if hint else 0:] if any(c in line for c in ",;\t|")), "")
    sep = ("\t" if PurePath(file).suffix.lower() == ".tsv" else hint.group("sep") if hint
           else max((",", ";", "\t", "|"), key=header.count))
    starts: list[int] = []
    reader = csv.reader(io.StringIO(text[hint.end():] if hint else text, newline=""), delimiter=sep)
    line = 1 if hint else 0
    try:
        for record in reader:
            start, line = line + 1, reader.line_num + (1 if hint else 0)
            # The reader's records, as pandas counts them: not an empty line or one of spaces alone; a line of
            # separators alone (",,,,", a spreadsheet's blank row exported) is a record, and a claim.
            if len(record) > 1 or (record and record[0].strip()):
                starts.append(start + _blank_before(lines, start))
    except csv.Error:
        return None
    return tuple(starts)


#: Excel's separator hint, a first line ``sep=;`` (as :mod:`audit.reading.csvfile` reads it).
_SEP_LINE = re.compile(r'"?sep=(?P<sep>[^\r\n"])"?[ \t]*(?:\r\n|\r|\n)')


def _blank_before(lines: list[str], start: int) -> int:
    """Blank lines the csv module folds into the record that follows them: the record starts after them."""
    k = 0
    while start - 1 + k < len(lines) and not lines[start - 1 + k].strip():
        k += 1
    return k


def located(result: AuditResult, show_ok: bool = False) -> Iterator[Located]:
    """Every finding worse than ok (all with ``show_ok``) with its claim's file and row, in input order; a
    phase's findings come with its run's row."""
    grouped = findings_by_row(result, worse_than_ok=not show_ok)
    phases: dict[int, list[Finding]] = {}
    if result.phase_result is not None and result.phase_parent is not None:
        for i, found in findings_by_row(result.phase_result, worse_than_ok=not show_ok).items():
            phases.setdefault(int(result.phase_parent[i]), []).extend(found)
    info = result.claims.info
    for row in sorted(set(grouped) | set(phases)):
        file, claim_id = str(info["file"].iat[row]), str(info["id"].iat[row])
        raw: Any = info["row"].iat[row]
        number = int(raw) if raw is not None and raw == raw else row + 1  # NaN: a row with no number in a file
        for f in grouped.get(row, []) + phases.get(row, []):
            yield Located(file=file, row=number, claim_id=claim_id, finding=f)


def input_notices(result: AuditResult) -> list[tuple[str, str, str]]:
    """(level, file, text) of what was said about the inputs as they were read: per file, the columns not read
    (``warning``, with each did-you-mean), then each note (``note``)."""
    said = input_notes(result)
    out: list[tuple[str, str, str]] = []
    by_file: dict[str, list[str]] = {}
    for u in said["unread_columns"]:
        by_file.setdefault(place(u), []).append(
            repr(u["column"]) + (f" (did you mean {u['suggestion']}?)" if u["suggestion"] else ""))
    for file, cols in by_file.items():
        out.append(("warning", file, f"{len(cols)} column{'s' if len(cols) > 1 else ''} not read (kept as extra "
                                     f"fields, not audited): {', '.join(cols)}"))
    out.extend(("note", place(n), n["message"]) for n in said["notes"])
    return out


def summary_line(result: AuditResult) -> str:
    """``N claims: a pass, b warn, ...``: the same last line as the text format."""
    s = summary(result)
    return f"{s['claims']} claim{'s' * (s['claims'] != 1)}: " + ", ".join(f"{v} {k}" for k, v in s["status"].items())


def _who(item: Located) -> str:
    """The claim (and the phase, for a phase's finding) in words."""
    f = item.finding
    phase = f" [{f.claim_id.rsplit('/', 1)[-1]}]" if f.claim_id != item.claim_id else ""
    return f"claim {item.claim_id}{phase}"


@register("concise", description="one line per finding: file:row: CODE severity: message (as linters print)")
def render_concise(result: AuditResult, options: Options) -> str:
    """``file:row: CODE severity: message (claim id)``, one line per finding, then the summary line; in a CSV
    file whose cells span lines, the line the row starts on (as an editor goes to ``file:line``)."""
    lines = [f"{_safe(i.file)}:{i.row if i.line is None else i.line}: {i.finding.rule} {i.finding.severity}: "
             f"{_message(i.finding)} ({_safe(_who(i))})" for i in located(result, options.verbose)]
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def _in_sheet(file: str) -> str:
    """`` book.xlsx[cluster-b]`` for a sheet of a workbook read with ``--sheet all`` (the file by its name), else
    nothing."""
    path, sheet = split_sheet(file)
    return "" if sheet is None else f" {PurePath(path).name}[{sheet}]"


def _data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit escapes it (``%``, CR, LF), so that no text
    from an input can end the command or start another."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A workflow command's property value, escaped as GitHub's toolkit escapes it (also ``:`` and ``,``)."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


@register("github", description="GitHub Actions workflow annotations (::error file=...,line=...::message)")
def render_github(result: AuditResult, options: Options) -> str:
    """One ``::error``/``::warning``/``::notice`` workflow command per finding (GitHub's syntax:
    https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions), then the summary line."""
    # How the input was read: a column not read is a warning on its file, a note on how it was read a notice.
    # A sheet of a workbook read with --sheet all: the annotation is on the file, the sheet named in its title as
    # the text report names it (book.xlsx[cluster-b], audit.sheets).
    lines = [f"::{GITHUB_LEVEL[level] if level != 'note' else 'notice'} file={_property(split_sheet(file)[0])},"
             f"title={_property(_safe('input' + _in_sheet(file)))}::{_data(_safe(text))}"
             for level, file, text in input_notices(result)]
    for i in located(result, options.verbose):
        f = i.finding
        props = [f"file={_property(i.path)}"]
        if i.line is not None:
            props.append(f"line={i.line}")
        title = f"{f.rule} {f.name} ({_who(i)},{_in_sheet(i.file)} row {i.row})"
        props.append(f"title={_property(_safe(title))}")
        lines.append(f"::{GITHUB_LEVEL[f.severity]} {','.join(props)}::{_data(_message(f))}")
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"
