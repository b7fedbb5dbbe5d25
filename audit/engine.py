"""The engine: derive what claims imply and check every relation that can be checked, on whole columns.

Training arithmetic is a set of products of powers (see :mod:`audit.rules`); in log space each relation is a
linear equation Σ eᵢ·log xᵢ = log k. For each relation, a mask selects the rows where exactly one term is unknown
(derive it) or none is (check it); repeating until nothing changes propagates derivations. Each relation is used
at most once per claim, so a relation never checks a value it derived. There is no per-row Python here.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

import numpy as np
import pandas as pd

from audit.catalog import Catalog, load_catalog
from audit.claims import Claims, map_unique
from audit.quantities import INPUT_QUANTITIES
from audit.resources import data_path
from audit import flops as F
from audit.quantities import GATED_MLP, RECOMPUTE_ALIASES
from audit.rules import RELATION_RULES, SEVERITIES, RelationRule

#: Quantities the engine works with: the inputs, internal helpers and the derived-only ones.
WORK_COLUMNS: tuple[str, ...] = (*INPUT_QUANTITIES, "n_eff", "catalog_peak", "memory_per_chip", "flops_per_token",
                                 "recompute_factor", "tokens_per_param", "min_chips_memory")

#: Quantities that only ever come from the catalog (never solved for).
CATALOG_ONLY: frozenset[str] = frozenset({"catalog_peak", "memory_per_chip", "flops_per_token", "recompute_factor"})

#: FLOPs-per-token conventions that come from an architecture (C007 applies only to these).
ARCH_CONVENTIONS: frozenset[str] = frozenset({"megatron-general", "palm"})

#: Cloud TPU slice names (``v4-2048``, ``TPU v5p-8960``, ``v5litepod-16``): the number counts TensorCores.
_TPU_SLICE = re.compile(r"^\s*(?:google\s+)?(?:cloud\s+)?(?:tpu\s*)?(v\d+[a-z]*|v5litepod|v6e?)\s*-\s*(\d+)\s*$", re.I)

#: TensorCores per chip by TPU generation (Google Cloud TPU docs: v2-v4 and v5p have 2, v5e and v6e have 1).
_TPU_CORES_PER_CHIP = {"v2": 2, "v3": 2, "v4": 2, "v5p": 2, "v5e": 1, "v5litepod": 1, "v6e": 1, "v6": 1}

FINDING_COLUMNS: tuple[str, ...] = ("row", "rule", "severity", "quantity", "claimed", "expected", "ratio", "detail")

STATUSES: tuple[str, ...] = ("pass", "warn", "fail", "invalid")


@dataclass
class Config:
    """Tolerances and constants (defaults in ``audit/data/thresholds.json``, each with its reason)."""

    tolerances: dict[str, tuple[float, float]]
    band: tuple[float, float]
    bytes_per_param: float
    tokens_per_param_optimal: float
    reasons: dict[str, str] = field(default_factory=dict)
    #: FLOPs-per-token convention for architecture claims: auto (the most complete the fields allow), palm, 6N.
    convention: str = "auto"
    #: Halve the attention score/value FLOPs for causal masking (some codebases do; PaLM and Megatron do not).
    causal_halving: bool = False

    @classmethod
    def default(cls) -> "Config":
        """The documented defaults."""
        data = _thresholds()
        tol = {code: (float(v["ok"]), float(v["warn"])) for code, v in data["relations"].items()}
        reasons = {code: v["why"] for code, v in data["relations"].items()}
        reasons["band"] = data["utilization_band"]["why"]
        reasons["bytes_per_param"] = data["bytes_per_param"]["why"]
        reasons["tokens_per_param_optimal"] = data["tokens_per_param_optimal"]["why"]
        return cls(
            tolerances=tol,
            band=(float(data["utilization_band"]["low"]), float(data["utilization_band"]["high"])),
            bytes_per_param=float(data["bytes_per_param"]["value"]),
            tokens_per_param_optimal=float(data["tokens_per_param_optimal"]["value"]),
            reasons=reasons,
        )


@lru_cache(maxsize=1)
def _thresholds() -> dict:
    return json.loads(data_path("thresholds.json").read_text(encoding="utf-8"))


@dataclass
class AuditResult:
    """Everything the engine found, as columnar frames (one row per claim, or one per finding).

    - ``q``: float64 value of every work column;
    - ``source``: ``claimed`` | ``derived`` | ``catalog`` | None per work column;
    - ``how``: the rule code (or note) that derived a value;
    - ``hardware``: catalog match per claim (accelerator id and name, precision used, assumed or not);
    - ``findings``: long table, columns :data:`FINDING_COLUMNS`;
    - ``status``: ``pass`` | ``warn`` | ``fail`` | ``invalid`` per claim.
    """

    claims: Claims
    config: Config
    q: pd.DataFrame
    source: pd.DataFrame
    how: pd.DataFrame
    hardware: pd.DataFrame
    findings: pd.DataFrame
    status: pd.Series
    #: Long table of explanations for non-ok findings: finding (index into findings), rank, cause, factor, ...
    explanations: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: FLOPs per token by every convention the claim's fields allow (columns per convention) and the one used.
    architecture: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: Multi-phase runs: the phases audited as claims, and the row of the run each belongs to.
    phase_result: "AuditResult | None" = None
    phase_parent: np.ndarray | None = None

    def cell(self, table: str, row: int, col: str) -> Any:
        """One value of ``q``, ``source``, ``how``, ``hardware``, ``architecture``, ``info`` or ``text``.

        Reads a cached numpy column (``DataFrame.at`` costs ~10 µs a call; rendering 10,000 claims makes a
        million such reads).
        """
        cache = self.__dict__.setdefault("_columns", {})
        key = (table, col)
        arr = cache.get(key)
        if arr is None:
            frame = {"info": self.claims.info, "text": self.claims.text}.get(table)
            frame = getattr(self, table) if frame is None else frame
            arr = cache[key] = frame[col].to_numpy()
        return arr[row]

    def phase_rows(self, row: int) -> list[int]:
        """Rows of ``phase_result`` that are phases of claim ``row``."""
        if self.phase_parent is None:
            return []
        return [int(i) for i in np.flatnonzero(self.phase_parent == row)]

    def __len__(self) -> int:
        return len(self.q)


# ------------------------------------------------------------------------------------------------- helpers


def _findings_frame(rows: np.ndarray, rule: str, severity: np.ndarray | str, quantity: str,
                    claimed: np.ndarray | float = np.nan, expected: np.ndarray | float = np.nan,
                    detail: np.ndarray | str | None = None) -> pd.DataFrame:
    n = len(rows)
    claimed_a = np.broadcast_to(np.asarray(claimed, dtype=float), (n,)).copy()
    expected_a = np.broadcast_to(np.asarray(expected, dtype=float), (n,)).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = claimed_a / expected_a
    return pd.DataFrame({
        "row": rows.astype(int),
        "rule": rule,
        "severity": np.broadcast_to(np.asarray(severity, dtype=object), (n,)).copy(),
        "quantity": quantity,
        "claimed": claimed_a,
        "expected": expected_a,
        "ratio": ratio,
        "detail": np.broadcast_to(np.asarray(detail, dtype=object), (n,)).copy(),
    })


def severity_of_ratio(ratio: np.ndarray, ok: float, warn: float) -> np.ndarray:
    """``ok`` within the first tolerance factor, ``warning`` within the second, else ``error``."""
    factor = np.exp(np.abs(np.log(ratio)))
    # A hair of slack so that a ratio printed as exactly the tolerance is not flagged by rounding.
    return np.where(factor <= ok * (1 + 1e-9), "ok", np.where(factor <= warn * (1 + 1e-9), "warning", "error"))


# ---------------------------------------------------------------------------------------------- the engine


def _resolve_hardware(claims: Claims, catalog: Catalog) -> pd.DataFrame:
    """Match each claim's hardware text against the catalog, once per distinct text."""
    info = claims.info

    def match(text: str | None) -> tuple[Any, float]:
        if text is None or not str(text).strip():
            return None, np.nan
        hit = catalog.lookup(text)
        if hit is not None:
            return hit, np.nan
        m = _TPU_SLICE.match(str(text))
        if m:
            gen = m.group(1).lower()
            gen = "v5e" if gen == "v5litepod" else gen
            hit = catalog.lookup(f"TPU {gen}")
            if hit is not None:
                return hit, float(m.group(2))
        return None, np.nan

    pairs_hw = map_unique(info["hardware"], match)
    matched = pairs_hw.map(lambda p: p[0] if p is not None else None)
    slice_cores = pairs_hw.map(lambda p: p[1] if p is not None else np.nan).astype(float)
    accel_id = matched.map(lambda a: None if a is None else a.id)
    hw = pd.DataFrame({
        "hardware_text": info["hardware"],
        "accelerator": accel_id,
        "accelerator_name": matched.map(lambda a: None if a is None else a.name),
    })
    stated = info["precision"]
    default = matched.map(lambda a: None if a is None else a.default_precision)
    hw["precision"] = stated.where(stated.notna(), default)
    hw["precision_assumed"] = stated.isna() & default.notna()
    pairs = pd.Series(list(zip(accel_id, hw["precision"])), index=info.index)

    def peak_of(pair: tuple[str | None, str | None]) -> float:
        aid, prec = pair if pair is not None else (None, None)
        if aid is None or prec is None:
            return np.nan
        value = catalog.by_id(aid).peak_flops(prec)
        return np.nan if value is None else value

    hw["catalog_peak"] = map_unique(pairs, peak_of).astype(float)
    hw["memory_per_chip"] = map_unique(
        accel_id, lambda aid: np.nan if aid is None else catalog.by_id(aid).memory_gb * 1e9).astype(float)
    hw["slice_cores"] = slice_cores.to_numpy()
    gen = hw["accelerator"].map(lambda aid: None if aid is None else aid.replace("tpu-", "").split("-")[0])
    hw["cores_per_chip"] = gen.map(lambda g: _TPU_CORES_PER_CHIP.get(g, np.nan) if g else np.nan).astype(float)
    # What the hardware makes possible, for the causes that only some accelerators can have (audit/explain.py);
    # an unknown accelerator rules nothing out.
    def traits(aid: str | None) -> tuple[bool, bool, bool, bool]:
        if aid is None:
            return True, True, True, True
        a = catalog.by_id(aid)
        return (a.sparse_headline, "fp8" in a.peaks_tflops, a.unit in ("package", "gcd"), aid.startswith("tpu-"))

    trait = map_unique(accel_id, traits)
    for i, name in enumerate(("sparse_headline", "has_fp8", "multi_die", "tpu")):
        hw[name] = trait.map(lambda t, i=i: t[i]).astype(bool).to_numpy()
    return hw


