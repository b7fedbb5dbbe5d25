"""Regenerate the committed audit of the bundled corpus: ``python reports/regenerate.py``.

``--check`` exits 1 (and says which file) when a committed report differs from what the code now produces;
the test suite runs it. The timestamp is fixed (SOURCE_DATE_EPOCH) so the same code gives the same bytes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: 2026-11-30 00:00 UTC: the date the reports stand for. Bump it when you regenerate for a new corpus.
REPORT_EPOCH = "1795996800"

HERE = Path(__file__).resolve().parent
# The reports are of the code beside them, whatever package an (editable) install elsewhere put on the path.
sys.path.insert(0, str(HERE.parent))

OUTPUTS = {
    "corpus.html": "html",
    "corpus.md": "markdown",
    "corpus.json": "json",
    "example.html": "html",
}

#: Input of ``example.html``: a few claims with the slips the checks are for (PF-days read as FLOP, GPU-days as
#: GPU-hours, a sparse peak, MFU as a percentage, total parameters for a mixture-of-experts model, ...).
EXAMPLE_INPUT = "example-claims.json"


def render_all() -> dict[str, bytes]:
    """Every committed report, rendered now."""
    os.environ["SOURCE_DATE_EPOCH"] = REPORT_EPOCH
    from audit.api import check
    from audit.report import html, json_out, markdown

    result = check()
    title = "Audit of published training runs (train-audit bundled corpus)"
    example = check([str(HERE / EXAMPLE_INPUT)])
    # The page names its input file; name it relative to the repository so the bytes do not depend on where
    # the checkout lives.
    example.claims.info["file"] = f"reports/{EXAMPLE_INPUT}"
    example.claims.notes[:] = [(f"reports/{EXAMPLE_INPUT}", said) for _, said in example.claims.notes]
    return {
        "corpus.html": html.render(result, title).encode("utf-8"),
        "corpus.md": markdown.render(result, title).encode("utf-8"),
        "corpus.json": json_out.render(result).encode("utf-8"),
        "example.html": html.render(example, "Example: common slips in training reports").encode("utf-8"),
    }


def main(argv: list[str]) -> int:
    rendered = render_all()
    if "--check" in argv:
        stale = [name for name, data in rendered.items()
                 if not (HERE / name).exists() or (HERE / name).read_bytes() != data]
        if stale:
            print(f"stale reports: {', '.join(stale)}; run: python reports/regenerate.py", file=sys.stderr)
            return 1
        return 0
    for name, data in rendered.items():
        (HERE / name).write_bytes(data)
        print(f"wrote reports/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
