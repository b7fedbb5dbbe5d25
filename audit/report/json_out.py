"""JSON output: ``{"claims": [...], "summary": {...}}`` (stable: users script against it)."""

from __future__ import annotations

import json
from typing import Any

from audit.jsontext import dumps as _dumps
from audit.records import estimate_json, to_json
from audit.report import Options, register
from audit.result import AuditResult


def dumps(data: Any) -> str:
    """Deterministic JSON text (sorted nowhere it would reorder claims; NaN never written)."""
    return _dumps(data)


@register("json", description="every claim with its quantities and findings (the stable contract)")
def render_json(result: AuditResult, options: Options) -> str:
    """The registered ``json`` format."""
    return render(result)


def render(result: AuditResult) -> str:
    """The audit as JSON text: ``{"claims": [...], "summary": {...}}`` with one claim per line.

    One compact line per claim keeps the output diff-friendly and lets the C encoder do the work (an indented
    dump goes through Python's encoder: 20 s instead of 3 s for 10,000 claims).
    """
    data = to_json(result)
    lines = [json.dumps(c, ensure_ascii=False, allow_nan=False) for c in data["claims"]]
    body = ",\n".join(lines)
    summary = json.dumps(data["summary"], ensure_ascii=False, allow_nan=False)
    return f'{{"claims": [\n{body}\n],\n"summary": {summary}}}\n' if lines else \
        f'{{"claims": [],\n"summary": {summary}}}\n'


def render_estimate(result: AuditResult) -> str:
    """An estimate as JSON text."""
    return dumps(estimate_json(result))
