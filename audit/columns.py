"""Column helpers shared by the readers, the engine and the table writer."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

__all__ = ["map_unique"]


def map_unique(series: pd.Series, fn: Callable[[Any], Any]) -> pd.Series:
    """``series.map(fn)`` calling ``fn`` once per distinct value, not once per row (None/NaN map to fn(None))."""
    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    except TypeError:  # unhashable cells (a list or object in a JSON field): rare, and only then per row
        return series.map(fn)
    results = np.empty(len(uniques) + 1, dtype=object)
    for k, value in enumerate(uniques):
        results[k] = fn(value)
    results[-1] = fn(None)
    return pd.Series(results[codes], index=series.index, dtype=object)
