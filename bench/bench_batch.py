"""Batch benchmark: audit N synthetic claims from a CSV, against baselines measured in the same run.

    python bench/bench_batch.py [N ...]        # default: 1000 10000 100000

Reports wall time and peak memory (tracemalloc, measured in a second run so it does not slow the timed one), and ratios against two baselines measured on
the same machine in the same run: reading the CSV with pandas (the I/O floor), and a per-row Python loop that
does only the 6ND check (what a naive script does). Nothing here is asserted: read the ratios.
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit.reading import load  # noqa: E402
from audit.pipeline import audit_claims as audit  # noqa: E402
from audit.report import html, table  # noqa: E402

HARDWARE = ["H100", "A100 80GB", "TPU v4", "MI300X", "H800", "V100"]


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    """n plausible claims, a tenth of them doctored (1000x compute, GPU-days for GPU-hours)."""
    rng = np.random.default_rng(seed)
    params = 10 ** rng.uniform(8, 11.5, n)
    tokens = params * rng.uniform(5, 2000, n)
    chips = 2 ** rng.integers(3, 14, n)
    mfu = rng.uniform(0.2, 0.55, n)
    peak = np.array([989.4e12, 312e12, 275e12, 1307.4e12, 989.4e12, 125e12])
    hw = rng.integers(0, len(HARDWARE), n)
    compute = 6 * params * tokens
    hours = compute / (chips * 3600 * peak[hw] * mfu)
    doctored = rng.random(n) < 0.1
    compute = np.where(doctored & (rng.random(n) < 0.5), compute * 1000, compute)
    chip_hours = np.where(doctored, chips * hours / 24, chips * hours)
    return pd.DataFrame({
        "id": [f"run-{i}" for i in range(n)],
        "params": [f"{p / 1e9:.3g}B" for p in params],
        "tokens": tokens, "compute_flops": compute, "hardware": np.array(HARDWARE)[hw], "chips": chips,
        "wall_clock_days": hours / 24, "chip_hours": chip_hours, "mfu": [f"{m * 100:.1f}%" for m in mfu],
    })


def timed(fn, memory: bool = True):
    """Run ``fn`` twice: once timed (tracemalloc slows Python code several-fold), once for peak memory."""
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    peak = 0
    if memory:
        tracemalloc.start()
        fn()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return out, dt, peak


def naive_loop(path: Path) -> int:
    import csv
    bad = 0
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            n = float(row["params"].rstrip("B")) * 1e9
            c = float(row["compute_flops"])
            d = float(row["tokens"])
            bad += abs(c / (6 * n * d) - 1) > 0.25
    return bad


def main(sizes: list[int]) -> None:
    print(f"{'N':>8} {'step':<22} {'seconds':>9} {'peak MB':>9} {'x read_csv':>11} {'x naive loop':>13}")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "claims.csv"
            synthetic(n).to_csv(path, index=False)
            _, t_read, m_read = timed(lambda: pd.read_csv(path))
            _, t_naive, _ = timed(lambda: naive_loop(path), memory=False)
            claims, t_load, m_load = timed(lambda: load([str(path)]))
            result, t_audit, m_audit = timed(lambda: audit(claims))
            _, t_csv, _ = timed(lambda: table.claims_bytes(result, "csv"), memory=False)
            _, t_html, m_html = timed(lambda: html.render(result))
            for step, t, m in (("read_csv (baseline)", t_read, m_read), ("naive 6ND loop", t_naive, 0),
                               ("load + normalize", t_load, m_load), ("audit", t_audit, m_audit),
                               ("csv output", t_csv, 0), ("html report", t_html, m_html)):
                print(f"{n:>8} {step:<22} {t:>9.3f} {m / 1e6:>9.1f} {t / t_read:>11.1f} {t / t_naive:>13.2f}")
            s = result.status.value_counts().to_dict()
            print(f"{n:>8} statuses: {s}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10000, 100000])
