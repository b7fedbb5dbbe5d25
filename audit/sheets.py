"""How a sheet of a workbook is named where a claim's place is written: ``book.xlsx[cluster-b]``.

Read with ``--sheet all``, each sheet of a workbook is an input of its own, named by its workbook and its sheet in
brackets (Excel's own references put a workbook in brackets, ``[book.xlsx]cluster-b!A2``; the sheet is put after
the file here so that the place still starts with the file's path). The text reports show the name as it is
(``book.xlsx[cluster-b]:2``); the reports a program reads give the file and the sheet apart (JSON's ``input``,
SARIF's ``artifactLocation`` with a ``sheet`` property, GitHub's ``file=`` with the sheet in the title), so that a
link to the file still finds it. A sheet's name cannot hold ``[`` or ``]`` (Excel refuses them, and so does
openpyxl), so the name splits back without doubt.
"""

from __future__ import annotations

import re

__all__ = ["EVERY_SHEET", "PASSED_OVER", "every_sheet", "sheet_label", "split_sheet"]

#: The values of ``--sheet`` that read every sheet shown (compared in lower case); ``*`` cannot name a sheet.
EVERY_SHEET = ("all", "*")

#: How the note on a sheet with no claims starts (``book.xlsx[Notes]: no claims, passed over: the sheet is empty``).
PASSED_OVER = "no claims, passed over: "

#: A workbook's file (``.xlsx``, ``.xlsm``) and one of its sheets in brackets at the end.
_LABEL = re.compile(r"^(?P<file>.*\.xls[xm])\[(?P<sheet>[^\[\]]*)\]$", re.IGNORECASE | re.DOTALL)


def every_sheet(sheet: str | None) -> bool:
    """Whether ``--sheet`` asks for every sheet shown: ``all`` (any case) or ``*``."""
    return sheet is not None and sheet.strip().lower() in EVERY_SHEET


def sheet_label(file: str, sheet: str) -> str:
    """``book.xlsx[cluster-b]``: the name of one sheet of a workbook read with ``--sheet all``."""
    return f"{file}[{sheet}]"


def split_sheet(label: str) -> tuple[str, str | None]:
    """``("book.xlsx", "cluster-b")`` from ``book.xlsx[cluster-b]``; any other name with no sheet (``None``)."""
    match = _LABEL.match(label) if isinstance(label, str) else None
    if match is None:
        return label, None
    return match.group("file"), match.group("sheet")
