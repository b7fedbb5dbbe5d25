"""The HTML audit report: one self-contained file rendered from ``templates/`` with Jinja2.

All arithmetic, sorting and grouping happen here; the template only lays out a prepared context. The page loads
nothing: CSS and the small filtering script are inline and allowed by their SHA-256 hashes in the page's
Content-Security-Policy (nothing else may run or load), and the charts are inline SVG drawn by
:mod:`audit.report.svg`.

Large batches: the summary and the charts cover every claim (computed on whole columns), but only the worst
:data:`MAX_DETAILED` claims get a row and a detailed section; the page says how many it left out.
"""

from __future__ import annotations

import base64
import contextvars
import datetime as _dt
import hashlib
import importlib.metadata
import math
import os
import re
from functools import lru_cache
from typing import Any
from urllib.parse import urlparse

import numpy as np
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from audit import __version__
from audit import formatting as fmt
from audit.catalog import Catalog, catalog_revision, load_catalog
from audit.findings import SEVERITIES, SEVERITY_RANK, STATUSES_WORST_FIRST
from audit.quantities import NOTE_READS, label
from audit.records import claim_record, findings_by_row, input_notes, place, summary
from audit.report import Options, register, svg
from audit.resources import templates_dir
from audit.result import AuditResult
from audit.rounding import round_array, round_value
from audit.rules import RULES, RelationRule, codes_where, shown_ratio

#: Claims shown in full in the page; beyond this the page shows the worst ones and says how many it left out.
MAX_DETAILED = 500

#: Up to this many claims the charts draw one mark per claim; above it, histograms of the ratios.
CHART_POINTS_MAX = 200

#: Claims named in the summary's "worst claims" list.
WORST_LISTED = 10

#: Position of each status when claims are listed worst first.
STATUS_ORDER: dict[str, int] = {s: i for i, s in enumerate(STATUSES_WORST_FIRST)}

#: The glyph beside a status or severity word: the same shapes as the chart markers (survives greyscale).
SYMBOLS: dict[str, str] = {"pass": "●", "ok": "●", "info": "●", "warn": "▲", "warning": "▲", "fail": "■",
                           "error": "■", "invalid": "◆", "unchecked": "○"}

_PROBLEM = ("warning", "error")


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The one Jinja environment: autoescape on, undefined names are errors."""
    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        autoescape=select_autoescape(["html", "j2", "html.j2"], default_for_string=True, default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["thousands"] = lambda x: f"{int(x):,}"
    return env


def safe_url(text: str | None) -> str | None:
    """``text`` when it is an http(s) URL, else None: only those become links."""
    if not text:
        return None
    candidate = str(text).strip()
    parsed = urlparse(candidate)
    if parsed.scheme in ("http", "https") and parsed.netloc and " " not in candidate:
        return candidate
    return None


_LINKABLE = re.compile(r"(?P<url>https?://[^\s<>\"'`]+)|(?P<arxiv>arXiv:\s?(?P<aid>\d{4}\.\d{4,5}(?:v\d+)?))",
                       re.IGNORECASE)


def linkify(text: str | None) -> list[tuple[str, str | None]]:
    """``text`` cut into (text, href) parts: http(s) URLs and ``arXiv:NNNN.NNNNN`` ids become links, the rest
    stays text. Nothing else ever becomes an ``href`` (a ``javascript:`` source stays text)."""
    if not text:
        return []
    text = str(text)
    parts: list[tuple[str, str | None]] = []
    pos = 0
    for m in _LINKABLE.finditer(text):
        start, end = m.span()
        if m.group("url"):
            url = m.group("url")
            trimmed = url.rstrip(".,;:!?)]}")
            # Keep a closing parenthesis that belongs to the URL (Wikipedia-style).
            while trimmed.count("(") > trimmed.count(")") and len(trimmed) < len(url) and url[len(trimmed)] == ")":
                trimmed += ")"
            end = start + len(trimmed)
            href = safe_url(trimmed)
        else:
            href = f"https://arxiv.org/abs/{m.group('aid')}"
        if start > pos:
            parts.append((text[pos:start], None))
        parts.append((text[start:end], href))
        pos = end
    if pos < len(text):
        parts.append((text[pos:], None))
    # Merge adjacent text parts (a trimmed URL's tail).
    merged: list[tuple[str, str | None]] = []
    for t, h in parts:
        if merged and h is None and merged[-1][1] is None:
            merged[-1] = (merged[-1][0] + t, None)
        else:
            merged.append((t, h))
    return merged


def source_date() -> _dt.datetime:
    """The report's time: ``SOURCE_DATE_EPOCH`` (seconds since 1970, reproducible-builds.org) when set, else now.
    A value that is not such a number, or beyond year 9999, raises ValueError: the specification asks a tool to
    stop rather than use the current time, which would make the report differ from run to run unnoticed."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None or epoch == "":
        return _dt.datetime.now(_dt.timezone.utc)
    try:
        if not epoch.strip().isdigit():
            raise ValueError
        return _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise ValueError(f"SOURCE_DATE_EPOCH={epoch!r} is not a time: give whole seconds since 1970-01-01 UTC "
                         f"(reproducible-builds.org), e.g. 1700000000") from None


def _timestamp() -> str:
    return source_date().strftime("%Y-%m-%d %H:%M UTC")


# ------------------------------------------------------------------------------------ inline assets + CSP


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


