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

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from audit import notes as D
from audit import flops as F
from audit.catalog import Catalog, load_catalog, mix_memory_gb, mix_peak
from audit.claims import Claims
from audit.columns import map_unique
from audit.config import Config
from audit.findings import FINDING_COLUMNS, SEVERITIES, concat_findings, findings_frame
from audit.quantities import ADAPTER_METHODS, BY_NAME, GATED_MLP, INPUT_QUANTITIES, RECOMPUTE_ALIASES
from audit.rules import RULES, RelationRule, relation_rules, rules_of_stage, severity_of_ratio
from audit.significance import log_half_widths
from audit.state import Prefill, WorkState, effective_params, refresh_effective

#: Quantities the engine works with: the inputs, internal helpers and the derived-only ones.
WORK_COLUMNS: tuple[str, ...] = (*INPUT_QUANTITIES, "n_eff", "catalog_peak", "memory_per_chip", "flops_per_token",
                                 "recompute_factor", "tokens_per_param", "training_state_bytes", "min_chips_memory")

#: Quantities that only ever come from the catalog or the architecture (never solved for).
CATALOG_ONLY: frozenset[str] = frozenset({"catalog_peak", "memory_per_chip", "flops_per_token", "recompute_factor"})

#: Cloud TPU slice names (``v4-2048``, ``TPU v5p-8960``, ``v5litepod-16``): the number counts TensorCores.
_TPU_SLICE = re.compile(r"^\s*(?:google\s+)?(?:cloud\s+)?(?:tpu\s*)?(v\d+[a-z]*|v5litepod|v6e?)\s*-\s*(\d+)\s*$", re.I)

#: TensorCores per chip by TPU generation (Google Cloud TPU docs: v2-v4 and v5p have 2, v5e and v6e have 1).
_TPU_CORES_PER_CHIP = {"v2": 2, "v3": 2, "v4": 2, "v5p": 2, "v5e": 1, "v5litepod": 1, "v6e": 1, "v6": 1}


@dataclass(frozen=True)
class Evaluation:
    """What the engine computed: work columns, hardware match, conventions and the findings (numbers only)."""

    claims: Claims
    config: Config
    q: pd.DataFrame
    source: pd.DataFrame
    how: pd.DataFrame
    hardware: pd.DataFrame
    architecture: pd.DataFrame
    findings: pd.DataFrame


