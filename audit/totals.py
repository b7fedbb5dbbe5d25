"""Total rows: a row of a table that sums the rows above it ("Total | 3,311,616 | | 539.00" under a model card's
runs), read as a sum, not as one more training run (rule V018).

A claim is a total row when its name or id is a total's label (:data:`LABEL`: "Total", "Totals", "Sum", "Overall",
"All", "Grand total", in any case, with an optional colon and a remark in brackets, "Total (all models)"; "Total
compute cluster A" names a run), in a file that holds at least one claim that is not a total row, and when it has
no phases of its own (a claim with phases is a multi-phase run, whose sums C010 checks). A file read in batches
(:mod:`audit.stream`: more rows than a batch) has no total rows: a batch holds only some of the rows a total sums,
so its claim named "Total" is audited as a run, as before.
"""

from __future__ import annotations

import numpy as np

from audit.lazy import pandas as pd  # imported on first use: quick start-up

from audit.claims import Claims
from audit.state import PHASES_FILE

#: A total's label, as a table prints it under its rows, for Arrow's regular expressions (RE2: anchored, matched
#: ignoring case on texts trimmed of white space). Every claim's id and name are looked at, one per claim in a
#: batch of run logs: a Python match of each cost about 85 ms per 50,000 claims (most ids are distinct), against a
#: few ms in Arrow.
LABEL = r"^(?:grand\s+total|totals?|sum|overall|all)\s*:?\s*(?:\([^()]*\)\s*:?)?$"

#: The figures that add up across runs: what runs consume or produce. Not the chips (accelerators used at once:
#: runs that follow each other share them, so a total's count may be the cluster's size as well as a sum), nor
#: durations (runs overlap), nor per-chip, per-token or per-run rates and ratios (power, MFU, throughput, PUE),
#: nor model sizes.
ADDITIVE: tuple[str, ...] = ("tokens", "compute_flops", "hardware_compute_flops", "chip_hours", "energy_mwh",
                             "co2_tonnes", "cost_usd")


def is_label(text: object) -> bool:
    """Whether ``text`` is a total's label (:data:`LABEL`)."""
    cell = np.empty(1, dtype=object)
    cell[0] = text
    return bool(labels(cell)[0])


def labels(values: np.ndarray) -> np.ndarray:
    """:func:`is_label` of every cell of an object array (a cell that is not text: False), on the whole column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    is_text = np.fromiter(map(isinstance, values, [str] * len(values)), dtype=bool, count=len(values))
    out = np.zeros(len(values), dtype=bool)
    where = np.flatnonzero(is_text)
    if len(where):
        texts = pc.utf8_trim_whitespace(pa.array(values[where], type=pa.string()))
        out[where] = pc.match_substring_regex(texts, LABEL, ignore_case=True).to_numpy(zero_copy_only=False)
    return out


def total_rows(claims: Claims) -> np.ndarray:
    """Which claims are total rows (module docstring): the labels matched on whole columns (:func:`labels`)."""
    info = claims.info
    n = len(claims)
    labelled = np.zeros(n, dtype=bool)
    if claims.cut:
        return labelled
    for field in ("name", "id"):
        if field in info.columns:
            labelled |= labels(info[field].to_numpy(dtype=object))
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