@lru_cache(maxsize=1)
def assets() -> dict[str, Any]:
    """The inline stylesheet and script, and the Content-Security-Policy that allows exactly them."""
    folder = templates_dir()
    css = (folder / "report.css").read_text(encoding="utf-8")
    js = (folder / "report.js").read_text(encoding="utf-8")
    if "</style" in css.lower() or "</script" in js.lower() or "<!--" in js:
        raise ValueError("an inline asset would end its element early")
    policy = "; ".join([
        "default-src 'none'",
        f"style-src '{_sha256(css)}'",
        f"script-src '{_sha256(js)}'",
        "img-src data:",
        "base-uri 'none'",
        "form-action 'none'",
        "require-trusted-types-for 'script'",
    ])
    return {"css": Markup(css), "script": Markup(js), "csp": policy}


# ----------------------------------------------------------------------------------- batch-wide numbers


def _deviation(result: AuditResult) -> np.ndarray:
    """Per claim, how far its worst problem is off: the largest |ln(claimed / expected)| among the findings of its
    worst severity, its errors when it has any, else its warnings (for a utilization outside its band, the
    distance to the band). Ranks claims of the same status: by what gives them that status (a failing claim's
    10x error comes before one whose error is 2x and a warning 11x)."""
    n = len(result)
    f = result.findings
    score = np.zeros(n)
    if not len(f):
        return score
    rows = f["row"].to_numpy(dtype=int)
    sev = f["severity"].astype(str).to_numpy()
    rule = f["rule"].astype(str).to_numpy()
    claimed = f["claimed"].to_numpy(dtype=float)
    ratio = f["ratio"].to_numpy(dtype=float)
    low, high = result.config.band
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = np.abs(np.log(ratio))
        util = np.isin(rule, codes_where("utilization"))
        band_dev = np.maximum(np.maximum(np.log(claimed / high), np.log(low / claimed)), 0.0)
    dev = np.where(util & np.isfinite(band_dev), band_dev, dev)
    dev = np.where(np.isfinite(dev), dev, 0.0)
    for problem in _PROBLEM:  # warnings, then errors: a claim's errors replace what its warnings scored
        hit = sev == problem
        of = np.zeros(n)
        np.maximum.at(of, rows[hit], dev[hit])
        has = np.zeros(n, dtype=bool)
        has[rows[hit]] = True
        score = np.where(has, of, score)
    return score


def claim_order(result: AuditResult) -> np.ndarray:
    """Claim rows worst first: by status (fail, invalid, warn, unchecked, pass: STATUSES_WORST_FIRST, as every
    report lists them), then how far off, then input order."""
    n = len(result)
    rank = result.status.map(STATUS_ORDER).to_numpy(dtype=int)
    return np.lexsort((np.arange(n), -_deviation(result), rank))


def _pct(part: int, whole: int) -> str:
    if whole == 0:
        return "—"
    v = 100.0 * part / whole
    if 0 < v < 1:
        return "<1 %"
    if 99 < v < 100:
        return ">99 %"
    return f"{v:.0f} %"


#: The verdicts a share is given of, in the ratio table and the histograms' captions (a relation's ``info`` is a
#: reading it explains, such as "read as hardware FLOPs"; U001's, an MFU outside the usual band).
VERDICTS: tuple[str, ...] = ("ok", "info", "warning", "error")


def _shares(verdicts: np.ndarray, n: int) -> dict[str, str]:
    """The share of each of :data:`VERDICTS` among ``n`` verdicts: the rules' own, never made again here."""
    return {sev: _pct(int((verdicts == sev).sum()), n) for sev in VERDICTS}


def _spread(values: np.ndarray, log: bool) -> tuple[float, float, float]:
    """Median, 5th and 95th percentiles of ``values`` (ratios: ``log``, in log space, where 0.5x and 2x are as far
    from 1x). The percentiles are values of the batch (the nearest rank: two claims at 0.634x and 177x span
    0.634x-177x, not an interpolated 9.43x-168x that no claim has)."""
    x = np.log(values) if log else values
    med = float(np.median(x))
    p05, p95 = (float(v) for v in np.quantile(x, [0.05, 0.95], method="inverted_cdf"))
    return (math.exp(med), math.exp(p05), math.exp(p95)) if log else (med, p05, p95)


def _ratio_rows(result: AuditResult) -> list[dict[str, Any]]:
    """The distribution of claimed / implied for every relation that checked claims, and of MFU; each with the
    share of its rule's verdicts (U001's for the MFU, the worst of a claim's)."""
    f = result.findings
    out: list[dict[str, Any]] = []
    rule = f["rule"].astype(str).to_numpy()
    sev = f["severity"].astype(str).to_numpy()
    ratio = f["ratio"].to_numpy(dtype=float)
    for code, cls in sorted(RULES.items()):
        if not issubclass(cls, RelationRule):
            continue
        mask = (rule == code) & np.isfinite(ratio) & (ratio > 0)
        n = int(mask.sum())
        if n == 0:
            continue
        med, p05, p95 = _spread(ratio[mask], log=True)
        ok_tol, warn_tol = result.config.tolerance(code)
        out.append({
            "code": code, "name": cls.name, "what": cls.formula, "n": n,
            "median": fmt.ratio(med), "p05": fmt.ratio(p05), "p95": fmt.ratio(p95),
            **_shares(sev[mask], n),
            "tolerance": f"ok within {fmt.sig(ok_tol)}x, warning within {fmt.sig(warn_tol)}x",
        })
    mfu = result.q["mfu"].to_numpy(dtype=float)
    has = np.isfinite(mfu)
    if has.any():
        n = int(has.sum())
        med, p05, p95 = _spread(mfu[has], log=False)
        band_code = _chart_code("utilization")
        worst = np.full(len(result), -1)
        on = rule == band_code
        rows = f["row"].to_numpy(dtype=int)
        for word, position in SEVERITY_RANK.items():
            hit = on & (sev == word)
            np.maximum.at(worst, rows[hit], position)
        verdicts = np.array([SEVERITIES[k] if k >= 0 else "" for k in worst[has]], dtype=object)
        tolerance = RULES[band_code].tolerance_text(result.config) if band_code else None
        out.append({
            "code": "MFU", "name": "utilization", "what": "model FLOPs utilization, claimed or derived", "n": n,
            "median": fmt.value("mfu", med), "p05": fmt.value("mfu", p05), "p95": fmt.value("mfu", p95),
            **_shares(verdicts, n),
            "tolerance": (tolerance or "").split(". ")[0].rstrip(".") or
            f"band {fmt.sig(result.config.band[0] * 100)}-{fmt.sig(result.config.band[1] * 100)} %",
        })
    return out