def resolve_hardware(claims: Claims, catalog: Catalog) -> pd.DataFrame:
    """Match each claim's hardware text against the catalog, once per distinct text."""
    info = claims.info

    def match(text: str | None) -> tuple[Any, float, tuple[str, ...] | None, tuple[str, ...]]:
        """(accelerator, TPU slice cores, the ids of a mix, the parts of a list that are unknown)."""
        if text is None or not str(text).strip():
            return None, np.nan, None, ()
        hit = catalog.lookup(text)
        if hit is not None:
            return hit, np.nan, None, ()
        m = _TPU_SLICE.match(str(text))
        if m:
            gen = m.group(1).lower()
            gen = "v5e" if gen == "v5litepod" else gen
            hit = catalog.lookup(f"TPU {gen}")
            if hit is not None:
                return hit, float(m.group(2)), None, ()
        parts = catalog.resolve_mix(text)  # a cell listing several accelerators
        if parts:
            unknown = tuple(part for part, accel in parts if accel is None)
            if unknown:
                return None, np.nan, None, unknown
            ids = tuple(dict.fromkeys(accel.id for _, accel in parts if accel is not None))
            if len(ids) == 1:
                return catalog.by_id(ids[0]), np.nan, None, ()
            return None, np.nan, ids, ()
        return None, np.nan, None, ()

    memo: dict[tuple[type, Any], tuple[Any, float, tuple[str, ...] | None, tuple[str, ...]]] = {}

    def found(text: Any) -> tuple[Any, float, tuple[str, ...] | None, tuple[str, ...]]:
        key = (type(text), text)
        if key not in memo:
            memo[key] = match(text)
        return memo[key]

    # Each column once per distinct text (map_unique), never a Python call per row.
    text = info["hardware"]
    matched = map_unique(text, lambda t: found(t)[0])
    slice_cores = map_unique(text, lambda t: found(t)[1]).astype(float)
    mix = map_unique(text, lambda t: found(t)[2])
    accel_id = map_unique(text, lambda t: None if found(t)[0] is None else found(t)[0].id)
    hw = pd.DataFrame({
        "hardware_text": info["hardware"],
        "accelerator": accel_id,
        "accelerator_name": map_unique(text, lambda t: None if found(t)[0] is None else found(t)[0].name),
        "mix": mix,
        "unknown_parts": map_unique(text, lambda t: found(t)[3]),
    })
    mix_name = map_unique(text, lambda t: None if found(t)[2] is None else " + ".join(
        catalog.by_id(i).name for i in found(t)[2]))
    hw["accelerator_name"] = hw["accelerator_name"].where(mix.isna(), mix_name)
    stated = info["precision"]

    def default_precision(key: tuple[Any, Any]) -> str | None:
        accel, ids = key if key is not None else (None, None)
        if accel is not None:
            return accel.default_precision
        usual = {catalog.by_id(i).default_precision for i in ids or ()}
        return usual.pop() if len(usual) == 1 else None  # a mix assumes only what all its parts share

    default = map_unique(pd.Series(list(zip(matched, mix)), index=info.index), default_precision)
    hw["precision"] = stated.where(stated.notna(), default)
    hw["precision_assumed"] = stated.isna() & default.notna()
    # A TPU has no IEEE fp16 matrix units: its 16-bit format is bfloat16, and "FP16" written for a TPU run (as
    # Epoch AI's "Numerical format" often does) means that format (H006 says so).
    on_tpu = map_unique(accel_id, lambda a: isinstance(a, str) and a.startswith("tpu-")).to_numpy(dtype=bool)
    fp16_on_tpu = on_tpu & (hw["precision"] == "fp16").to_numpy(dtype=bool)
    hw["precision_read"] = np.where(fp16_on_tpu, "fp16", None)
    hw.loc[fp16_on_tpu, "precision"] = "bf16"
    keys = pd.Series(list(zip(accel_id, mix, hw["precision"])), index=info.index)

    def peak_of(key: tuple[str | None, tuple[str, ...] | None, str | None]) -> float:
        aid, ids, prec = key if key is not None else (None, None, None)
        if aid is not None and prec is not None:
            value = catalog.by_id(aid).peak_flops(prec)
        elif ids is not None:  # a mix: the peak its parts share, else unknown (no chips per part)
            value = mix_peak([catalog.by_id(i) for i in ids], prec)
        else:
            value = None
        return np.nan if value is None else value

    def memory_of(key: tuple[str | None, tuple[str, ...] | None]) -> float:
        aid, ids = key if key is not None else (None, None)
        if aid is not None:
            return catalog.by_id(aid).memory_gb * 1e9
        value = mix_memory_gb([catalog.by_id(i) for i in ids]) if ids is not None else None
        return np.nan if value is None else value * 1e9

    hw["catalog_peak"] = map_unique(keys, peak_of).astype(float)
    hw["memory_per_chip"] = map_unique(pd.Series(list(zip(accel_id, mix)), index=info.index), memory_of).astype(float)
    hw["slice_cores"] = slice_cores.to_numpy()
    gen = map_unique(hw["accelerator"], lambda aid: None if aid is None else aid.replace("tpu-", "").split("-")[0])
    hw["cores_per_chip"] = map_unique(gen, lambda g: _TPU_CORES_PER_CHIP.get(g, np.nan) if g else np.nan).astype(float)

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

    trait = map_unique(pd.Series(list(zip(accel_id, mix)), index=info.index), traits)
    for i, name in enumerate(("sparse_headline", "has_fp8", "multi_die", "tpu")):
        hw[name] = map_unique(trait, lambda t, i=i: t is not None and t[i]).astype(bool).to_numpy()
    return hw


