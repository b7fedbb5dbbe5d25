"""SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format), which GitHub code scanning and other CI
dashboards read: one run of the ``train-audit`` tool, every rule as a reporting descriptor (its documentation as
help), one result per finding worse than ``ok`` (with ``-v``, passing checks too, as ``kind: pass``).

A result's location is the claim's file (a relative URI as given, or a ``file:`` URI for an absolute path), its
row as ``startLine`` when the file is line-oriented (CSV, TSV, JSON Lines), and the claim as a logical location.
The figures of the finding (claimed, expected, ratio, formula, likely cause) are in the result's ``properties``.
Field names and levels follow the SARIF 2.1.0 specification (sections 3.13-3.27, 3.49);
``tests/test_ci_formats.py`` validates the output against the official JSON Schema.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from audit import __version__
from audit.report import Options, register
from audit.report.ci import Located, input_notices, located
from audit.result import AuditResult
from audit.rules import all_rules
from audit.sheets import split_sheet

#: The schema a SARIF 2.1.0 log names (SchemaStore's copy of the OASIS schema).
SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
#: SARIF's level for each severity (3.27.10: error, warning, note, none).
LEVEL = {"error": "error", "warning": "warning", "info": "note", "ok": "none"}


def _uri(file: str) -> str:
    """A file name as a URI reference: ``file:`` for an absolute path, else the relative path, percent-encoded."""
    path = PurePath(file)
    if path.is_absolute():
        return "file://" + quote(path.as_posix(), safe="/")
    return quote(path.as_posix(), safe="/")


def _rules() -> list[dict[str, Any]]:
    return [{"id": r.code, "name": r.name,
             "shortDescription": {"text": r.summary()},
             "fullDescription": {"text": r.doc()},
             "help": {"text": f"{r.formula}\n\n{r.doc()}" if r.formula else r.doc()},
             "defaultConfiguration": {"level": LEVEL.get(r.severity, "warning")},
             "properties": {"formula": r.formula or ""}} for r in all_rules()]


def _result(item: Located, index: dict[str, int]) -> dict[str, Any]:
    f = item.finding
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(item.path)}}
    if item.line is not None:
        physical["region"] = {"startLine": item.line}
    numbers = f.to_dict()  # rounded to 12 significant digits, NaN as None
    properties: dict[str, Any] = {"claim": item.claim_id, "row": item.row, "severity": f.severity,
                                  "quantity": f.quantity, "claimed": numbers["claimed"],
                                  "expected": numbers["expected"], "ratio": numbers["ratio"],
                                  "formula": f.formula}
    if item.sheet is not None:  # read with --sheet all: the workbook is the artifact, the sheet a property
        properties["sheet"] = item.sheet
    if f.claim_id != item.claim_id:
        properties["phase"] = f.claim_id
    if f.explanation:
        properties["likely_cause"] = f.explanation
    out: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "level": LEVEL[f.severity],
        "message": {"text": f.message},
        "locations": [{"physicalLocation": physical,
                       "logicalLocations": [{"name": f.claim_id, "kind": "object"}]}],
        "properties": properties,
    }
    if f.severity == "ok":
        out["kind"] = "pass"
    return out


def _notification(level: str, file: str, text: str) -> dict[str, Any]:
    """What was said about an input as it was read; about a sheet of a workbook (``--sheet all``), on the workbook
    with the sheet as a property."""
    path, sheet = split_sheet(file)
    out: dict[str, Any] = {"level": level, "message": {"text": text},
                           "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(path)}}}]}
    if sheet is not None:
        out["properties"] = {"sheet": sheet}
    return out


def render(result: AuditResult, show_ok: bool = False) -> str:
    """The audit as a SARIF 2.1.0 log (JSON text; non-ASCII written as escapes, so any input text is valid)."""
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "train-audit", "version": __version__, "rules": rules}},
        "results": [_result(item, index) for item in located(result, show_ok)],
    }
    # How the input was read (columns not read, sheets, units): the run's notifications, as a dashboard shows them.
    notices = input_notices(result)
    if notices:
        run["invocations"] = [{"executionSuccessful": True, "toolExecutionNotifications": [
            _notification(level, file, text) for level, file, text in notices]}]
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=True, allow_nan=False) + "\n"


@register("sarif", description="SARIF 2.1.0, for GitHub code scanning and other CI dashboards")
def render_sarif(result: AuditResult, options: Options) -> str:
    """The registered ``sarif`` format."""
    return render(result, options.verbose)
