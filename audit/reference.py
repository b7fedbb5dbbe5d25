"""Reference data for energy, cost, carbon and regulatory checks, each row with its source.

``audit/data/energy_reference.csv``: PUE of data centres, carbon intensities of grids and GPU-hour prices
(``kind``, ``key``, ``value``, ``unit``, ``year``, ``source``), used only where a claim or an ``estimate`` asks for
them (and said so), never silently. ``audit/data/regulatory_thresholds.csv``: the training-compute lines that
laws and guidelines draw (rule R001), so a new line is a new row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from audit.lazy import pandas as pd  # imported on first use: quick start-up

from audit.resources import data_path

#: Share of an estimate the EU guidelines (Annex A) allow it to be off by: a figure within 30 % of a line is
#: reported as straddling it.
ESTIMATE_MARGIN = 0.30


@dataclass(frozen=True)
class Reference:
    """One reference value with its source."""

    kind: str
    key: str
    value: float
    unit: str
    year: str
    source: str


@dataclass(frozen=True)
class Threshold:
    """One regulatory training-compute line."""

    id: str
    flop: float
    jurisdiction: str
    instrument: str
    provision: str
    status: str
    meaning: str
    source: str

    @property
    def in_force(self) -> bool:
        """Whether the line still applies (a revoked order is still cited, and reported as revoked)."""
        return not self.status.lower().startswith("revoked")


@lru_cache(maxsize=1)
def references() -> tuple[Reference, ...]:
    """Every row of ``energy_reference.csv``."""
    frame = pd.read_csv(data_path("energy_reference.csv"), dtype=str, keep_default_na=False)
    return tuple(Reference(r.kind, r.key, float(r.value), r.unit, r.year, r.source) for r in frame.itertuples())


def reference(kind: str, key: str) -> Reference:
    """The reference value ``kind``/``key`` (``pue``/``hyperscale``, ``grid``/``us``, ``price``/...)."""
    for ref in references():
        if ref.kind == kind and ref.key == key.strip().lower():
            return ref
    keys = ", ".join(r.key for r in references() if r.kind == kind)
    raise KeyError(f"no {kind} reference named {key!r}; known: {keys}")


def keys(kind: str) -> tuple[str, ...]:
    """The keys of one kind of reference value that ``estimate`` may choose (the ``*-plausible`` rows are the
    bounds of rules E006 and E007, not values to plan with)."""
    return tuple(r.key for r in references() if r.kind == kind and not r.key.endswith("-plausible"))


@lru_cache(maxsize=1)
def thresholds() -> tuple[Threshold, ...]:
    """Every row of ``regulatory_thresholds.csv``, lowest line first."""
    frame = pd.read_csv(data_path("regulatory_thresholds.csv"), dtype=str, keep_default_na=False)
    rows = [Threshold(r.id, float(r.flop), r.jurisdiction, r.instrument, r.provision, r.status, r.meaning, r.source)
            for r in frame.itertuples()]
    bad = [t.id for t in rows if not (math.isfinite(t.flop) and t.flop > 0)]
    if bad:
        raise ValueError(f"regulatory_thresholds.csv: rows {bad} have no positive FLOP figure")
    return tuple(sorted(rows, key=lambda t: (t.flop, t.id)))


def position(low: float, high: float, line: float, margin: float = ESTIMATE_MARGIN) -> str:
    """Where a compute estimate ``low``..``high`` (the claim's figures) stands against ``line``, with the margin
    of Annex A: ``above`` (even 30 % less is above), ``below`` (even 30 % more is below) or ``straddles``."""
    if low * (1 - margin) > line:
        return "above"
    if high * (1 + margin) <= line:
        return "below"
    return "straddles"
