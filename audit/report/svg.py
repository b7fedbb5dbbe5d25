"""Charts for the HTML report, drawn as inline SVG text from Python.

Pure functions: numbers in, an SVG string out; no I/O, no JavaScript, no external reference (the only links are
``#fragment`` links to claims in the same page). Every text and attribute value is escaped.

Readable in greyscale and by colour-blind readers: a status is carried by a marker's *shape* and its colour
(the Okabe-Ito palette) and named in words in each point's tooltip and in the legend; bands are labelled.

Conventions the tests (and anyone reading the page source) rely on:

- a data point is ``<g class="point" transform="translate(X,Y)" data-id=... data-value=...>`` holding its marker,
  drawn around the origin, and a ``<title>`` tooltip; ``data-*`` values are ``repr`` of the float;
- an axis tick is ``<g class="tick x|y" transform="translate(X,Y)" data-value=...>``, so a point's position can
  be checked against the scale;
- a histogram bar is ``<rect class="bar" data-lo=... data-hi=... data-count=...>``.
"""

from __future__ import annotations

import bisect
import html
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from audit.rounding import round_value

#: The Okabe-Ito colour-blind-safe palette (Okabe & Ito 2008, *Color Universal Design*).
OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}

#: Marker shape and colour by severity (a claim's status maps onto these through :data:`STATUS_SEVERITY`).
MARKERS: dict[str, tuple[str, str]] = {
    "ok": ("circle", OKABE_ITO["bluish_green"]),
    "info": ("circle", OKABE_ITO["sky_blue"]),
    "warning": ("triangle", OKABE_ITO["orange"]),
    "error": ("square", OKABE_ITO["vermillion"]),
    "invalid": ("diamond", OKABE_ITO["reddish_purple"]),
}

STATUS_SEVERITY: dict[str, str] = {"pass": "ok", "warn": "warning", "fail": "error", "invalid": "invalid",
                                   "unchecked": "info"}

#: What a severity means, for legends and tooltips.
SEVERITY_WORDS: dict[str, str] = {"ok": "ok", "info": "info", "warning": "warning", "error": "error",
                                  "invalid": "invalid"}

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif"
INK = "#1b1b1b"
MUTED = "#555555"
GRID = "#d9d9d9"
BAND_FILL = "#cfe8f7"  # a light tint of Okabe-Ito sky blue
BAR_FILL = OKABE_ITO["blue"]
NEUTRAL = "#777777"


# ------------------------------------------------------------------------------------------------ helpers


def esc(text: object) -> str:
    """Text safe in SVG/HTML content and in a double-quoted attribute."""
    return html.escape(str(text), quote=True)


def num(x: float) -> str:
    """A coordinate: two decimals, no ``-0.00`` (rounded to 12 significant digits first, as every number
    written out is, so that a last-bit difference between machines cannot move a mark)."""
    text = f"{round_value(float(x)):.2f}"
    return "0.00" if text == "-0.00" else text


def data_num(x: float) -> str:
    """A number in a ``data-*`` attribute: ``repr`` of the float rounded to 12 significant digits (the number
    every other output gives)."""
    return repr(round_value(float(x)))


def safe_fragment(href: str | None) -> str | None:
    """Only in-page links (``#claim-3``) are allowed inside a chart."""
    if href and href.startswith("#") and all(c.isalnum() or c in "-_" for c in href[1:]):
        return href
    return None


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


def percent(x: float) -> str:
    """``0.462`` -> ``46.2 %``."""
    v = x * 100
    if v == 0:
        return "0 %"
    if abs(v) >= 100:
        return f"{v:,.0f} %"
    return f"{v:.3g} %"


def sci(x: float) -> str:
    """``3.14e23`` (three significant digits)."""
    if x == 0 or not math.isfinite(x):
        return str(x)
    mantissa, exp = f"{x:.2e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exp)}"


