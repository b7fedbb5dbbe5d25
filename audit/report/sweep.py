"""``estimate`` over a sweep of one quantity: a table (text), records (JSON) and a plot (HTML, inline SVG drawn
with the helpers of :mod:`audit.report.svg`). Every row is a full estimate; the JSON keeps each one's findings
and derivations."""

from __future__ import annotations

import math
from typing import Any, Sequence

from audit import formatting as fmt
from audit.quantities import BY_NAME, label
from audit.records import estimate_json
from audit.report import json_out
from audit.report.svg import Scale, _svg_open, _text, _x_tick, _y_tick, data_num, esc, marker, num
from audit.result import AuditResult

#: Columns of a sweep table, in order, when some row has a value (the swept quantity comes first).
COLUMNS: tuple[str, ...] = ("compute_flops", "params", "tokens", "chips", "wall_clock_days", "chip_hours", "mfu",
                            "throughput_tokens_per_s", "min_chips_memory", "energy_mwh", "co2_tonnes", "cost_usd")
#: Quantities plotted by the HTML format (each against the swept one), when some row has a value.
PLOTTED: tuple[str, ...] = ("wall_clock_days", "chip_hours", "mfu", "energy_mwh", "co2_tonnes", "cost_usd")


def _value(result: AuditResult, name: str) -> float:
    v = result.cell("q", 0, name)
    return float(v) if v is not None and v == v else math.nan


def columns(name: str, results: Sequence[AuditResult]) -> list[str]:
    """The swept quantity, then every column some row has a value for."""
    rest = [c for c in COLUMNS if c != name and any(math.isfinite(_value(r, c)) for r in results)]
    return [name, *rest]


def render_text(name: str, texts: Sequence[str], results: Sequence[AuditResult]) -> str:
    """An aligned table: one row per swept value, derived values marked ``*``; then each row's problems."""
    cols = columns(name, results)
    header = [label(c) for c in cols]
    body = []
    for r in results:
        cells = []
        for c in cols:
            v = _value(r, c)
            mark = "*" if r.cell("source", 0, c) == "derived" else ""
            cells.append("—" if not math.isfinite(v) else fmt.value(c, v) + mark)
        body.append(cells)
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in body]
    lines.append(f"* derived; sweep over {label(name)}: {', '.join(texts)}")
    notes = []
    for text, r in zip(texts, results):
        f = r.findings
        bad = f[f["severity"].astype(str).isin(["warning", "error"])]
        for rule in bad["rule"].unique():
            notes.append(f"{label(name)} = {text}: {rule} ({bad[bad['rule'] == rule]['severity'].astype(str).iat[0]})")
    if notes:
        lines += ["", *notes, "(`train-audit estimate` with one value shows a row's findings in words)"]
    return "\n".join(lines) + "\n"


def render_json(name: str, texts: Sequence[str], results: Sequence[AuditResult]) -> str:
    """``{"sweep": name, "rows": [{"value": text, "quantities": ..., "findings": ...}, ...]}``."""
    rows: list[dict[str, Any]] = [{"value": t, **estimate_json(r)} for t, r in zip(texts, results)]
    return json_out.dumps({"sweep": name, "rows": rows})


def chart(name: str, y_name: str, xs: Sequence[float], ys: Sequence[float], width: float = 520,
          height: float = 300) -> str:
    """One line chart of ``y_name`` against the swept ``name`` (log axes when a range spans 30x or more)."""
    pts = [(x, y) for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y) and x > 0 and y > 0]
    left, right, top, bottom = 78.0, 16.0, 30.0, 48.0
    parts = _svg_open(width, height, f"{label(y_name)} against {label(name)}",
                      f"{len(pts)} points of the sweep", "sweep")
    if not pts:
        return "\n".join([*parts, "</svg>"])
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if x0 == x1:
        x0, x1 = x0 * 0.9, x1 * 1.1
    if y0 == y1:
        y0, y1 = y0 * 0.9, y1 * 1.1
    xlog, ylog = x1 / x0 >= 8, y1 / y0 >= 30  # a doubling sweep (1024, 2048, 4096, ...) reads best on log x
    if not ylog:
        pad = (y1 - y0) * 0.08
        y0, y1 = max(y0 - pad, 0.0) if y0 - pad > 0 else y0 * 0.9, y1 + pad
    sx = Scale(x0, x1, left, width - right, log=xlog)
    sy = Scale(y0, y1, height - bottom, top, log=ylog)
    for v in sorted({p[0] for p in pts})[:12]:
        parts.append(_x_tick(sx(v), top, height - bottom, v, fmt.value(name, v, unit=False)))
    for i in range(5):
        v = y0 * (y1 / y0) ** (i / 4) if ylog else y0 + (y1 - y0) * i / 4
        parts.append(_y_tick(sy(v), left, width - right, v, fmt.value(y_name, v, unit=False)))
    path = "M" + "L".join(f"{num(sx(x))},{num(sy(y))}" for x, y in pts)
    parts.append(f'<path class="line" d="{path}" fill="none" stroke="#0072B2" stroke-width="2"/>')
    for x, y in pts:
        tip = f"{label(name)} {fmt.value(name, x)}: {label(y_name)} {fmt.value(y_name, y)}"
        parts.append(f'<g class="point" transform="translate({num(sx(x))},{num(sy(y))})" data-x="{data_num(x)}" '
                     f'data-value="{data_num(y)}">{marker("ok", 4)}<title>{esc(tip)}</title></g>')
    parts.append(_text((left + width - right) / 2, height - 8, label(name), "middle"))
    unit = BY_NAME[y_name].unit if y_name in BY_NAME else ""
    parts.append(_text(12, 14, f"{label(y_name)} ({unit})" if unit else label(y_name)))
    parts.append("</svg>")
    return "\n".join(parts)


def _varies(values: Sequence[float]) -> bool:
    """Whether a quantity changes across the sweep (a constant one is in the table, not worth a chart)."""
    finite = [v for v in values if math.isfinite(v)]
    return len(finite) > 1 and max(finite) > min(finite) * (1 + 1e-9)


def render_html(name: str, texts: Sequence[str], results: Sequence[AuditResult], title: str = "train-audit sweep"
                ) -> str:
    """One self-contained page: the table and a chart per quantity that changes across the sweep; no script, no
    network."""
    xs = [_value(r, name) for r in results]
    charts = [chart(name, y, xs, [_value(r, y) for r in results]) for y in PLOTTED
              if y != name and _varies([_value(r, y) for r in results])]
    table = render_text(name, texts, results)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">",
        f"<title>{esc(title)}</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}pre{background:#f6f6f6;padding:1em;"
        "overflow-x:auto}.charts{display:flex;flex-wrap:wrap;gap:1em}</style></head><body>",
        f"<h1>{esc(title)}</h1>", f"<p>Sweep over {esc(label(name))}: {esc(', '.join(texts))}</p>",
        f"<pre>{esc(table)}</pre>", '<div class="charts">', *charts, "</div>", "</body></html>", ""])