def audit(claims: Claims, config: Config | None = None, catalog: Catalog | None = None,
          used: dict[str, np.ndarray] | None = None,
          prefill: dict[str, np.ndarray] | None = None) -> AuditResult:
    """Derive, check and classify every claim.

    ``used`` marks relations already spent on some rows (e.g. C001 when ``estimate`` split the compute into N
    and D itself), so that they neither derive nor check there. ``prefill`` gives totals summed over a claim's
    phases (NaN where none): they fill a quantity the claim does not state and are checked (C010) against one
    it does.
    """
    config = config or Config.default()
    catalog = catalog or load_catalog()
    n = len(claims)
    index = pd.RangeIndex(n)
    q = pd.DataFrame({c: np.full(n, np.nan) for c in WORK_COLUMNS}, index=index)
    source = pd.DataFrame({c: np.full(n, None, dtype=object) for c in WORK_COLUMNS}, index=index)
    how = pd.DataFrame({c: np.full(n, None, dtype=object) for c in WORK_COLUMNS}, index=index)
    for name in INPUT_QUANTITIES:
        values = claims.values[name].to_numpy(dtype=float)
        q[name] = values
        source[name] = np.where(~np.isnan(values), "claimed", None)

    # N in C = 6ND is the active parameter count when given (mixture-of-experts), else the total.
    active = q["active_params"].to_numpy()
    total = q["params"].to_numpy()
    q["n_eff"] = np.where(~np.isnan(active), active, total)
    source["n_eff"] = np.where(~np.isnan(q["n_eff"].to_numpy()), "claimed", None)
    how["n_eff"] = np.where(~np.isnan(active), "active_params", np.where(~np.isnan(total), "params", None))

    hw = _resolve_hardware(claims, catalog)
    for col in ("catalog_peak", "memory_per_chip"):
        vals = hw[col].to_numpy(dtype=float)
        q[col] = vals
        source[col] = np.where(~np.isnan(vals), "catalog", None)
        how[col] = np.where(~np.isnan(vals), hw["accelerator"].to_numpy(dtype=object), None)
    # A TPU slice name without a claimed chip count gives the chips (cores / cores per chip).
    slice_chips = hw["slice_cores"].to_numpy() / hw["cores_per_chip"].to_numpy()
    _set_derived(q, source, how, "chips", slice_chips, "H003")

    arch = _architecture(q, claims, config)
    for col in ("flops_per_token", "recompute_factor"):
        vals = arch[col].to_numpy(dtype=float)
        q[col] = vals
        source[col] = np.where(~np.isnan(vals), "derived", None)
        how[col] = np.where(~np.isnan(vals), arch[f"{col}_how"].to_numpy(dtype=object), None)

    frames: list[pd.DataFrame] = []
    for name, values in (prefill or {}).items():
        values = np.asarray(values, dtype=float)
        stated = ~np.isnan(q[name].to_numpy())
        have = np.isfinite(values) & (values > 0)
        rows = np.flatnonzero(stated & have)
        if len(rows):
            claimed = q[name].to_numpy()[rows]
            ok_tol, warn_tol = config.tolerances["C010"]
            sev = severity_of_ratio(claimed / values[rows], ok_tol, warn_tol)
            frames.append(_findings_frame(rows, "C010", sev, name, claimed, values[rows]))
        _set_derived(q, source, how, name, np.where(have, values, np.nan), "C010")

    initial = (q.copy(), source.copy(), how.copy())
    relation_frames = _apply_relations(q, source, how, config, used)
    frames.extend(relation_frames)
    frames.append(_find_outliers(initial, relation_frames, config, claims))

    # Derived-only quantities.
    with np.errstate(divide="ignore", invalid="ignore"):
        tpp = q["tokens"].to_numpy() / q["params"].to_numpy()
    _set_derived(q, source, how, "tokens_per_param", tpp, "tokens / params")
    min_chips = np.ceil(config.bytes_per_param * q["params"].to_numpy() / q["memory_per_chip"].to_numpy())
    _set_derived(q, source, how, "min_chips_memory", min_chips, "M001")

    frames.extend(_check_bounds(q, source, hw, claims, config, catalog))
    findings = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) \
        else pd.DataFrame({c: pd.Series(dtype=object) for c in FINDING_COLUMNS})
    findings["severity"] = pd.Categorical(findings["severity"], categories=list(SEVERITIES), ordered=True)
    findings = findings.sort_values(["row", "severity", "rule"], ascending=[True, False, True],
                                    kind="stable").reset_index(drop=True)
    status = _status(findings, n)
    from audit.explain import explain  # noqa: PLC0415 - explain imports this module's Config

    explanations = explain(findings, q, claims, config, hw)
    return AuditResult(claims=claims, config=config, q=q, source=source, how=how, hardware=hw,
                       findings=findings, status=status, explanations=explanations, architecture=arch)