def ratio_text(r: float) -> str:
    """``2`` -> ``2×``, ``0.5`` -> ``1/2×``."""
    if r >= 1:
        return f"{r:g}×"
    return f"1/{1 / r:g}×"


@dataclass(frozen=True)
class Scale:
    """Maps a data interval onto a pixel interval, linearly or in log10."""

    d0: float
    d1: float
    r0: float
    r1: float
    log: bool = False

    def __call__(self, v: float) -> float:
        if self.log:
            v, a, b = math.log10(v), math.log10(self.d0), math.log10(self.d1)
        else:
            a, b = self.d0, self.d1
        return self.r0 + (v - a) / (b - a) * (self.r1 - self.r0)


def marker(severity: str, size: float = 5.0, hollow: bool = False, colour: str | None = None) -> str:
    """The marker of a severity, centred on the origin: circle (ok), triangle (warning), square (error),
    diamond (invalid). ``hollow`` draws the outline only (a derived rather than a claimed value)."""
    shape, default = MARKERS.get(severity, MARKERS["info"])
    colour = colour or default
    if hollow:
        paint = f'fill="#ffffff" stroke="{colour}" stroke-width="2"'
    else:
        paint = f'fill="{colour}" stroke="{INK}" stroke-width="0.75"'
    s = size
    if shape == "circle":
        return f'<circle r="{num(s)}" {paint}/>'
    if shape == "square":
        h = s * 0.9
        return f'<rect x="{num(-h)}" y="{num(-h)}" width="{num(2 * h)}" height="{num(2 * h)}" {paint}/>'
    if shape == "triangle":
        t = s * 1.25
        return f'<path d="M0,{num(-t)}L{num(t * 0.866)},{num(t / 2)}L{num(-t * 0.866)},{num(t / 2)}Z" {paint}/>'
    d = s * 1.2
    return f'<path d="M0,{num(-d)}L{num(d)},0L0,{num(d)}L{num(-d)},0Z" {paint}/>'


def _svg_open(width: float, height: float, title: str, desc: str, cls: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {esc(cls)}" viewBox="0 0 {num(width)} {num(height)}" '
        f'width="{num(width)}" height="{num(height)}" font-family="{esc(FONT)}" font-size="12" fill="{INK}">',
        f"<title>{esc(title)}</title>",
        f"<desc>{esc(desc)}</desc>",
    ]


def _text(x: float, y: float, text: str, anchor: str = "start", cls: str = "", extra: str = "") -> str:
    c = f' class="{esc(cls)}"' if cls else ""
    e = f" {extra}" if extra else ""
    return f'<text x="{num(x)}" y="{num(y)}" text-anchor="{anchor}"{c}{e}>{esc(text)}</text>'


def _x_tick(x: float, y_top: float, y_bottom: float, value: float, label: str, grid: bool = True) -> str:
    line = (f'<line y1="{num(y_top - y_bottom)}" y2="0" stroke="{GRID}"/>' if grid else "")
    return (f'<g class="tick x" transform="translate({num(x)},{num(y_bottom)})" data-value="{data_num(value)}">'
            f'{line}<line y1="0" y2="5" stroke="{INK}"/>{_text(0, 18, label, "middle")}</g>')


def _y_tick(y: float, x_left: float, x_right: float, value: float, label: str, grid: bool = True) -> str:
    line = (f'<line x1="0" x2="{num(x_right - x_left)}" stroke="{GRID}"/>' if grid else "")
    return (f'<g class="tick y" transform="translate({num(x_left)},{num(y)})" data-value="{data_num(value)}">'
            f'{line}<line x1="-5" x2="0" stroke="{INK}"/>{_text(-8, 4, label, "end")}</g>')


def _legend(items: Iterable[tuple[str, str]], x: float, y: float, width: float) -> tuple[list[str], float]:
    """Legend entries (swatch SVG drawn around the origin, label) flowing left to right; returns (parts, height)."""
    parts = ['<g class="legend">']
    cx, cy, row_h = x, y, 18.0
    for swatch, label in items:
        w = 22 + 6.6 * len(label)
        if cx + w > x + width and cx > x:
            cx, cy = x, cy + row_h
        parts.append(f'<g transform="translate({num(cx + 7)},{num(cy)})">{swatch}'
                     f'{_text(12, 4, label)}</g>')
        cx += w + 14
    parts.append("</g>")
    return parts, cy - y + row_h


