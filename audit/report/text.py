"""Plain-text output for a terminal: a table of claims, then each claim's findings."""

from __future__ import annotations

import json
import re
from typing import Callable

import numpy as np

from audit import formatting as fmt
from audit.findings import STATUSES_WORST_FIRST, Finding
from audit.quantities import label
from audit.records import SHOWN_QUANTITIES, extra_value, derivation, findings_by_row, summary
from audit.report import Options, register
from audit.result import AuditResult
from audit.rules import RULES
from audit.state import UNBOUNDED

Style = Callable[[str, str], str]

_STATUS_COLOR = {"pass": "green", "warn": "yellow", "fail": "red", "invalid": "magenta", "unchecked": "cyan"}
_SEVERITY_COLOR = {"ok": "green", "info": "blue", "warning": "yellow", "error": "red"}


def _plain(text: str, _color: str) -> str:
    return text


# Characters that would let a claim file steer the terminal or reorder what it shows: C0/C1 controls (ESC
# starts an ANSI sequence, CR overwrites the line, a newline breaks the layout) and Unicode bidi overrides.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _safe(text: object) -> str:
    """Text from an input file as one printable line: whitespace controls become spaces, others escapes."""
    s = "" if text is None else str(text)
    return _UNSAFE.sub(lambda m: " " if m.group() in "\t\n\r" else
                       (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"), s)


def _cut(text: str | None, width: int) -> str:
    text = _safe(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _message(f: Finding) -> str:
    """A finding's message; an invalid value names its field (``params: cannot read '5 apples' ...``)."""
    message = _safe(f.message)
    quantity = f.quantity
    if RULES[f.rule].invalidates and quantity and not message.startswith(f"{quantity}:"):
        return f"{quantity}: {message}"
    return message


#: Above this many claims, the table and the findings show the worst ones only (the summary counts every claim),
#: as the HTML report does above its own limit: a terminal is not where 100,000 rows are read.
MAX_SHOWN = 1000

#: Which claims are shown first when not all are: failures, then unusable input, warnings, unchecked, passes.
_SHOW_ORDER = {status: rank for rank, status in enumerate(STATUSES_WORST_FIRST)}


def shown_rows(result: AuditResult, limit: int | None = None) -> np.ndarray:
    """The rows the text report shows, in input order: all of them, or the ``limit`` (default :data:`MAX_SHOWN`)
    worst, by status, then input order."""
    limit = MAX_SHOWN if limit is None else limit
    n = len(result)
    if n <= limit:
        return np.arange(n)
    rank = result.status.map(_SHOW_ORDER).to_numpy(dtype=int)
    worst = np.lexsort((np.arange(n), rank))[:limit]
    return np.sort(worst)


_HEADER = (f"{'status':<9} {'id':<24} {'params':>9} {'tokens':>9} {'compute':>11} {'accelerator':<22} "
           f"{'MFU':>8}")
_LEGEND = "* derived by the tool from the stated figures (not stated); ? hardware not in the catalog"
#: A table cell marked as a bound (claim_line).
_BOUND_MARK = re.compile(r"[≤≥]|~[0-9]")
#: The legend's words for bounds, shown only when the table holds one.
_BOUND_LEGEND = "; ≤/≥ a bound (written as one, or derived from one); ~ bounded neither way"


def claim_line(result: AuditResult, row: int, style: Style = _plain) -> str:
    """One claim's line of the table: status, id, the main figures (derived ones marked ``*``), accelerator."""
    info = result.claims.info

    def cell(name: str, unit: bool = False) -> str:
        """A value, marked ``*`` when the tool derived it (not stated), ``≤``/``≥`` before it when it is a bound
        (written as one, or derived from one), ``~`` when it is bounded neither way."""
        value = result.cell("q", row, name)
        derived = value == value and result.cell("source", row, name) != "claimed"
        mark = {-1: "≤", 1: "≥", UNBOUNDED: "~"}.get(result.bound(row, name), "") if value == value else ""
        return mark + fmt.value(name, value, unit=unit) + ("*" if derived else " ")

    status = result.status.iat[row]
    # The accelerator the hardware text resolved to (catalog name), or the text as written with "?" when it did
    # not resolve.
    resolved = result.cell("hardware", row, "accelerator_name")
    written = info.at[row, "hardware"]
    # An unknown name keeps its "?" when cut to the column: "NVIDIA H100 Tensor Co…?", not "…Tensor Co…".
    accel = resolved if resolved else (f"{_cut(written, 21)}?" if written else "")
    cells = (
        f"{_cut(info.at[row, 'id'], 24):<24} "
        f"{cell('params'):>9} "
        f"{cell('tokens'):>9} "
        f"{cell('compute_flops'):>11} "
        f"{_cut(accel, 22):<22} "
        f"{cell('mfu', unit=True):>8}"
    )
    return f"{style(f'{status:<9}', _STATUS_COLOR[status])} {cells}"


def claim_blocks(result: AuditResult, rows: np.ndarray, style: Style = _plain, show_ok: bool = False
                 ) -> list[list[str]]:
    """For each of ``rows``, the lines that show its findings (empty when it has none worth showing)."""
    info = result.claims.info
    grouped = findings_by_row(result, rows=None if len(rows) == len(result) else rows, worse_than_ok=not show_ok)
    phase_grouped = findings_by_row(result.phase_result, worse_than_ok=not show_ok) \
        if result.phase_result is not None else {}
    blocks: list[list[str]] = []
    for row in rows.tolist():
        lines: list[str] = []
        blocks.append(lines)
        shown = [f for f in grouped.get(row, []) if show_ok or f.severity != "ok"]
        # A multi-phase run's phases are audited as claims of their own ("run/phase-1"): shown under the run.
        for i in result.phase_rows(row):
            shown += [f for f in phase_grouped.get(i, []) if show_ok or f.severity != "ok"]
        if not shown:
            continue
        name = info.at[row, "name"] or ""
        claim_id = _safe(info.at[row, "id"])
        lines.append(style(claim_id, "bold") + (f"  {_safe(name)}" if name and name != info.at[row, 'id'] else "")
                     + f"  [{_safe(info.at[row, 'file'])}:{info.at[row, 'row']}]")
        source = info.at[row, "source"]
        if source:
            lines.append(f"  source: {_cut(source, 200)}")
        extras = _extras(result, row)
        if extras:
            lines.append(f"  extra: {_cut(extras, 200)}")
        if show_ok:  # -v: every figure the tool derived, and how (the HTML report's Derived table)
            lines.extend(_derived_lines(result, row))
        for f in shown:
            sev = style(f"{f.severity:<7}", _SEVERITY_COLOR[f.severity])
            where = "" if f.claim_id == info.at[row, "id"] else f"[{_safe(f.claim_id.rsplit('/', 1)[-1])}] "
            lines.append(f"  {sev} {f.rule} {where}{_message(f)}")
            if f.formula and RULES[f.rule].show_formula:
                lines.append(f"          {_safe(f.formula)}")
            for e in f.explanations[:2]:
                lines.append(f"          likely cause: {_safe(e['text'])}")
        lines.append("")
    return blocks


def compose(table_lines: list[str], blocks: list[list[str]], total: int, status_counts: dict[str, int]) -> str:
    """The text report from the shown claims' lines and blocks, the number of claims and the counts by status."""
    lines: list[str] = []
    if len(table_lines) < total:
        lines.append(f"showing the {len(table_lines):,} worst of {total:,} claims (failures first); the summary at "
                     f"the end counts them all, and --format csv, json or parquet lists every one")
    lines.append(_HEADER)
    lines.append("-" * len(_HEADER))
    lines.extend(table_lines)
    lines.append(_LEGEND + (_BOUND_LEGEND if any(_BOUND_MARK.search(t) for t in table_lines) else ""))
    lines.append("")
    for block in blocks:
        lines.extend(block)
    counts = ", ".join(f"{v} {k}" for k, v in status_counts.items())
    lines.append(f"{total} claim{'s' * (total != 1)}: {counts}")
    return "\n".join(lines) + "\n"


def render(result: AuditResult, style: Style = _plain, show_ok: bool = False) -> str:
    """The audit as text; ``style(text, color)`` adds colour (identity when colour is off)."""
    rows = shown_rows(result)
    s = summary(result)
    return compose([claim_line(result, row, style) for row in rows.tolist()],
                   claim_blocks(result, rows, style, show_ok), s["claims"], s["status"])


class TextCollector:
    """The text report of an input audited in batches (:mod:`audit.stream`): each batch's worst claims are
    rendered as it is done, and only the :data:`MAX_SHOWN` worst of all (by status, then input order, as
    :func:`shown_rows` picks them in one piece) are kept, so memory does not grow with the input. The report is
    the one :func:`render` makes of the whole input."""

    def __init__(self, style: Style = _plain, show_ok: bool = False, limit: int | None = None) -> None:
        self.style, self.show_ok = style, show_ok
        self.limit = MAX_SHOWN if limit is None else limit
        self.kept: list[tuple[int, int, str, list[str]]] = []  # (rank, position in the input, line, block)
        self.seen = 0

    def add(self, result: AuditResult) -> None:
        """Render the claims of one batch that may be among the worst of the whole input."""
        n = len(result)
        rank = result.status.map(_SHOW_ORDER).to_numpy(dtype=int)
        rows = np.sort(np.lexsort((np.arange(n), rank))[:self.limit])
        lines = [claim_line(result, row, self.style) for row in rows.tolist()]
        blocks = claim_blocks(result, rows, self.style, self.show_ok)
        self.kept.extend(zip(rank[rows].tolist(), (rows + self.seen).tolist(), lines, blocks))
        self.kept = sorted(self.kept, key=lambda k: (k[0], k[1]))[:self.limit]
        self.seen += n

    def text(self, total: int, status_counts: dict[str, int]) -> str:
        """The report: the kept claims in input order, and the counts of all."""
        kept = sorted(self.kept, key=lambda k: k[1])
        return compose([k[2] for k in kept], [k[3] for k in kept], total, status_counts)


@register("text", description="a table of claims, then each claim's problems (the default)")
def render_text(result: AuditResult, options: Options) -> str:
    """The registered ``text`` format."""
    return render(result, options.style or _plain, show_ok=options.verbose)


def _derived_lines(result: AuditResult, row: int) -> list[str]:
    """The figures the tool derived for claim ``row``, each with its derivation, values substituted (datasheet
    figures with their citation): ``derived  Compute 3.29e24 FLOP: C001: C = 6 · N · D = ...``."""
    out = []
    for name in SHOWN_QUANTITIES:
        value = result.cell("q", row, name)
        if value != value or result.cell("source", row, name) in (None, "claimed"):
            continue
        how = derivation(result, row, name) or ""
        tag = "derived"
        if result.cell("source", row, name) == "catalog":  # a datasheet's figure, with its citation
            tag, how = "datasheet", how.removeprefix("datasheet: ")
        shown = fmt.value(name, float(value), unit=True)
        out.append(f"  {tag} {label(name)} {shown}" + (f": {_safe(how)}" if how else ""))
    return out


def _extras(result: AuditResult, row: int) -> str:
    """The extra fields a claim carried (not read as quantities), as ``name=value; ...``."""
    extras = result.claims.extras
    parts = []
    for col in extras.columns:
        if col == "phases":
            continue
        # As the JSON report gives it (a missing date is no "NaT", a list no numpy repr "['x' 'y']").
        v = extra_value(extras[col].iat[row])
        if v is None:
            continue
        parts.append(f"{col}={json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v}")
    return "; ".join(parts)


def render_estimate(result: AuditResult, style: Style = _plain, verbose: bool = False) -> str:
    """An estimate: every quantity the inputs determine, with how it was derived (datasheet sources with
    ``verbose``)."""
    lines: list[str] = []
    for name in SHOWN_QUANTITIES:
        src = result.cell("source", 0, name)
        v = result.cell("q", 0, name)
        if src is None or v != v:
            continue
        lines.append(f"{label(name):<26} {fmt.value(name, float(v)):>20}  {src}")
        if name == "chip_hours":  # planners think in days too
            lines.append(f"{'':<26} {fmt.count(float(v) / 24) + ' chip-days':>20}  = chip-hours / 24")
        # The datasheet's citation is long: shown on request (-v).
        how = derivation(result, 0, name, sources=verbose)
        if how:
            lines.append(f"{'':<26} {'':>20}  {_safe(how)}")
    grouped = findings_by_row(result).get(0, [])
    bad = [f for f in grouped if f.severity != "ok"]
    if bad:
        lines.append("")
        for f in bad:
            lines.append(f"{style(f.severity, _SEVERITY_COLOR[f.severity])} {f.rule} {_message(f)}")
    return "\n".join(lines) + "\n"