def evaluate(claims: Claims, config: Config | None = None, catalog: Catalog | None = None,
             used: Mapping[str, np.ndarray] | None = None,
             prefill: Mapping[str, Prefill] | None = None) -> Evaluation:
    """Derive and check every claim.

    ``used`` marks relations already spent on some rows (e.g. C001 when ``estimate`` split the compute into N
    and D itself), so that they neither derive nor check there. ``prefill`` gives values the engine takes as
    derived before it starts (a multi-phase run's totals, ``estimate``'s split; see
    :class:`audit.state.Prefill`).
    """
    config = config or Config.default()
    catalog = catalog or load_catalog()
    n = len(claims)
    index = pd.RangeIndex(n)
    q = pd.DataFrame({c: np.full(n, np.nan) for c in WORK_COLUMNS}, index=index)
    source = pd.DataFrame({c: np.full(n, None, dtype=object) for c in WORK_COLUMNS}, index=index)
    how = pd.DataFrame({c: np.full(n, None, dtype=object) for c in WORK_COLUMNS}, index=index)
    precision = pd.DataFrame({c: np.zeros(n) for c in WORK_COLUMNS}, index=index)
    for name in INPUT_QUANTITIES:
        values = claims.values[name].to_numpy(dtype=float)
        q[name] = values
        stated = ~np.isnan(values)
        source[name] = np.where(stated, "claimed", None)
        # Whole-number quantities (chips, layers) are exact: "1 GPU" is not 0.5-1.5 GPUs.
        if name in claims.text.columns and not BY_NAME[name].integer:
            precision[name] = np.where(stated, log_half_widths(claims.text[name]), 0.0)

    hw = resolve_hardware(claims, catalog)
    state = WorkState(claims=claims, config=config, catalog=catalog, q=q, source=source, how=how,
                      precision=precision, hardware=hw, architecture=pd.DataFrame(index=index),
                      prefill=dict(prefill or {}))
    for col in ("catalog_peak", "memory_per_chip"):
        vals = hw[col].to_numpy(dtype=float)
        q[col] = vals
        source[col] = np.where(~np.isnan(vals), "catalog", None)
        which = np.where(hw["mix"].notna().to_numpy(), "mix", hw["accelerator"].to_numpy(dtype=object))
        how[col] = np.where(~np.isnan(vals), which, None)
    # A TPU slice name without a claimed chip count gives the chips (cores / cores per chip); H003 checks a
    # claimed count against it.
    state.set_derived("chips", hw["slice_cores"].to_numpy() / hw["cores_per_chip"].to_numpy(), "H003")

    # A throughput stated per accelerator ("380 tokens/s/GPU", throughput_scope "per GPU") is the cluster's
    # divided by the chips: the relations use the cluster's.
    scope = pd.Series(state.info("throughput_scope"), dtype=object)
    per_chip = (scope.notna() & scope.astype(str).str.lower().str.contains(
        r"per\s*(?:gpu|chip|device|accelerator|tpu|core)|/\s*(?:gpu|chip|device|accelerator)")).to_numpy(dtype=bool)
    if per_chip.any():
        rate = state.col("throughput_tokens_per_s")
        rows = per_chip & ~np.isnan(rate)
        q.loc[rows, "throughput_tokens_per_s"] = np.nan
        source.loc[rows, "throughput_tokens_per_s"] = None
        state.set_derived("throughput_tokens_per_s", np.where(rows, rate * state.col("chips"), np.nan),
                          "throughput per chip × chips", precision=precision["throughput_tokens_per_s"].to_numpy())

    frames: list[pd.DataFrame] = [_run(rule, state) for rule in rules_of_stage("prefill")]
    for name, given in state.prefill.items():
        values = np.asarray(given.values, dtype=float)
        state.set_derived(name, np.where(np.isfinite(values) & (values > 0), values, np.nan), given.note)

    # N in C = 6ND is the active parameter count when given (mixture-of-experts), else the total.
    active, total = state.col("active_params"), state.col("params")
    q["n_eff"] = effective_params(active, total)
    has_active = ~np.isnan(active)
    source["n_eff"] = np.where(has_active, source["active_params"], source["params"])
    precision["n_eff"] = np.where(has_active, precision["active_params"], precision["params"])
    how["n_eff"] = np.where(has_active, "active_params", np.where(~np.isnan(total), "params", None))

    # A dataset's size counts datapoints: tokens for a language model (Epoch AI's "Training dataset size"),
    # images for a vision model, so only a language model's dataset size gives its tokens. Protein and nucleotide
    # language models (Epoch's task "Protein or nucleotide language model (pLM/nLM)", domain Biology) count
    # residues and bases, their tokens (measured on Epoch's file: 6 such rows within 2x of 6ND, the 3 outside it
    # judged inconsistent by hand, bench/labels).
    # The dataset's notes, when they give the size's unit, decide (audit.notes) for a sequence model (a language
    # model, or a protein or genome model of the Biology domain): tokens, words at 4/3 tokens each, or anything
    # else (examples, sentence pairs), which is not tokens even for a language model. A speech or vision model's
    # text tokens are not what its encoder processes (Whisper's row: 9.3B transcript words), so they stay unread.
    domain = pd.Series(state.info("domain"), dtype=object).fillna("").astype(str).str.lower()
    task = pd.Series(state.info("task"), dtype=object).fillna("").astype(str).str.lower()
    language = (domain.str.contains("language") | task.str.contains("language model")).to_numpy(dtype=bool)
    sequence = language | domain.str.contains("biology").to_numpy(dtype=bool)
    size, size_precision = state.col("dataset_size"), precision["dataset_size"].to_numpy(dtype=float)
    unit = D.units_of(pd.Series(state.info("dataset_notes"), dtype=object), size)
    unit = np.where(sequence, unit, "")
    state.set_derived("dataset_tokens", np.where(unit == D.TOKENS, size, np.nan),
                      "dataset_size: its notes count tokens", precision=size_precision)
    state.set_derived("dataset_tokens", np.where(unit == D.WORDS, size * D.TOKENS_PER_WORD, np.nan),
                      "dataset_size × 4/3: its notes count words, about 4/3 tokens each (OpenAI: 0.75 words per token)",
                      precision=size_precision + D.TOKENS_PER_WORD_SPREAD)
    state.set_derived("dataset_tokens", np.where(language & (unit == ""), size, np.nan),
                      "dataset_size: a language model's datapoints are tokens", precision=size_precision)

    arch = architecture(q, claims, config)
    state.architecture = arch
    for col in ("flops_per_token", "recompute_factor"):
        vals = arch[col].to_numpy(dtype=float)
        q[col] = vals
        source[col] = np.where(~np.isnan(vals), "derived", None)
        how[col] = np.where(~np.isnan(vals), arch[f"{col}_how"].to_numpy(dtype=object), None)

    state.resolve = lambda rows, q1, s1, h1, p1: apply_relations(WorkState(
        claims=claims, config=config, catalog=catalog, q=q1, source=s1, how=h1, precision=p1, hardware=hw,
        architecture=arch, rows=rows))
    # Rules that reread stated figures before any relation runs (and say so).
    frames.extend(_run(rule, state) for rule in rules_of_stage("prepare"))
    state.initial = (q.copy(), source.copy(), how.copy(), precision.copy())
    state.relation_findings = apply_relations(state, used)
    frames.extend(state.relation_findings)
    frames.extend(_run(rule, state) for rule in rules_of_stage("outlier"))

    # Derived-only quantities.
    with np.errstate(divide="ignore", invalid="ignore"):
        state.set_derived("tokens_per_param", state.col("tokens") / state.col("params"), "tokens / params")
        state.set_derived("training_state_bytes", training_state(state), "M001",
                          precision=state.slack("params", "trainable_params"))
        state.set_derived("min_chips_memory", np.ceil(state.col("training_state_bytes") / state.col("memory_per_chip")),
                          "M001")

    frames.extend(_run(rule, state) for rule in rules_of_stage("check"))
    findings = concat_findings(frames)
    findings["severity"] = pd.Categorical(findings["severity"], categories=list(SEVERITIES), ordered=True)
    # Within a claim: the rules that lead (the outlier) first, then the worst findings first.
    leading = [code for code, rule in RULES.items() if rule.leads]
    findings["_leads"] = findings["rule"].isin(leading)
    findings = findings.sort_values(["row", "_leads", "severity", "rule"], ascending=[True, False, False, True],
                                    kind="stable").drop(columns="_leads").reset_index(drop=True)
    return Evaluation(claims=claims, config=config, q=q, source=source, how=how, hardware=hw, architecture=arch,
                      findings=findings[list(FINDING_COLUMNS)])