def _severity_legend(severities: Iterable[str]) -> list[tuple[str, str]]:
    present = set(severities)
    return [(marker(s, 5), SEVERITY_WORDS[s]) for s in ("ok", "info", "warning", "error", "invalid") if s in present]


def _nice_step(span: float, target: int) -> float:
    raw = span / max(1, target)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


# ------------------------------------------------------------------------------------------ utilization


@dataclass(frozen=True)
class UtilizationPoint:
    """One claim's model FLOPs utilization (a fraction), claimed or derived, with its U001 severity."""

    id: str
    label: str
    value: float
    source: str = "claimed"
    severity: str = "ok"
    href: str | None = None


#: Above this many claims the utilization chart drops per-claim labels (tooltips still name every point).
LABELLED_ROWS_MAX = 60

#: Characters of a claim id that fit left of the utilization chart (longer ids are cut; the tooltip has it all).
ROW_LABEL_CHARS = 26


def utilization_chart(points: Sequence[UtilizationPoint], band: tuple[float, float], width: float = 720) -> str:
    """MFU per claim, one row each (highest first), against the plausible ``band`` and 100 % of peak.

    Values beyond the right end of the axis are drawn at the edge, pointing right, with ``data-clipped="true"``.
    """
    pts = sorted((p for p in points if math.isfinite(p.value)), key=lambda p: (-p.value, p.id))
    n = len(pts)
    labelled = n <= LABELLED_ROWS_MAX
    row_h = 18.0 if labelled else max(3.0, min(10.0, 480.0 / max(n, 1)))
    size = 5.0 if labelled else max(2.0, min(4.0, row_h * 0.6))
    low, high = band
    top_max = max((p.value for p in pts), default=0.0)
    hi = 1.0 if top_max <= 1.0 else min(1.5, math.ceil(top_max * 10) / 10)
    left = 190.0 if labelled else 60.0
    right = 36.0
    top = 30.0
    plot_h = max(row_h * n, 40.0)
    x = Scale(0.0, hi, left, width - right)
    bottom = top + plot_h
    parts_body: list[str] = []

    # Band, 100 % line and ticks.
    parts_body.append(f'<rect class="band" x="{num(x(low))}" y="{num(top)}" width="{num(x(high) - x(low))}" '
                      f'height="{num(plot_h)}" fill="{BAND_FILL}" data-low="{data_num(low)}" '
                      f'data-high="{data_num(high)}"><title>{esc(f"plausible band {percent(low)} to {percent(high)}")}'
                      f"</title></rect>")
    parts_body.append(_text((x(low) + x(high)) / 2, top - 8, f"plausible band {percent(low)}–{percent(high)}",
                            "middle", "band-label", f'fill="{MUTED}"'))
    step = 0.1 if hi <= 1.0 else 0.25
    k = 0
    while k * step <= hi + 1e-9:
        v = round(k * step, 10)
        parts_body.append(_x_tick(x(v), top, bottom, v, percent(v)))
        k += 1
    parts_body.append(f'<line class="peak" x1="{num(x(1.0))}" x2="{num(x(1.0))}" y1="{num(top - 4)}" '
                      f'y2="{num(bottom)}" stroke="{INK}" stroke-width="1.5" stroke-dasharray="6 3"/>')
    if hi > 1.0:
        parts_body.append(_text(x(1.0) + 4, top - 8, "100 % = peak", "start", "", f'fill="{MUTED}"'))
    parts_body.append(f'<line x1="{num(left)}" x2="{num(width - right)}" y1="{num(bottom)}" y2="{num(bottom)}" '
                      f'stroke="{INK}"/>')

    # Points.
    for i, p in enumerate(pts):
        cy = top + row_h * (i + 0.5)
        clipped = p.value > hi
        cx = x(hi) + 10 if clipped else x(p.value)
        tip = (f"{p.label}: MFU {percent(p.value)} ({p.source}); {SEVERITY_WORDS.get(p.severity, p.severity)}"
               + ("; beyond the axis" if clipped else ""))
        if labelled:
            parts_body.append(f'<line x1="{num(left)}" x2="{num(width - right)}" y1="{num(cy)}" y2="{num(cy)}" '
                              f'stroke="{GRID}" stroke-dasharray="1 3"/>')
            # The short id labels the row (a name is cut, an id rarely is); hovering shows the full name.
            full = p.label if p.label == p.id else f"{p.label} ({p.id})"
            parts_body.append(f'<text x="{num(left - 8)}" y="{num(cy + 4)}" text-anchor="end" class="row-label">'
                              f"<title>{esc(full)}</title>{esc(shorten(p.id, ROW_LABEL_CHARS))}</text>")
        mark = marker(p.severity, size, hollow=p.source != "claimed")
        if clipped:
            mark += (f'<path d="M{num(size + 2)},-4L{num(size + 8)},0L{num(size + 2)},4Z" fill="{INK}"/>')
        clip_attr = ' data-clipped="true"' if clipped else ""
        g = (f'<g class="point" transform="translate({num(cx)},{num(cy)})" data-id="{esc(p.id)}" '
             f'data-value="{data_num(p.value)}" data-source="{esc(p.source)}" data-severity="{esc(p.severity)}"'
             f'{clip_attr}>'
             f"<title>{esc(tip)}</title>{mark}</g>")
        href = safe_fragment(p.href)
        parts_body.append(f'<a href="{href}">{g}</a>' if href else g)

    # Axis labels and legend.
    parts_body.append(_text((left + width - right) / 2, bottom + 38,
                            "Model FLOPs utilization (MFU, % of the accelerator's dense peak FLOP/s)", "middle",
                            "axis-label"))
    if labelled:
        parts_body.append(_text(left - 8, top - 8, "Claim (highest MFU first)", "end", "axis-label"))
    else:
        parts_body.append(_text(14, top + plot_h / 2, f"{n:,} claims, highest MFU first", "middle", "axis-label",
                                f'transform="rotate(-90 14 {num(top + plot_h / 2)})"'))
    items = _severity_legend(p.severity for p in pts)
    if any(p.source == "claimed" for p in pts):
        items.append((marker("ok", 5, colour=NEUTRAL), "filled: MFU as claimed"))
    if any(p.source != "claimed" for p in pts):
        items.append((marker("ok", 5, hollow=True, colour=NEUTRAL), "hollow: MFU derived"))
    items.append((f'<rect x="-7" y="-6" width="14" height="12" fill="{BAND_FILL}"/>', "plausible band"))
    legend, legend_h = _legend(items, left, bottom + 62, width - left - right)
    height = bottom + 62 + legend_h + 4
    title = "Model FLOPs utilization per claim against the plausible band"
    desc = (f"{n} claims with an MFU, claimed or derived; band {percent(low)} to {percent(high)}; "
            f"{sum(1 for p in pts if p.value > 1)} above 100 %.")
    return "\n".join(_svg_open(width, height, title, desc, "utilization") + parts_body + legend + ["</svg>"])