def _set_derived(q: pd.DataFrame, source: pd.DataFrame, how: pd.DataFrame, name: str, values: np.ndarray,
                 note: str) -> None:
    mask = np.isnan(q[name].to_numpy()) & np.isfinite(values)
    if mask.any():
        q.loc[mask, name] = values[mask]
        source.loc[mask, name] = "derived"
        how.loc[mask, name] = note


#: One prime per work column. The shadow copy of a claim multiplies each known value by its column's prime;
#: logs of distinct primes are linearly independent over the integers (unique factorization), so a check whose
#: residual is the same in both copies is an identity of the derivations that fed it, not a test of the claim.
_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101,
           103, 107, 109, 113, 127, 131, 137, 139, 149, 151)


def shadow_of(q: pd.DataFrame, how: pd.DataFrame) -> pd.DataFrame:
    """The shadow copy: each independent known value times its column's prime; dependent ones follow."""
    primes = np.array(_PRIMES[: len(q.columns)], dtype=float)
    shadow = q * primes[None, :]
    act, tot = shadow["active_params"].to_numpy(), shadow["params"].to_numpy()
    shadow["n_eff"] = np.where(~np.isnan(act), act, tot)
    six = (how["flops_per_token"] == "6N").to_numpy()
    shadow.loc[six, "flops_per_token"] = 6.0 * shadow.loc[six, "n_eff"]
    return shadow