def training_state(state: WorkState) -> np.ndarray:
    """Bytes of training state: ``bytes_per_param`` per trained parameter (16 with Adam in mixed precision);
    an adapter fine-tune (``finetune_method`` LoRA and the like, or a stated ``trainable_params``) holds only
    ``frozen_bytes_per_param`` (the bf16 weights) for each frozen parameter."""
    config = state.config
    params, trainable = state.col("params"), state.col("trainable_params")
    method = pd.Series(state.info("finetune_method"), dtype=object)
    method = method.where(method.notna(), "").astype(str).str.strip().str.lower()
    adapter = method.isin(ADAPTER_METHODS).to_numpy(dtype=bool) | ~np.isnan(trainable)
    frozen = np.where(method.to_numpy(dtype=object) == "qlora", config.frozen_bytes_per_param_qlora,
                      config.frozen_bytes_per_param)
    trained = np.where(np.isnan(trainable), 0.0, trainable)
    return np.where(adapter, frozen * (params - trained) + config.bytes_per_param * trained,
                    config.bytes_per_param * params)


def _run(rule: type, state: WorkState) -> pd.DataFrame | None:
    """A rule's findings, or None when it has none."""
    frame = rule.evaluate(state)
    return frame if frame is not None and len(frame) else None


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


def apply_relations(state: WorkState, preused: Mapping[str, np.ndarray] | None = None) -> list[pd.DataFrame]:
    """Derive and check with every relation until no more can be derived (a fixed point).

    A shadow copy (:func:`shadow_of`) is derived in lockstep; a check that comes out the same in both copies
    follows from the derivations alone (a cycle of relations), so it is not recorded as a finding.
    """
    q, source, how, precision, config = state.q, state.source, state.how, state.precision, state.config
    rules = relation_rules()
    n = len(q)
    shadow = shadow_of(q, how)
    # Signatures of the checks recorded so far, per row: |shadow residual - residual| identifies the
    # combination of independent figures a check tests (up to sign). A later check with the same signature
    # tests the same thing by another path and would only repeat a finding.
    signatures = np.full((n, len(rules)), np.nan)
    recorded = np.zeros(n, dtype=int)
    used = {rule.code: np.zeros(n, dtype=bool) for rule in rules}
    for code, mask in (preused or {}).items():
        if code in used:
            used[code] = used[code] | np.asarray(mask, dtype=bool)
    frames: list[pd.DataFrame] = []
    # A mixture-of-experts claim without its active count: its N (the total) is not the N of 6N per token, so
    # only the relation that can hold it as a bound (C001, RelationRule.upper_bound) uses it.
    sparse_unknown = state.total_only()
    for _ in range(len(rules) + 1):
        changed = False
        for rule in rules:
            cols = list(rule.relation.quantities)
            exps = rule.relation.powers
            values = q[cols].to_numpy(dtype=float)
            known = ~np.isnan(values)
            unknown_count = (~known).sum(axis=1)
            applies = rule.applies(state)
            if sparse_unknown.any() and {"n_eff", "flops_per_token"} & set(cols) and rule.upper_bound(state) is None:
                applies = ~sparse_unknown if applies is None else applies & ~sparse_unknown
            free = ~used[rule.code] if applies is None else ~used[rule.code] & applies

            # Derive: exactly one unknown, and it is a quantity that can be solved for. A relation that only
            # bounds a row (RelationRule.upper_bound / lower_bound) checks it but derives nothing from it.
            upper, lower = rule.upper_bound(state), rule.lower_bound(state)
            derivable = np.array([c not in CATALOG_ONLY for c in cols])
            target = np.argmin(known, axis=1)
            derive = free & (unknown_count == 1) & derivable[target]
            for bound in (upper, lower):
                if bound is not None:
                    derive &= ~bound
            if derive.any():
                rows = np.flatnonzero(derive)
                t = target[rows]
                solved = rule.relation.solve(values[rows], t)
                solved_shadow = rule.relation.solve(shadow[cols].to_numpy(dtype=float)[rows], t)
                # Precision in log space: x_t = Π x_i^(-e_i/e_t), so its half-width is Σ |e_i/e_t| · λ_i.
                weights = np.abs(exps[None, :] / exps[t][:, None])
                weights[np.arange(len(rows)), t] = 0.0
                solved_precision = (weights * precision[cols].to_numpy(dtype=float)[rows]).sum(axis=1)
                ok = np.isfinite(solved) & (solved > 0)
                for j, col in enumerate(cols):
                    sel = rows[(t == j) & ok]
                    if len(sel) == 0:
                        continue
                    q.loc[sel, col] = solved[(t == j) & ok]
                    shadow.loc[sel, col] = solved_shadow[(t == j) & ok]
                    precision.loc[sel, col] = solved_precision[(t == j) & ok]
                    source.loc[sel, col] = rule.derived_source
                    how.loc[sel, col] = rule.code
                    if col == "n_eff":  # a solved N fills the parameter count (there was neither a total nor
                        q.loc[sel, "params"] = q.loc[sel, "n_eff"]  # an active count)
                        source.loc[sel, "params"] = "derived"
                        how.loc[sel, "params"] = rule.code
                        shadow.loc[sel, "params"] = shadow.loc[sel, "n_eff"]
                        precision.loc[sel, "params"] = precision.loc[sel, "n_eff"]
                used[rule.code][rows] = True
                changed = True

            # Check: everything known.
            check = free & (unknown_count == 0)
            if check.any():
                rows = np.flatnonzero(check)
                residual = np.log(values[rows]) @ exps
                residual_shadow = np.log(shadow[cols].to_numpy(dtype=float)[rows]) @ exps
                signature = np.abs(residual_shadow - residual)
                informative = signature > 1e-7
                repeated = (np.abs(signatures[rows] - signature[:, None]) <= 1e-7 * np.maximum(1, signature[:, None])
                            ).any(axis=1)
                informative &= ~repeated
                used[rule.code][rows] = True
                rows, signature = rows[informative], signature[informative]
                signatures[rows, recorded[rows]] = signature
                recorded[rows] += 1
                if len(rows):
                    frames.append(_check_relation(rule, rows, q, source, precision, config,
                                                  None if upper is None else upper[rows],
                                                  None if lower is None else lower[rows]))
        if not changed:
            break
    return frames


