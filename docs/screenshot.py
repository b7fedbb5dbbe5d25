"""Screenshots of the HTML report for the README: ``python docs/screenshot.py``.

Opens the committed corpus report (``reports/corpus.html``; regenerate it first with
``python reports/regenerate.py``) in headless Chromium, driven by Playwright with Debian's ``chromium`` (never a
downloaded browser), with every network request refused, and writes:

- ``docs/report.png``: the top of the page (title and summary);
- ``docs/report-charts.png``: the charts;
- ``docs/report-claim.png``: the worst failing claim in full, from the example report (``reports/example.html``:
  claims with known slips), since every run of the corpus passes;
- ``docs/report-problems.png``: the top of the example report, down to its worst claims: the verdict, the input,
  and each problem claim's next step.

Options: ``--html FILE`` (another report), ``--claim-html FILE`` (the report of the claim shot), ``--out DIR``
(another folder), ``--chromium PATH``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDTH = 1000


def _clip(page, selector: str, top_of_page: bool, max_height: float) -> dict[str, float]:
    element = page.locator(selector).first
    box = element.evaluate("""e => { const r = e.getBoundingClientRect();
        return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}; }""")
    top = 0.0 if top_of_page else max(box["y"] - 8, 0.0)
    bottom = min(box["y"] + box["height"] + 8, top + max_height)
    return {"x": 0, "y": top, "width": WIDTH, "height": bottom - top}


def shoot(html: Path, out: Path, chromium: str = CHROMIUM, claim_html: Path | None = None) -> list[Path]:
    """Write the screenshots of ``html`` (the claim's of ``claim_html``, default ``html``) into ``out``; returns
    their paths."""
    from playwright.sync_api import sync_playwright

    url = html.resolve().as_uri()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": WIDTH, "height": 900}, device_scale_factor=1,
                                          offline=True, service_workers="block")
            claim_url = (claim_html or html).resolve().as_uri()
            allowed = {url, claim_url}
            context.route("**/*", lambda route: route.continue_() if route.request.url in allowed else route.abort())
            page = context.new_page()
            for name, selector, from_top, max_height, target_url in (
                    ("report.png", "#summary", True, 1400, url),
                    ("report-charts.png", "#charts", False, 1500, url),
                    ("report-claim.png", "article.claim.status-fail", False, 2400, claim_url),
                    ("report-problems.png", "ol.worst", True, 1600, claim_url)):
                if page.url != target_url:
                    page.goto(target_url)
                if page.locator(selector).count() == 0 and selector.startswith("article.claim"):
                    selector = "article.claim"  # no failing claim: the first one
                if page.locator(selector).count() == 0:
                    continue
                target = out / name
                page.screenshot(path=str(target), clip=_clip(page, selector, from_top, max_height), full_page=True)
                written.append(target)
        finally:
            browser.close()
    return written


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=REPO / "reports" / "corpus.html")
    parser.add_argument("--claim-html", type=Path, default=REPO / "reports" / "example.html")
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--chromium", default=CHROMIUM)
    args = parser.parse_args(argv)
    if not Path(args.chromium).exists():
        print(f"{args.chromium} not found: install Debian's chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    for path in shoot(args.html, args.out, args.chromium, args.claim_html):
        print(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
