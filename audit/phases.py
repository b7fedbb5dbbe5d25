"""Multi-phase runs: a claim with ``phases`` (each with its own hardware, chips, duration, precision, ...).

Each phase is audited as a claim of its own (inheriting the model's size and architecture from its run), then
the phases' chip-hours, durations, tokens and compute are summed, and their capacity Σ chip_hours × peak gives
the run's effective peak. The run is audited with those totals (rule C010 checks a stated total against them).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from audit.claims import Claims, claims_from_records
from audit.engine import STATUSES, AuditResult, Config, audit

#: What a phase takes from its run unless it states its own.
INHERITED: tuple[str, ...] = ("params", "active_params", "layers", "d_model", "heads", "head_dim", "kv_heads",
                              "ffn_dim", "seq_len", "vocab_size", "experts", "experts_per_token", "hardware",
                              "precision", "mlp", "activation_recompute", "name", "source")

#: Totals summed over phases: (quantity, all phases must state it).
SUMMED: tuple[str, ...] = ("chip_hours", "wall_clock_days", "tokens", "compute_flops")


def _phase_list(value: Any) -> list[dict[str, Any]] | None | str:
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


def audit_claims(claims: Claims, config: Config | None = None) -> AuditResult:
    """Audit claims, expanding multi-phase runs; a claim without phases is audited as it is."""
    config = config or Config.default()
    if "phases" not in claims.extras.columns:
        return audit(claims, config)
    parsed = [_phase_list(v) for v in claims.extras["phases"].tolist()]
    bad = [(i, p) for i, p in enumerate(parsed) if isinstance(p, str)]
    if bad:
        extra = pd.DataFrame({"row": [i for i, _ in bad], "field": "phases", "message": [m for _, m in bad]})
        claims.invalid = pd.concat([claims.invalid, extra], ignore_index=True)
    records: list[dict[str, Any]] = []
    parents: list[int] = []
    for row, phases in enumerate(parsed):
        if not isinstance(phases, list):
            continue
        inherited = _inherited(claims, row)
        for k, phase in enumerate(phases, start=1):
            rec = {**inherited, **{str(key): v for key, v in phase.items()}}
            rec["id"] = f"{claims.info.at[row, 'id']}/phase-{k}"
            records.append(rec)
            parents.append(row)
    if not records:
        return audit(claims, config)
    sub = audit(claims_from_records(records, file="<phases>"), config)
    parent = np.asarray(parents, dtype=int)
    prefill = _totals(sub, parent, len(claims))
    # The run's effective peak only where the run itself names no accelerator.
    no_hw = claims.info["hardware"].isna().to_numpy()
    prefill["peak_flops_per_chip"] = np.where(no_hw, prefill["peak_flops_per_chip"], np.nan)
    # Chips differ between phases: the run's chip count is not derived from its totals.
    has_phases = np.zeros(len(claims), dtype=bool)
    has_phases[parent] = True
    no_chips = np.isnan(claims.values["chips"].to_numpy(dtype=float))
    spare = has_phases & no_chips
    result = audit(claims, config, prefill=prefill, used={"C002": spare, "C011": spare})
    result.phase_result = sub
    result.phase_parent = parent
    result.status = _merge_status(result.status, sub.status, parent)
    return result


def _inherited(claims: Claims, row: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in INHERITED:
        if name in claims.values.columns:
            v = claims.values.at[row, name]
            if v == v:
                out[name] = float(v)
        elif name in claims.info.columns:
            v = claims.info.at[row, name]
            if v is not None:
                out[name] = v
    return out


def _totals(sub: AuditResult, parent: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Sums over each run's phases (NaN unless every phase has the figure)."""
    frame = pd.DataFrame({"parent": parent})
    for name in SUMMED:
        frame[name] = sub.q[name].to_numpy(dtype=float)
    frame["capacity"] = frame["chip_hours"] * sub.q["peak_flops_per_chip"].to_numpy(dtype=float)
    grouped = frame.groupby("parent")
    totals: dict[str, np.ndarray] = {}
    counts = grouped.size()
    for name in (*SUMMED, "capacity"):
        summed = grouped[name].sum(min_count=1)
        complete = grouped[name].count() == counts
        values = summed.where(complete)
        totals[name] = values.reindex(range(n)).to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        totals["peak_flops_per_chip"] = totals.pop("capacity") / totals["chip_hours"]
    return totals


def _merge_status(status: pd.Series, sub_status: pd.Series, parent: np.ndarray) -> pd.Series:
    """A run is as bad as its worst phase (pass < warn < fail < invalid)."""
    rank = {s: i for i, s in enumerate(STATUSES)}
    worst = status.map(rank).to_numpy(dtype=int)
    np.maximum.at(worst, parent, sub_status.map(rank).to_numpy(dtype=int))
    return pd.Series(np.array(STATUSES, dtype=object)[worst], dtype=object)