def _check_relation(rule: type[RelationRule], rows: np.ndarray, q: pd.DataFrame, source: pd.DataFrame,
                    precision: pd.DataFrame, config: Config, upper: np.ndarray | None = None,
                    lower: np.ndarray | None = None) -> pd.DataFrame:
    """One finding per row: the subject quantity (the first the claim states), its value and the expected one."""
    cols = list(rule.relation.quantities)
    claimed_mask = source.loc[rows, list(rule.subjects)].to_numpy(dtype=object) == "claimed"
    pick = np.where(claimed_mask.any(axis=1), np.argmax(claimed_mask, axis=1), 0)
    subject_names = np.array(rule.subjects, dtype=object)[pick]
    subject_idx = np.array([cols.index(s) for s in rule.subjects])[pick]
    values = q.loc[rows, cols].to_numpy(dtype=float)
    expected = rule.relation.solve(values, subject_idx)
    claimed = values[np.arange(len(rows)), subject_idx]
    ok_tol, warn_tol = config.tolerance(rule.code)
    # The residual Σ e_i · ln x_i is uncertain by Σ |e_i| · λ_i: the precision of every figure compared.
    slack = precision.loc[rows, cols].to_numpy(dtype=float) @ np.abs(rule.relation.powers)
    ratio = claimed / expected
    severity = severity_of_ratio(ratio, ok_tol, warn_tol, slack)
    if rule.goodput_quantity and rule.code in config.goodput:
        # A stated steady-state figure above the end-to-end one differs by goodput, not by a mistake.
        ok_g, warn_g = config.goodput[rule.code]
        side = (subject_names == rule.goodput_quantity) & (ratio > 1)
        for name in rule.goodput_unless_stated:
            side &= source.loc[rows, name].to_numpy(dtype=object) != "claimed"
        severity = np.where(side, severity_of_ratio(ratio, ok_g, warn_g, slack), severity)
    detail = np.full(len(rows), None, dtype=object)
    with np.errstate(divide="ignore", invalid="ignore"):
        lhs = np.log(values) @ rule.relation.powers - np.log(rule.relation.constant)
    # Only a bound on these rows (RelationRule.upper_bound / lower_bound): a left-hand side on the bound's side
    # of the right-hand side is consistent, however far.
    if rule.weighs_compute_reading:
        # The stated compute read as hardware FLOPs (÷ r): info when that fits within C008's tolerance and the
        # model-FLOPs reading did not (BloombergGPT's row: MFU 24.6 % stated, 32.3 % implied, 24.2 % as hardware).
        r = q.loc[rows, "recompute_factor"].to_numpy(dtype=float)
        r = np.where(r > 1, r, 4.0 / 3.0)
        stated_c = source.loc[rows, "compute_flops"].to_numpy(dtype=object) == "claimed"
        fits = stated_c & (severity != "ok") & (lhs > 0) & \
            (np.abs(lhs - np.log(r)) <= math.log(config.tolerance("C008")[0]) + slack)
        severity = np.where(fits, "info", severity)
        detail = np.where(fits, "hardware-compute", detail)
    for bound, side, name in ((upper, lhs < 0, "upper-bound"), (lower, lhs > 0, "lower-bound")):
        if bound is not None and bound.any():
            within = bound & side
            severity = np.where(within, "ok", severity)
            detail = np.where(within, name, detail)
    if not any(d is not None for d in detail):
        detail = None
    return findings_frame(rows, rule.code, severity, subject_names, claimed, expected, detail=detail)