def _chart_code(chart: str) -> str | None:
    """The rule that judges what the chart ``chart`` shows (U001 the utilization, C001 the compute)."""
    return next((code for code in codes_where("chart") if RULES[code].chart == chart), None)


def _top_rules(result: AuditResult) -> list[dict[str, Any]]:
    """Rules with warnings or errors, most claims affected first."""
    f = result.findings
    if not len(f):
        return []
    sev = f["severity"].astype(str)
    bad = f.loc[sev.isin(_PROBLEM).to_numpy(), ["row", "rule"]].assign(severity=sev[sev.isin(_PROBLEM)])
    bad["rule"] = bad["rule"].astype(str)  # the codes present (a categorical groups by every category)
    if not len(bad):
        return []
    claims = bad.groupby("rule")["row"].nunique()
    errors = (bad["severity"] == "error").groupby(bad["rule"]).sum()
    warnings = (bad["severity"] == "warning").groupby(bad["rule"]).sum()
    out = []
    for code in sorted(claims.index, key=lambda c: (-int(claims[c]), str(c))):
        out.append({"code": str(code), "name": RULES[code].name, "summary": RULES[code].summary(),
                    "claims": int(claims[code]), "errors": int(errors.get(code, 0)),
                    "warnings": int(warnings.get(code, 0))})
    return out


# ------------------------------------------------------------------------------------------------ charts


def _charts(result: AuditResult, anchors: dict[int, str]) -> list[dict[str, Any]]:
    """The figures: per-claim charts for small batches, histograms for large ones."""
    n = len(result)
    q = result.q
    f = result.findings
    band = result.config.band
    rows_f = f["row"].to_numpy(dtype=int)
    rule_f = f["rule"].astype(str).to_numpy()
    sev_f = f["severity"].astype(str).to_numpy()
    ratio_f = f["ratio"].to_numpy(dtype=float)
    mfu = round_array(q["mfu"].to_numpy(dtype=float))  # numbers in the page are rounded like every output
    has_mfu = np.flatnonzero(np.isfinite(mfu))
    charts: list[dict[str, Any]] = []
    low, high = band
    if n <= CHART_POINTS_MAX:
        ids = result.claims.info["id"].astype(str).tolist()
        names = result.claims.info["name"].tolist()
        mfu_src = result.column("source", "mfu").tolist()
        charted = {RULES[code].chart: code for code in codes_where("chart")}
        # A point's word is the worst verdict on its MFU: the band's (U001), or a relation's that refutes it (a
        # claimed 45 % that C003 puts at 360 % is not "ok" because 45 % lies in the band).
        on_mfu = (rule_f == charted.get("utilization")) | (f["quantity"].astype(str).to_numpy() == "mfu")
        rank = np.full(n, -1)
        for word, position in SEVERITY_RANK.items():  # each finding's rank, a severity at a time
            hit = on_mfu & (sev_f == word)
            np.maximum.at(rank, rows_f[hit], position)
        u_sev = {int(r): SEVERITIES[rank[r]] for r in np.flatnonzero(rank >= 0)}
        if len(has_mfu):
            points = [svg.UtilizationPoint(id=ids[r], label=str(names[r] or ids[r]), value=float(mfu[r]),
                                           source=str(mfu_src[r]), severity=u_sev.get(int(r), "info"),
                                           href="#" + anchors[r] if r in anchors else None) for r in has_mfu]
            outside = sum(1 for p in points if not (low <= p.value <= high))
            charts.append({
                "id": "chart-mfu", "title": "Implied utilization per claim",
                "caption": (f"Model FLOPs utilization of the {len(points)} claims that state it or let it be derived "
                            f"(hollow marks: derived from compute, chip-hours and the datasheet peak), against the "
                            f"plausible band {fmt.sig(low * 100)}-{fmt.sig(high * 100)} % ({outside} outside). "
                            f"Shape and colour give the U001 verdict; hover a mark for its numbers, click it for "
                            f"the claim."),
                "svg": Markup(svg.utilization_chart(points, band)),
            })
        c_rows = [(int(r), s) for r, s, c in zip(rows_f, sev_f, rule_f) if c == charted.get("compute")]
        if c_rows:
            n_eff = q["n_eff"].to_numpy(dtype=float)
            tokens = q["tokens"].to_numpy(dtype=float)
            compute = q["compute_flops"].to_numpy(dtype=float)
            c_src = result.column("source", "compute_flops").tolist()
            cpoints = [svg.ComputePoint(id=ids[r], label=str(names[r] or ids[r]), claimed=round_value(float(compute[r])),
                                        expected=round_value(6.0 * (float(n_eff[r]) * float(tokens[r]))), severity=s,
                                        source=str(c_src[r]), href="#" + anchors[r] if r in anchors else None)
                       for r, s in c_rows]
            ok, warn = result.config.tolerance(charted["compute"])
            bad = sum(1 for p in cpoints if p.severity != "ok")
            charts.append({
                "id": "chart-compute", "title": "Claimed against implied compute",
                "caption": (f"Each mark is a claim whose compute, parameters and tokens are all known ({len(cpoints)}"
                            f"; {bad} off by more than {fmt.sig(ok)}x). On the diagonal the stated compute equals "
                            f"6·N·D; the shaded band is the ok tolerance ({fmt.sig(ok)}x), the dashed lines the "
                            f"warning limit ({fmt.sig(warn)}x)."
                            + (" Hollow marks: compute derived from the hardware."
                               if any(p.source != "claimed" for p in cpoints) else "")),
                "svg": Markup(svg.compute_chart(cpoints, (ok, warn))),
            })
        return charts
    # Large batches: distributions.
    if len(has_mfu):
        vals = mfu[has_mfu]
        charts.append({
            "id": "chart-mfu", "title": "Distribution of implied utilization",
            "caption": (f"Model FLOPs utilization of the {len(vals):,} claims that state it or let it be derived; "
                        f"{int(((vals < low) | (vals > high)).sum()):,} lie outside the plausible band and "
                        f"{int((vals > 1).sum()):,} above 100 % of peak (the bar on the right)."),
            "svg": Markup(svg.utilization_histogram(vals.tolist(), band)),
        })
    for code, cls in sorted(RULES.items()):
        if not issubclass(cls, RelationRule):
            continue
        mask = (rule_f == code) & np.isfinite(ratio_f) & (ratio_f > 0)
        if not mask.any():
            continue
        tol = result.config.tolerance(code)
        r = ratio_f[mask]
        verdicts = sev_f[mask]
        shares = ", ".join(f"{sev} {_pct(int((verdicts == sev).sum()), len(r))}" for sev in VERDICTS
                           if sev != "info" or (verdicts == sev).any())
        charts.append({
            "id": f"chart-{code}", "title": f"{code} {cls.name}: claimed ÷ implied",
            "caption": (f"{len(r):,} claims checked by {cls.formula}; the shaded interval is within {fmt.sig(tol[0])}x "
                        f"(ok), the dashed lines the warning limit ({fmt.sig(tol[1])}x). Bars at the ends count "
                        f"ratios beyond 16x either way. Verdicts: {shares}."),
            "svg": Markup(svg.ratio_histogram(r.tolist(), tol, f"{code} {cls.name}: claimed ÷ implied",
                                              f"Claimed ÷ implied by {cls.formula} (log scale)")),
        })
    return charts


