"""Multi-phase runs: a claim with ``phases`` (each with its own hardware, chips, duration, precision, ...).

Each phase is audited as a claim of its own (inheriting the model's size and architecture from its run), then
the phases' chip-hours, durations, tokens and compute are summed, and their capacity Σ chip_hours × peak gives
the run's effective peak. The run is audited with those totals given to the engine (:class:`audit.state.Prefill`;
rule C010 checks a stated total against them). The orchestration is in :mod:`audit.pipeline`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from audit.claims import Claims, RawTable
from audit.columns import objects_of
from audit.findings import object_array
from audit.reading.fields import canonical_columns, field_of
from audit.reading.jsonfile import frame_from_columns
from audit.reading.normalize import normalize
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


#: The file a phase is read from, as its messages name it.
PHASES_FILE = "<phases>"


@dataclass(frozen=True)
class Expansion:
    """The phases of a batch of claims: one row per phase (``table``: each phase's record, its own fields and
    those it inherits from its run, as :func:`audit.reading.claims_from_records` would read the records), the
    row of its run, and malformed ``phases`` cells (row, field, message) to report as invalid values."""

    table: RawTable
    parents: np.ndarray
    invalid: pd.DataFrame

    def claims(self) -> Claims:
        """The phases as claims of their own, read as ``claims_from_records(records, file="<phases>")`` reads
        their records (the same validation, messages and normalization)."""
        table = dataclasses.replace(self.table, files=objects_of(len(self.parents), PHASES_FILE))
        return normalize(canonical_columns(table, PHASES_FILE, per_row=True))


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
    """The phases of every claim that has phases (None when no claim has a ``phases`` field).

    A phase's record is the fields it inherits from its run (:data:`INHERITED`, where the run has them), then its
    own fields (but ``phases``), then its id (``<run id>/phase-<k>``). They are gathered a column at a time: a
    phase's own fields one by one (they are Python objects from JSON), the inherited ones per field for all
    phases at once."""
    if "phases" not in claims.extras.columns:
        return None
    # Only the cells that hold something are read (most claims of a batch have no phases).
    values = claims.extras["phases"].to_numpy(dtype=object)
    given = np.flatnonzero(~pd.isna(values))
    parsed = dict(zip(given.tolist(), map(phase_list, values[given].tolist())))
    bad = [(i, p) for i, p in parsed.items() if isinstance(p, str)]
    with_phases = [row for row, phases in parsed.items() if isinstance(phases, list)]
    lists: list[list[dict[str, Any]]] = [parsed[row] for row in with_phases]
    for row, phases in zip(with_phases, lists):
        # A phase's own phases are not read (phases are one level deep): the run's phases field says so.
        nested = [k for k, phase in enumerate(phases, start=1) if phase.get("phases") not in (None, [], "")]
        if nested:
            bad.append((row, f"phase {', '.join(map(str, nested))} has phases of its own; nested phases are not "
                             f"read: list every phase at one level"))
    invalid = pd.DataFrame({"row": [i for i, _ in bad], "field": "phases", "message": [m for _, m in bad]})
    counts = np.fromiter(map(len, lists), dtype=np.intp, count=len(lists))
    parents = np.repeat(np.asarray(with_phases, dtype=int), counts)
    flat = [phase for phases in lists for phase in phases]
    n = len(flat)
    run_of = np.repeat(np.arange(len(lists)), counts)  # each phase's run, among the runs with phases
    number = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts) + 1  # k of phase-k

    own: dict[str, tuple[list[int], list[Any]]] = {}
    for pos, phase in enumerate(flat):
        for key, v in {str(key): v for key, v in phase.items() if key != "phases"}.items():
            entry = own.get(key)
            if entry is None:
                entry = own[key] = ([], [])
            entry[0].append(pos)
            entry[1].append(v)
    # A field the phase gives, under any of its spellings ("gpu_type" for hardware), replaces the run's: both in
    # one record would read as the field given twice with different values.
    replaced: dict[str, np.ndarray] = {}
    for key, (at, _) in own.items():
        mask = replaced.setdefault(_field(key), np.zeros(n, dtype=bool))
        mask[at] = True

    columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    inherited = _inherited(claims, np.asarray(with_phases, dtype=int))
    for name, (run_values, run_has) in inherited.items():
        has = run_has[run_of]
        if name in replaced:
            has &= ~replaced[name]
        if has.any():
            columns[name] = (run_values[run_of], has)
    for key, (at, cells) in own.items():
        # The phase's own value; where it gives none, the run's value it inherits under the same name.
        values, has = columns.get(key, (np.full(n, None, dtype=object), np.zeros(n, dtype=bool)))
        values, has = values.copy(), has.copy()
        values[at] = object_array(cells)
        has[at] = True
        columns[key] = (values, has)
    ids = claims.info["id"].to_numpy(dtype=object)[parents]
    columns["id"] = (np.array([f"{run}/phase-{k}" for run, k in zip(ids.tolist(), number.tolist())], dtype=object),
                     np.ones(n, dtype=bool))

    def record(pos: int) -> dict[str, Any]:
        """Phase ``pos``'s record as a dict (its fields in the order given above), for the schema's messages."""
        phase = flat[pos]
        mine = {str(key): v for key, v in phase.items() if key != "phases"}
        out = {name: values[pos] for name, (values, has) in columns.items()
               if name in inherited and name not in mine and has[pos]}
        out.update(mine)
        out["id"] = columns["id"][0][pos]
        return out

    table = frame_from_columns(columns, n, PHASES_FILE, record)
    return Expansion(table=table, parents=parents, invalid=invalid)


def _field(key: str) -> str:
    """The canonical field a phase's key names (the key itself when it names none)."""
    return field_of(key)[0] or key


