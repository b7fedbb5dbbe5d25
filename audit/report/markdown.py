"""Markdown output, for a pull-request comment or an issue."""

from __future__ import annotations

import numpy as np

from audit.findings import STATUSES_WORST_FIRST
from audit.records import findings_by_row, summary
from audit.report import Options, register
from audit.result import AuditResult

_ICON = {"pass": "✅", "warn": "⚠️", "fail": "❌", "invalid": "⛔", "unchecked": "❔"}


def _cell(text: object) -> str:
    """Text safe inside a Markdown table cell: no pipes, no newlines, no raw HTML."""
    s = "" if text is None else str(text)
    return (s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")
            .replace(">", "&gt;"))


def render(result: AuditResult, title: str = "train-audit report", limit: int = 200) -> str:
    """The audit as Markdown: a summary line, a table of claims and the findings that matter."""
    s = summary(result)
    lines = [f"## {_cell(title)}", ""]
    lines.append(" · ".join(f"{_ICON[k]} {v} {k}" for k, v in s["status"].items()) + f" — {s['claims']} claims")
    lines += ["", "| status | id | name | findings |", "|---|---|---|---|"]
    grouped = findings_by_row(result, worse_than_ok=True)
    info = result.claims.info
    rank = result.status.map({s: i for i, s in enumerate(STATUSES_WORST_FIRST)}).to_numpy(dtype=int)
    order = np.lexsort((np.arange(len(result)), rank)).tolist()
    for row in order[:limit]:
        bad = [f for f in grouped.get(row, []) if f.severity in ("warning", "error")]
        codes = ", ".join(sorted({f.rule for f in bad}))
        lines.append(f"| {_ICON[result.status.iat[row]]} {result.status.iat[row]} | `{_cell(info.at[row, 'id'])}` | "
                     f"{_cell(info.at[row, 'name'])} | {codes} |")
    if len(result) > limit:
        lines.append(f"\n{len(result) - limit} more claims not listed; use `--format csv` for all of them.")
    details = []
    for row in order[:limit]:
        bad = [f for f in grouped.get(row, []) if f.severity in ("warning", "error")]
        if not bad:
            continue
        details.append(f"\n**{_cell(info.at[row, 'id'])}**\n")
        for f in bad:
            # An invalid value names its field: the message alone ("cannot read '5 apples' as a count") does not.
            field = f"`{_cell(f.quantity).replace('`', '')}`: " if f.rule == "V001" and f.quantity else ""
            details.append(f"- **{f.severity}** `{f.rule}` {field}{_cell(f.message)}  \n  `{f.formula.replace('`', '')}`")
    if details:
        lines += ["", "<details><summary>Findings</summary>", "", *details, "", "</details>"]
    return "\n".join(lines) + "\n"


@register("markdown", description="a summary and a table for a pull-request comment")
def render_markdown(result: AuditResult, options: Options) -> str:
    """The registered ``markdown`` format."""
    return render(result, options.title)