# ----------------------------------------------------------------------------------------------- claims


def _doc_paragraphs(doc: str) -> list[Markup]:
    """A rule's docstring as paragraphs: the text escaped first, then ``**bold**`` and ```code``` marked up."""
    out = []
    for para in re.split(r"\n\s*\n", doc.strip()):
        text = str(escape(" ".join(para.split())))
        text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
        text = re.sub(r"``(.+?)``", r"<code>\1</code>", text)
        text = re.sub(r"\*(.+?)\*", r"<em>\1</em>", text)
        out.append(Markup(text))
    return out


#: The architecture fields F per token is counted from (Megatron-LM's and PaLM's conventions), as the card lists them.
_ARCHITECTURE_FIELDS: tuple[str, ...] = ("layers", "d_model", "heads", "head_dim", "kv_heads", "ffn_dim", "seq_len",
                                         "vocab_size", "experts", "experts_per_token")
#: The convention F per token was counted by, in its derivation's words ("...; PaLM 6N + 12·L·H·Q·T: 4.5e10 (used)").
_USED_CONVENTION = re.compile(r"(?:: |; )([^:;]+?): [^;]*\(used\)")
#: Inputs of :data:`_DERIVED_FROM` listed only when the claim has them (a fine-tune's trainable parameters).
_WHEN_GIVEN: frozenset[str] = frozenset({"trainable_params"})

#: What the derived-only quantities are computed from (relations say it themselves).
_DERIVED_FROM: dict[str, tuple[str, ...]] = {
    "flops_per_token": ("n_eff",),
    "tokens_per_param": ("tokens", "params"),
    "training_state_bytes": ("params", "trainable_params"),
    "min_chips_memory": ("training_state_bytes", "memory_per_chip"),
}


def _finding_view(f: dict[str, Any]) -> dict[str, Any]:
    alternatives = [{"text": e.get("text") or "", "reference": e.get("reference") or ""}
                    for e in (f.get("explanations") or [])[1:]]
    best = (f.get("explanations") or [{}])[0]
    return {
        "severity": f["severity"], "symbol": SYMBOLS.get(f["severity"], "●"), "rule": f["rule"], "name": f["name"],
        "message": f["message"], "formula": f["formula"],
        # A finding may carry an explanation (the likeliest known cause): shown when present.
        "explanation": f.get("explanation") or None,
        "why": (best.get("description") or "") if f.get("explanation") else "",
        "reference": (best.get("reference") or "") if f.get("explanation") else "",
        "alternatives": alternatives,
    }