def _inherited(claims: Claims, rows: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The run's fields each run of ``rows`` passes to its phases (:data:`INHERITED`), a column at a time: per
    field, each run's value (a Python float, or the text as the claims hold it) and whether it has one."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in INHERITED:
        if name in claims.values.columns:
            column = claims.values[name].to_numpy(dtype=float)[rows]
            out[name] = (column.astype(object), ~np.isnan(column))  # Python floats
        elif name in claims.info.columns:
            texts = claims.info[name].to_numpy(dtype=object)[rows]
            out[name] = (texts, np.not_equal(texts, None))  # elementwise: a NaN text is passed on, as it was
    return out


def totals(q: pd.DataFrame, parent: np.ndarray, claims: Claims) -> dict[str, Prefill]:
    """What the phases' sums give their runs: the summed totals (checked by C010 against a stated total) and
    the effective peak Σ chip_hours × peak / Σ chip_hours where the run names no accelerator of its own."""
    n = len(claims)
    parent = np.asarray(parent, dtype=np.intp)
    counts = np.bincount(parent, minlength=n)
    figures = {name: q[name].to_numpy(dtype=float) for name in SUMMED}
    figures["capacity"] = figures["chip_hours"] * q["peak_flops_per_chip"].to_numpy(dtype=float)
    sums: dict[str, np.ndarray] = {}
    for name, values in figures.items():
        complete = np.bincount(parent, weights=~np.isnan(values), minlength=n) == counts  # every phase has it
        sums[name] = np.where(complete & (counts > 0), _phase_sums(values, parent, n), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        peak = sums.pop("capacity") / sums["chip_hours"]
    runs = np.flatnonzero(counts)  # the hardware of the runs with phases alone: the peak is NaN elsewhere
    no_hw = np.zeros(n, dtype=bool)
    no_hw[runs] = pd.isna(claims.info["hardware"].to_numpy(dtype=object)[runs])
    out = {name: Prefill(values, note="C010", check="C010") for name, values in sums.items()}
    out["peak_flops_per_chip"] = Prefill(np.where(no_hw, peak, np.nan), note="C010", check="C010")
    return out


def _phase_sums(values: np.ndarray, parent: np.ndarray, n: int) -> np.ndarray:
    """Each run's sum of its phases' ``values`` (0 for a run without phases), added in row order with Kahan's
    compensation, as pandas' grouped sum adds them (the totals were summed so, and must not move by a last digit).
    NaN values are skipped. Phase k of every run is added in one step: a run has a few phases, a batch many runs."""
    order = np.argsort(parent, kind="stable")
    grouped = parent[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]]) if len(grouped) else np.zeros(0, dtype=np.intp)
    nth = np.arange(len(grouped)) - np.repeat(starts, np.diff(np.r_[starts, len(grouped)]))  # place in its run
    total = np.zeros(n)
    compensation = np.zeros(n)
    for k in range(int(nth.max()) + 1 if len(nth) else 0):
        at = order[nth == k]
        at = at[~np.isnan(values[at])]
        run = parent[at]
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, as in pandas' loop: no warning there either
            y = values[at] - compensation[run]
            t = total[run] + y
            c = (t - total[run]) - y
        compensation[run] = np.where(np.isnan(c), 0.0, c)  # an infinite figure: its sum stays infinite, not NaN
        total[run] = t
    return total


def spare_relations(parent: np.ndarray, claims: Claims) -> dict[str, np.ndarray]:
    """Relations not to use on runs with phases: chips differ between phases, so a run's chip count (when it
    states none) is not derived from its totals."""
    has_phases = np.zeros(len(claims), dtype=bool)
    has_phases[parent] = True
    spare = has_phases & np.isnan(claims.values["chips"].to_numpy(dtype=float))
    return {"C002": spare, "C011": spare}
