"""The engine: derive what claims imply and check every relation that can be checked, on whole columns.

Training arithmetic is a set of products of powers (see :mod:`audit.rules`); in log space each relation is a
linear equation Σ eᵢ·log xᵢ = log k. For each relation, a mask selects the rows where exactly one term is unknown
(derive it) or none is (check it); repeating until nothing changes propagates derivations. Each relation is used
at most once per claim, so a relation never checks a value it derived. The other rules evaluate themselves over
the engine's work state (:class:`audit.state.WorkState`) at their stage. There is no per-row Python here.

The engine computes numbers only: explanations (:mod:`audit.explain`) and statuses are later stages
(:mod:`audit.pipeline`), words are made by :mod:`audit.records`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from audit import notes as D
from audit import flops as F
from audit import formatting as fmt
from audit.catalog import Catalog, load_catalog, mix_memory_gb, mix_peak, tpu_cores_per_chip, unsized_systems
from audit.claims import Claims, texts_of_numbers
from audit.columns import distinct_codes, distinct_pairs, map_unique
from audit.config import Config
from audit.findings import SEVERITIES, SEVERITY_RANK, FindingsPart, findings_part, findings_table, object_array
from audit.quantities import (ADAPTER_METHODS, BY_NAME, CLUSTER_FROM_CHIP, GATED_MLP, INPUT_QUANTITIES,
                              PER_CHIP_SCOPE, RECOMPUTE_ALIASES)
from audit.rules import (FULL_RECOMPUTE, HFU_AS_MFU_FIT, RULES, RelationRule, ValueIsABound, relation_rules,
                         rules_of_stage, severity_codes_of_offset)
from audit.significance import log_half_widths, log_half_widths_of_numbers
from audit.state import (CATALOG, CLAIMED, DERIVED, NO_SOURCE, UNBOUNDED, Prefill, WorkState, effective_params,
                         refresh_effective, source_code, source_frame, text_codes, write_cells)
from audit.totals import total_rows
from audit.units import bound_of

#: Quantities the engine works with: the inputs, internal helpers and the derived-only ones.
WORK_COLUMNS: tuple[str, ...] = (*INPUT_QUANTITIES, "n_eff", "catalog_peak", "memory_per_chip", "flops_per_token",
                                 "recompute_factor", "tokens_per_param", "training_state_bytes", "min_chips_memory",
                                 "throughput_per_chip")

#: How a recomputation factor read from the claim's own recomputation mode is noted (without, with the
#: architecture's terms); C015 notes the factor it assumes otherwise.
RECOMPUTE_STATED_HOWS: tuple[str, str] = ("recompute", "recompute (architecture)")

#: How far the parameters an architecture's fields imply may be from the claim's N before the fields are taken
#: not to describe the model (:func:`architecture`): 15 %, beyond the rounding of a parameter count ("70B") and
#: the biases and norms the count leaves out; a model the fields do describe comes within 0.3 %.
ARCHITECTURE_PARAMS_FIT = 1.15

#: Quantities that only ever come from the catalog or the architecture (never solved for).
CATALOG_ONLY: frozenset[str] = frozenset({"catalog_peak", "memory_per_chip", "flops_per_token", "recompute_factor"})

#: The catalog's unit of a wafer-scale engine (Cerebras WSE-2, WSE-3). Its memory is on-wafer SRAM, and large
#: models train in weight-streaming mode, the weights held off the wafer (MemoryX) and streamed in layer by layer
#: (Cerebras-GPT, Dey et al. 2023, Sec. 2: 111M-13B on CS-2 systems): chips × memory bounds nothing, so M001 does
#: not apply.
WAFER_UNIT = "wafer"



@dataclass(frozen=True)
class Evaluation:
    """What the engine computed: work columns, hardware match, conventions and the findings (numbers only).
    ``source`` is categorical over :data:`audit.state.SOURCES` (its codes are the engine's own)."""

    claims: Claims
    config: Config
    q: pd.DataFrame
    source: pd.DataFrame
    how: pd.DataFrame
    hardware: pd.DataFrame
    architecture: pd.DataFrame
    findings: pd.DataFrame
    #: Which way each value may be off where it was written as a bound or derived from one (int8, the columns of
    #: ``q``: -1 at most, +1 at least, 2 either way, 0 exact); None when no claim writes a bound.
    bounds: pd.DataFrame | None = None


def resolve_hardware(claims: Claims, catalog: Catalog) -> pd.DataFrame:
    """Match each claim's hardware text against the catalog, once per distinct text."""
    info = claims.info

    def match(text: str | None) -> tuple[Any, float, tuple[str, ...] | None, tuple[str, ...], tuple[float, ...] | None]:
        """(accelerator, TPU slice cores, the ids of a mix, the parts of a list that are unknown, the chips of each
        accelerator when the text counts them: "256x A100 + 256x H100", "H100 (512)")."""
        if text is None or not str(text).strip():
            return None, np.nan, None, (), None
        hit = catalog.lookup(text)
        if hit is not None:
            counted = catalog.counted(text)  # "H100 (512)"
            return hit, np.nan, None, (), None if counted is None else (counted[0],)
        unsized = unsized_systems(text)  # "96 H100 nodes": the H100, and no chips (how many a node holds?)
        if unsized is not None and (hit := catalog.lookup(unsized[0])) is not None:
            return hit, np.nan, None, (), None
        sliced = catalog.tpu_slice(text)  # "TPU v3-256 pod", "2048 TPU v3 cores": TensorCores
        if sliced is not None:
            return sliced[0], sliced[1], None, (), None
        parts = catalog.resolve_mix(text)  # a cell listing several accelerators (or one, counted: "256x A100")
        if parts:
            unknown = tuple(part for part, accel in parts if accel is None)
            if unknown:
                return None, np.nan, None, unknown, None
            listed = catalog.mix_counts(text)
            counts: dict[str, float] = {}  # the chips of each accelerator, a part named twice added up
            for (_, accel), count in zip(parts, listed or [np.nan] * len(parts)):
                if accel is not None:
                    counts[accel.id] = counts.get(accel.id, 0.0) + count
            ids = tuple(counts)
            chips = None if listed is None else tuple(counts.values())
            if len(ids) == 1:
                return catalog.by_id(ids[0]), np.nan, None, (), chips
            return None, np.nan, ids, (), chips
        return None, np.nan, None, (), None

    # Each distinct text is matched once, and every column is then taken from the matches by the text's number:
    # never a Python call per row, and the column is factorized once.
    code, texts = distinct_codes(info["hardware"])
    hits = [match(t) for t in texts]
    accel_u = object_array([None if h[0] is None else h[0].id for h in hits])
    mix_u = object_array([h[2] for h in hits])
    chips_u = [h[4] for h in hits]
    # A mix is named by its parts (with their counts when the text gives them), an accelerator by its own name.
    name_u = object_array([(None if h[0] is None else h[0].name) if h[2] is None else " + ".join(
        (f"{fmt.count(c)} × " if c is not None else "") + catalog.by_id(i).name
        for i, c in zip(h[2], h[4] if h[4] is not None else [None] * len(h[2]))) for h in hits])

    def default_precision(key: tuple[Any, Any]) -> str | None:
        accel, ids = key if key is not None else (None, None)
        if accel is not None:
            return accel.default_precision
        usual = {catalog.by_id(i).default_precision for i in ids or ()}
        return usual.pop() if len(usual) == 1 else None  # a mix assumes only what all its parts share

    default_u = object_array([default_precision((h[0], h[2])) for h in hits])
    on_tpu_u = [isinstance(a, str) and a.startswith("tpu-") for a in accel_u]

    def peak_of(aid: str | None, ids: tuple[str, ...] | None, prec: str | None,
                chips: tuple[float, ...] | None) -> float:
        if aid is not None and prec is not None:
            value = catalog.by_id(aid).peak_flops(prec)
        elif ids is not None:  # a mix: the chip-weighted mean peak, else the peak its parts share, else unknown
            value = mix_peak([catalog.by_id(i) for i in ids], prec, None if chips is None else list(chips))
        else:
            value = None
        return np.nan if value is None else value

    # The precision, and the peak at it, once per distinct (hardware, stated precision) pair: a stated precision,
    # else the hardware's usual one (assumed). A TPU has no IEEE fp16 matrix units: its 16-bit format is bfloat16,
    # and "FP16" written for a TPU run (as Epoch AI's "Numerical format" often does) means that format (H006 says
    # so: ``precision_read``).
    stated_code, stated_u = distinct_codes(info["precision"])  # a missing precision is None
    stated_missing = pd.isna(object_array(stated_u))
    pair_code, hardware_of, stated_of = distinct_pairs(code, stated_code, len(stated_u))
    n_pairs = len(hardware_of)
    precision_u, read_u = np.empty(n_pairs, dtype=object), np.empty(n_pairs, dtype=object)
    assumed_u, peak_u = np.zeros(n_pairs, dtype=bool), np.zeros(n_pairs, dtype=float)
    for k, (h, s) in enumerate(zip(hardware_of.tolist(), stated_of.tolist())):
        precision = default_u[h] if stated_missing[s] else stated_u[s]
        assumed_u[k] = stated_missing[s] and pd.notna(default_u[h])
        if on_tpu_u[h] and isinstance(precision, str) and precision == "fp16":
            precision, read_u[k] = "bf16", "fp16"
        precision_u[k] = precision
        peak_u[k] = peak_of(accel_u[h], mix_u[h], precision, chips_u[h])

    def memory_of(aid: str | None, ids: tuple[str, ...] | None, chips: tuple[float, ...] | None) -> float:
        parts = [catalog.by_id(aid)] if aid is not None else [catalog.by_id(i) for i in ids or ()]
        if any(p.unit == WAFER_UNIT for p in parts):
            return np.nan  # weights stream from off-wafer memory: no memory bound to check (WAFER_UNIT)
        if aid is not None:
            return parts[0].memory_gb * 1e9
        value = mix_memory_gb(parts, None if chips is None else list(chips)) if ids is not None else None
        return np.nan if value is None else value * 1e9

    # What the hardware makes possible, for the causes that only some accelerators can have (audit/explain.py);
    # an unknown accelerator rules nothing out.
    def traits(key: tuple[str | None, tuple[str, ...] | None]) -> tuple[bool, bool, bool, bool]:
        aid, ids = key if key is not None else (None, None)
        parts = [aid] if aid is not None else list(ids or ())
        if not parts:
            return True, True, True, True
        found = [catalog.by_id(i) for i in parts]  # a mix has what any of its parts has
        return (any(a.sparse_headline for a in found), any("fp8" in a.peaks_tflops for a in found),
                any(a.unit in ("package", "gcd") for a in found), any(a.id.startswith("tpu-") for a in found))

    trait = np.array([traits((a, m)) for a, m in zip(accel_u, mix_u)], dtype=bool).reshape(len(hits), 4)

    def objects(values: np.ndarray) -> pd.Series:
        return pd.Series(values, index=info.index, dtype=object)

    # One frame of whole columns (each taken by the hardware's or the pair's number), made at once and not
    # consolidated (copy=False: each column stays its own block, no copy).
    return pd.DataFrame({
        "hardware_text": info["hardware"],
        "accelerator": objects(accel_u[code]),
        "accelerator_name": objects(name_u[code]),
        "mix": objects(mix_u[code]),
        "unknown_parts": objects(object_array([h[3] for h in hits])[code]),
        "precision": objects(precision_u[pair_code]),
        "precision_assumed": assumed_u[pair_code],
        "precision_read": objects(read_u[pair_code]),
        "catalog_peak": peak_u[pair_code],
        "memory_per_chip": np.array([memory_of(a, m, c) for a, m, c in zip(accel_u, mix_u, chips_u)],
                                    dtype=float)[code],
        # The chips the hardware text counts ("256x A100 + 256x H100": 512).
        "counted_chips": np.array([np.nan if c is None else sum(c) for c in chips_u], dtype=float)[code],
        "slice_cores": np.array([h[1] for h in hits], dtype=float)[code],
        "cores_per_chip": np.array([tpu_cores_per_chip(a) or np.nan for a in accel_u],
                                   dtype=float)[code],
        **{name: trait[code, i] for i, name in enumerate(("sparse_headline", "has_fp8", "multi_die", "tpu"))},
    }, index=info.index, copy=False)


def _per_text(values: np.ndarray, test: Callable[[str | None], Any], dtype: Any) -> np.ndarray:
    """``test`` of each cell's text (None when missing, else its ``str``), called once per distinct text."""
    codes, texts = text_codes(pd.Series(values, dtype=object))
    return object_array([test(t) for t in texts]).astype(dtype)[codes]


def evaluate(claims: Claims, config: Config | None = None, catalog: Catalog | None = None,
             used: Mapping[str, np.ndarray] | None = None,
             prefill: Mapping[str, Prefill] | None = None, outliers: bool = True) -> Evaluation:
    """Derive and check every claim.

    ``used`` marks relations already spent on some rows (e.g. C001 when ``estimate`` split the compute into N
    and D itself), so that they neither derive nor check there. ``prefill`` gives values the engine takes as
    derived before it starts (a multi-phase run's totals, ``estimate``'s split; see
    :class:`audit.state.Prefill`). ``outliers=False`` leaves out the rules of stage ``outlier`` (C009's search,
    the most costly step: every figure of a claim that disagrees is left out in turn and the relations solved
    again), for an audit whose output shows none of their findings (:func:`audit.pipeline.audit_claims`).
    """
    config = config or Config.default()
    catalog = catalog or load_catalog()
    n = len(claims)
    index = pd.RangeIndex(n)
    # Each work frame is one block over one array (rows × columns, column-major), filled before it is wrapped:
    # no frame is rebuilt or consolidated later, and a copy is one array copy.
    at = {c: j for j, c in enumerate(WORK_COLUMNS)}
    shape = (n, len(WORK_COLUMNS))
    q_a, precision_a = np.full(shape, np.nan, order="F"), np.zeros(shape, order="F")
    # Sources as codes (audit.state.SOURCES): an eighth of the memory of objects. numpy fills a new object array
    # with None (np.full would fill it a second time).
    source_a = np.full(shape, NO_SOURCE, dtype=np.int8, order="F")
    how_a = np.empty(shape, dtype=object, order="F")
    stated_of: dict[str, np.ndarray] = {}  # per input column, the rows whose claim states it
    for name in INPUT_QUANTITIES:
        values = claims.values[name].to_numpy(dtype=float)
        q_a[:, at[name]] = values
        stated = stated_of[name] = ~np.isnan(values)
        source_a[:, at[name]][stated] = CLAIMED  # into the column (a view): a tenth of the time of [stated, j]
        # Whole-number quantities (chips, layers) are exact: "1 GPU" is not 0.5-1.5 GPUs. A column no claim
        # states has no precision to read (most of the input quantities, in most batches).
        if not BY_NAME[name].integer and stated.any():
            if name in claims.numbers_written:  # number cells: the precision of each number's repr
                precision_a[:, at[name]] = np.where(stated, log_half_widths_of_numbers(claims.numbers_written[name]),
                                                    0.0)
            elif claims.has_text(name):
                precision_a[:, at[name]] = np.where(stated, log_half_widths(claims.text_of(name)), 0.0)

    hw = resolve_hardware(claims, catalog)
    which = np.where(hw["mix"].notna().to_numpy(), "mix", hw["accelerator"].to_numpy(dtype=object))
    for col in ("catalog_peak", "memory_per_chip"):
        vals = hw[col].to_numpy(dtype=float)
        q_a[:, at[col]] = vals
        found = ~np.isnan(vals)
        source_a[:, at[col]] = np.where(found, CATALOG, NO_SOURCE)
        how_a[:, at[col]] = np.where(found, which, None)
    q = pd.DataFrame(q_a, index=index, columns=list(WORK_COLUMNS), dtype=float, copy=False)
    source = pd.DataFrame(source_a, index=index, columns=list(WORK_COLUMNS), dtype=np.int8, copy=False)
    how = pd.DataFrame(how_a, index=index, columns=list(WORK_COLUMNS), dtype=object, copy=False)
    precision = pd.DataFrame(precision_a, index=index, columns=list(WORK_COLUMNS), dtype=float, copy=False)
    state = WorkState(claims=claims, config=config, catalog=catalog, q=q, source=source, how=how,
                      precision=precision, hardware=hw, architecture=pd.DataFrame(index=index),
                      prefill=dict(prefill or {}))
    for name, stated in stated_of.items():  # what the sources say, known without comparing them
        state.know_stated(name, stated)
    # A table's total row ("Total | 3,311,616 | | 539.00" under a model card's runs) is a sum, not a run: V018
    # checks it against the other rows, and what the other rules say of it is dropped below.
    totals = total_rows(claims)
    state.totals = totals if totals.any() else None
    # A TPU slice name without a claimed chip count gives the chips (cores / cores per chip); H003 checks a
    # claimed count against it.
    state.set_derived("chips", hw["slice_cores"].to_numpy() / hw["cores_per_chip"].to_numpy(), "H003")
    # A hardware text that counts its accelerators ("256x A100 + 256x H100") gives the chips; H004 checks a claimed
    # count against it.
    state.set_derived("chips", hw["counted_chips"].to_numpy(dtype=float), "H004")

    # A throughput stated per accelerator ("380 tokens/s/GPU", throughput_scope "per GPU") is the stated throughput
    # per chip (C021 ties it to the tokens and chip-hours: the chips cancel), and the cluster's is it times the
    # chips, which the other relations use.
    per_chip = _per_text(state.info("throughput_scope"),
                         lambda t: t is not None and PER_CHIP_SCOPE.search(t) is not None, bool)
    if per_chip.any():
        rows = per_chip & ~np.isnan(state.col("throughput_tokens_per_s"))
        state.restate(rows, "throughput_tokens_per_s", "throughput_per_chip")
        state.set_derived("throughput_tokens_per_s", state.col("throughput_per_chip") * state.col("chips"),
                          CLUSTER_FROM_CHIP, precision=precision["throughput_per_chip"].to_numpy())

    parts: list[FindingsPart | None] = [_run(rule, state) for rule in rules_of_stage("prefill")]
    for name, given in state.prefill.items():
        state.set_derived(name, given.filled(), given.note)

    # A mixture-of-experts claim that states no active count may state it in its parameter notes ("671B total
    # parameters with 37B activated for each token"): below the total, it is the active count (V012 says so).
    if "params_notes" in claims.info and np.isnan(state.col("active_params")).any():
        read = map_unique(pd.Series(state.info("params_notes"), dtype=object), D.active_params_of)
        read = read.to_numpy(dtype=float, na_value=np.nan)
        total = state.col("params")
        state.set_derived("active_params", np.where(np.isnan(total) | (read < total), read, np.nan),
                          D.ACTIVE_FROM_NOTES_HOW)

    # N in C = 6ND is the active parameter count when given (mixture-of-experts), else the total.
    active, total = state.col("active_params"), state.col("params")
    has_active = ~np.isnan(active)
    _fill(q, "n_eff", effective_params(active, total))
    _fill(source, "n_eff", np.where(has_active, source["active_params"], source["params"]))
    _fill(precision, "n_eff", np.where(has_active, precision["active_params"], precision["params"]))
    n_eff_how = _text_where(~np.isnan(total), "params")
    n_eff_how[has_active] = "active_params"
    _fill(how, "n_eff", n_eff_how)

    # A dataset's size counts datapoints: tokens for a language model (Epoch AI's "Training dataset size"),
    # images for a vision model, so only a language model's dataset size gives its tokens. Protein and nucleotide
    # language models (Epoch's task "Protein or nucleotide language model (pLM/nLM)", domain Biology) count
    # residues and bases, their tokens (measured on Epoch's file: 6 such rows within 2x of 6ND, the 3 outside it
    # judged inconsistent by hand, bench/labels).
    # The dataset's notes, when they give the size's unit, decide (audit.notes) for a sequence model (a language
    # model, or a protein or genome model of the Biology domain): tokens, words at 4/3 tokens each, or anything
    # else (examples, sentence pairs), which is not tokens even for a language model. A speech or vision model's
    # text tokens are not what its encoder processes (Whisper's row: 9.3B transcript words), so they stay unread.
    domain, task = (pd.Series(state.info(name), dtype=object) for name in ("domain", "task"))
    kinds = D.model_kinds(domain, task)
    language = kinds[0]
    size, size_precision = state.col("dataset_size"), precision["dataset_size"].to_numpy(dtype=float)
    unit = D.dataset_units(domain, task, pd.Series(state.info("dataset_notes"), dtype=object), size, kinds)
    state.set_derived("dataset_tokens", np.where(unit == D.TOKENS, size, np.nan), D.DATASET_TOKENS_HOW,
                      precision=size_precision)
    state.set_derived("dataset_tokens", np.where(unit == D.WORDS, size * D.TOKENS_PER_WORD, np.nan),
                      D.DATASET_WORDS_HOW, precision=size_precision + D.TOKENS_PER_WORD_SPREAD)
    state.set_derived("dataset_tokens", np.where(language & (unit == ""), size, np.nan), D.DATASET_DEFAULT_HOW,
                      precision=size_precision)
    # Notes that call the figure the tokens a training processed ("the model saw 26B tokens", "pre-trained on
    # 15.5T tokens") give D itself: without stated epochs, D = dataset_size (Minerva's row: 26B tokens seen).
    notes = pd.Series(state.info("dataset_notes"), dtype=object)
    if notes.notna().any():
        seen = (unit == D.TOKENS) | ((unit == "") & language)
        seen &= np.isnan(state.col("epochs")) & D.tokens_seen_of(notes, np.where(seen, size, np.nan))
        state.set_derived("tokens", np.where(seen, size, np.nan), D.TOKENS_SEEN_HOW, precision=size_precision)

    # A claim that states no chips, whose compute notes estimate the compute from the hardware, counts them there
    # ("* 1 GPU * 12 hours * 3600 ..."): on Epoch's file the count equals the stated "Hardware quantity" on all
    # 20 rows that state both. V008 says where it was read.
    if "compute_notes" in claims.info and np.isnan(state.col("chips")).any():
        counts = state.chip_counts()
        found = np.flatnonzero(pd.notna(counts))  # a loop over the claims whose notes count chips, not every claim
        if len(found):
            chips = np.full(len(counts), np.nan)
            chips[found] = [c.chips for c in counts[found]]
            state.set_derived("chips", chips, D.CHIPS_FROM_NOTES_HOW)

    arch = architecture(q, claims, config)
    state.architecture = arch
    for col in ("flops_per_token", "recompute_factor"):
        vals = arch[col].to_numpy(dtype=float)
        _fill(q, col, vals)
        _fill(source, col, np.where(~np.isnan(vals), DERIVED, NO_SOURCE))
        _fill(how, col, np.where(~np.isnan(vals), arch[f"{col}_how"].to_numpy(dtype=object), None))

    state.resolve = lambda rows, q1, s1, h1, p1: apply_relations(WorkState(
        claims=claims, config=config, catalog=catalog, q=q1, source=s1, how=h1, precision=p1, hardware=hw,
        architecture=arch, rows=rows, readings=state.readings))
    state.disagree = lambda rows, q1, s1, h1, p1: disagreements(WorkState(
        claims=claims, config=config, catalog=catalog, q=q1, source=s1, how=h1, precision=p1, hardware=hw,
        architecture=arch, rows=rows, readings=state.readings))
    # Rules that reread stated figures before any relation runs (and say so).
    parts.extend(_run(rule, state) for rule in rules_of_stage("prepare"))
    undo: list[_Undo] | None = [] if outliers else None  # kept for the outlier search alone
    state.preused = used
    state.relation_findings = apply_relations(state, used, undo)
    parts.extend(state.relation_findings)
    if undo is not None:
        state.initial_rows = lambda rows: _before_relations(state, undo, rows)
        parts.extend(_run(rule, state) for rule in rules_of_stage("outlier"))
        state.initial_rows = None  # later stages write into the frames: the undo log no longer describes them

    # Derived-only quantities.
    with np.errstate(divide="ignore", invalid="ignore"):
        state.set_derived("tokens_per_param", state.col("tokens") / state.col("params"), "tokens / params")
        state.set_derived("training_state_bytes", training_state(state), "M001",
                          precision=state.slack("params", "trainable_params"))
        state.set_derived("min_chips_memory", np.ceil(state.col("training_state_bytes") / state.col("memory_per_chip")),
                          "M001")

    parts.extend(_run(rule, state) for rule in rules_of_stage("check"))
    if state.totals is not None:
        parts = _total_rows_apart(state, parts)
    # Rules that say what the others found or did not (V014: nothing could be checked).
    state.findings_so_far = [p for p in parts if p is not None]
    parts.extend(_run(rule, state) for rule in rules_of_stage("summary"))
    state.findings_so_far = []
    # The closures refer to the state that holds them: without this cycle the work frames are freed as soon as the
    # audit returns, not at the garbage collector's next full pass (a stream of batches grew by a batch's work
    # frames each time until then: 850 MiB → 2.1 GiB over seven batches of 100,000 claims).
    state.resolve = state.disagree = None
    found = [p for p in parts if p is not None]
    findings = findings_table(found, order=_finding_order,
                              rule_categories=rule_dtype([p.rule for p in found]).categories)
    bounds = None if state.directions is None else pd.DataFrame(state.directions, index=q.index, columns=q.columns)
    return Evaluation(claims=_restated_texts(claims, state.restated), config=config, q=q,
                      source=source_frame(source), how=how, hardware=hw, architecture=arch, findings=findings,
                      bounds=bounds)


def _total_rows_apart(state: WorkState, parts: list[FindingsPart | None]) -> list[FindingsPart | None]:
    """The findings without those on total rows (:attr:`WorkState.totals`) of the rules that take a row for a
    training run (all but :attr:`audit.rules.Rule.of_the_row`: V018's sum is a total row's check), and the total
    rows' work columns without what the engine derived or looked up for them: their stated figures alone."""
    totals = state.totals
    assert totals is not None
    kept: list[FindingsPart | None] = []
    for part in parts:
        if part is None or RULES[part.rule].of_the_row:
            kept.append(part)
        else:
            kept.append(part.kept(~totals[part.row]))
    rows = np.flatnonzero(totals)
    for name in state.q.columns:
        gone = rows[state.source[name].to_numpy()[rows] != CLAIMED]
        if len(gone):
            write_cells(state.q, name, gone, np.nan)
            write_cells(state.source, name, gone, NO_SOURCE)
            write_cells(state.how, name, gone, None)
            write_cells(state.precision, name, gone, 0.0)
    return kept


def _restated_texts(claims: Claims, moves: list[tuple[np.ndarray, str, str]]) -> Claims:
    """The claims with the text of each figure read as another quantity (:meth:`WorkState.restate`: "163 TFLOP/s"
    read as hardware FLOPs) under that quantity, as it was written: it showed as a claimed figure with no text.
    A quantity without a text column (the throughput per chip, which no input names) keeps none."""
    moves = [m for m in moves if m[2] in claims.stated_text.columns and m[0].any()]
    if not moves:
        return claims
    text = claims.stated_text.copy()
    numbers = dict(claims.numbers_written)
    for rows, old, new in moves:
        if new in numbers:  # its texts are made from its numbers: made now, so that some can be replaced
            text[new] = texts_of_numbers(numbers.pop(new))
        cells = text[new].to_numpy(dtype=object).copy()
        cells[rows] = claims.text_of(old).to_numpy(dtype=object)[rows]
        text[new] = cells
    return dataclasses.replace(claims, stated_text=text, numbers_written=numbers)


#: The order of the rule families among a claim's findings of one severity (a code's letter; others last).
_FAMILY_ORDER = "VCUHMER"


def _finding_order(rows: np.ndarray, rule_code: np.ndarray, rule_names: list[str],
                   severity: np.ndarray) -> np.ndarray:
    """The order of the findings: by claim, and within a claim the rules that lead (the outlier) first, then the
    worst findings first, then by rule family (:data:`_FAMILY_ORDER`) and code. A stable sort on the keys row ↑,
    leads ↓, severity ↓ (a missing one last), rule ↑, as ``sort_values`` would make it, on one integer key holding
    the four. ``rule_code`` indexes ``rule_names``; ``severity`` holds positions in :data:`SEVERITIES` (-1:
    missing)."""
    names = np.asarray(rule_names, dtype=object)
    rank = np.empty(len(names), dtype=np.int64)  # each distinct rule's place in sorted order
    # By family first: the compute and hardware relations (C), then utilization (U), before the energy rules (E),
    # which mostly rest on the same chip-hours: of two errors, the one nearer the figure that is wrong comes first
    # (Llama 2 70B with GPU-days typed as GPU-hours: U001's 1,040 % MFU, not E006's carbon intensity).
    family = np.array([_FAMILY_ORDER.find(str(code)[:1]) % (len(_FAMILY_ORDER) + 1) for code in names.tolist()],
                      dtype=np.int64)
    rank[np.lexsort((names, family))] = np.arange(len(names))
    follows = ~np.isin(names, [code for code, rule in RULES.items() if rule.leads])  # not a leading rule
    codes = severity.astype(np.int64)
    worst_first = np.where(codes < 0, len(SEVERITIES), len(SEVERITIES) - 1 - codes)  # error first, missing last
    key = ((rows * 2 + follows[rule_code]) * (len(SEVERITIES) + 1) + worst_first) * max(len(names), 1) \
        + rank[rule_code]
    return np.argsort(key, kind="stable")


def rule_dtype(extra: Any = ()) -> "pd.CategoricalDtype":
    """The categories of a findings table's ``rule`` column: every registered rule code (and any in ``extra``),
    sorted, so that every batch of a stream has the same categories and order by rule is order by code."""
    return pd.CategoricalDtype(sorted(set(RULES) | {str(code) for code in extra}))


def _text_where(mask: np.ndarray, text: str) -> np.ndarray:
    """``np.where(mask, text, None)`` as objects, every cell referring to the one string: np.where makes a numpy
    string array of the text and a new Python string from it for every row (about 3 ms per 100,000 rows)."""
    out = np.empty(len(mask), dtype=object)
    out[mask] = text
    return out


def _fill(frame: pd.DataFrame, name: str, values: np.ndarray) -> None:
    """Set a whole work column in place (the frame keeps its one block: no copy, no consolidation later), written
    straight into the block where the frame lends it (:func:`audit.state.write_cells`; ``.iloc`` cost about 0.7 ms
    a call)."""
    write_cells(frame, name, slice(None), values)


def training_state(state: WorkState) -> np.ndarray:
    """Bytes of training state: ``bytes_per_param`` per trained parameter (16 with Adam in mixed precision);
    an adapter fine-tune (``finetune_method`` LoRA and the like, or a stated ``trainable_params``) holds only
    ``frozen_bytes_per_param`` (the bf16 weights) for each frozen parameter."""
    config = state.config
    params, trainable = state.col("params"), state.col("trainable_params")

    def kind(text: str | None) -> int:
        """Bit 1: an adapter method; bit 2: QLoRA (its frozen weights take fewer bytes)."""
        method = (text or "").strip().lower()
        return int(method in ADAPTER_METHODS) | (2 if method == "qlora" else 0)

    # Once per distinct text (a test of the object column per method name cost more than reading the texts).
    kinds = _per_text(state.info("finetune_method"), kind, np.int64)
    adapter = ((kinds & 1) != 0) | ~np.isnan(trainable)
    frozen = np.where((kinds & 2) != 0, config.frozen_bytes_per_param_qlora, config.frozen_bytes_per_param)
    trained = np.where(np.isnan(trainable), 0.0, trainable)
    return np.where(adapter, frozen * (params - trained) + config.bytes_per_param * trained,
                    config.bytes_per_param * params)


def _run(rule: type, state: WorkState) -> FindingsPart | None:
    """A rule's findings, or None when it has none."""
    part = rule.evaluate(state)
    return part if part is not None and len(part) else None


#: One prime per work column. The shadow copy of a claim multiplies each known value by its column's prime;
#: logs of distinct primes are linearly independent over the integers (unique factorization), so a check whose
#: residual is the same in both copies is an identity of the derivations that fed it, not a test of the claim.
_PRIMES = tuple(p for p in range(2, 400) if all(p % d for d in range(2, int(p ** 0.5) + 1)))


def shadow_of(q: pd.DataFrame, how: pd.DataFrame) -> pd.DataFrame:
    """The shadow copy: each independent known value times its column's prime; dependent ones follow."""
    primes = np.array(_PRIMES[: len(q.columns)], dtype=float)
    shadow = q * primes[None, :]
    refresh_effective(shadow, how)
    return shadow


def _shadow_array(values: np.ndarray, six: np.ndarray, at: Mapping[str, int], kept: list[int],
                  cluster_from_chip: np.ndarray | None = None) -> np.ndarray:
    """:func:`shadow_of` on the work values (rows × columns, ``at``: each column's position; ``six``: the rows
    whose FLOPs per token are 6N; ``cluster_from_chip``: the rows whose cluster throughput is their throughput per
    chip times the chips, :data:`CLUSTER_FROM_CHIP`), holding only the columns ``kept`` (positions; the relations
    read no other), in that order. A value made from others before the relations is made so in the shadow too:
    as an independent figure of its own, every cycle through it would look like a check of something stated."""
    shadow = np.empty((len(values), len(kept)), order="F")
    for s, j in enumerate(kept):
        shadow[:, s] = values[:, j] * _PRIMES[j]
    where = {j: s for s, j in enumerate(kept)}
    n_eff, fpt = where[at["n_eff"]], where[at["flops_per_token"]]
    shadow[:, n_eff] = effective_params(shadow[:, where[at["active_params"]]], shadow[:, where[at["params"]]])
    shadow[six, fpt] = 6.0 * shadow[six, n_eff]
    cluster, per_chip, chips = (where.get(at[c]) for c in ("throughput_tokens_per_s", "throughput_per_chip", "chips"))
    if cluster_from_chip is not None and cluster_from_chip.any() and None not in (cluster, per_chip, chips):
        shadow[cluster_from_chip, cluster] = shadow[cluster_from_chip, per_chip] * shadow[cluster_from_chip, chips]
    return shadow


def _floats(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """A work frame's columns ``names`` as one writable float array (rows × columns, column-major: the relations
    read and write whole columns). It may be the frame's own block (a frame of one block gives it without a copy):
    the relations write into it only values they also write back into the frame."""
    values = frame.to_numpy(dtype=float) if list(frame.columns) == names else frame[names].to_numpy(dtype=float)
    if not values.flags.writeable or not values.flags.f_contiguous:
        values = np.array(values, dtype=float, order="F", copy=True)
    return values


def _codes(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """A work frame of source codes (:data:`audit.state.SOURCES`), columns ``names``, as one writable int8 array
    (rows × columns, column-major). It may be the frame's own block: the relations write into it only what they
    also write back into the frame."""
    values = frame.to_numpy(dtype=np.int8) if list(frame.columns) == names else frame[names].to_numpy(dtype=np.int8)
    if not values.flags.writeable or not values.flags.f_contiguous:
        values = np.array(values, dtype=np.int8, order="F", copy=True)
    return values


def _objects(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """A work frame of objects (notes), columns ``names``, as one writable array (rows × columns). It may
    be the frame's own block: the relations write into it only what they also write back into the frame."""
    values = frame.to_numpy(dtype=object) if list(frame.columns) == names else frame[names].to_numpy(dtype=object)
    if not values.flags.writeable:
        values = np.array(values, dtype=object, order="F", copy=True)
    return values


def _gather(values: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``values[rows][:, cols]`` as a new row-major array, gathering whichever way is cheaper (many rows of a
    column-major array: column by column into the new array)."""
    if 4 * len(rows) >= len(values):
        if values.flags.f_contiguous:
            out = np.empty((len(rows), len(cols)), dtype=values.dtype)
            for j, col in enumerate(np.asarray(cols).tolist()):
                out[:, j] = values[rows, col]
            return out
        return values[:, cols][rows]
    return values[rows[:, None], cols]


@dataclass(frozen=True)
class _RelationPlan:
    """What the relation loop needs of one relation rule, computed once per call."""

    rule: type[RelationRule]
    cols: np.ndarray  # positions of the relation's quantities in the work arrays
    exps: np.ndarray
    derivable: np.ndarray  # per quantity: may be solved for (not catalog-only)
    moe: bool  # holds N or F per token (a mixture-of-experts claim without its active count is excluded)
    n_eff_at: int  # position of n_eff among the relation's quantities (-1: none)
    applies: np.ndarray | None  # the rows it may derive or check on (None: every row)
    upper: np.ndarray | None  # the rows on which it only bounds from above (RelationRule.upper_bound)
    lower: np.ndarray | None  # ... from below (RelationRule.lower_bound)
    assumed: np.ndarray | None  # the utilization its left-hand side was estimated at (RelationRule.assumed_utilization)


def apply_relations(state: WorkState, preused: Mapping[str, np.ndarray] | None = None,
                    undo: list[_Undo] | None = None) -> list[FindingsPart]:
    """Derive and check with every relation until no more can be derived (a fixed point): the findings of the
    checks, one part per relation and pass (see :func:`_relations`). ``undo``, when given, receives what every
    cell the relations wrote held before (:func:`_before_relations`)."""
    parts: list[FindingsPart] = []

    def collect(rule: type[RelationRule], rows: np.ndarray, check: _Check) -> None:
        parts.append(check.findings(rule, rows))

    state.directions = _relations(state, preused, collect, undo)
    return parts


@dataclass(frozen=True)
class _Undo:
    """What the relations overwrote in one column: the rows (positions) and the cells' former value, source,
    note and precision."""

    rows: np.ndarray
    column: str
    value: np.ndarray
    source: np.ndarray
    how: np.ndarray
    precision: np.ndarray


def _before_relations(state: WorkState, undo: list[_Undo], rows: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The work columns of the claims at ``rows`` (distinct positions) as they were before the relations ran:
    the frames as they are, with the cells the relations wrote (``undo``) given back their former contents.
    Column-major arrays, rows × the columns of ``state.q``."""
    names = [str(c) for c in state.q.columns]
    at = {c: j for j, c in enumerate(names)}
    out = []
    for frame, dtype in ((state.q, float), (state.source, np.int8), (state.how, object), (state.precision, float)):
        values = frame.to_numpy(dtype=dtype) if list(frame.columns) == names else frame[names].to_numpy(dtype=dtype)
        taken = np.empty((len(rows), len(names)), dtype=dtype, order="F")
        for j in range(len(names)):  # column by column: no row-major copy of the whole frame
            taken[:, j] = values[rows, j]
        out.append(taken)
    q0, s0, h0, p0 = out
    local = np.full(len(state.q), -1, dtype=np.intp)
    local[rows] = np.arange(len(rows))
    for entry in reversed(undo):  # the earliest write holds the value from before the relations
        where = local[entry.rows]
        hit = where >= 0
        j = at[entry.column]
        q0[where[hit], j] = entry.value[hit]
        s0[where[hit], j] = entry.source[hit]
        h0[where[hit], j] = entry.how[hit]
        p0[where[hit], j] = entry.precision[hit]
    return q0, s0, h0, p0


def disagreements(state: WorkState) -> np.ndarray:
    """Derive and check like :func:`apply_relations`, saying only which claims some relation disagrees on (a
    check worse than ``ok``), without making findings: the outlier search asks this of many variants. A claim
    is left alone once a check disagrees on it (the answer for it is known): its work columns then hold what was
    derived until then, not the fixed point (the outlier search reads them only for claims nothing disagrees on)."""
    bad = np.zeros(len(state.q), dtype=bool)

    def collect(rule: type[RelationRule], rows: np.ndarray, check: _Check) -> None:
        bad[rows[check.verdicts(rule, rows)[0] != SEVERITY_RANK["ok"]]] = True

    _relations(state, None, collect, done=bad)
    return bad


def stated_directions(state: WorkState, names: list[str]) -> np.ndarray | None:
    """Which stated figures the claims write as a bound (V011: "up to 112", "over 2T tokens", "< 400K GPU-hours"),
    rows × ``names``: -1 where the value is at most the figure written, +1 at least, 0 exact; None when no figure
    of these claims is a bound (most batches: nothing more to do). Read from the cells V011 found, a few."""
    readings = state.claims.readings
    if not len(readings):
        return None
    said = ValueIsABound.cells(readings)
    if not len(said):
        return None
    at = {c: j for j, c in enumerate(names)}
    out = np.zeros((len(state.claims), len(names)), dtype=np.int8, order="F")
    for name, group in said.groupby("field", sort=False):
        if name not in at or not state.claims.has_text(str(name)):
            continue
        rows = group["row"].to_numpy(dtype=np.intp)
        kinds = [bound_of(t) for t in state.claims.text_of(str(name)).to_numpy(dtype=object)[rows]]
        out[rows, at[str(name)]] = [-1 if k == "upper" else 1 if k == "lower" else 0 for k in kinds]
    if state.rows is not None:
        out = out[state.rows]
    for name, j in at.items():  # a figure no longer stated (the outlier search left it out) bounds nothing
        if out[:, j].any():
            out[~state.stated(name), j] = 0
    return out if out.any() else None


def combined_directions(directions: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Per row, which way a sum Σ s_i · ln x_i may be off from the one the figures written give, when each x_i may
    be off its way (``directions``, rows × terms: -1 lower, +1 higher, 0 exact, :data:`UNBOUNDED` either) and
    ``signs`` (rows × terms, or terms) gives each term's sign: -1, +1, 0, or UNBOUNDED (terms of both ways)."""
    free = (directions == UNBOUNDED).any(axis=1)
    ways = np.where(directions == UNBOUNDED, 0, directions) * np.sign(signs)
    up, down = (ways > 0).any(axis=1), (ways < 0).any(axis=1)
    out = np.where(up, 1, np.where(down, -1, 0)).astype(np.int8)
    out[free | (up & down)] = UNBOUNDED
    return out


def _relations(state: WorkState, preused: Mapping[str, np.ndarray] | None,
               collect: Callable[[type[RelationRule], np.ndarray, "_Check"], None],
               undo: list[_Undo] | None = None, done: np.ndarray | None = None) -> np.ndarray | None:
    """Derive and check with every relation until no more can be derived (a fixed point); ``collect`` receives
    each relation's checked rows (positions in the state's frames) as they are found, ``undo`` (when given) what
    each cell held before the relations wrote into it. ``done``, when given, marks rows (``collect`` may mark
    more as it goes) that no relation looks at any more: they keep what was derived and checked until then.

    A shadow copy (:func:`shadow_of`) is derived in lockstep; a check that comes out the same in both copies
    follows from the derivations alone (a cycle of relations), so it is not recorded as a finding.

    The values, precisions, sources and notes are taken from the state's frames once, as column-major arrays (a
    frame of one block lends its own), and the columns the relations wrote go back into the frames at the end.
    Each relation's masks (:meth:`RelationRule.applies`, ``upper_bound``, ``lower_bound``) are read once, before
    any derivation: they depend on the claims' text, the expert and active parameter counts and how F per token
    was found, none of which a relation writes (``tests/test_engine_speed.py`` holds them to it). Each pass looks
    only at the rows a relation has not been used on yet and that changed since it last looked at them. No step
    depends on another row: a claim's result is the same whatever claims it is solved with (the outlier search
    stacks many variants of a claim in one call).

    Returns which way each value may be off (rows × the columns of ``state.q``: :func:`stated_directions`, and
    for a derived value :func:`combined_directions` of its inputs'), or None when no claim writes a bound.
    """
    config = state.config
    rules = relation_rules()
    names = [str(c) for c in state.q.columns]
    at = {c: j for j, c in enumerate(names)}
    n = len(state.q)
    q = _floats(state.q, names)
    precision = _floats(state.precision, names)
    view = dataclasses.replace(
        state, q=pd.DataFrame(q, index=state.q.index, columns=names, dtype=float, copy=False),
        precision=pd.DataFrame(precision, index=state.q.index, columns=names, dtype=float, copy=False))
    source = _codes(state.source, names)
    how = _objects(state.how, names)
    # Figures written as bounds, and those derived from them: which way each value may be off (stated_directions).
    direction = stated_directions(state, names)
    # F per token from an architecture (attention counted): set before the relations, which never write it.
    architecture_f = np.isin(how[:, at["flops_per_token"]], list(F.ARCHITECTURE_CONVENTIONS))
    # A recomputation factor from the claim's own recomputation mode (not one C015 assumed).
    recompute_stated = np.isin(how[:, at["recompute_factor"]], list(RECOMPUTE_STATED_HOWS))
    # The cells a claim states: the state's masks hold for the whole loop, since the relations write only cells
    # with no value, which no claim states, and never write CLAIMED (RelationRule.derived_source).
    claimed = view.stated
    written: set[int] = set()
    # Which columns hold a value on some row: a relation with two of them empty everywhere can neither derive
    # nor check anywhere (most batches state none of the energy, cost or hardware-FLOPs figures).
    has_value = ~np.isnan(q).all(axis=0)
    # Signatures of the checks recorded so far, per row: |shadow residual - residual| identifies the
    # combination of independent figures a check tests (up to sign). A later check with the same signature
    # tests the same thing by another path and would only repeat a finding.
    signatures = np.full((n, 2), np.nan)  # widened as checks are recorded (at most one per relation)
    recorded = np.zeros(n, dtype=int)
    used = {rule.code: np.zeros(n, dtype=bool) for rule in rules}
    # Per row, how many times its values were derived into; per relation, the row's count when the relation last
    # looked at it without effect (-1: never).
    version = np.zeros(n, dtype=np.int32)
    seen = {rule.code: np.full(n, -1, dtype=np.int32) for rule in rules}
    for code, mask in (preused or {}).items():
        if code in used:
            used[code] = used[code] | np.asarray(mask, dtype=bool)
    # A mixture-of-experts claim without its active count: its N (the total) is not the N of 6N per token, so
    # only the relation that can hold it as a bound (C001, RelationRule.upper_bound) uses it.
    sparse_unknown = view.total_only()
    any_sparse = bool(sparse_unknown.any())
    plans = []
    for rule in rules:
        moe = bool({"n_eff", "flops_per_token"} & set(rule.relation.quantities))
        applies, upper, lower = rule.applies(view), rule.upper_bound(view), rule.lower_bound(view)
        if any_sparse and moe and upper is None:
            applies = ~sparse_unknown if applies is None else applies & ~sparse_unknown
        plans.append(_RelationPlan(
            rule=rule, cols=np.array([at[c] for c in rule.relation.quantities], dtype=np.intp),
            exps=rule.relation.powers, derivable=np.array([c not in CATALOG_ONLY for c in rule.relation.quantities]),
            moe=moe, n_eff_at=list(rule.relation.quantities).index("n_eff") if "n_eff" in rule.relation.quantities
            else -1, applies=None if applies is None else np.asarray(applies, dtype=bool),
            upper=None if upper is None else np.asarray(upper, dtype=bool),
            lower=None if lower is None else np.asarray(lower, dtype=bool),
            assumed=_optional_floats(rule.assumed_utilization(view))))
    params_at, n_eff_col = at["params"], at["n_eff"]
    # The shadow copy holds only the columns the relations read or write (shadow_at: a column's place in it).
    kept = sorted({int(j) for plan in plans for j in plan.cols}
                  | {at[c] for c in ("params", "n_eff", "active_params", "flops_per_token")})
    shadow_at = np.full(len(names), -1, dtype=np.intp)
    shadow_at[kept] = np.arange(len(kept))
    shadow = _shadow_array(q, how[:, at["flops_per_token"]] == "6N", at, kept,
                           how[:, at["throughput_tokens_per_s"]] == CLUSTER_FROM_CHIP)

    def remember(sel: np.ndarray, col: int) -> None:
        """Keep what the cells at ``sel`` of column ``col`` hold, before the relations write into them."""
        if undo is not None:
            undo.append(_Undo(rows=sel.copy(), column=names[col], value=q[sel, col].copy(), source=source[sel, col],
                              how=how[sel, col], precision=precision[sel, col].copy()))

    def mark(sel: np.ndarray, col: int, src: str, note: str) -> None:
        """Record where a derived value came from."""
        source[sel, col] = source_code(src)
        how[sel, col] = note
        written.add(col)
        has_value[col] = True

    def tighten(rows: np.ndarray, cols: np.ndarray, exps: np.ndarray) -> None:
        """Narrow the precision of derived values by a relation that follows from their derivations alone on
        ``rows`` (a check the shadow copy cannot tell apart): each derived member is then exactly the relation's
        solution for it, so its half-width is at most Σ |e_i/e_t| · λ_i over the others. Each derivation adds up
        the half-widths of its inputs, so a figure that reaches a value by two paths is counted twice (tokens D
        through C = 6·N·D and through chip-hours = D / throughput, where D cancels from the MFU); the other path
        of a cycle counts it once, or not at all."""
        widths = _gather(precision, rows, cols)
        weights = np.abs(exps)
        total = widths @ weights
        for j, col in enumerate(cols):
            bound = (total - weights[j] * widths[:, j]) / weights[j]
            better = (source[rows, col] == DERIVED) & (bound < widths[:, j] * (1 - 1e-9))
            if better.any():
                sel = rows[better]
                remember(sel, int(col))
                precision[sel, col] = bound[better]
                written.add(int(col))

    for _ in range(len(rules) + 1):
        changed = False
        for plan in plans:
            rule, cols, exps, upper, lower = plan.rule, plan.cols, plan.exps, plan.upper, plan.lower
            free = ~used[rule.code] if plan.applies is None else ~used[rule.code] & plan.applies
            # A row this relation looked at without effect is looked at again only once a value of the row was
            # derived since: nothing else decides whether the relation derives or checks (its masks are fixed).
            free &= seen[rule.code] != version
            if done is not None:
                free &= ~done
            candidates = np.flatnonzero(free)
            if len(candidates) == 0:
                continue
            if int(has_value[cols].sum()) < len(cols) - 1:  # two unknowns or more on every row: looked at, idle
                seen[rule.code][candidates] = version[candidates]
                continue
            values = _gather(q, candidates, cols)
            unknown = np.isnan(values)
            known = ~unknown
            unknown_count = sum(unknown[:, j].view(np.int8) for j in range(len(cols)))  # faster than .sum(axis=1)

            # Derive: exactly one unknown, and it is a quantity that can be solved for. A relation that only
            # bounds a row (RelationRule.upper_bound / lower_bound) checks it but derives nothing from it.
            target = np.argmin(known, axis=1)
            derive = (unknown_count == 1) & plan.derivable[target]
            for bound in (upper, lower):
                if bound is not None:
                    derive &= ~bound[candidates]
            if derive.any():
                rows = candidates[derive]
                t = target[derive]
                solved = rule.relation.solve(values[derive], t)
                solved_shadow = rule.relation.solve(_gather(shadow, rows, shadow_at[cols]), t)
                # Precision in log space: x_t = Π x_i^(-e_i/e_t), so its half-width is Σ |e_i/e_t| · λ_i.
                weights = np.abs(exps[None, :] / exps[t][:, None])
                weights[np.arange(len(rows)), t] = 0.0
                solved_precision = (weights * _gather(precision, rows, cols)).sum(axis=1)
                # x_t = Π x_i^(-e_i/e_t): a bound among the x_i bounds x_t, turned by the sign of -e_i/e_t.
                solved_direction = None if direction is None else combined_directions(
                    _gather(direction, rows, cols), -exps[None, :] * exps[t][:, None])
                ok = np.isfinite(solved) & (solved > 0)
                for j, col in enumerate(cols):
                    this = (t == j) & ok
                    sel = rows[this]
                    if len(sel) == 0:
                        continue
                    remember(sel, int(col))
                    q[sel, col] = solved[this]
                    shadow[sel, shadow_at[col]] = solved_shadow[this]
                    precision[sel, col] = solved_precision[this]
                    if solved_direction is not None:
                        assert direction is not None
                        direction[sel, col] = solved_direction[this]
                    mark(sel, int(col), rule.derived_source, rule.code)
                    version[sel] += 1
                    if j == plan.n_eff_at:  # a solved N fills the parameter count (there was neither a total
                        remember(sel, params_at)  # nor an active count)
                        q[sel, params_at] = q[sel, n_eff_col]
                        shadow[sel, shadow_at[params_at]] = shadow[sel, shadow_at[n_eff_col]]
                        precision[sel, params_at] = precision[sel, n_eff_col]
                        if direction is not None:
                            direction[sel, params_at] = direction[sel, n_eff_col]
                        mark(sel, params_at, "derived", rule.code)
                used[rule.code][rows] = True
                changed = True

            # Check: everything known.
            check = unknown_count == 0
            if check.any():
                rows = candidates[check]
                residual = np.log(values[check]) @ exps
                residual_shadow = np.log(_gather(shadow, rows, shadow_at[cols])) @ exps
                signature = np.abs(residual_shadow - residual)
                informative = signature > 1e-7
                if not informative.all():
                    tighten(rows[~informative], cols, exps)
                width = int(recorded[rows].max())  # the columns past it hold no signature (NaN) on these rows
                if width:
                    earlier = signatures[rows, :width]
                    repeated = (np.abs(earlier - signature[:, None]) <= 1e-7 * np.maximum(1, signature[:, None])
                                ).any(axis=1)
                    informative &= ~repeated
                used[rule.code][rows] = True
                rows, signature = rows[informative], signature[informative]
                if len(rows) and int(recorded[rows].max()) >= signatures.shape[1]:
                    signatures = np.hstack([signatures, np.full((n, signatures.shape[1]), np.nan)])
                signatures[rows, recorded[rows]] = signature
                recorded[rows] += 1
                if len(rows):
                    bounded = None
                    if direction is not None:  # Σ e_i · ln x_i may be off the way its bounded terms are
                        bounded = np.zeros(n, dtype=np.int8)
                        bounded[rows] = combined_directions(_gather(direction, rows, cols), exps)
                    collect(rule, rows, _Check(q, precision, at, claimed, config, upper, lower, plan.assumed,
                                               architecture_f, bounded, recompute_stated))
            idle = candidates[~used[rule.code][candidates]]  # looked at, neither derived nor checked
            seen[rule.code][idle] = version[idle]
        if not changed:
            break
    if written:
        # Everything back into the state's frames, in place (callers hold them), only the columns the relations
        # wrote.
        changed_at = sorted(written)
        for frame, values in ((state.q, q), (state.precision, precision), (state.source, source),
                              (state.how, how)):
            if _lent_by(frame, values):  # the relations wrote into the frame itself
                continue
            frame.iloc[:, [frame.columns.get_loc(names[j]) for j in changed_at]] = values[:, changed_at]
    # Which way each value may be off (figures written as bounds and those derived from them), for the checks and
    # words that come after the relations; None when no claim writes a bound.
    return direction


def _lent_by(frame: pd.DataFrame, values: np.ndarray) -> bool:
    """Whether ``values`` (from :func:`_floats`, :func:`_codes` or :func:`_objects`) is the frame's own block, lent
    without a copy (a copy shares no memory with the frame's columns)."""
    return values.shape == frame.shape and len(frame.columns) > 0 and \
        np.may_share_memory(values, frame.iloc[:, 0].to_numpy())


@dataclass(frozen=True)
class _Check:
    """What judging a relation's check needs: the work arrays (rows × columns: values and precisions), each
    column's position, the cells of a column the claim states, the configuration and the relation's bounds (on
    every row of the arrays)."""

    q: np.ndarray
    precision: np.ndarray
    at: Mapping[str, int]
    is_claimed: Callable[[str], np.ndarray]
    config: Config
    upper: np.ndarray | None
    lower: np.ndarray | None
    assumed: np.ndarray | None = None
    #: Rows whose F per token comes from an architecture (attention counted), on every row of the arrays.
    architecture_f: np.ndarray | None = None
    #: Which way the relation's left-hand side may be off, where it holds a figure written as a bound or derived
    #: from one (combined_directions), on every row of the arrays; None: no such figure.
    bounded: np.ndarray | None = None
    #: Rows whose recomputation factor comes from the claim's own recomputation mode, on every row of the arrays.
    recompute_stated: np.ndarray | None = None

    def findings(self, rule: type[RelationRule], rows: np.ndarray) -> FindingsPart:
        """One finding per row: the subject quantity (the first the claim states), its value and the expected
        one."""
        severity, subject_names, claimed, expected, detail = self.verdicts(rule, rows)
        return findings_part(rows, rule.code, severity, subject_names, claimed, expected,
                              detail=detail)

    def verdicts(self, rule: type[RelationRule], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                             np.ndarray, np.ndarray | None]:
        """Severity (a position in :data:`SEVERITIES`), subject, claimed and expected value and detail (None when
        no row has one) of each row."""
        return _verdicts(rule, rows, self.q, self.precision, self.at, self.is_claimed, self.config,
                         None if self.upper is None else self.upper[rows],
                         None if self.lower is None else self.lower[rows],
                         None if self.assumed is None else self.assumed[rows],
                         None if self.architecture_f is None else self.architecture_f[rows],
                         None if self.bounded is None else self.bounded[rows],
                         None if self.recompute_stated is None else self.recompute_stated[rows])


def _verdicts(rule: type[RelationRule], rows: np.ndarray, q: np.ndarray, precision: np.ndarray,
              at: Mapping[str, int], is_claimed: Callable[[str], np.ndarray], config: Config,
              upper: np.ndarray | None, lower: np.ndarray | None, assumed: np.ndarray | None = None,
              architecture_f: np.ndarray | None = None, bounded: np.ndarray | None = None,
              recompute_stated: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """:meth:`_Check.verdicts` (``upper``, ``lower``, ``assumed`` and ``architecture_f`` on ``rows`` only)."""
    cols = list(rule.relation.quantities)
    idx = [at[c] for c in cols]
    claimed_mask = np.column_stack([is_claimed(s)[rows] for s in rule.subjects])
    pick = np.where(claimed_mask.any(axis=1), np.argmax(claimed_mask, axis=1), 0)
    subject_names = np.array(rule.subjects, dtype=object)[pick]
    subject_idx = np.array([cols.index(s) for s in rule.subjects])[pick]
    # Column-major, as a frame's values come out (the arithmetic below runs on the same layout as it always did).
    values = np.asfortranarray(_gather(q, rows, np.asarray(idx, dtype=np.intp)))
    expected = rule.relation.solve(values, subject_idx)
    claimed = values[np.arange(len(rows)), subject_idx]
    ok_tol, warn_tol = config.tolerance(rule.code)
    # The residual Σ e_i · ln x_i is uncertain by Σ |e_i| · λ_i: the precision of every figure compared.
    slack = np.asfortranarray(_gather(precision, rows, np.asarray(idx, dtype=np.intp))) @ np.abs(rule.relation.powers)
    ratio = claimed / expected
    side = None
    if rule.goodput_quantity and rule.code in config.goodput:
        # A stated steady-state figure above the end-to-end one differs by goodput, not by a mistake.
        ok_g, warn_g = config.goodput[rule.code]
        side = (subject_names == rule.goodput_quantity) & (ratio > 1)
        for name in rule.goodput_unless_stated:
            side &= ~is_claimed(name)[rows]
        if rule.goodput_unless_architecture and architecture_f is not None:
            # A stated rate is steady-state as the MFU is: the room above it is the attention FLOPs that 6N leaves
            # out, none when F per token comes from an architecture (which counts them).
            rate = np.zeros(len(rows), dtype=bool)
            for name in rule.goodput_unless_architecture:
                rate |= is_claimed(name)[rows]
            side &= ~(rate & architecture_f)

    with np.errstate(divide="ignore", invalid="ignore"):
        off = np.abs(np.log(ratio))  # once for the two or four judgements below

    def judge(allowance: np.ndarray | float) -> np.ndarray:
        found = severity_codes_of_offset(off, ok_tol, warn_tol, allowance)
        return found if side is None else np.where(side, severity_codes_of_offset(off, ok_g, warn_g, allowance),
                                                   found)

    ok = SEVERITY_RANK["ok"]
    severity = judge(slack)
    if side is not None and recompute_stated is not None and (side & recompute_stated).any():
        # Accepted only as goodput, at the claim's own recomputation factor r (full: 4/3): its "MFU" likely
        # counts the recomputed forward pass, an HFU quoted as MFU (the slip the goodput allowance would hide;
        # a team's run sheet: MFU 50.7 % with full recomputation, 38.0 % implied, 1.33x). A warning, since a
        # goodput of 1/r explains it too, which its words say.
        r = q[rows, at["recompute_factor"]]
        with np.errstate(divide="ignore", invalid="ignore"):
            to_r = np.abs(np.log(ratio / r))
        as_hfu = side & recompute_stated & (r > 1) & (severity == ok) & (off > math.log(ok_tol) + slack) & \
            (to_r <= math.log(HFU_AS_MFU_FIT) + slack)
        if as_hfu.any():
            severity = np.where(as_hfu, SEVERITY_RANK["warning"], severity)
            hfu_as_mfu = as_hfu
        else:
            hfu_as_mfu = None
    else:
        hfu_as_mfu = None
    # Verdicts that only the precision of the stated figures made better ("1T" tokens is 0.5T-1.5T): the message
    # says so (detail ``within-precision``), so that an "agrees" at a ratio beyond the tolerance is explained.
    rounding = (slack > 0) & (severity != judge(0.0))
    has_detail = bool(rounding.any())
    detail = _text_where(rounding, "within-precision")
    if hfu_as_mfu is not None:
        detail = np.where(hfu_as_mfu, "hfu-as-mfu", detail)
        has_detail = True
    with np.errstate(divide="ignore", invalid="ignore"):
        lhs = np.log(values) @ rule.relation.powers - np.log(rule.relation.constant)
    if rule.weighs_compute_reading:
        # The stated compute read as hardware FLOPs (÷ r): info when that fits within C008's tolerance and the
        # model-FLOPs reading did not (BloombergGPT's row: MFU 24.6 % stated, 32.3 % implied, 24.2 % as hardware).
        r = q[rows, at["recompute_factor"]]
        r = np.where(r > 1, r, FULL_RECOMPUTE)
        stated_c = is_claimed("compute_flops")[rows]
        fits = stated_c & (severity != ok) & (lhs > 0) & \
            (np.abs(lhs - np.log(r)) <= math.log(config.tolerance("C008")[0]) + slack)
        severity = np.where(fits, SEVERITY_RANK["info"], severity)
        detail = np.where(fits, "hardware-compute", detail)
        has_detail = has_detail or bool(fits.any())
    # Only a bound on these rows (RelationRule.upper_bound / lower_bound): a left-hand side on the bound's side
    # of the right-hand side is consistent, however far.
    for bound, side, name in ((upper, lhs < 0, "upper-bound"), (lower, lhs > 0, "lower-bound")):
        if bound is not None and bound.any():
            within = bound & side
            severity = np.where(within, ok, severity)
            detail = np.where(within, name, detail)
            has_detail = has_detail or bool(within.any())
    if upper is not None and upper.any():
        # At or above the bound, within the tolerance: a mixture-of-experts model's compute as if every parameter
        # were active per token, which a sparse model's never is (its active share is a fraction): a figure
        # behind the compute counts the total parameters (an MFU or hours worked out with them).
        reached = upper & (lhs >= 0) & (severity < SEVERITY_RANK["warning"])
        if reached.any():
            severity = np.where(reached, SEVERITY_RANK["warning"], severity)
            detail = np.where(reached, "upper-bound-reached", detail)
            has_detail = True
    if bounded is not None and bounded.any():
        # A figure written as a bound ("up to 112 GPUs"), or derived from one: the true left-hand side lies on one
        # side of the one written (+1: above it), so a left-hand side below zero there is consistent, however far
        # (INTELLECT-1: "up to 112" H100s for 42 days and 1T tokens imply an MFU of at least 14.9 %; it states
        # 36.2-41.4 %). Bounded both ways, any is.
        within = (severity != ok) & (((bounded == 1) & (lhs < 0)) | ((bounded == -1) & (lhs > 0))
                                     | (bounded == UNBOUNDED))
        if within.any():
            severity = np.where(within, ok, severity)
            detail = np.where(within, "stated-bound", detail)
            has_detail = True
    if assumed is not None:
        # A compute estimated from the hardware at an assumed utilization u (its notes): off from the right-hand
        # side by C / rhs, the run reached u · rhs / C instead. Between the floor below which a utilization is
        # flagged (Config.floor) and 100 % that is possible, and the finding a warning; outside, an error still
        # (RelationRule.assumed_utilization).
        with np.errstate(divide="ignore", invalid="ignore"):
            reached = assumed * expected / claimed
        possible = (subject_names == "compute_flops") & (severity == SEVERITY_RANK["error"]) & \
            (reached >= config.floor) & (reached <= 1.0)
        if possible.any():
            severity = np.where(possible, SEVERITY_RANK["warning"], severity)
            detail = np.where(possible, "assumed-utilization", detail)
            has_detail = True
    return severity, subject_names, claimed, expected, (detail if has_detail else None)


def _optional_floats(values: np.ndarray | None) -> np.ndarray | None:
    """A relation's per-row figures as floats, or None when it reads none or none is given (NaN everywhere)."""
    if values is None:
        return None
    values = np.asarray(values, dtype=float)
    return values if bool(np.isfinite(values).any()) else None


def architecture(q: pd.DataFrame, claims: Claims, config: Config) -> pd.DataFrame:
    """FLOPs per token by each convention the fields allow, the one used, and the recomputation factor."""
    col = {name: q[name].to_numpy(dtype=float) for name in
           ("n_eff", "layers", "d_model", "heads", "head_dim", "kv_heads", "ffn_dim", "seq_len", "vocab_size",
            "experts", "experts_per_token")}
    head_dim = np.where(np.isnan(col["head_dim"]), col["d_model"] / col["heads"], col["head_dim"])
    gated = map_unique(claims.info["mlp"], lambda t: t is not None and str(t).strip().lower() in GATED_MLP
                       ).to_numpy(dtype=bool)
    k = np.where(np.isnan(col["experts_per_token"]), 1.0, col["experts_per_token"])
    causal = config.causal_halving
    out: dict[str, np.ndarray] = {}
    out["6N"] = F.six_n(col["n_eff"])
    out["palm"] = F.palm(col["n_eff"], col["layers"], col["heads"], head_dim, col["seq_len"], causal=causal)
    terms = F.megatron_general_terms(col["layers"], col["d_model"], col["heads"], head_dim, col["kv_heads"],
                                     col["ffn_dim"], col["seq_len"], col["vocab_size"], k, gated, causal=causal)
    out["megatron-general"] = terms["projections"] + terms["attention"] + terms["mlp"] + terms["logits"]
    plain = ~gated & np.isnan(col["experts"]) & np.isnan(col["kv_heads"]) & (col["ffn_dim"] == 4 * col["d_model"])
    out["megatron"] = np.where(plain, F.megatron(col["layers"], col["d_model"], col["seq_len"], col["vocab_size"],
                                                 causal=causal), np.nan)
    # The parameters a token's matrix multiplies touch by the architecture's fields (Megatron-LM's terms without
    # the attention scores, / 6): within 0.3 % of the stated count for GPT-3, PaLM, LLaMA-65B and Llama 3.1 405B
    # (an untied input embedding aside: it has no multiply), and of 29 published configurations checked by hand
    # (session 24: GPT-2, Pythia, OPT, SmolLM2, Qwen2.5, Gemma, Phi-2, Llama 2/3, Mistral, Falcon, MPT, BLOOM,
    # Mixtral, DBRX, OLMoE, Grok-1). Fields that imply far more or fewer than the claim's N do not describe the
    # model whole (DeepSeek-V3's multi-head latent attention, shared expert and dense layers: 51.1B against its 37B
    # active, 1.38x; Qwen's MoE with shared experts, 0.54-0.57x), so their count is not F per token: PaLM's 6N +
    # attention is (V016 says so).
    n_arch = (terms["projections"] + terms["mlp"] + terms["logits"]) / 6.0
    embedding = np.nan_to_num(col["d_model"] * col["vocab_size"])
    with np.errstate(invalid="ignore"):
        fit = ARCHITECTURE_PARAMS_FIT
        # A mixture of experts' total (no active count) is above what a token touches: only more than it is apart.
        total_of_experts = (col["experts"] > 1) & np.isnan(q["active_params"].to_numpy(dtype=float))
        # A stated count may leave the embedding out (a model's name: "Gemma 7B" has 8.54B parameters, 7.75B
        # without its tied 256K-token embedding; Llama 3.2 "1B", 1.24B) or hold an untied input embedding besides
        # the logits: apart only beyond both.
        apart = np.isfinite(n_arch) & (col["n_eff"] > 0) & (
            (n_arch - embedding > fit * col["n_eff"]) | ((n_arch + embedding < col["n_eff"] / fit) & ~total_of_experts))
    out["architecture_params"] = n_arch
    out["architecture_apart"] = apart
    if apart.any():
        for name in ("megatron-general", "megatron"):
            out[name] = np.where(apart, np.nan, out[name])
    order = list(F.AUTO_ORDER) if config.convention == "auto" else [config.convention]
    chosen = np.full(len(q), np.nan)
    chosen_at = np.full(len(q), len(order))  # a position in ``order`` (past its end: none)
    for at, name in reversed(list(enumerate(order))):  # the first convention with a value wins
        v = np.asarray(out[name], dtype=float)
        ok = np.isfinite(v) & (v > 0)
        chosen = np.where(ok, v, chosen)
        chosen_at = np.where(ok, at, chosen_at)
    out["flops_per_token"] = chosen
    out["flops_per_token_how"] = object_array([*order, None])[chosen_at]  # the names' own strings: no copy per row
    out["head_dim_assumed"] = np.isnan(col["head_dim"]) & ~np.isnan(head_dim)
    mode = map_unique(claims.info["activation_recompute"],
                      lambda t: None if t is None else RECOMPUTE_ALIASES.get(str(t).strip().lower()))
    r = F.recompute_factor(mode.to_numpy(dtype=object), terms)
    r_plain = F.recompute_factor(mode.to_numpy(dtype=object))
    use_terms = np.isfinite(r)
    out["recompute_factor"] = np.where(use_terms, r, r_plain)
    out["recompute_factor_how"] = _text_where(np.isfinite(r_plain), RECOMPUTE_STATED_HOWS[0])
    out["recompute_factor_how"][use_terms] = RECOMPUTE_STATED_HOWS[1]
    out["recompute_mode"] = mode.to_numpy(dtype=object)
    # One frame of whole columns, made at once (copy=False: each column its own block, no copy).
    return pd.DataFrame({name: pd.Series(values, index=q.index, dtype=object) if values.dtype == object
                         else values for name, values in out.items()}, index=q.index, copy=False)


def compute_optimal_split(compute: float, tokens_per_param: float) -> tuple[float, float]:
    """N and D for a compute budget at ``tokens_per_param`` tokens per parameter: C = 6·N·(r·N)."""
    n = math.sqrt(compute / (6.0 * tokens_per_param))
    return n, tokens_per_param * n