def _record_view(rec: dict[str, Any]) -> dict[str, Any]:
    """What a claim record (or a phase's) shows: identity, hardware, figures as stated, the derivation trail and
    the findings, problems first."""
    # The finding that leads (the outlier: which figure to look at first) comes first, then the worst ones.
    views = [_finding_view(f) for f in sorted(rec["findings"], key=lambda f: (not RULES[f["rule"]].leads,
                                                                             -SEVERITY_RANK[f["severity"]]))]
    hw = rec["hardware"]
    datasheet = None
    # The datasheet sources themselves are listed once, in the page's Sources section; the card links there.
    used: list[str] = []
    if hw["accelerator"]:
        a = _catalog().by_id(hw["accelerator"])
        datasheet = {"id": a.id, "name": a.name, "anchor": datasheet_anchor(a.id)}
        used.append(a.id)
    problems = [v for v in views if v["severity"] in _PROBLEM or RULES[v["rule"]].leads]
    passed = [v for v in views if v["severity"] not in _PROBLEM and not RULES[v["rule"]].leads]
    stated, derived = [], []
    for name, v in rec["quantities"].items():
        if v["source"] == "claimed":
            stated.append({"label": label(name), "text": fmt.written(v.get("text") or ""), "display": v["display"]})
        else:
            rule = v.get("rule")
            inputs: list[str] = []
            cls = RULES.get(rule) if rule else None
            if cls is not None and issubclass(cls, RelationRule):
                subject = "n_eff" if name == "params" else name
                inputs = [label(x) for x in cls.relation.quantities if x != subject]
            elif name == "flops_per_token" and (convention := _USED_CONVENTION.search(v.get("how") or "")) \
                    is not None and convention.group(1) != "6N":
                # Counted from the architecture (PaLM's 6N + attention also from N): its fields the claim gives.
                inputs = ([label("n_eff")] if convention.group(1).startswith("PaLM") else []) + \
                    [label(x) for x in _ARCHITECTURE_FIELDS if x in rec["quantities"]]
            elif (read := NOTE_READS.get(v.get("how") or "")) is not None:  # the fields its note says it read
                inputs = [label(x) for x in read]
            else:
                inputs = [label(x) for x in _DERIVED_FROM.get(name, ())
                          if x not in _WHEN_GIVEN or x in rec["quantities"]]
            how = v.get("how") or ""
            if rule in RULES and how.startswith(f"{rule}: "):
                how = how[len(rule) + 2:]
            sheets = []
            if v["source"] == "catalog":
                how, sheets = _cut_sources(how, _accelerators_of(hw))
                used.extend(x for x in sheets if x not in used)
            derived.append({"label": label(name), "display": v["display"], "source": v["source"],
                            "how": how, "rule": rule if rule in RULES else None, "inputs": inputs,
                            "sheets": [{"anchor": datasheet_anchor(x), "name": _catalog().by_id(x).name}
                                       for x in sheets]})
    return {
        "id": str(rec["id"]), "name": str(rec["name"] or ""), "status": rec["status"],
        "symbol": SYMBOLS[rec["status"]],
        "source": linkify(rec["source"]),
        "file": place(rec["input"]), "row": rec["input"]["row"],
        "hardware": {"text": hw["text"] or "", "precision": hw["precision"] or "",
                     "assumed": hw["precision_assumed"]},
        "datasheet": datasheet,
        "datasheets": used,
        "stated": stated, "derived": derived,
        "problems": problems, "passed": passed, **_passed_words(rec["status"], problems, passed),
        "extra": [(k, str(v)) for k, v in rec["extra"].items()],
        "next_step": None,
    }


def _passed_words(status: str, problems: list[dict[str, Any]], passed: list[dict[str, Any]]) -> dict[str, str]:
    """The heading over a claim's findings that are not problems, and a passing claim's one line: checks that
    hold (``ok``) counted apart from notes (``info``: how a figure was read, nothing checked), and the heading
    as the status says (an unchecked claim's notes are not "every check holds")."""
    ok = sum(1 for v in passed if v["severity"] == "ok")
    notes = len(passed) - ok
    tally = ", ".join([f"{ok} ok"] * bool(ok) + [f"{notes} info"] * bool(notes))
    if problems:
        head = "Also found"
    elif status == "unchecked" or not ok:
        head = "No check ran on the claim's figures; notes"
    else:
        head = "Every check holds"
    line = f"{ok} check{'s' if ok != 1 else ''} hold{'s' if ok == 1 else ''}" + (
        f", {notes} note{'s' if notes != 1 else ''}" if notes else "")
    return {"passed_heading": f"{head} ({tally}):" if passed else "", "oneline": line}


@lru_cache(maxsize=1)
def _catalog_sources() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(`` (source text)``, the ids of the accelerators citing it) for every source of the catalog, longest
    first (several variants of a part often cite one datasheet)."""
    by_text: dict[str, list[str]] = {}
    for a in load_catalog():
        for text in (a.source_compute, a.source_memory):
            if text and a.id not in by_text.setdefault(f" ({text})", []):
                by_text[f" ({text})"].append(a.id)
    return tuple(sorted(((t, tuple(ids)) for t, ids in by_text.items()), key=lambda p: (-len(p[0]), p[0])))


def _cut_sources(how: str, accelerators: list[str]) -> tuple[str, list[str]]:
    """A datasheet derivation without the datasheet's source text (listed once under Sources), and the
    accelerators whose sources were cut, in order. A text several accelerators cite is credited to the claim's
    own (``accelerators``); a text none of them cites is left in place."""
    found: list[tuple[int, str]] = []
    for text, ids in _catalog_sources():
        at = how.find(text)
        mine = [i for i in ids if i in accelerators]
        if at >= 0 and mine:
            found.append((at, mine[0]))
            how = how.replace(text, "")
    return how, [accel for _, accel in sorted(found)]


def _accelerators_of(hw: dict[str, Any]) -> list[str]:
    """The catalog ids of a claim's accelerator, or of each part of a mix."""
    if hw["accelerator"]:
        return [str(hw["accelerator"])]
    parts = load_catalog().lookup_mix(hw["text"]) if hw["text"] else None
    return [a.id for a in parts or []]


