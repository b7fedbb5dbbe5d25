"""Multi-phase runs: a claim with ``phases`` (each with its own hardware, chips, duration, precision, ...).

Each phase is audited as a claim of its own (inheriting the model's size and architecture from its run), then
the phases' chip-hours, durations, tokens and compute are summed, and their capacity Σ chip_hours × peak gives
the run's effective peak. The run is audited with those totals given to the engine (:class:`audit.state.Prefill`;
rule C010 checks a stated total against them). The orchestration is in :mod:`audit.pipeline`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from audit.claims import Claims
from audit.reading.fields import field_of
from audit.state import Prefill

#: What a phase takes from its run unless it states its own.
#: A phase is of the same model: its architecture and parameter notes say whether it is a mixture of experts (N
#: in 6·N·D then the active count, which a total only bounds), an adapter fine-tune's trainable parameters and
#: method what training state it holds (M001), its domain and task what its dataset counts.
INHERITED: tuple[str, ...] = ("params", "active_params", "layers", "d_model", "heads", "head_dim", "kv_heads",
                              "ffn_dim", "seq_len", "vocab_size", "experts", "experts_per_token", "architecture",
                              "params_notes", "trainable_params", "finetune_method", "domain", "task", "hardware",
                              "precision", "mlp", "activation_recompute", "name", "source")

#: Totals summed over phases.
SUMMED: tuple[str, ...] = ("chip_hours", "wall_clock_days", "tokens", "compute_flops")


@dataclass(frozen=True)
class Expansion:
    """The phases of a batch of claims: one record per phase, the row of its run, and malformed ``phases``
    cells (row, field, message) to report as invalid values."""

    records: list[dict[str, Any]]
    parents: np.ndarray
    invalid: pd.DataFrame


def phase_list(value: Any) -> list[dict[str, Any]] | None | str:
    """The phases of a claim: a list of objects (or the JSON text of one); a message when malformed."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return "phases must be a list of objects (JSON)"
    if hasattr(value, "tolist") and not isinstance(value, (list, dict)):
        value = value.tolist()
    if not isinstance(value, list) or not value or not all(isinstance(p, dict) for p in value):
        return "phases must be a non-empty list of objects"
    return value


def expand(claims: Claims) -> Expansion | None:
    """The phase records of every claim that has phases (None when no claim has a ``phases`` field)."""
    if "phases" not in claims.extras.columns:
        return None
    # Only the cells that hold something are read (most claims of a batch have no phases).
    values = claims.extras["phases"].to_numpy(dtype=object)
    given = np.flatnonzero(~pd.isna(values))
    parsed = dict(zip(given.tolist(), map(phase_list, values[given].tolist())))
    bad = [(i, p) for i, p in parsed.items() if isinstance(p, str)]
    records: list[dict[str, Any]] = []
    parents: list[int] = []
    with_phases = [row for row, phases in parsed.items() if isinstance(phases, list)]
    inheritance = _inherited(claims, with_phases)
    ids = claims.info["id"].to_numpy(dtype=object)
    for row, inherited in zip(with_phases, inheritance):
        phases = parsed[row]
        # A phase's own phases are not read (phases are one level deep): the run's phases field says so.
        nested = [k for k, phase in enumerate(phases, start=1) if phase.get("phases") not in (None, [], "")]
        if nested:
            bad.append((row, f"phase {', '.join(map(str, nested))} has phases of its own; nested phases are not "
                             f"read: list every phase at one level"))
        for k, phase in enumerate(phases, start=1):
            own = {str(key): v for key, v in phase.items() if key != "phases"}
            # A field the phase gives, under any of its spellings ("gpu_type" for hardware), replaces the run's:
            # both in one record would read as the field given twice with different values.
            given = {_field(key) for key in own}
            rec = {**{name: v for name, v in inherited.items() if name not in given}, **own}
            rec["id"] = f"{ids[row]}/phase-{k}"
            records.append(rec)
            parents.append(row)
    invalid = pd.DataFrame({"row": [i for i, _ in bad], "field": "phases", "message": [m for _, m in bad]})
    return Expansion(records=records, parents=np.asarray(parents, dtype=int), invalid=invalid)