# -------------------------------------------------------------------------------------------- compute


@dataclass(frozen=True)
class ComputePoint:
    """One claim's compute: ``claimed`` (as stated, or derived from the hardware) against ``expected`` (6·N·D)."""

    id: str
    label: str
    claimed: float
    expected: float
    severity: str = "ok"
    source: str = "claimed"
    href: str | None = None


#: Claimed values further than this many decades outside the range of the implied ones are drawn at the edge.
COMPUTE_REACH_DECADES = 3


def compute_domain(points: Sequence["ComputePoint"]) -> tuple[int, int]:
    """The decades both axes span: the implied values' range, widened to claimed values within
    :data:`COMPUTE_REACH_DECADES` of it (a value read in the wrong unit, 1e20 times off, would flatten the rest)."""
    xs = [math.log10(p.expected) for p in points]
    if not xs:
        return 20, 25
    x_lo, x_hi = min(xs), max(xs)
    ys = [math.log10(p.claimed) for p in points]
    near = [v for v in ys if x_lo - COMPUTE_REACH_DECADES <= v <= x_hi + COMPUTE_REACH_DECADES]
    lo = math.floor(min([x_lo, *near]) - 0.15)
    hi = math.ceil(max([x_hi, *near]) + 0.15)
    if hi - lo < 2:
        hi = lo + 2
    return lo, hi


