"""The work state of one evaluation: what the engine knows about every claim while it derives and checks.

The engine (:mod:`audit.engine`) creates and fills it; each rule's ``evaluate`` reads it and returns findings.
It lives in its own module so that rules and engine both depend on it and not on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from audit.catalog import Catalog
from audit.claims import Claims
from audit.config import Config


def effective_params(active: np.ndarray, total: np.ndarray) -> np.ndarray:
    """N in C = 6·N·D: the active parameter count when given (mixture-of-experts), else the total."""
    return np.where(~np.isnan(active), active, total)


def refresh_effective(q: pd.DataFrame, how: pd.DataFrame) -> None:
    """Recompute what follows from the parameter counts after they changed: N, and F where F = 6N."""
    q["n_eff"] = effective_params(q["active_params"].to_numpy(dtype=float), q["params"].to_numpy(dtype=float))
    six = (how["flops_per_token"] == "6N").to_numpy()
    q.loc[six, "flops_per_token"] = 6.0 * q.loc[six, "n_eff"]


@dataclass(frozen=True)
class Prefill:
    """Values given to the engine for a quantity before it derives anything (NaN where none).

    They fill the quantity where the claim does not state it (source ``derived``, ``how`` = ``note``); where the
    claim states it, rule ``check`` (if any) compares the two. Multi-phase totals are prefilled with
    ``check="C010"``; ``estimate``'s compute-optimal split with ``note="split"`` and no check.
    """

    values: np.ndarray
    note: str
    check: str | None = None


@dataclass
class WorkState:
    """Work columns (``q``: values, ``source``: claimed | derived | catalog, ``how``: the rule or note that gave a
    derived value), the hardware match, FLOPs-per-token conventions, and what the relations found."""

    claims: Claims
    config: Config
    catalog: Catalog
    q: pd.DataFrame
    source: pd.DataFrame
    how: pd.DataFrame
    hardware: pd.DataFrame
    architecture: pd.DataFrame
    prefill: dict[str, Prefill] = field(default_factory=dict)
    #: The work columns before any relation ran (the outlier search starts again from here).
    initial: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame] | None = None
    #: Findings of the relation rules (the outlier search looks for claims they disagree on).
    relation_findings: list[pd.DataFrame] = field(default_factory=list)
    #: Runs the relations on other work columns: (q, source, how) -> their findings (set by the engine).
    resolve: Callable[[pd.DataFrame, pd.DataFrame, pd.DataFrame], list[pd.DataFrame]] | None = None

    def col(self, name: str) -> np.ndarray:
        """A work column's values as floats."""
        return self.q[name].to_numpy(dtype=float)

    def set_derived(self, name: str, values: np.ndarray, note: str) -> None:
        """Fill ``name`` where it is unknown and ``values`` is finite, marking it derived by ``note``."""
        mask = np.isnan(self.q[name].to_numpy()) & np.isfinite(values)
        if mask.any():
            self.q.loc[mask, name] = values[mask]
            self.source.loc[mask, name] = "derived"
            self.how.loc[mask, name] = note