def _apply_relations(q: pd.DataFrame, source: pd.DataFrame, how: pd.DataFrame, config: Config,
                     preused: dict[str, np.ndarray] | None = None) -> list[pd.DataFrame]:
    """Derive and check with every relation until no more can be derived (a fixed point).

    A shadow copy (:func:`shadow_of`) is derived in lockstep; a check that comes out the same in both copies
    follows from the derivations alone (a cycle of relations), so it is not recorded as a finding.
    """
    n = len(q)
    shadow = shadow_of(q, how)
    # Signatures of the checks recorded so far, per row: |shadow residual - residual| identifies the
    # combination of independent figures a check tests (up to sign). A later check with the same signature
    # tests the same thing by another path and would only repeat a finding.
    signatures = np.full((n, len(RELATION_RULES)), np.nan)
    recorded = np.zeros(n, dtype=int)
    used = {rule.code: np.zeros(n, dtype=bool) for rule in RELATION_RULES}
    for code, mask in (preused or {}).items():
        used[code] = used[code] | np.asarray(mask, dtype=bool)
    frames: list[pd.DataFrame] = []
    for _ in range(len(RELATION_RULES) + 1):
        changed = False
        for rule in RELATION_RULES:
            cols = list(rule.relation.quantities)
            exps = np.array([e for _, e in rule.relation.exponents])
            values = q[cols].to_numpy(dtype=float)
            known = ~np.isnan(values)
            unknown_count = (~known).sum(axis=1)
            free = ~used[rule.code] & _applies(rule, how)
            with np.errstate(divide="ignore", invalid="ignore"):
                logs = np.where(known, np.log(values), 0.0)
            log_k = math.log(rule.relation.constant)

            # Derive: exactly one unknown, and it is a quantity that can be solved for.
            derivable = np.array([c not in CATALOG_ONLY for c in cols])
            target = np.argmin(known, axis=1)
            derive = free & (unknown_count == 1) & derivable[target]
            if derive.any():
                rows = np.flatnonzero(derive)
                t = target[rows]
                solved = _solve_linear(values[rows], exps, t, rule.relation.constant)
                solved_shadow = _solve_linear(shadow[cols].to_numpy(dtype=float)[rows], exps, t,
                                              rule.relation.constant)
                ok = np.isfinite(solved) & (solved > 0)
                for j, col in enumerate(cols):
                    sel = rows[(t == j) & ok]
                    if len(sel) == 0:
                        continue
                    q.loc[sel, col] = solved[(t == j) & ok]
                    shadow.loc[sel, col] = solved_shadow[(t == j) & ok]
                    src = "catalog" if rule.code == "C006" else "derived"
                    source.loc[sel, col] = src
                    how.loc[sel, col] = rule.code
                    if col == "n_eff":
                        _propagate_n_eff(q, source, how, sel, rule.code)
                        shadow.loc[sel, "params"] = shadow.loc[sel, "n_eff"]
                used[rule.code][rows] = True
                changed = True

            # Check: everything known.
            check = free & (unknown_count == 0)
            if check.any():
                rows = np.flatnonzero(check)
                sh = shadow[cols].to_numpy(dtype=float)[rows]
                residual = np.log(values[rows]) @ exps
                residual_shadow = np.log(sh) @ exps
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
                    frames.append(_check_relation(rule, rows, q, source, logs[rows], exps, log_k, config))
        if not changed:
            break
    return frames