def compute_chart(points: Sequence[ComputePoint], tolerance: tuple[float, float], size: float = 460,
                  labels_max: int = 40) -> str:
    """Claimed against implied compute on log-log axes, with the diagonal, the ``ok`` band (shaded) and the
    ``warn`` limits (dashed). Points outside the ``ok`` band are labelled with their id when there are few;
    a claimed value far beyond the axis (see :func:`compute_domain`) is drawn in an off-scale lane above or below
    the frame, with ``data-clipped="above"`` or ``"below"``."""
    pts = sorted((p for p in points if p.claimed > 0 and p.expected > 0
                  and math.isfinite(p.claimed) and math.isfinite(p.expected)), key=lambda p: p.id)
    ok, warn = tolerance
    lo, hi = compute_domain(pts)
    d_lo, d_hi = float(f"1e{lo}"), float(f"1e{hi}")
    # Off-scale lanes above and below the frame hold the claims whose compute is far beyond the axis.
    lane = 24.0
    lane_above = lane if any(p.claimed > d_hi for p in pts) else 0.0
    lane_below = lane if any(p.claimed < d_lo for p in pts) else 0.0
    left, right_pad = 78.0, 40.0
    top = 24.0 + lane_above
    width = left + size + right_pad
    x = Scale(d_lo, d_hi, left, left + size, log=True)
    y = Scale(d_lo, d_hi, top + size, top, log=True)
    body: list[str] = []
    span = hi - lo

    def to_px(a: float, b: float) -> str:
        return f"{num(left + (a - lo) / span * size)},{num(top + size - (b - lo) / span * size)}"

    a_ok, a_warn = math.log10(ok), math.log10(warn)
    band = " ".join(to_px(u, v) for u, v in ((lo, lo), (lo, lo + a_ok), (hi - a_ok, hi), (hi, hi), (hi, hi - a_ok),
                                              (lo + a_ok, lo)))
    body.append(f'<polygon class="band" points="{band}" fill="{BAND_FILL}" data-ok="{data_num(ok)}">'
                f"<title>{esc(f'within {ratio_text(ok)} of 6·N·D: ok')}</title></polygon>")
    step = max(1, math.ceil(span / 8))
    for name, y0, h in (("above", top - lane_above, lane_above), ("below", top + size, lane_below)):
        if h:
            edge = f"1e{hi}" if name == "above" else f"1e{lo}"
            body.append(f'<rect class="lane" x="{num(left)}" y="{num(y0)}" width="{num(size)}" height="{num(h)}" '
                        f'fill="#f0f0f0" stroke="{GRID}"/>')
            body.append(_text(left + size - 6, y0 + h / 2 + 4, f"{name} {edge} (off scale)", "end", "",
                              f'fill="{MUTED}"'))
    for d in range(lo, hi + 1, step):
        v = float(f"1e{d}")
        body.append(_x_tick(x(v), top, top + size + lane_below, v, f"1e{d}"))
        body.append(_y_tick(y(v), left, left + size, v, f"1e{d}"))
    body.append(f'<rect x="{num(left)}" y="{num(top)}" width="{num(size)}" height="{num(size)}" fill="none" '
                f'stroke="{INK}"/>')
    body.append(f'<line class="diagonal" x1="{num(left)}" y1="{num(top + size)}" x2="{num(left + size)}" '
                f'y2="{num(top)}" stroke="{INK}" stroke-width="1"/>')
    for sign in (1, -1):
        a = sign * a_warn
        p0 = (lo, lo + a) if a > 0 else (lo - a, lo)
        p1 = (hi - a, hi) if a > 0 else (hi, hi + a)
        if a_warn < span:
            body.append(f'<polyline class="warn-limit" points="{to_px(*p0)} {to_px(*p1)}" fill="none" '
                        f'stroke="{INK}" stroke-dasharray="5 4"/>')

    labelled = 0
    for p in pts:
        cx = x(p.expected)
        clipped = "above" if p.claimed > d_hi else "below" if p.claimed < d_lo else ""
        cy = top - lane / 2 if clipped == "above" else top + size + lane / 2 if clipped == "below" else y(p.claimed)
        r = p.claimed / p.expected
        # "claimed" only of a stated compute: a derived one (from the hardware and time) is "compute ... (derived)".
        said = "claimed" if p.source == "claimed" else "compute"
        tip = (f"{p.label}: {said} {sci(p.claimed)} FLOP ({p.source}) vs 6·N·D {sci(p.expected)} FLOP, "
               f"ratio {r:.3g}; {SEVERITY_WORDS.get(p.severity, p.severity)}"
               + ("; beyond the axis" if clipped else ""))
        mark = marker(p.severity, 5, hollow=p.source != "claimed")
        if clipped:
            mark += f'<path d="M6,-4L6,4L12,0Z" fill="{INK}" transform="rotate({-90 if clipped == "above" else 90})"/>'
        label = ""
        if p.severity not in ("ok", "info") and labelled < labels_max:
            text = shorten(p.id, 22)
            room_left = cx - left > 7.0 * len(text) + 12
            below = p.claimed < p.expected
            dy = -6 if clipped == "above" else 4 if clipped == "below" else 14 if below else -6
            if room_left and (not below or clipped):
                label = _text(-10, dy, text, "end", "point-label")
            else:
                label = _text(10, dy, text, "start", "point-label")
            labelled += 1
        clip_attr = f' data-clipped="{clipped}"' if clipped else ""
        g = (f'<g class="point" transform="translate({num(cx)},{num(cy)})" data-id="{esc(p.id)}" '
             f'data-claimed="{data_num(p.claimed)}" data-expected="{data_num(p.expected)}" '
             f'data-value="{data_num(r)}" data-severity="{esc(p.severity)}" data-source="{esc(p.source)}"'
             f"{clip_attr}><title>{esc(tip)}</title>{mark}{label}</g>")
        href = safe_fragment(p.href)
        body.append(f'<a href="{href}">{g}</a>' if href else g)

    body.append(_text(left + size / 2, top + size + lane_below + 44, "Compute implied by 6·N·D (FLOP, log scale)",
                      "middle",
                      "axis-label"))
    body.append(_text(16, top + size / 2, "Compute claimed (FLOP, log scale)", "middle", "axis-label",
                      f'transform="rotate(-90 16 {num(top + size / 2)})"'))
    items = _severity_legend(p.severity for p in pts)
    if any(p.source != "claimed" for p in pts):
        items += [(marker("ok", 5, hollow=True, colour=NEUTRAL), "hollow: compute derived from hardware")]
    items.append((f'<line x1="-8" x2="8" stroke="{INK}"/>', "diagonal: claimed = 6·N·D"))
    items.append((f'<rect x="-7" y="-6" width="14" height="12" fill="{BAND_FILL}"/>',
                  f"within {ratio_text(ok)} (ok)"))
    items.append((f'<line x1="-8" x2="8" stroke="{INK}" stroke-dasharray="5 4"/>',
                  f"{ratio_text(warn)} (beyond: error)"))
    legend, legend_h = _legend(items, 10, top + size + lane_below + 68, width - 20)
    height = top + size + lane_below + 68 + legend_h + 4
    title = "Claimed compute against 6·N·D"
    desc = (f"{len(pts)} claims; log-log axes from 1e{lo} to 1e{hi} FLOP; ok within a factor {ok:g}, "
            f"warning within {warn:g}.")
    return "\n".join(_svg_open(width, height, title, desc, "compute") + body + legend + ["</svg>"])