def datasheet_anchor(accel_id: str) -> str:
    """The id of an accelerator's entry in the Sources section."""
    return "datasheet-" + re.sub(r"[^A-Za-z0-9_-]", "-", str(accel_id))


# ---------------------------------------------------------------------------------------------- next steps


def _figure(result: AuditResult, row: int, name: str, note: str = "") -> str:
    """A figure of one claim as a reader finds it in the report: its label and the text as written (or the value
    and "derived"), with ``note`` added inside the parentheses."""
    src = result.cell("source", row, name) if name in result.source.columns else None
    text = result.cell("text", row, name) if result.claims.has_text(name) else None
    v = result.cell("q", row, name) if name in result.q.columns else None
    inside = []
    if src == "claimed" and text not in (None, ""):
        inside.append(fmt.written(str(text)))
    elif v is not None and math.isfinite(float(v)):
        inside.append(fmt.value(name, float(v)) + ("" if src == "claimed" else ", derived"))
    if note:
        inside.append(note)
    return f"{label(name)} ({'; '.join(inside)})" if inside else label(name)


def _implied(name: str, value: float, short: bool = False) -> str:
    if not math.isfinite(value):
        return "without it the other stated figures agree"
    return f"the {'others' if short else 'other figures'} imply {fmt.value(name, value)}"


def _outlier_step(result: AuditResult, row: int) -> str | None:
    """The figure to correct, from the claim's outlier finding (C009, the rule that leads): None without one, or
    when the suspect is the datasheet peak (the claim's own peak is then what to question)."""
    f = result.findings
    hit = f.loc[(f["row"].to_numpy(dtype=int) == row) & np.isin(f["rule"].astype(str).to_numpy(), codes_where("leads"))]
    if not len(hit):
        return None
    cands = tuple(hit["candidates"].iat[0] or ())
    implied = tuple(float(v) for v in (hit["implied"].iat[0] or ()))
    if not cands or "catalog_peak" in cands:
        return None
    if len(cands) == 1:
        return f"check {_figure(result, row, cands[0])}: {_implied(cands[0], implied[0])}."
    listed = " or ".join(_figure(result, row, c, _implied(c, v, short=True)) for c, v in zip(cands, implied))
    return f"check which figure is wrong: {listed}; correcting any one of them makes the rest agree."


def _derived_by(result: AuditResult, row: int, name: str) -> str | None:
    """The relation (its formula) that derived a claim's figure ``name``; None when the claim states it or no
    relation derived it."""
    if name not in result.source.columns or result.cell("source", row, name) != "derived":
        return None
    rule = RULES.get(str(result.cell("how", row, name)))
    return rule.formula if rule is not None and rule.formula else None


def _question(result: AuditResult, row: int, f: dict[str, Any]) -> str:
    """What to ask a claim's authors about its worst finding."""
    name = str(f["quantity"])
    rule = RULES[f["rule"]]
    claimed, expected, ratio = f.get("claimed"), f.get("expected"), f.get("ratio")
    cause = (f.get("explanations") or [{}])[0].get("name")
    known = name in result.q.columns
    derived_by = _derived_by(result, row, name)
    if rule.invalidates:
        # The cell may be a person's reading the tool does not make ("about half a day"): rewriting it is the
        # first step, the authors the second.
        text = (f"rewrite the {label(name)} cell as a figure the tool reads, or ask the authors for one: "
                f"{f['message']}")
    elif known and claimed is not None and derived_by is not None:
        # A derived figure is nobody's claim (a carbon intensity from emissions over energy): what to question are
        # the stated figures its relation combines, with the finding's own words and numbers.
        text = f"check the stated figures that give {_figure(result, row, name)} through {derived_by}: {f['message']}"
    elif known and claimed is not None and expected is not None and ratio:
        text = (f"ask the authors how {_figure(result, row, name)} was obtained, when {rule.formula} gives "
                f"{fmt.value(name, expected)} (ratio "
                f"{shown_ratio(ratio, f['severity'], result.config.tolerance(f['rule']))})")
    elif known and claimed is not None:
        text = f"ask the authors to confirm {_figure(result, row, name)}: {f['message']}"
    elif name == "hardware":
        text = f"ask the authors which accelerator was used: {f['message']}"
    else:
        text = f"ask the authors about this: {f['message']}"
    return text + (f"; likely cause: {cause}." if cause else ".")


def next_step(result: AuditResult, row: int, findings: list[dict[str, Any]]) -> str | None:
    """For a claim with a problem, what to do next: the figure to correct (from the outlier finding) or else the
    question to ask the authors (from the worst finding). None when nothing is wrong."""
    problems = [f for f in findings if f["severity"] in _PROBLEM]
    if not problems:
        return None
    step = _outlier_step(result, row)
    if step:
        return step
    worst = max(problems, key=lambda f: SEVERITY_RANK[f["severity"]])  # the first of the worst severity
    return _question(result, row, worst)