def _applies(rule: type[RelationRule], how: pd.DataFrame) -> np.ndarray:
    """Rows a relation applies to: C007 only where F comes from an architecture (with 6N it is C001 again)."""
    if rule.code == "C007":
        return how["flops_per_token"].isin(ARCH_CONVENTIONS).to_numpy()
    return np.ones(len(how), dtype=bool)


def _architecture(q: pd.DataFrame, claims: Claims, config: Config) -> pd.DataFrame:
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
    order = ["megatron-general", "palm", "6N"] if config.convention == "auto" else [config.convention]
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


def _find_outliers(initial: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame], relation_frames: list[pd.DataFrame],
                   config: Config, claims: Claims) -> pd.DataFrame:
    """C009: for claims whose relations disagree, the stated figure whose removal makes the rest agree.

    Each candidate figure is cleared on the affected rows and the relations solved again (vectorized over the
    rows, once per candidate quantity).
    """
    empty = _findings_frame(np.array([], dtype=int), "C009", "info", "")
    if not relation_frames:
        return empty
    rel = pd.concat(relation_frames, ignore_index=True)
    bad_rows = np.unique(rel.loc[rel["severity"] != "ok", "row"].to_numpy(dtype=int))
    if len(bad_rows) == 0:
        return empty
    q0, s0, h0 = (frame.loc[bad_rows].reset_index(drop=True) for frame in initial)
    involved = sorted({c for r in RELATION_RULES for c in r.relation.quantities} - {"n_eff", "flops_per_token",
                                                                                    "recompute_factor"})
    candidates = [c for c in involved if c in q0.columns]
    ok_with: dict[str, np.ndarray] = {}
    strong: dict[str, np.ndarray] = {}
    implied: dict[str, np.ndarray] = {}
    checks_left: dict[str, np.ndarray] = {}
    for cand in candidates:
        stated = (s0[cand] == ("catalog" if cand == "catalog_peak" else "claimed")).to_numpy()
        if not stated.any():
            continue
        q1, s1, h1 = q0.copy(), s0.copy(), h0.copy()
        q1.loc[stated, cand] = np.nan
        s1.loc[stated, cand] = None
        h1.loc[stated, cand] = None
        if cand in ("params", "active_params"):
            act, tot = q1["active_params"].to_numpy(), q1["params"].to_numpy()
            q1["n_eff"] = np.where(~np.isnan(act), act, tot)
            six = h1["flops_per_token"].to_numpy(dtype=object) == "6N"
            q1.loc[six, "flops_per_token"] = 6.0 * q1.loc[six, "n_eff"]
        if cand == "peak_flops_per_chip":
            # A claimed peak set aside falls back to the datasheet's, as for any claim without one.
            pass
        frames = _apply_relations(q1, s1, h1, config)
        n = len(q1)
        bad = np.zeros(n, dtype=bool)
        nchecks = np.zeros(n, dtype=int)
        for f in frames:
            rows = f["row"].to_numpy(dtype=int)
            np.logical_or.at(bad, rows, (f["severity"] != "ok").to_numpy())
            np.add.at(nchecks, rows, 1)
        mfu = q1["mfu"].to_numpy()
        impossible = ~np.isnan(mfu) & (mfu > 1)
        plausible = np.isnan(mfu) | ((mfu >= config.band[0]) & (mfu <= config.band[1]))
        ok_with[cand] = stated & ~bad & ~impossible
        strong[cand] = ok_with[cand] & plausible
        implied[cand] = q1[cand].to_numpy(dtype=float)
        checks_left[cand] = nchecks
    if not ok_with:
        return empty
    names = list(ok_with)
    fit = np.column_stack([ok_with[c] for c in names])
    # Prefer the figures whose removal also leaves a plausible utilization.
    fit_strong = np.column_stack([strong[c] for c in names])
    fit = np.where(fit_strong.any(axis=1)[:, None], fit_strong, fit)
    count = fit.sum(axis=1)
    rows_local = np.flatnonzero(count >= 1)
    if len(rows_local) == 0:
        return empty
    details = []
    claimed_v = []
    expected_v = []
    subjects = []
    for i in rows_local:  # only claims with a disagreement and a culprit: few, and each needs its own words
        which = [names[j] for j in np.flatnonzero(fit[i])]
        subject = which[0]
        subjects.append(subject if len(which) == 1 else "claim")
        claimed_v.append(float(q0.at[i, subject]) if len(which) == 1 else np.nan)
        expected_v.append(float(implied[subject][i]) if len(which) == 1 else np.nan)
        stated_count = int(sum(1 for c in candidates if s0.at[i, c] in ("claimed",)))
        details.append(json.dumps({"candidates": which, "others": max(stated_count - 1, 0),
                                   "implied": {c: _finite(implied[c][i]) for c in which}}))
    frame = _findings_frame(bad_rows[rows_local], "C009", "info", "", np.array(claimed_v), np.array(expected_v),
                            detail=np.array(details, dtype=object))
    frame["quantity"] = np.array(subjects, dtype=object)
    return frame


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _solve_linear(values: np.ndarray, exps: np.ndarray, target: np.ndarray, constant: float) -> np.ndarray:
    """Solve each row's relation for its ``target`` term: x_t = k^(1/e_t) · Π_{i≠t} x_i^(-e_i/e_t).

    Computed with products (not exp/log) so that a copied or simple value stays exact to the last bit.
    """
    e_t = exps[target][:, None]
    powers = -exps[None, :] / e_t
    cols = np.arange(values.shape[1])[None, :]
    powers = np.where(cols == target[:, None], 0.0, powers)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        terms = np.where(powers == 0, 1.0, np.power(np.where(powers == 0, 1.0, values), powers))
        return constant ** (1.0 / e_t[:, 0]) * np.prod(terms, axis=1)


