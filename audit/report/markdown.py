"""Markdown output, for a pull-request comment or an issue."""

from __future__ import annotations

import re

import numpy as np

from audit.findings import STATUSES_WORST_FIRST
from audit.rules import RULES
from audit.records import findings_by_row, input_notes, place, summary
from audit.report import Options, register
from audit.result import AuditResult

_ICON = {"pass": "✅", "warn": "⚠️", "fail": "❌", "invalid": "⛔", "unchecked": "❔"}


# Text from an input is shown as text: nothing in it may be interpreted by a Markdown renderer (GitHub's included)
# or by the terminal the report is printed on.
#: Line breaks: one line per table row and per list item.
_LINE_BREAKS = re.compile(r"\r\n|[\t\n\r]")
#: Characters a terminal acts on (C0/C1 controls: ESC starts an escape sequence, CR overwrites the line) or that
#: reorder or hide text (bidi controls, zero-width characters, line and paragraph separators): shown as escapes.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]")
#: Markdown punctuation (emphasis, code spans, links and images, raw HTML, entities, tables, strikethrough, math):
#: backslash-escaped, which CommonMark allows for any ASCII punctuation.
_PUNCTUATION = re.compile(r"([\\`*_\[\](){}<>!|~&$#])")
#: What GitHub links in plain text: @mentions, #references, URLs and www. addresses. An invisible word joiner
#: (U+2060) after the @, the # or the colon breaks the pattern and shows the same text.
_AUTOLINKS = re.compile(r"[@#](?=[A-Za-z0-9])|:(?=//)|(?i:www)(?=\.)")
_JOINER = "\u2060"


def _visible(text: object) -> str:
    s = _LINE_BREAKS.sub(" ", "" if text is None else str(text))
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else
                         f"\\u{ord(m.group()):04x}", s)


def _cell(text: object) -> str:
    """Text from an input shown as text inside Markdown (a table cell, a list item, a heading): one line, every
    Markdown character escaped, no link or mention, no control character."""
    s = _PUNCTUATION.sub(r"\\\1", _visible(text))
    return _AUTOLINKS.sub(lambda m: m.group() + _JOINER, s)


def _code(text: object) -> str:
    """Text inside a code span: one line, no control character, and no backtick (which would end the span)."""
    return _visible(text).replace("`", "'")


