"""The HTML report as a person sees it: rendered by headless Chromium (Debian's ``chromium``) driven by Playwright.

No browser is ever downloaded: Playwright launches the system Chromium by path. Without it the tests are skipped
locally and fail under CI (the ``CI`` environment variable), so CI proves they ran. One browser serves the whole
module; every page runs with the network cut (each request but the page's own file is aborted and recorded).
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from audit.api import check, check_records, to_json
from audit.report import html as report

# One worker launches Chromium and runs every test in it (pytest-xdist's loadgroup; pyproject.toml).
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
EPOCH = "1795996800"

SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=1">'
HOSTILE = [
    {"id": SCRIPT, "name": IMG, "source": IMG, "params": "7B", "tokens": "1T", "compute_flops": "4.2e22",
     "hardware": SCRIPT, "chips": 64, "wall_clock_days": 10, "notes": IMG, "x_extra": SCRIPT},
    {"id": "js-source", "name": "javascript source", "source": "javascript:alert(1)", "params": "7B",
     "tokens": "1T", "hardware": "H100", "chips": 64, "wall_clock_days": 10},
    {"id": "bad-value", "name": IMG, "source": "javascript:window.__pwned=1", "params": IMG, "tokens": "1T"},
]

#: Collected in the page before any of its own script runs: CSP violations the page reports.
WATCH = ("window.__csp = []; document.addEventListener('securitypolicyviolation', "
         "e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));")


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does it)"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests cannot run in CI: {reason}", pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


class Opened:
    """A page on a report file, with everything it tried to do."""

    def __init__(self, browser, path: Path, js: bool = True, width: int = 1200, height: int = 900) -> None:
        self.url = path.resolve().as_uri()
        self.blocked: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(java_script_enabled=js, viewport={"width": width, "height": height},
                                           service_workers="block", offline=True)
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.add_init_script(WATCH)
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        self.page.goto(self.url)

    def _route(self, route) -> None:
        if route.request.url == self.url:
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def close(self) -> None:
        self.context.close()


def write(tmp_path: Path, name: str, page: str) -> Path:
    path = tmp_path / name
    path.write_text(page, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus():
    """The bundled corpus (every run passes) with the example claims' known slips (reports/example-claims.json), so
    that the page has claims of every status to filter, sort and show."""
    root = Path(__file__).resolve().parent.parent
    return check([str(root / "audit" / "data" / "corpus.csv"), str(root / "reports" / "example-claims.json")])


@pytest.fixture(scope="module")
def corpus_file(corpus, tmp_path_factory) -> Path:
    mp = pytest.MonkeyPatch()
    mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
    try:
        page = report.render(corpus, "Audit of published training runs")
    finally:
        mp.undo()
    return write(tmp_path_factory.mktemp("html"), "corpus.html", page)


@pytest.fixture
def opened(browser, corpus_file):
    o = Opened(browser, corpus_file)
    yield o
    o.close()


def visible_claims(page) -> dict[str, list[str]]:
    """Status of every claim row and section the reader can see."""
    return page.evaluate("""() => ({
        rows: [...document.querySelectorAll('#claims-table tbody tr')].filter(e => e.offsetParent !== null)
              .map(e => e.dataset.status),
        articles: [...document.querySelectorAll('article.claim')].filter(e => e.offsetParent !== null)
              .map(e => e.dataset.status)})""")


# ---------------------------------------------------------------------------------------------- security


def test_hostile_claims_show_as_text_and_run_nothing(browser, tmp_path):
    path = write(tmp_path, "hostile.html", report.render(check_records(HOSTILE), SCRIPT))
    o = Opened(browser, path)
    try:
        page = o.page
        # The javascript: source belongs to a passing claim, collapsed to one line until opened.
        page.locator('article.claim[data-status="pass"] summary').first.click()
        page.locator("#claim-details").get_by_text("javascript:alert(1)").first.click()
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert o.dialogs == [] and o.blocked == [] and o.errors == []
        assert page.evaluate("window.__csp") == []
        assert page.title() == SCRIPT
        assert page.locator("img").count() == 0
        assert page.locator("script").count() == 1
        hrefs = page.eval_on_selector_all("[href]", "els => els.map(e => e.getAttribute('href'))")
        assert hrefs and all(h.startswith(("#", "https://", "http://", "data:")) for h in hrefs), hrefs
        # The hostile strings are on screen, as text.
        shown = page.evaluate("""id => {
            const a = [...document.querySelectorAll('article.claim')].find(e => e.dataset.id === id);
            return {heading: a.querySelector('h2').innerText, text: a.innerText};
        }""", SCRIPT)
        assert SCRIPT in shown["heading"] and IMG in shown["heading"]
        assert shown["text"].count(IMG) >= 2 and shown["text"].count(SCRIPT) >= 3  # source, extras, hardware
        # The page's own script still ran (its hash is in the CSP): the filters are there.
        assert page.locator("#controls").is_visible()
    finally:
        o.close()


def test_the_page_loads_nothing_and_breaks_no_policy(opened):
    page = opened.page
    page.wait_for_load_state("load")
    assert opened.blocked == [], opened.blocked
    assert opened.errors == [] and page.evaluate("window.__csp") == []
    assert page.locator("#controls").is_visible()


# --------------------------------------------------------------------------------------------- behaviour


def test_status_filter_hides_the_other_claims(opened, corpus):
    page = opened.page
    statuses = corpus.status.tolist()
    everything = visible_claims(page)
    assert sorted(everything["rows"]) == sorted(statuses) == sorted(everything["articles"])
    page.locator('#controls input[name="status"][value="warn"]').click()
    shown = visible_claims(page)
    assert shown["rows"] == ["warn"] * statuses.count("warn") == shown["articles"]
    assert page.locator("#shown-count").inner_text() == f"{statuses.count('warn')} of {len(statuses)} claims shown"
    # Rule filter on top of it.
    page.locator('#controls input[name="status"][value="all"]').click()
    page.select_option("#filter-rule", "C001")
    ids = page.eval_on_selector_all("#claims-table tbody tr:not([hidden])", "els => els.map(e => e.dataset.id)")
    f = corpus.findings
    c001 = f[(f["rule"] == "C001") & f["severity"].astype(str).isin(["warning", "error"])]["row"]
    assert sorted(ids) == sorted(corpus.claims.info["id"][sorted(set(c001))].tolist())
    # A link to a hidden claim clears the filter so that it shows.
    page.select_option("#filter-rule", "-")
    target = page.locator("ol.worst a").first
    anchor = target.get_attribute("href")[1:]
    assert not page.locator(f"#{anchor}").is_visible()
    target.click()
    # A locator's wait, not wait_for_function: a string predicate is eval'd when it must be polled, which the
    # report's Content Security Policy refuses (no 'unsafe-eval'): the test failed whenever the click was slow.
    page.locator(f"#{anchor}").wait_for(state="visible")
    assert page.locator(f"#{anchor}").is_visible()


def test_sorting_reorders_rows_and_sections(opened, corpus):
    page = opened.page
    page.select_option("#sort-by", "id")
    rows = page.eval_on_selector_all("#claims-table tbody tr", "els => els.map(e => e.dataset.id)")
    arts = page.eval_on_selector_all("article.claim", "els => els.map(e => e.dataset.id)")
    assert rows == sorted(corpus.claims.info["id"].tolist()) == arts
    page.select_option("#sort-by", "mfu-desc")
    mfu = page.eval_on_selector_all("#claims-table tbody tr", "els => els.map(e => e.dataset.mfu)")
    values = [float(v) for v in mfu if v]
    assert values == sorted(values, reverse=True) and mfu[len(values):] == [""] * (len(mfu) - len(values))
    page.select_option("#sort-by", "rule")
    rules = page.eval_on_selector_all("#claims-table tbody tr", "els => els.map(e => e.dataset.rules)")
    flagged = [r for r in rules if r]
    assert flagged == sorted(flagged) and rules == flagged + [""] * (len(rules) - len(flagged)) and flagged
    page.select_option("#sort-by", "row")
    rows = page.eval_on_selector_all("#claims-table tbody tr", "els => els.map(e => +e.dataset.row)")
    assert rows == list(range(len(corpus)))


def test_without_javascript_the_page_is_complete(browser, corpus_file, corpus):
    o = Opened(browser, corpus_file, js=False)
    try:
        page = o.page
        assert not page.locator("#controls").is_visible()
        assert page.locator("article.claim").count() == len(corpus)
        assert all(a.is_visible() for a in page.locator("article.claim").all())
        assert page.locator("#chart-mfu svg").is_visible() and page.locator("#chart-compute svg").is_visible()
        assert page.locator("#chart-mfu .point").count() > 10
        assert o.blocked == []
    finally:
        o.close()


# ------------------------------------------------------------------------------------------------ charts


def test_chart_points_sit_where_their_numbers_say(browser, tmp_path):
    """Rendered positions (screen pixels) against the rendered axis, and values against the JSON output, on the
    bundled corpus alone (no MFU above the axis, so no point is clipped)."""
    corpus = check()
    opened = Opened(browser, write(tmp_path, "corpus-only.html", report.render(corpus, "corpus")))
    mfu = {c["id"]: c["quantities"]["mfu"]["value"] for c in to_json(corpus)["claims"] if "mfu" in c["quantities"]}
    data = opened.page.evaluate("""() => {
        const centre = el => { const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; };
        const fig = document.getElementById('chart-mfu');
        return {
          ticks: [...fig.querySelectorAll('.tick.x')].map(t => [+t.dataset.value, centre(t.querySelector('line'))[0]]),
          points: [...fig.querySelectorAll('.point')].map(p => [p.dataset.id, +p.dataset.value,
                   centre(p.querySelector('circle, rect, path'))[0], p.dataset.clipped || ''])};
    }""")
    assert len(data["points"]) == len(mfu)
    (v0, x0), (v1, x1) = min(data["ticks"]), max(data["ticks"])
    for pid, value, x, clipped in data["points"]:
        assert value == mfu[pid]
        assert not clipped
        assert x == pytest.approx(x0 + (value - v0) / (v1 - v0) * (x1 - x0), abs=0.75)
    opened.close()


# ------------------------------------------------------------------------------------ layout and pictures


def png_pixels(data: bytes) -> np.ndarray:
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) with zlib and numpy: an (height, width, 3) array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, bpp = 8, b"", 0, 0, 3
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, width * bpp + 1)
    kinds = raw[:, 0].astype(np.int32)
    assert kinds.max() <= 4
    res = raw[:, 1:].reshape(height, width, bpp).astype(np.int32)
    # Undo the filters along anti-diagonals (a pixel needs its left, upper and upper-left neighbours, which
    # all lie on the previous two diagonals), so each step is one vectorized operation.
    out = np.zeros((height + 1, width + 1, bpp), dtype=np.int32)  # a zero row above and column to the left
    for k in range(height + width - 1):
        ys = np.arange(max(0, k - width + 1), min(height, k + 1))
        xs = k - ys
        a, b, c = out[ys + 1, xs], out[ys, xs + 1], out[ys, xs]
        p = a + b - c
        pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
        paeth = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
        t = kinds[ys][:, None]
        pred = np.select([t == 0, t == 1, t == 2, t == 3], [0, a, b, (a + b) // 2], paeth)
        out[ys + 1, xs + 1] = (res[ys, xs] + pred) & 255
    return out[1:, 1:, :3].astype(np.uint8)


def assert_not_blank(png: bytes, min_height: int = 150) -> None:
    pixels = png_pixels(png)
    height, width, _ = pixels.shape
    assert width > 300 and height >= min_height
    flat = pixels.reshape(-1, 3)
    colours = np.unique((flat[:, 0].astype(np.int32) << 16) | (flat[:, 1].astype(np.int32) << 8) | flat[:, 2])
    ink = float((flat != 255).any(axis=1).mean())
    assert len(colours) > 20, "a near-uniform image"
    assert 0.02 < ink < 0.9, f"{ink:.1%} of the pixels are not white"
    assert float(flat.std()) > 10, "no contrast"


def screenshot(page, selector: str, max_height: int = 500) -> bytes:
    """A picture of the top of an element (at most ``max_height`` CSS pixels, to keep decoding quick)."""
    element = page.locator(selector).first
    element.evaluate("e => e.scrollIntoView({block: 'start'})")
    box = element.bounding_box()
    return page.screenshot(clip={"x": box["x"], "y": box["y"], "width": box["width"],
                                 "height": min(box["height"], max_height)})


def test_screenshots_of_the_summary_and_a_claim_are_not_blank(opened):
    page = opened.page
    assert_not_blank(screenshot(page, "#summary"))
    assert_not_blank(screenshot(page, "article.claim"))
    assert_not_blank(screenshot(page, "#chart-compute"), min_height=300)


def test_the_png_decoder_reads_what_was_drawn(opened):
    page = opened.page
    page.set_viewport_size({"width": 600, "height": 300})
    page.evaluate("document.body.replaceChildren()")
    blank = page.screenshot()
    pixels = png_pixels(blank)
    assert pixels.shape == (300, 600, 3) and len(np.unique(pixels.reshape(-1, 3), axis=0)) == 1
    with pytest.raises(AssertionError):
        assert_not_blank(blank)
    # A known square in a known colour (set through the CSSOM, which the page's CSP allows).
    page.evaluate("""() => { const d = document.createElement('div');
        Object.assign(d.style, {position: 'fixed', left: '100px', top: '50px', width: '40px', height: '20px',
                                background: 'rgb(213, 94, 0)'});
        document.body.appendChild(d); }""")
    pixels = png_pixels(page.screenshot())
    assert (pixels[50:70, 100:140] == (213, 94, 0)).all()
    assert (pixels[:50] == 255).all() and (pixels[70:] == 255).all()


def test_readable_on_a_phone(browser, corpus_file):
    o = Opened(browser, corpus_file, width=390, height=844)
    try:
        page = o.page
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"the page is {overflow}px wider than a phone"
        size = page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
        assert size >= 14
        box = page.locator("#chart-mfu svg").bounding_box()
        assert box["width"] <= 390
    finally:
        o.close()


def test_printable(opened, corpus):
    page = opened.page
    page.emulate_media(media="print")
    style = page.evaluate("""() => ({
        breaks: [...document.querySelectorAll('article.claim')].map(a => getComputedStyle(a).breakBefore),
        overflow: [...document.querySelectorAll('.scroll')].map(d => getComputedStyle(d).overflowX),
        controls: getComputedStyle(document.getElementById('controls')).display,
        clipped: [...document.querySelectorAll('table')].filter(t => t.scrollWidth > t.parentElement.clientWidth + 1)
                   .length})""")
    assert set(style["breaks"]) == {"page"}
    assert set(style["overflow"]) == {"visible"}
    assert style["controls"] == "none"
    assert style["clipped"] == 0
    pdf = page.pdf(format="A4")
    pages = len(re.findall(rb"/Type\s*/Page(?![a-z])", pdf))
    assert pages > len(corpus)  # the summary, then each claim on a new page


# ---------------------------------------------------------------------------- collapsed passing claims


def test_passing_claims_are_one_line_until_opened(opened, corpus):
    page = opened.page
    state = page.evaluate("""() => [...document.querySelectorAll('article.claim')].map(a => ({
        status: a.dataset.status, height: a.getBoundingClientRect().height,
        body: a.querySelector('dl.about').checkVisibility()}))""")
    assert len(state) == len(corpus)
    passing = [s for s in state if s["status"] == "pass"]
    assert passing and all(not s["body"] and s["height"] < 60 for s in passing)
    assert all(s["body"] and s["height"] > 200 for s in state if s["status"] != "pass")
    # The status filter reaches them; a click opens one.
    page.locator('#controls input[name="status"][value="pass"]').click()
    assert visible_claims(page)["articles"] == ["pass"] * len(passing)
    first = page.locator('article.claim[data-status="pass"]').first
    first.locator("summary").click()
    assert first.locator("dl.about").is_visible()


def test_a_chart_link_opens_the_collapsed_claim_it_points_to(opened, corpus):
    page = opened.page
    target = page.evaluate("""() => {
        const a = [...document.querySelectorAll('#chart-mfu a')].find(l => {
            const art = document.getElementById(l.getAttribute('href').slice(1));
            return art && art.dataset.status === 'pass'; });
        return a.getAttribute('href').slice(1); }""")
    assert not page.locator(f"#{target} dl.about").is_visible()
    page.locator(f'#chart-mfu a[href="#{target}"]').click()
    page.locator(f"#{target} dl.about").wait_for(state="visible")  # a locator's wait: see above
    assert page.locator(f"#{target} dl.about").is_visible()


def test_print_shows_every_claim_in_full(opened, corpus):
    page = opened.page
    page.emulate_media(media="print")
    shown = page.evaluate("""() => [...document.querySelectorAll('article.claim')]
        .map(a => a.querySelector('dl.about').checkVisibility() && a.querySelector('dl.about').offsetHeight > 0)""")
    assert shown == [True] * len(corpus)