# ------------------------------------------------------------------------------------------- histograms


@dataclass(frozen=True)
class Marking:
    """A vertical line on a histogram at ``value`` with a short ``label``."""

    value: float
    label: str
    dashed: bool = True


def histogram(values: Sequence[float], edges: Sequence[float], *, title: str, x_label: str,
              log: bool = False, ticks: Sequence[tuple[float, str]] = (), shade: tuple[float, float] | None = None,
              shade_label: str = "", markings: Sequence[Marking] = (), width: float = 720,
              height: float = 260, cls: str = "histogram", underflow: bool = True) -> str:
    """A histogram of ``values`` over ``edges`` (increasing; in log10 space when ``log``), with an underflow and
    an overflow bar for values outside, an optional shaded interval and vertical markings."""
    edges = [float(e) for e in edges]
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError("edges must increase")
    finite = [float(v) for v in values if math.isfinite(v) and (not log or v > 0)]
    nb = len(edges) - 1
    counts = [0] * nb
    under = over = 0
    for v in finite:
        if v < edges[0]:
            under += 1
        elif v > edges[-1]:
            over += 1
        else:
            i = min(bisect.bisect_right(edges, v) - 1, nb - 1)
            counts[i] += 1
    left, right, top = 64.0, 30.0, 28.0
    extra_w = 62.0  # room for an under/overflow bar (24 px) and a gap before the first tick label
    plot_l, plot_r = left + extra_w, width - right - extra_w
    bottom = top + height - 70
    plot_h = bottom - top
    x = Scale(edges[0], edges[-1], plot_l, plot_r, log=log)
    cmax = max([*counts, under, over, 1])
    step = _nice_step(cmax, 4)
    ymax = math.ceil(cmax / step) * step
    y = Scale(0.0, ymax, bottom, top)
    body: list[str] = []
    if shade is not None:
        s0, s1 = max(shade[0], edges[0]), min(shade[1], edges[-1])
        if s1 > s0:
            body.append(f'<rect class="band" x="{num(x(s0))}" y="{num(top)}" width="{num(x(s1) - x(s0))}" '
                        f'height="{num(plot_h)}" fill="{BAND_FILL}"/>')
            body.append(_text((x(s0) + x(s1)) / 2, top - 8, shade_label, "middle", "band-label",
                              f'fill="{MUTED}"'))
    k = 0
    while k * step <= ymax + 1e-9:
        v = k * step
        body.append(_y_tick(y(v), left, width - right, v, f"{v:,.0f}"))
        k += 1
    for value, label in ticks:
        if edges[0] <= value <= edges[-1]:
            body.append(_x_tick(x(value), top, bottom, value, label, grid=False))

    def bar(x0: float, x1: float, count: int, lo: float | None, hi: float | None, what: str) -> str:
        h = bottom - y(count)
        lo_a = "" if lo is None else f' data-lo="{data_num(lo)}"'
        hi_a = "" if hi is None else f' data-hi="{data_num(hi)}"'
        return (f'<rect class="bar" x="{num(x0 + 0.5)}" y="{num(bottom - h)}" width="{num(max(x1 - x0 - 1, 0.5))}" '
                f'height="{num(h)}" fill="{BAR_FILL}"{lo_a}{hi_a} data-count="{count}">'
                f"<title>{esc(what)}: {count:,}</title></rect>")

    for i, c in enumerate(counts):
        a, b = edges[i], edges[i + 1]
        what = f"{_edge_text(a, log)} to {_edge_text(b, log)}"
        body.append(bar(x(a), x(b), c, a, b, what))
    if underflow:
        body.append(bar(left, left + 24, under, None, edges[0], f"below {_edge_text(edges[0], log)}"))
        body.append(_text(left + 12, bottom + 18, "below", "middle", "", f'fill="{MUTED}"'))
    body.append(bar(width - right - 24, width - right, over, edges[-1], None, f"above {_edge_text(edges[-1], log)}"))
    body.append(_text(width - right - 12, bottom + 18, "above", "middle", "", f'fill="{MUTED}"'))
    body.append(f'<line x1="{num(left)}" x2="{num(width - right)}" y1="{num(bottom)}" y2="{num(bottom)}" '
                f'stroke="{INK}"/>')
    for m in markings:
        if edges[0] <= m.value <= edges[-1]:
            dash = ' stroke-dasharray="5 4"' if m.dashed else ""
            body.append(f'<line class="marking" x1="{num(x(m.value))}" x2="{num(x(m.value))}" y1="{num(top)}" '
                        f'y2="{num(bottom)}" stroke="{INK}" stroke-width="1.25"{dash}/>')
            body.append(_text(x(m.value) + 3, top + 10, m.label, "start", "marking-label", f'fill="{MUTED}"'))
    body.append(_text((plot_l + plot_r) / 2, bottom + 40, x_label, "middle", "axis-label"))
    body.append(_text(14, top + plot_h / 2, "Claims", "middle", "axis-label",
                      f'transform="rotate(-90 14 {num(top + plot_h / 2)})"'))
    total = len(finite)
    desc = f"{total:,} values; {under:,} below and {over:,} above the axis."
    return "\n".join(_svg_open(width, height, title, desc, cls) + body + ["</svg>"])


