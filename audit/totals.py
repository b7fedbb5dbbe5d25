"""Total rows: a row of a table that sums the rows above it ("Total | 3,311,616 | | 539.00" under a model card's
runs), read as a sum, not as one more training run (rule V018).

A claim is a total row when its name or id is a total's label (:data:`LABEL`: "Total", "Totals", "Sum", "Overall",
"All", "Grand total", in any case, with an optional colon and a remark in brackets, "Total (all models)"; "Total
compute cluster A" names a run), in a file that holds at least one claim that is not a total row, and when it has
no phases of its own (a claim with phases is a multi-phase run, whose sums C010 checks).
"""

from __future__ import annotations

import re

import numpy as np

from audit.lazy import pandas as pd  # imported on first use: quick start-up

from audit.claims import Claims
from audit.columns import map_unique
from audit.state import PHASES_FILE

#: A total's label, as a table prints it under its rows.
LABEL = re.compile(r"\s*(?:grand\s+total|totals?|sum|overall|all)\s*:?\s*(?:\([^()]*\)\s*:?\s*)?", re.IGNORECASE)

#: The figures that add up across runs: what runs consume or produce. Not the chips (accelerators used at once:
#: runs that follow each other share them, so a total's count may be the cluster's size as well as a sum), nor
#: durations (runs overlap), nor per-chip, per-token or per-run rates and ratios (power, MFU, throughput, PUE),
#: nor model sizes.
ADDITIVE: tuple[str, ...] = ("tokens", "compute_flops", "hardware_compute_flops", "chip_hours", "energy_mwh",
                             "co2_tonnes", "cost_usd")


def is_label(text: object) -> bool:
    """Whether ``text`` is a total's label (:data:`LABEL`)."""
    return isinstance(text, str) and LABEL.fullmatch(text) is not None


def total_rows(claims: Claims) -> np.ndarray:
    """Which claims are total rows (module docstring): the labels are read once per distinct text."""
    info = claims.info
    n = len(claims)
    labelled = np.zeros(n, dtype=bool)
    for field in ("name", "id"):
        if field in info.columns:
            labelled |= map_unique(info[field], is_label).to_numpy(dtype=bool)
    files = info["file"].to_numpy(dtype=object) if "file" in info.columns else np.full(n, None, dtype=object)
    labelled &= files != PHASES_FILE
    if "phases" in claims.extras.columns:
        phases = claims.extras["phases"]
        labelled &= ~(phases.notna().to_numpy(dtype=bool) & (phases.astype(str).str.strip() != "").to_numpy())
    if not labelled.any():
        return labelled
    # A file with a claim that is not a total row: a file of totals only has nothing they could sum.
    codes = pd.factorize(pd.Series(files, dtype=object).fillna(""))[0]
    runs = np.bincount(codes[~labelled], minlength=codes.max() + 1)
    return labelled & (runs[codes] > 0)
