"""JSON output: ``{"claims": [...], "summary": {...}}`` (stable: users script against it).

The text is made a chunk of claims at a time (:func:`chunks`, :class:`JsonText`), so that a large audit is written
without ever holding all its records or all its text: the pieces joined are the text of :func:`render`, byte for
byte, whether they come from one audit or from many batches (:mod:`audit.stream`).
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from audit.jsontext import dumps as _dumps
from audit.records import claim_chunks, estimate_json, json_summary
from audit.report import Options, register
from audit.result import AuditResult

#: One compact line per claim keeps the output diff-friendly and lets the C encoder do the work (an indented
#: dump goes through Python's encoder: 20 s instead of 3 s for 10,000 claims). One encoder for every line:
#: ``json.dumps`` with options makes a new one each call.
_LINE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def dumps(data: Any) -> str:
    """Deterministic JSON text (sorted nowhere it would reorder claims; NaN never written)."""
    return _dumps(data)


@register("json", description="every claim with its quantities and findings (the stable contract)")
def render_json(result: AuditResult, options: Options) -> str:
    """The registered ``json`` format."""
    return render(result)


def render(result: AuditResult) -> str:
    """The audit as JSON text: ``{"claims": [...], "summary": {...}}`` with one claim per line."""
    return "".join(chunks(result))


def chunks(result: AuditResult, size: int | None = None) -> Iterator[str]:
    """The text of :func:`render` in pieces, one per chunk of ``size`` claims (:func:`audit.records.claim_chunks`)
    and one for the summary: for writing a large audit as it is made."""
    text = JsonText()
    for records in claim_chunks(result, size):
        yield text.claims(records)
    yield text.end(json_summary(result))


class JsonText:
    """The JSON text of an audit in pieces: :meth:`claims` for each chunk of claim records in order, then
    :meth:`end` with the summary of them all (:func:`audit.records.json_summary`, or the summary added up across
    batches: :meth:`audit.stream.StreamSummary.json_summary`)."""

    def __init__(self) -> None:
        self.count = 0

    def claims(self, records: list[dict[str, Any]]) -> str:
        """The text of the next claims (the opening of the document before the first)."""
        if not records:
            return ""
        head = self.opening()
        self.count += len(records)
        return head + claims_text(records)

    def opening(self) -> str:
        """What comes before the next claims: the opening of the document, or the comma after the claims so far."""
        return '{"claims": [\n' if self.count == 0 else ",\n"

    def end(self, summary: dict[str, Any]) -> str:
        """The closing text, with the summary."""
        text = _LINE(summary)
        return f'\n],\n"summary": {text}}}\n' if self.count else f'{{"claims": [],\n"summary": {text}}}\n'


def claims_text(records: list[dict[str, Any]]) -> str:
    """Claim records as the JSON report writes them, one a line, separated by commas (:meth:`JsonText.claims`
    without the opening)."""
    return ",\n".join([_LINE(record) for record in records])


def render_estimate(result: AuditResult) -> str:
    """An estimate as JSON text."""
    return dumps(estimate_json(result))