def render(result: AuditResult, title: str = "train-audit report", limit: int = 200) -> str:
    """The audit as Markdown: a summary line, a table of claims (with the rules that warn or fail), and under each
    claim that warns or fails its findings but the ok checks (the info findings of the others counted)."""
    s = summary(result)
    lines = [f"## {_cell(title)}", ""]
    lines.append(" · ".join(f"{_ICON[k]} {v} {k}" for k, v in s["status"].items())
                 + f" — {s['claims']} claim{'s' * (s['claims'] != 1)}")
    # Columns not read, and notes on how the input was read: in a pull-request comment as in every other report.
    said = input_notes(result)
    if said["unread_columns"]:
        listed = ", ".join(f"`{_code(u['column'])}`" + (f" (did you mean `{_code(u['suggestion'])}`?)"
                                                       if u["suggestion"] else "")
                           for u in said["unread_columns"][:20])
        more = len(said["unread_columns"]) - 20
        lines += ["", f"⚠️ Columns not read (kept as extra fields, not audited): {listed}"
                  + (f" and {more} more" if more > 0 else "")]
    for note in said["notes"][:10]:
        lines += ["", f"ℹ️ {_cell(place(note))}: {_cell(note['message'])}"]
    rules = _rule_counts(result)
    if rules:
        lines += ["", "| rule | claims | errors | warnings |", "|---|---|---|---|"]
        lines += [f"| `{code}` {name} | {n} | {e} | {w} |" for code, name, n, e, w in rules]
    lines += ["", "| status | id | name | findings |", "|---|---|---|---|"]
    grouped = _with_phases(result)
    info = result.claims.info
    # Failures first (what must be fixed), then unusable rows, warnings, claims nothing could check, passes.
    rank = result.status.map({s: i for i, s in enumerate(MARKDOWN_ORDER)}).to_numpy(dtype=int)
    order = np.lexsort((np.arange(len(result)), rank)).tolist()
    for row in order[:limit]:
        bad = [f for f in grouped.get(row, []) if f.severity in ("warning", "error")]
        codes = ", ".join(sorted({f.rule for f in bad}))
        lines.append(f"| {_ICON[result.status.iat[row]]} {result.status.iat[row]} | {_cell(info.at[row, 'id'])} | "
                     f"{_cell(info.at[row, 'name'])} | {codes} |")
    if len(result) > limit:
        left = result.status.iloc[order[limit:]].value_counts()
        said = ", ".join(f"{int(left[s])} {s}" for s in MARKDOWN_ORDER if s in left.index)
        lines.append(f"\n{len(result) - limit} more claims not listed ({said}); use `--format csv` for all of them.")
    details = []
    quiet = {"claims": 0, "findings": 0}  # info findings of claims with no warning or error: counted, not listed
    for row in order[:limit]:
        # A flagged claim's findings but the ok checks, as the text report shows them: its info ones say which
        # figure is likely wrong (C009, first) and how a figure was read. The info findings of the other claims
        # (how their figures were read) are counted: a pull-request comment holds at most 65,536 characters.
        shown = [f for f in grouped.get(row, []) if f.severity in ("warning", "error", "info")]
        if not any(f.severity in ("warning", "error") for f in shown):
            quiet["claims"] += bool(shown)
            quiet["findings"] += len(shown)
            continue
        details.append(f"\n**{_cell(info.at[row, 'id'])}**\n")
        for f in shown:
            # An invalid value names its field: the message alone ("cannot read '5 apples' as a count") does not.
            field = f"`{_code(f.quantity)}`: " if RULES[f.rule].invalidates and f.quantity else ""
            # A phase's finding is listed under its run, with the phase's id.
            phase = f"\\[{_cell(f.claim_id)}\\] " if f.claim_id != str(info.at[row, "id"]) else ""
            # An info finding's formula says how a figure was read ("dataset unit from dataset_notes"): its message
            # says it better, in fewer characters.
            formula = f"  \n  `{_code(f.formula)}`" if f.formula and f.severity != "info" else ""
            details.append(f"- **{f.severity}** `{f.rule}` {phase}{field}{_cell(f.message)}{formula}")
            for e in f.explanations[:2]:
                details.append(f"  likely cause: {_cell(e['text'])}")
    if details:
        lines += ["", "<details><summary>Findings</summary>", "", *details, "", "</details>"]
    if quiet["findings"]:
        lines += ["", f"{quiet['findings']} info finding{'s' * (quiet['findings'] != 1)} on {quiet['claims']} "
                  f"claim{'s' * (quiet['claims'] != 1)} with no warning or error (how their figures were read) not "
                  "listed; `--format text` or `--findings FILE` lists them."]
    return "\n".join(lines) + "\n"


#: The order claims are listed in: what must be fixed first (the same in every report).
MARKDOWN_ORDER: tuple[str, ...] = STATUSES_WORST_FIRST


def _rule_counts(result: AuditResult) -> list[tuple[str, str, int, int, int]]:
    """Per rule with warnings or errors: (code, name, claims, errors, warnings), most claims first."""
    f = result.findings
    sev = f["severity"].astype(str)
    bad = f[sev.isin(["warning", "error"]).to_numpy()]
    if not len(bad):
        return []
    rule = bad["rule"].astype(str)  # the codes present (a categorical groups by every category)
    claims = bad["row"].groupby(rule).nunique()
    errors = (bad["severity"].astype(str) == "error").groupby(rule).sum()
    warnings = (bad["severity"].astype(str) == "warning").groupby(rule).sum()
    codes = sorted(claims.index, key=lambda c: (-int(claims[c]), str(c)))
    return [(str(c), RULES[c].name, int(claims[c]), int(errors.get(c, 0)), int(warnings.get(c, 0))) for c in codes]


def _with_phases(result: AuditResult) -> dict[int, list]:
    """Each claim's findings worse than ok, followed by its phases' (a run is as bad as its worst phase)."""
    grouped = findings_by_row(result, worse_than_ok=True)
    if result.phase_result is not None and result.phase_parent is not None:
        by_phase = findings_by_row(result.phase_result, worse_than_ok=True)
        for i, run in enumerate(result.phase_parent.tolist()):
            if by_phase.get(i):
                grouped.setdefault(run, []).extend(by_phase[i])
    return grouped


@register("markdown", description="a summary and a table for a pull-request comment")
def render_markdown(result: AuditResult, options: Options) -> str:
    """The registered ``markdown`` format."""
    return render(result, options.title)