def _edge_text(v: float, log: bool) -> str:
    if log:
        return ratio_text(v) if v >= 1 else f"{v:.3g}×"
    return percent(v)


def ratio_edges(max_factor: float = 16.0, per_octave: int = 8) -> list[float]:
    """Log-spaced bin edges from ``1/max_factor`` to ``max_factor``, ``per_octave`` bins per factor of two,
    with 1 an edge."""
    octaves = round(math.log2(max_factor))
    return [2.0 ** (k / per_octave) for k in range(-octaves * per_octave, octaves * per_octave + 1)]


def ratio_ticks(max_factor: float = 16.0) -> list[tuple[float, str]]:
    """Ticks at powers of two: ``1/16×`` ... ``1×`` ... ``16×``."""
    octaves = round(math.log2(max_factor))
    return [(2.0 ** k, ratio_text(2.0 ** k)) for k in range(-octaves, octaves + 1)]


def ratio_histogram(ratios: Sequence[float], tolerance: tuple[float, float], title: str, x_label: str) -> str:
    """Claimed/implied ratios on a log axis, the ``ok`` interval shaded and the ``warn`` limits marked."""
    ok, warn = tolerance
    return histogram(ratios, ratio_edges(), title=title, x_label=x_label, log=True, ticks=ratio_ticks(),
                     shade=(1 / ok, ok), shade_label=f"ok: within {ratio_text(ok)}",
                     markings=[Marking(1 / warn, f"{ratio_text(1 / warn)}"), Marking(warn, f"{ratio_text(warn)}")],
                     cls="histogram ratio")


def utilization_histogram(values: Sequence[float], band: tuple[float, float]) -> str:
    """MFU values in 2.5-point bins from 0 to 100 %, the plausible band shaded, 100 % of peak marked."""
    edges = [k * 0.025 for k in range(41)]
    ticks = [(k / 10, percent(k / 10)) for k in range(11)]
    return histogram(values, edges, title="Distribution of model FLOPs utilization", log=False,
                     x_label="Model FLOPs utilization (MFU, % of dense peak FLOP/s)", ticks=ticks, shade=band,
                     shade_label=f"plausible band {percent(band[0])}–{percent(band[1])}",
                     cls="histogram utilization", underflow=False)