def _propagate_n_eff(q: pd.DataFrame, source: pd.DataFrame, how: pd.DataFrame, rows: np.ndarray, code: str) -> None:
    """A solved N fills ``params`` (there was neither a total nor an active count)."""
    q.loc[rows, "params"] = q.loc[rows, "n_eff"]
    source.loc[rows, "params"] = "derived"
    how.loc[rows, "params"] = code


def _check_relation(rule: type[RelationRule], rows: np.ndarray, q: pd.DataFrame, source: pd.DataFrame,
                    logs: np.ndarray, exps: np.ndarray, log_k: float, config: Config) -> pd.DataFrame:
    """One finding per row: the subject quantity (the first the claim states), its value and the expected one."""
    cols = list(rule.relation.quantities)
    src = source.loc[rows, list(rule.subjects)].to_numpy(dtype=object)
    claimed_mask = src == "claimed"
    pick = np.where(claimed_mask.any(axis=1), np.argmax(claimed_mask, axis=1), 0)
    subject_names = np.array(rule.subjects, dtype=object)[pick]
    subject_idx = np.array([cols.index(s) for s in rule.subjects])[pick]
    values = q.loc[rows, cols].to_numpy(dtype=float)
    expected = _solve_linear(values, exps, subject_idx, rule.relation.constant)
    claimed = values[np.arange(len(rows)), subject_idx]
    ok_tol, warn_tol = config.tolerances[rule.code]
    severity = severity_of_ratio(claimed / expected, ok_tol, warn_tol)
    frame = _findings_frame(rows, rule.code, severity, "", claimed, expected)
    frame["quantity"] = subject_names
    return frame