def _field(key: str) -> str:
    """The canonical field a phase's key names (the key itself when it names none)."""
    return field_of(key)[0] or key


def _inherited(claims: Claims, rows: list[int]) -> list[dict[str, Any]]:
    """The run's fields each phase of ``rows`` inherits (:data:`INHERITED`), read a column at a time."""
    out: list[dict[str, Any]] = [{} for _ in rows]
    take = np.asarray(rows, dtype=int)
    for name in INHERITED:
        if name in claims.values.columns:
            column = claims.values[name].to_numpy(dtype=float)[take].tolist()
            for record, v in zip(out, column):
                if v == v:
                    record[name] = float(v)
        elif name in claims.info.columns:
            column = claims.info[name].to_numpy(dtype=object)[take].tolist()
            for record, v in zip(out, column):
                if v is not None:
                    record[name] = v
    return out


def totals(q: pd.DataFrame, parent: np.ndarray, claims: Claims) -> dict[str, Prefill]:
    """What the phases' sums give their runs: the summed totals (checked by C010 against a stated total) and
    the effective peak Σ chip_hours × peak / Σ chip_hours where the run names no accelerator of its own."""
    n = len(claims)
    frame = pd.DataFrame({name: q[name].to_numpy(dtype=float) for name in SUMMED})
    frame["capacity"] = frame["chip_hours"] * q["peak_flops_per_chip"].to_numpy(dtype=float)
    # All columns in one grouping (each column's sum is the one its own grouping gives): a grouping per column cost
    # more than the sums.
    grouped = frame.groupby(parent)
    complete = grouped.count().eq(grouped.size(), axis=0).reindex(range(n), fill_value=False)
    partial = grouped.sum(min_count=1).reindex(range(n))  # over the phases that give the figure
    summed = partial.where(complete)  # NaN unless every phase has the figure
    sums = {name: summed[name].to_numpy(dtype=float) for name in (*SUMMED, "capacity")}
    with np.errstate(divide="ignore", invalid="ignore"):
        peak = sums.pop("capacity") / sums["chip_hours"]
    no_hw = claims.info["hardware"].isna().to_numpy()
    out = {}
    for name, values in sums.items():
        # Where only some phases give the figure, their sum is a floor under the run's total (PaLM's first phase
        # alone, 238.3K tokens/s for 1,200 hours, is 1.03T tokens of a run stated at 780B): checked one way.
        part = partial[name].to_numpy(dtype=float)
        some = np.isnan(values) & np.isfinite(part)
        out[name] = Prefill(np.where(some, part, values), note="C010", check="C010", floor=some if some.any() else None)
    out["peak_flops_per_chip"] = Prefill(np.where(no_hw, peak, np.nan), note="C010", check="C010")
    return out


def spare_relations(parent: np.ndarray, claims: Claims, sums: dict[str, Prefill]) -> dict[str, np.ndarray]:
    """Relations not to use on runs with phases: chips differ between phases, so a run's chip count (when it
    states none) is not derived from its totals; and a run that states its parameters and no compute takes its
    compute from the phases' sum (``sums``, :func:`totals`), so held to 6·N·D of its tokens (C001) it would repeat
    C010's comparison of its tokens with the phases' (one slip reported twice, the second under the wrong rule: a
    run's "80T" against 0.2T + 7.8T)."""
    has_phases = np.zeros(len(claims), dtype=bool)
    has_phases[parent] = True
    stated = claims.values
    spare = has_phases & np.isnan(stated["chips"].to_numpy(dtype=float))
    repeats = (np.isfinite(sums["compute_flops"].filled())
               & np.isnan(stated["compute_flops"].to_numpy(dtype=float))
               & ~np.isnan(stated["params"].to_numpy(dtype=float)))
    return {"C002": spare, "C011": spare, "C001": repeats}