def architecture(q: pd.DataFrame, claims: Claims, config: Config) -> pd.DataFrame:
    """FLOPs per token by each convention the fields allow, the one used, and the recomputation factor."""
    col = {name: q[name].to_numpy(dtype=float) for name in
           ("n_eff", "layers", "d_model", "heads", "head_dim", "kv_heads", "ffn_dim", "seq_len", "vocab_size",
            "experts", "experts_per_token")}
    head_dim = np.where(np.isnan(col["head_dim"]), col["d_model"] / col["heads"], col["head_dim"])
    mlp = map_unique(claims.info["mlp"], lambda t: None if t is None else str(t).strip().lower())
    gated = mlp.isin(GATED_MLP).to_numpy()
    k = np.where(np.isnan(col["experts_per_token"]), 1.0, col["experts_per_token"])
    causal = config.causal_halving
    out = pd.DataFrame(index=q.index)
    out["6N"] = F.six_n(col["n_eff"])
    out["palm"] = F.palm(col["n_eff"], col["layers"], col["heads"], head_dim, col["seq_len"], causal=causal)
    terms = F.megatron_general_terms(col["layers"], col["d_model"], col["heads"], head_dim, col["kv_heads"],
                                     col["ffn_dim"], col["seq_len"], col["vocab_size"], k, gated, causal=causal)
    out["megatron-general"] = terms["projections"] + terms["attention"] + terms["mlp"] + terms["logits"]
    plain = ~gated & np.isnan(col["experts"]) & np.isnan(col["kv_heads"]) & (col["ffn_dim"] == 4 * col["d_model"])
    out["megatron"] = np.where(plain, F.megatron(col["layers"], col["d_model"], col["seq_len"], col["vocab_size"],
                                                 causal=causal), np.nan)
    order = list(F.AUTO_ORDER) if config.convention == "auto" else [config.convention]
    chosen = np.full(len(q), np.nan)
    chosen_how = np.full(len(q), None, dtype=object)
    for name in reversed(order):  # the first convention with a value wins
        v = out[name].to_numpy(dtype=float)
        ok = np.isfinite(v) & (v > 0)
        chosen = np.where(ok, v, chosen)
        chosen_how = np.where(ok, name, chosen_how)
    out["flops_per_token"] = chosen
    out["flops_per_token_how"] = chosen_how
    out["head_dim_assumed"] = np.isnan(col["head_dim"]) & ~np.isnan(head_dim)
    mode = map_unique(claims.info["activation_recompute"],
                      lambda t: None if t is None else RECOMPUTE_ALIASES.get(str(t).strip().lower()))
    r = F.recompute_factor(mode.to_numpy(dtype=object), terms)
    r_plain = F.recompute_factor(mode.to_numpy(dtype=object))
    use_terms = np.isfinite(r)
    out["recompute_factor"] = np.where(use_terms, r, r_plain)
    out["recompute_factor_how"] = np.where(use_terms, "recompute (architecture)",
                                           np.where(np.isfinite(r_plain), "recompute", None))
    out["recompute_mode"] = mode.to_numpy(dtype=object)
    return out


def compute_optimal_split(compute: float, tokens_per_param: float) -> tuple[float, float]:
    """N and D for a compute budget at ``tokens_per_param`` tokens per parameter: C = 6·N·(r·N)."""
    n = math.sqrt(compute / (6.0 * tokens_per_param))
    return n, tokens_per_param * n