def _check_bounds(q: pd.DataFrame, source: pd.DataFrame, hw: pd.DataFrame, claims: Claims, config: Config,
                  catalog: Catalog) -> list[pd.DataFrame]:
    frames: list[pd.DataFrame] = []
    low, high = config.band

    def col(name: str) -> np.ndarray:
        return q[name].to_numpy(dtype=float)

    # U001: MFU (claimed or derived).
    mfu = col("mfu")
    rows = np.flatnonzero(~np.isnan(mfu))
    if len(rows):
        v = mfu[rows]
        sev = np.where(v > 1, "error", np.where((v < low) | (v > high), "warning", "ok"))
        frames.append(_findings_frame(rows, "U001", sev, "mfu", v, detail=source["mfu"].to_numpy(dtype=object)[rows]))

    # U002: HFU, and HFU >= MFU.
    hfu = col("hfu")
    rows = np.flatnonzero(~np.isnan(hfu))
    if len(rows):
        v = hfu[rows]
        m = mfu[rows]
        below = ~np.isnan(m) & (v < m * (1 - 1e-9))
        sev = np.where((v > 1) | below, "error", np.where((v < low) | (v > high), "warning", "ok"))
        detail = np.where(below, "below-mfu", source["hfu"].to_numpy(dtype=object)[rows])
        frames.append(_findings_frame(rows, "U002", sev, "hfu", v, np.where(below, m, np.nan), detail=detail))

    # U003: claimed achieved FLOP/s within the peak.
    ach = col("achieved_flops_per_chip")
    peak = col("peak_flops_per_chip")
    rows = np.flatnonzero((source["achieved_flops_per_chip"].to_numpy(dtype=object) == "claimed") & ~np.isnan(peak))
    if len(rows):
        sev = np.where(ach[rows] > peak[rows] * (1 + 1e-9), "error", "ok")
        frames.append(_findings_frame(rows, "U003", sev, "achieved_flops_per_chip", ach[rows], peak[rows]))

    # M001: the training state fits in chips x memory.
    need = col("min_chips_memory")
    chips = col("chips")
    rows = np.flatnonzero(~np.isnan(need) & ~np.isnan(chips))
    if len(rows):
        # The rule's own inequality (chips x memory >= bytes x N), not the rounded-up count: a derived chip
        # count can be fractional, and a claim exactly at the bound fits.
        state = config.bytes_per_param * col("params")[rows]
        fits = chips[rows] * col("memory_per_chip")[rows] >= state * (1 - 1e-9)
        sev = np.where(fits, "ok", "warning")
        frames.append(_findings_frame(rows, "M001", sev, "chips", chips[rows], need[rows]))

    # H001: hardware named but not in the catalog (close matches in the detail).
    text = hw["hardware_text"]
    unknown = text.notna() & hw["accelerator"].isna() & (text.astype(str).str.strip() != "")
    rows = np.flatnonzero(unknown.to_numpy(dtype=bool))
    if len(rows):
        matches = map_unique(text.iloc[rows], lambda t: "; ".join(catalog.close_matches(t)) if t else "")
        frames.append(_findings_frame(rows, "H001", "warning", "hardware", detail=matches.to_numpy(dtype=object)))

    # H002: known hardware without a peak for the precision.
    no_peak = hw["accelerator"].notna() & hw["catalog_peak"].isna()
    rows = np.flatnonzero(no_peak.to_numpy(dtype=bool))
    if len(rows):
        frames.append(_findings_frame(rows, "H002", "warning", "precision",
                                      detail=hw["precision"].to_numpy(dtype=object)[rows]))

    # H003: a TPU slice name counts TensorCores; a claimed chip count is checked against cores / cores per chip.
    cores = hw["slice_cores"].to_numpy(dtype=float)
    per = hw["cores_per_chip"].to_numpy(dtype=float)
    chips_src = source["chips"].to_numpy(dtype=object)
    rows = np.flatnonzero(~np.isnan(cores) & ~np.isnan(per) & (chips_src == "claimed"))
    if len(rows):
        expected_chips = cores[rows] / per[rows]
        sev = np.where(np.abs(chips[rows] - expected_chips) < 0.5, "ok", "warning")
        frames.append(_findings_frame(rows, "H003", sev, "chips", chips[rows], expected_chips))

    # V001: invalid fields (one finding per field).
    inv = claims.invalid
    if len(inv):
        frame = _findings_frame(inv["row"].to_numpy(), "V001", "error", "", detail=inv["message"].to_numpy(dtype=object))
        frame["quantity"] = inv["field"].to_numpy(dtype=object)
        frames.append(frame)

    # V002: duplicate ids (every occurrence after the first).
    ids = claims.info["id"]
    dup = ids.duplicated(keep="first") & claims.info["id_given"]
    rows = np.flatnonzero(dup.to_numpy(dtype=bool))
    if len(rows):
        frames.append(_findings_frame(rows, "V002", "warning", "id", detail=ids.to_numpy(dtype=object)[rows]))
    return frames