def _claim_view(result: AuditResult, row: int, findings: list, rank: int, problem_rules: list[str]) -> dict[str, Any]:
    rec = claim_record(result, row, findings)
    view = _record_view(rec)
    mfu = rec["quantities"].get("mfu")
    phases = [dict(_record_view(p), anchor=f"claim-{row}-phase-{i + 1}") for i, p in enumerate(rec.get("phases") or [])]
    step = next_step(result, row, rec["findings"])
    if phases and result.phase_result is not None:
        for p, prow, prec in zip(phases, result.phase_rows(row), rec["phases"]):
            p["next_step"] = next_step(result.phase_result, prow, prec["findings"])
            if step is None and p["next_step"]:
                step = f"in phase {p['id']}, {p['next_step']}"  # the problem is in a phase: that phase's step
    view.update({
        "anchor": f"claim-{row}", "row_index": row, "rank": rank, "rules": problem_rules,
        "mfu": "" if mfu is None else repr(float(mfu["value"])),
        "next_step": step,
        # A run trained in phases: each phase is audited as a claim of its own and shown under the run.
        "phases": phases,
    })
    return view


# ------------------------------------------------------------------------------------------ page framing


def verdict(status: dict[str, int]) -> str:
    """One sentence that says whether the batch is sound, from the counts by status."""
    n = sum(status.values())
    fail, invalid, warn = status.get("fail", 0), status.get("invalid", 0), status.get("warn", 0)
    passed, unchecked = status.get("pass", 0), status.get("unchecked", 0)
    bad = fail + invalid + warn
    if n == 0:
        return "No claims were audited."
    rest = [f"{passed:,} pass"] + ([f"{unchecked:,} could not be checked"] if unchecked else [])
    if bad == 0:
        if unchecked == 0:
            return ("The claim passes" if n == 1 else f"All {n:,} claims pass") + \
                ": every relation that could be checked holds."
        if passed == 0:
            return ("The claim states" if n == 1 else f"None of the {n:,} claims states") + \
                " enough for any check to run: nothing was verified."
        return f"No claim has a problem, but not all were checked: {' and '.join(rest)}."
    kinds = [f"{fail:,} fail"] + ([f"{invalid:,} invalid"] if invalid else []) + [f"{warn:,} warn"]
    head = ("The claim has a problem" if n == 1 else
            f"{bad:,} of {n:,} claims {'has a problem' if bad == 1 else 'have problems'}")
    tail = "" if bad == n else f"; {', '.join(rest)}"
    return f"{head}: {', '.join(kinds)}{tail}."


#: Input files named at the top of the page; more are counted.
FILES_LISTED = 20


def input_files(result: AuditResult) -> list[str]:
    """The input files, each once, in the order their claims were read."""
    return [str(f) for f in dict.fromkeys(result.claims.info["file"].tolist()) if f is not None and str(f) != ""]


def documentation_url() -> str | None:
    """The project's documentation from the installed package's metadata (``[project.urls]``), when it names an
    http(s) one: Documentation first, then Homepage, Repository or Source."""
    try:
        meta = importlib.metadata.metadata("train-audit")
    except importlib.metadata.PackageNotFoundError:
        return None
    urls: dict[str, str] = {}
    for entry in meta.get_all("Project-URL") or []:
        key, _, url = str(entry).partition(",")
        urls.setdefault(key.strip().lower(), url.strip())
    if meta.get("Home-page"):
        urls.setdefault("homepage", str(meta.get("Home-page")))
    for key in ("documentation", "docs", "homepage", "repository", "source"):
        url = safe_url(urls.get(key))
        if url:
            return url
    return None


def _tolerances(result: AuditResult, codes: list[str]) -> list[dict[str, str]]:
    """The ratio tolerances of the relation checks named in ``codes``, compactly, and the MFU band."""
    out = []
    for code in codes:
        cls = RULES.get(code)
        if cls is None or not issubclass(cls, RelationRule):
            continue
        ok, warn = result.config.tolerance(code)
        out.append({"code": code, "text": f"ok within {fmt.sig(ok)}x, warning within {fmt.sig(warn)}x"})
    low, high = result.config.band
    out.append({"code": "MFU", "text": f"plausible band {fmt.sig(low * 100)}-{fmt.sig(high * 100)} %"})
    return out


#: The catalog of the audit being rendered (a ``--catalog FILE`` adds accelerators to the bundled one).
_CATALOG: contextvars.ContextVar[Catalog | None] = contextvars.ContextVar("catalog", default=None)


def _catalog() -> Catalog:
    """The accelerators of the audit being rendered (the bundled catalog outside :func:`context`)."""
    return _CATALOG.get() or load_catalog()


def context(result: AuditResult, title: str = "train-audit report", command: str | None = None) -> dict[str, Any]:
    """The template's data for one audit (see :func:`_context`), with the audit's own catalog."""
    token = _CATALOG.set(result.accelerators())
    try:
        return _context(result, title, command)
    finally:
        _CATALOG.reset(token)


