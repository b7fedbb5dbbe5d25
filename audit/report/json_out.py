"""JSON output: ``{"claims": [...], "summary": {...}}`` (stable: users script against it)."""

from __future__ import annotations

import json
from typing import Any

from audit.api import estimate_json, to_json
from audit.engine import AuditResult


def dumps(data: Any) -> str:
    """Deterministic JSON text (sorted nowhere it would reorder claims; NaN never written)."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render(result: AuditResult) -> str:
    """The audit as JSON text."""
    return dumps(to_json(result))


def render_estimate(result: AuditResult) -> str:
    """An estimate as JSON text."""
    return dumps(estimate_json(result))
