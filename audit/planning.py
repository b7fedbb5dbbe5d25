"""The planning calculator's extras (issue 13): energy, cost and CO2 defaults chosen from reference data, and
sweeps over one quantity (``--chips 1024,2048,4096``, ``--mfu 0.3:0.5:0.05``).

Nothing here is silent: every default becomes a :class:`audit.state.Prefill` whose note names the figure and its
source, and ``estimate`` shows that note as the quantity's derivation.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from audit.catalog import Catalog
from audit.reference import reference
from audit.state import Prefill

#: The references ``estimate`` may choose from, by option: (quantity filled, kind of reference row).
REFERENCE_OPTIONS: dict[str, tuple[str, str]] = {
    "grid": ("grid_kgco2_per_kwh", "grid"),
    "site": ("pue", "pue"),
    "price_from": ("price_per_chip_hour", "price"),
}

#: Quantities whose presence asks ``estimate`` for an energy answer (and so for a power per chip).
ENERGY_QUANTITIES = ("energy_mwh", "co2_tonnes", "cluster_power_w", "pue", "grid_kgco2_per_kwh")

#: Most values a sweep may have (a table, not a data set).
MAX_SWEEP = 200


class SweepError(ValueError):
    """A sweep option that cannot be read (the message names the option and the value)."""


@dataclass(frozen=True)
class Sweep:
    """One quantity swept over values (as texts the claim reader parses, so units work: ``1024,2048``)."""

    name: str
    values: tuple[str, ...]


_RANGE = re.compile(r"^\s*([^:]+):([^:]+):([^:]+)\s*$")


def _is_list(text: str) -> bool:
    """``1024,2048,4096`` is a list; ``1,024`` (a thousands separator) and ``2,048 GPUs`` are one value."""
    parts = [p.strip() for p in text.split(",")]
    return len(parts) > 1 and not all(re.fullmatch(r"\d{3}(\D.*)?", p) for p in parts[1:])


def parse_sweep(name: str, text: str) -> Sweep | None:
    """The sweep an option's value asks for (a list ``a,b,c`` or a range ``start:stop:step``, both ends
    included), or None when it is one value."""
    m = _RANGE.match(text)
    option = f"--{name.replace('_', '-')}"
    if m:
        try:
            start, stop, step = (float(g) for g in m.groups())
        except ValueError:
            raise SweepError(f"{option} {text!r}: a range is start:stop:step with plain numbers") from None
        if not (math.isfinite(start) and math.isfinite(stop) and math.isfinite(step)) or step <= 0 or stop < start:
            raise SweepError(f"{option} {text!r}: a range needs start <= stop and a positive step")
        count = int(math.floor((stop - start) / step + 1e-9)) + 1
        if count > MAX_SWEEP:
            raise SweepError(f"{option} {text!r}: {count} values; at most {MAX_SWEEP}")
        values = [start + i * step for i in range(count)]
        return Sweep(name, tuple(repr(round(v, 12)) for v in values))
    if _is_list(text):
        values = tuple(p.strip() for p in text.split(",") if p.strip())
        if len(values) > MAX_SWEEP:
            raise SweepError(f"{option}: {len(values)} values; at most {MAX_SWEEP}")
        return Sweep(name, values)
    return None


def find_sweep(given: Mapping[str, Any]) -> Sweep | None:
    """The one swept option among ``given`` (None: none); two sweeps are refused."""
    sweeps = [s for s in (parse_sweep(k, str(v)) for k, v in given.items() if isinstance(v, str)) if s]
    if len(sweeps) > 1:
        names = " and ".join(f"--{s.name.replace('_', '-')}" for s in sweeps)
        raise SweepError(f"{names}: sweep one quantity at a time")
    return sweeps[0] if sweeps else None


def reference_prefill(choices: Mapping[str, str | None], stated: Mapping[str, Any]) -> dict[str, Prefill]:
    """Prefills for ``--grid``, ``--site`` and ``--price-from``: the reference row's value, its note naming the
    row and its source. A quantity the user states wins (the reference is then not used)."""
    out: dict[str, Prefill] = {}
    for option, key in choices.items():
        if not key:
            continue
        quantity, kind = REFERENCE_OPTIONS[option]
        if stated.get(quantity) is not None:
            continue
        ref = reference(kind, key)
        out[quantity] = Prefill(np.array([ref.value]), note=f"reference {kind} '{ref.key}' = {ref.value:g} {ref.unit}"
                                f" ({ref.year + ', ' if ref.year else ''}{ref.source})")
    return out


def power_prefill(catalog: Catalog, hardware: str | None, stated: Mapping[str, Any],
                  asked: bool) -> dict[str, Prefill]:
    """When an energy answer is asked for (``asked``) and no power per chip is stated: the accelerator's catalog
    TDP (an upper bound on its average power, said so) and, without a stated PUE, 1.0 (chips only)."""
    if not asked or stated.get("power_w_per_chip") is not None or stated.get("cluster_power_w") is not None:
        return {}
    accel = catalog.lookup(hardware) if hardware else None
    out: dict[str, Prefill] = {}
    if accel is not None and accel.tdp_w == accel.tdp_w and accel.tdp_w:
        out["power_w_per_chip"] = Prefill(np.array([float(accel.tdp_w)]), note=(
            f"assumed: the {accel.name}'s TDP {accel.tdp_w:g} W, an upper bound on its average power "
            f"(datasheet: {accel.source_tdp})"))
    if stated.get("pue") is None:
        out["pue"] = Prefill(np.array([1.0]), note="assumed: PUE 1.0 (chips only, no data-centre overhead)")
    return out