def _status(findings: pd.DataFrame, n: int) -> pd.Series:
    status = np.full(n, "pass", dtype=object)
    if len(findings):
        rank = findings["severity"].cat.codes.to_numpy()
        rows = findings["row"].to_numpy(dtype=int)
        worst = np.full(n, -1)
        np.maximum.at(worst, rows, rank)
        status = np.where(worst >= 3, "fail", np.where(worst >= 2, "warn", "pass")).astype(object)
        invalid_rows = rows[(findings["rule"] == "V001").to_numpy()]
        status[invalid_rows] = "invalid"
    return pd.Series(status, dtype=object)


def compute_optimal_split(compute: float, tokens_per_param: float) -> tuple[float, float]:
    """N and D for a compute budget at ``tokens_per_param`` tokens per parameter: C = 6·N·(r·N)."""
    n = math.sqrt(compute / (6.0 * tokens_per_param))
    return n, tokens_per_param * n


def exit_status(status: Sequence[str], fail_on: str) -> int:
    """0 when no claim reaches the fail level, 1 when one does (``fail_on``: warn | fail | never)."""
    if fail_on == "never":
        return 0
    levels = {"warn": {"warn", "fail", "invalid"}, "fail": {"fail", "invalid"}}[fail_on]
    return 1 if any(s in levels for s in status) else 0
