"""The HTML audit report: one self-contained file rendered from ``templates/`` with Jinja2.

All arithmetic, sorting and grouping happen here; the template only lays out a prepared context.
"""

from __future__ import annotations

import datetime as _dt
import os
from functools import lru_cache
from typing import Any
from urllib.parse import urlparse

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from audit import __version__
from audit.api import claim_record, summary
from audit.catalog import load_catalog
from audit.engine import AuditResult
from audit.findings import findings_by_row, label
from audit.resources import templates_dir
from audit.rules import RULES, SEVERITY_RANK

#: Claims shown in full in the page; beyond this the page shows the worst ones and says how many it left out.
MAX_DETAILED = 500


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The one Jinja environment: autoescape on, undefined names are errors."""
    return Environment(
        loader=FileSystemLoader(str(templates_dir())),
        autoescape=select_autoescape(["html", "j2", "html.j2"], default_for_string=True, default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def safe_url(text: str | None) -> str | None:
    """``text`` when it is an http(s) URL, else None: only those become links."""
    if not text:
        return None
    candidate = str(text).strip()
    parsed = urlparse(candidate)
    if parsed.scheme in ("http", "https") and parsed.netloc and " " not in candidate:
        return candidate
    return None


def _timestamp() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch and epoch.isdigit() else \
        _dt.datetime.now(_dt.timezone.utc)
    return when.strftime("%Y-%m-%d %H:%M UTC")


_STATUS_ORDER = {"invalid": 0, "fail": 1, "warn": 2, "pass": 3}


def context(result: AuditResult, title: str = "train-audit report") -> dict[str, Any]:
    """The template's context: every string and number already computed."""
    n = len(result)
    order = sorted(range(n), key=lambda r: (_STATUS_ORDER[result.status.iat[r]], r))
    detailed_rows = order[:MAX_DETAILED] if n > MAX_DETAILED else list(range(n))
    grouped = findings_by_row(result, rows=detailed_rows)
    catalog = load_catalog()
    claims = []
    for row in detailed_rows:
        findings = grouped.get(row, [])
        rec = claim_record(result, row, findings)
        findings_view = sorted(rec["findings"], key=lambda f: -SEVERITY_RANK[f["severity"]])
        accel = rec["hardware"]["accelerator"]
        datasheet = None
        if accel:
            a = catalog.by_id(accel)
            datasheet = {"name": a.name, "source": a.source_compute}
        claims.append({
            "anchor": f"claim-{row}",
            "id": rec["id"],
            "name": rec["name"] or "",
            "source": rec["source"] or "",
            "source_url": safe_url(rec["source"]),
            "status": rec["status"],
            "file": rec["input"]["file"],
            "row": rec["input"]["row"],
            "hardware": rec["hardware"],
            "datasheet": datasheet,
            "quantities": [
                {"name": k, "label": label(k), **v, "text": v.get("text"), "how": v.get("how")}
                for k, v in rec["quantities"].items()
            ],
            "findings": findings_view,
            "problems": sum(1 for f in findings_view if f["severity"] in ("warning", "error")),
            "extra": [(k, str(v)) for k, v in rec["extra"].items()],
        })
    table = [{"anchor": f"claim-{row}", "id": result.claims.info.at[row, "id"],
              "name": result.claims.info.at[row, "name"] or "", "status": result.status.iat[row],
              "detailed": True} for row in detailed_rows]
    s = summary(result)
    top_rules = [{"code": code, "name": RULES[code].name, "summary": RULES[code].summary(), "count": count}
                 for code, count in sorted(s["rules"].items(), key=lambda kv: (-kv[1], kv[0]))]
    used_rules = sorted(set(result.findings["rule"].tolist()))
    return {
        "title": title,
        "version": __version__,
        "generated": _timestamp(),
        "summary": s,
        "top_rules": top_rules,
        "claims": claims,
        "table": table,
        "hidden": n - len(detailed_rows),
        "rules": [{"code": c, "name": RULES[c].name, "doc": RULES[c].doc(), "formula": RULES[c].formula}
                  for c in used_rules],
    }


def render(result: AuditResult, title: str = "train-audit report") -> str:
    """The audit as one self-contained HTML page."""
    return environment().get_template("report.html.j2").render(**context(result, title))
