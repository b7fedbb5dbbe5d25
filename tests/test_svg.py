"""Tests for audit.report.svg: the report's charts are pure functions from numbers to escaped SVG text."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from audit.report import svg

NS = {"s": "http://www.w3.org/2000/svg"}
TRANSLATE = re.compile(r"translate\(([-\d.]+),([-\d.]+)\)")


def parse(text: str) -> ET.Element:
    """The SVG must be well-formed XML (it is inline in HTML, but stays valid standalone SVG)."""
    return ET.fromstring(text)


def position(el: ET.Element) -> tuple[float, float]:
    m = TRANSLATE.fullmatch(el.get("transform", ""))
    assert m, el.get("transform")
    return float(m.group(1)), float(m.group(2))


def points(root: ET.Element) -> list[ET.Element]:
    return [el for el in root.iter() if el.get("class") == "point"]


def ticks(root: ET.Element, axis: str) -> list[tuple[float, float]]:
    """(value, pixel) of each tick on ``axis``."""
    out = []
    for el in root.iter():
        if el.get("class") == f"tick {axis}":
            x, y = position(el)
            out.append((float(el.get("data-value")), x if axis == "x" else y))
    return out


def interpolate(tick_list: list[tuple[float, float]], value: float, log: bool = False) -> float:
    """Pixel of ``value`` from the two outermost ticks (the scale is linear in value or log10 of it)."""
    (v0, p0), (v1, p1) = min(tick_list), max(tick_list)
    f = (math.log10(value) - math.log10(v0)) / (math.log10(v1) - math.log10(v0)) if log else (value - v0) / (v1 - v0)
    return p0 + f * (p1 - p0)


HOSTILE = '<script>alert(1)</script> & "quoted" \'single\' <img src=x onerror="alert(2)">'


def test_utilization_points_follow_the_axis_and_carry_their_numbers():
    pts = [svg.UtilizationPoint("a", "Run A", 0.462, "claimed", "ok", "#claim-0"),
           svg.UtilizationPoint("b", "Run B", 0.08, "derived", "warning", "#claim-1"),
           svg.UtilizationPoint("c", "Run C", 0.9, "derived", "warning", None)]
    root = parse(svg.utilization_chart(pts, (0.15, 0.65)))
    got = {p.get("data-id"): p for p in points(root)}
    assert set(got) == {"a", "b", "c"}
    xt = ticks(root, "x")
    assert (0.0, pytest.approx(xt[0][1])) in [(v, p) for v, p in xt]
    for p in pts:
        el = got[p.id]
        assert float(el.get("data-value")) == p.value  # exact: repr of the float
        x, _ = position(el)
        assert x == pytest.approx(interpolate(xt, p.value), abs=0.02)
        assert el.get("data-source") == p.source and el.get("data-severity") == p.severity
        assert el.find("s:title", NS) is not None
    # Highest first, one row each.
    ys = {el.get("data-id"): position(el)[1] for el in points(root)}
    assert ys["c"] < ys["a"] < ys["b"]
    # The band spans 15-65 % on the same scale.
    band = next(el for el in root.iter() if el.get("class") == "band")
    assert float(band.get("x")) == pytest.approx(interpolate(xt, 0.15), abs=0.02)
    assert float(band.get("x")) + float(band.get("width")) == pytest.approx(interpolate(xt, 0.65), abs=0.02)


def test_utilization_beyond_the_axis_is_clipped_and_said_so():
    pts = [svg.UtilizationPoint("x", "X", 46.2, "claimed", "error"), svg.UtilizationPoint("y", "Y", 0.4)]
    root = parse(svg.utilization_chart(pts, (0.15, 0.65)))
    by_id = {p.get("data-id"): p for p in points(root)}
    assert by_id["x"].get("data-clipped") == "true"
    assert by_id["y"].get("data-clipped") is None
    right_end = max(p for _, p in ticks(root, "x"))
    assert position(by_id["x"])[0] > right_end
    assert "4,620 %" in by_id["x"].find("s:title", NS).text


def test_compute_chart_is_log_log_with_the_tolerance_band():
    pts = [svg.ComputePoint("g", "GPT", 3.14e23, 3.15e23, "ok"),
           svg.ComputePoint("o", "OPT", 4.3e23, 3.15e23, "warning"),
           svg.ComputePoint("l", "L", 1e25, 1e24, "error", "derived")]
    root = parse(svg.compute_chart(pts, (1.25, 2.0)))
    xt, yt = ticks(root, "x"), ticks(root, "y")
    assert [v for v, _ in xt] == [1e23, 1e24, 1e25, 1e26]
    for p in pts:
        el = next(e for e in points(root) if e.get("data-id") == p.id)
        x, y = position(el)
        assert x == pytest.approx(interpolate(xt, p.expected, log=True), abs=0.02)
        assert y == pytest.approx(interpolate(yt, p.claimed, log=True), abs=0.02)
        assert float(el.get("data-claimed")) == p.claimed and float(el.get("data-expected")) == p.expected
    band = next(el for el in root.iter() if el.get("class") == "band")
    assert float(band.get("data-ok")) == 1.25
    # Points outside the ok band are labelled with their id.
    labels = {el.text for el in root.iter() if el.get("class") == "point-label"}
    assert labels == {"o", "l"}
    # A derived compute is not called claimed in its tooltip (DeepSeek-V3 states none: "claimed 3.6e24 (derived)").
    tips = {el.get("data-id"): "".join(el.itertext()) for el in points(root)}
    assert "L: compute 1e25 FLOP (derived)" in tips["l"] and "GPT: claimed 3.14e23 FLOP" in tips["g"], tips


def test_shapes_differ_by_severity_so_greyscale_still_reads():
    severities = ("ok", "warning", "error", "invalid")
    assert len({svg.MARKERS[s][0] for s in severities}) == 4
    # Same colour, different geometry: the shape alone tells them apart.
    assert len({svg.marker(s, colour="#000000") for s in severities}) == 4
    assert {svg.MARKERS[s][1] for s in severities} <= set(svg.OKABE_ITO.values())


def test_text_and_attributes_are_escaped_and_links_stay_in_page():
    pts = [svg.UtilizationPoint(HOSTILE, HOSTILE, 0.3, "claimed", "ok", "javascript:alert(1)")]
    text = svg.utilization_chart(pts, (0.15, 0.65))
    root = parse(text)  # well-formed: nothing broke out of an attribute or an element
    assert "<script" not in text and "<img" not in text
    assert "javascript:" not in text
    assert points(root)[0].get("data-id") == HOSTILE
    cpts = [svg.ComputePoint(HOSTILE, HOSTILE, 1e23, 2e23, "error", "claimed", "#claim-3")]
    croot = parse(svg.compute_chart(cpts, (1.25, 2.0)))
    hrefs = [el.get("href") for el in croot.iter() if el.tag.endswith("}a")]
    assert hrefs == ["#claim-3"]
    assert svg.safe_fragment("#claim-3") == "#claim-3"
    for bad in ("javascript:alert(1)", "https://example.org", "#a b", '#x"y', None, ""):
        assert svg.safe_fragment(bad) is None


def test_histogram_counts_every_value_once():
    values = [0.01, 0.1, 0.1, 0.5, 0.99, 1.0, 1.5, 47.0, float("nan")]
    edges = [k * 0.25 for k in range(5)]
    root = parse(svg.histogram(values, edges, title="t", x_label="x"))
    bars = [el for el in root.iter() if el.get("class") == "bar"]
    counts = [int(b.get("data-count")) for b in bars]
    assert sum(counts) == 8  # NaN left out, everything else counted once
    inner = {(float(b.get("data-lo")), float(b.get("data-hi"))): int(b.get("data-count"))
             for b in bars if b.get("data-lo") and b.get("data-hi")}
    assert inner == {(0.0, 0.25): 3, (0.25, 0.5): 0, (0.5, 0.75): 1, (0.75, 1.0): 2}
    over = next(b for b in bars if b.get("data-lo") == "1.0" and b.get("data-hi") is None)
    assert over.get("data-count") == "2"
    heights = {int(b.get("data-count")): float(b.get("height")) for b in bars}
    assert heights[0] == 0 and heights[3] == pytest.approx(1.5 * heights[2], abs=0.02)


def test_ratio_histogram_marks_tolerances_on_a_log_axis():
    text = svg.ratio_histogram([1.0, 1.1, 0.5, 3.0, 24.0 * 1.0, 1 / 40], (1.25, 2.0), "C001", "ratio")
    root = parse(text)
    xt = ticks(root, "x")
    assert [v for v, _ in xt] == [2.0 ** k for k in range(-4, 5)]
    marks = [el for el in root.iter() if el.get("class") == "marking"]
    assert len(marks) == 2
    for m, v in zip(marks, (0.5, 2.0)):
        assert float(m.get("x1")) == pytest.approx(interpolate(xt, v, log=True), abs=0.02)
    bars = [el for el in root.iter() if el.get("class") == "bar"]
    assert sum(int(b.get("data-count")) for b in bars) == 6
    edges = svg.ratio_edges()
    assert 1.0 in edges and edges[0] == 1 / 16 and edges[-1] == 16


def test_histogram_rejects_bad_edges():
    with pytest.raises(ValueError):
        svg.histogram([1], [1, 1], title="t", x_label="x")


def test_charts_are_deterministic_and_empty_input_still_draws():
    pts = [svg.UtilizationPoint(str(i), f"r{i}", i / 100, "claimed", "ok") for i in range(100, 0, -7)]
    assert svg.utilization_chart(pts, (0.15, 0.65)) == svg.utilization_chart(list(reversed(pts)), (0.15, 0.65))
    parse(svg.utilization_chart([], (0.15, 0.65)))
    parse(svg.compute_chart([], (1.25, 2.0)))
    parse(svg.utilization_histogram([], (0.15, 0.65)))


def test_many_claims_drop_row_labels_but_keep_tooltips():
    pts = [svg.UtilizationPoint(f"id{i}", f"Run {i}", (i % 90) / 100 + 0.01) for i in range(150)]
    root = parse(svg.utilization_chart(pts, (0.15, 0.65)))
    assert not [el for el in root.iter() if el.get("class") == "row-label"]
    assert all(p.find("s:title", NS) is not None for p in points(root))
    assert len(points(root)) == 150


def test_number_helpers():
    assert svg.percent(0.462) == "46.2 %" and svg.percent(46.2) == "4,620 %" and svg.percent(0) == "0 %"
    assert svg.sci(3.14e23) == "3.14e23" and svg.ratio_text(0.5) == "1/2×" and svg.ratio_text(2) == "2×"
    assert svg.num(-0.001) == "0.00"
    assert svg.shorten("a" * 40, 10) == "a" * 9 + "…"
    assert svg.Scale(1, 100, 0, 200, log=True)(10) == pytest.approx(100)


def test_compute_far_off_the_scale_goes_to_an_off_scale_lane():
    pts = [svg.ComputePoint("ok", "ok", 3.14e23, 3.15e23, "ok"),
           svg.ComputePoint("pf-days", "PF-days read as FLOP", 3640.0, 3.15e23, "error"),
           svg.ComputePoint("big", "x", 1e40, 3.15e23, "error")]
    assert svg.compute_domain(pts) == (23, 25)
    root = parse(svg.compute_chart(pts, (1.25, 2.0)))
    by_id = {p.get("data-id"): p for p in points(root)}
    frame = next(el for el in root.iter() if el.tag.endswith("}rect") and el.get("fill") == "none")
    top, bottom = float(frame.get("y")), float(frame.get("y")) + float(frame.get("height"))
    assert by_id["pf-days"].get("data-clipped") == "below" and position(by_id["pf-days"])[1] > bottom
    assert by_id["big"].get("data-clipped") == "above" and position(by_id["big"])[1] < top
    assert by_id["ok"].get("data-clipped") is None and top < position(by_id["ok"])[1] < bottom
    assert float(by_id["pf-days"].get("data-claimed")) == 3640.0
    lanes = [el for el in root.iter() if el.get("class") == "lane"]
    assert len(lanes) == 2
    # Wide domains thin their ticks to at most nine.
    wide = [svg.ComputePoint(str(i), str(i), 10.0 ** i, 10.0 ** i) for i in range(3, 27)]
    assert len(ticks(parse(svg.compute_chart(wide, (1.25, 2.0))), "x")) <= 9