def _context(result: AuditResult, title: str = "train-audit report", command: str | None = None) -> dict[str, Any]:
    """The template's context: every string and number already computed. ``command``, when given, is the command
    line that produced the report, shown at the top."""
    n = len(result)
    order = claim_order(result)
    detailed: list[int] = [int(r) for r in order[:MAX_DETAILED]]
    anchors = {r: f"claim-{r}" for r in detailed}
    f = result.findings
    f_rows = f["row"].to_numpy(dtype=int)
    f_rule = f["rule"].astype(str).to_numpy()
    f_bad = f["severity"].astype(str).isin(_PROBLEM).to_numpy()
    shown = np.isin(f_rows, detailed) & f_bad
    rules_of: dict[int, set[str]] = {}
    for r, code in zip(f_rows[shown].tolist(), f_rule[shown].tolist()):
        rules_of.setdefault(r, set()).add(code)

    grouped = findings_by_row(result, rows=np.array(detailed, dtype=int))
    claims = [_claim_view(result, row, grouped.get(row, []), rank, sorted(rules_of.get(row, ())))
              for rank, row in enumerate(detailed)]

    mfu = result.q["mfu"].to_numpy(dtype=float)
    mfu_src = result.column("source", "mfu").tolist()
    hw = result.hardware
    accel_names = hw["accelerator_name"].tolist()
    hw_text = hw["hardware_text"].tolist()
    table = []
    for c in claims:
        r = c["row_index"]
        m = mfu[r]
        table.append({
            "anchor": c["anchor"], "id": c["id"], "name": c["name"], "status": c["status"], "symbol": c["symbol"],
            "rank": c["rank"], "row_index": r, "rules": c["rules"], "mfu_value": c["mfu"],
            "mfu": "" if not math.isfinite(m) else fmt.value("mfu", float(m)),
            "mfu_derived": math.isfinite(m) and mfu_src[r] != "claimed",
            "hardware": str(accel_names[r] or hw_text[r] or ""),
        })

    worst = []
    for c in claims[:WORST_LISTED]:
        if c["status"] == "pass" or not (c["problems"] or c["status"] == "invalid"):
            break
        # The worst finding heads the line (the outlier, when there is one, is the next step below it).
        head = next((p for p in c["problems"] if p["severity"] in _PROBLEM), c["problems"][0] if c["problems"] else None)
        worst.append({"anchor": c["anchor"], "id": c["id"], "name": c["name"], "status": c["status"],
                      "symbol": c["symbol"], "headline": head, "more": max(len(c["problems"]) - 1, 0),
                      "next_step": c["next_step"]})

    s = summary(result)
    rule_counts: dict[str, int] = {}
    for codes in rules_of.values():
        for code in codes:
            rule_counts[code] = rule_counts.get(code, 0) + 1
    filter_rules = [{"code": code, "name": RULES[code].name, "count": rule_counts[code]}
                    for code in sorted(rule_counts)]
    shown_status = {st: 0 for st in STATUS_ORDER}
    for c in claims:
        shown_status[c["status"]] += 1
    used_rules = sorted(set(f_rule.tolist())
                        | {d["rule"] for c in claims for d in c["derived"] if d["rule"]}
                        | {f["rule"] for c in claims for p in c["phases"] for f in p["problems"] + p["passed"]}
                        | {d["rule"] for c in claims for p in c["phases"] for d in p["derived"] if d["rule"]})
    datasheets: dict[str, dict[str, Any]] = {}
    for c in claims:
        for rec in [c, *c["phases"]]:
            for accel in rec["datasheets"]:
                entry = datasheets.setdefault(accel, {"claims": 0, "phases": 0})
                entry["phases" if rec is not c else "claims"] += 1
    catalog = _catalog()
    sources = []
    for accel_id, used in sorted(datasheets.items(), key=lambda kv: (catalog.by_id(kv[0]).name, kv[0])):
        a = catalog.by_id(accel_id)
        sources.append({"anchor": datasheet_anchor(a.id), "name": a.name, "compute": linkify(a.source_compute),
                        "memory": linkify(a.source_memory), "claims": used["claims"], "phases": used["phases"]})
    files = input_files(result)
    return {
        **assets(),
        "title": title,
        "version": __version__,
        "verdict": verdict(s["status"]),
        "files": files[:FILES_LISTED],
        "files_more": max(len(files) - FILES_LISTED, 0),
        "command": command or None,
        "sources": sources,
        "catalog_size": len(catalog),
        "catalog_revised": catalog_revision(),
        "docs_url": documentation_url(),
        "tolerances": _tolerances(result, used_rules),
        "unread": [{**u, "file": place(u)} for u in input_notes(result)["unread_columns"]],
        "input_notes": [{**n, "file": place(n)} for n in input_notes(result)["notes"]],
        "generated": _timestamp(),
        "n": n,
        "counts": [{"status": st, "symbol": SYMBOLS[st], "count": s["status"][st], "pct": _pct(s["status"][st], n)}
                   for st in ("fail", "invalid", "warn", "unchecked", "pass")],
        "severities": [{"severity": sev, "symbol": SYMBOLS[sev], "count": s["findings"][sev]}
                       for sev in ("error", "warning", "info", "ok")],
        "worst": worst,
        "top_rules": _top_rules(result),
        "ratios": _ratio_rows(result) if n > 1 else [],
        "charts": _charts(result, anchors),
        "filter_status": [{"status": st, "symbol": SYMBOLS[st], "count": shown_status[st]}
                          for st in ("fail", "invalid", "warn", "unchecked", "pass") if shown_status[st]],
        "filter_rules": filter_rules,
        "claims": claims,
        "table": table,
        "hidden": n - len(detailed),
        "max_detailed": MAX_DETAILED,
        "rules": [{"code": c, "name": RULES[c].name, "formula": RULES[c].formula,
                   "doc": _doc_paragraphs(RULES[c].doc()), "tolerance": RULES[c].tolerance_text(result.config)}
                  for c in used_rules],
    }


def render(result: AuditResult, title: str = "train-audit report", command: str | None = None) -> str:
    """The audit as one self-contained HTML page (``command``: the command line to name at the top, if any)."""
    return environment().get_template("report.html.j2").render(**context(result, title, command))


@register("html", description="one self-contained page with charts, for reading and forwarding")
def render_html(result: AuditResult, options: Options) -> str:
    """The registered ``html`` format (the command line comes with the options once they carry one)."""
    return render(result, options.title, getattr(options, "command", None))


__all__ = ["render", "context", "safe_url", "linkify", "environment", "assets", "claim_order", "MAX_DETAILED",
           "CHART_POINTS_MAX", "verdict", "next_step", "input_files", "documentation_url", "datasheet_anchor"]
