"""The library API: audit files or records, estimate from a few quantities, and build JSON-ready records.

The command line is a thin layer over these functions; they never print.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from audit import formatting as fmt
from audit.catalog import load_catalog
from audit.claims import Claims, claims_from_records, load
from audit.engine import STATUSES, AuditResult, Config, audit, compute_optimal_split
from audit.findings import Finding, findings_by_row, label, substituted
from audit.phases import audit_claims
from audit.quantities import BY_NAME, INPUT_QUANTITIES
from audit.rules import RULES, SEVERITIES, RelationRule

#: Quantities shown for a claim, in order (internal helpers like ``n_eff`` are left out).
SHOWN_QUANTITIES: tuple[str, ...] = (*INPUT_QUANTITIES, "flops_per_token", "recompute_factor", "tokens_per_param",
                                     "memory_per_chip", "min_chips_memory")


def check(paths: Sequence[str] = (), config: Config | None = None, stdin: io.BufferedReader | None = None
          ) -> AuditResult:
    """Audit claim files (no paths: the bundled corpus of published runs)."""
    return audit_claims(load(paths, stdin), config)


def check_records(records: list[dict[str, Any]], config: Config | None = None) -> AuditResult:
    """Audit in-memory claims (dicts with the canonical field names)."""
    return audit_claims(claims_from_records(records), config)


def estimate(quantities: Mapping[str, Any], config: Config | None = None) -> AuditResult:
    """Solve for everything the given quantities determine.

    Given compute but neither parameters nor tokens, split it compute-optimally (about 20 tokens per
    parameter, Hoffmann et al. 2022) before solving the rest.
    """
    config = config or Config.default()
    record = {k: v for k, v in quantities.items() if v is not None}
    record.setdefault("id", "estimate")
    claims = claims_from_records([record], file="<estimate>")
    split_note = None
    values = claims.values
    if (not np.isnan(values.at[0, "compute_flops"]) and np.isnan(values.at[0, "params"])
            and np.isnan(values.at[0, "active_params"]) and np.isnan(values.at[0, "tokens"])):
        n, d = compute_optimal_split(float(values.at[0, "compute_flops"]), config.tokens_per_param_optimal)
        values.at[0, "params"] = n
        values.at[0, "tokens"] = d
        split_note = n, d
    # The split used C = 6ND to find N and D: C001 must not then "check" the compute against them.
    result = audit(claims, config, used={"C001": np.array([split_note is not None])})
    if split_note is not None:
        for name in ("params", "tokens"):
            result.source.at[0, name] = "derived"
            result.how.at[0, name] = "split"
        result.source.at[0, "n_eff"] = "derived"
    return result


def _clean(x: Any) -> Any:
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def derivation(result: AuditResult, row: int, name: str) -> str | None:
    """How a derived or catalog value was obtained, with the values substituted."""
    src = result.cell("source", row, name)
    how = result.cell("how", row, name)
    if src == "claimed" or src is None:
        return None
    if name == "peak_flops_per_chip" and src == "catalog":
        return catalog_note(result, row)
    if name == "memory_per_chip":
        accel = load_catalog().by_id(str(how))
        return f"datasheet: {accel.name}, {fmt.sig(accel.memory_gb, 4)} GB ({accel.source_memory})"
    if how == "split":
        cfg = result.config
        return (f"compute-optimal split, {fmt.sig(cfg.tokens_per_param_optimal)} tokens per parameter "
                f"(Hoffmann et al. 2022): N = √(C / (6 · {fmt.sig(cfg.tokens_per_param_optimal)})), "
                f"D = {fmt.sig(cfg.tokens_per_param_optimal)} · N")
    if name == "flops_per_token":
        return conventions_note(result, row)
    if name == "recompute_factor":
        mode = result.cell("architecture", row, "recompute_mode")
        base = "4/3: full recomputation repeats the forward pass (4 passes instead of 3)" if mode == "full" else \
            ("1: no recomputation" if mode == "none" else "selective: the attention core's forward pass again")
        with_arch = " (logit layer not recomputed, from the architecture)" if how == "recompute (architecture)" else ""
        return f"activation_recompute = {mode}: r = {base}{with_arch} = {fmt.sig(float(result.cell('q', row, name)), 4)}"
    if name == "tokens_per_param":
        return (f"tokens / params = {fmt.count(result.cell('q', row, 'tokens'))} / "
                f"{fmt.count(result.cell('q', row, 'params'))} = {fmt.sig(float(result.cell('q', row, name)), 4)}")
    if name == "min_chips_memory":
        return _min_chips_note(result, row)
    rule = RULES.get(str(how))
    if rule is not None and issubclass(rule, RelationRule):
        subject = "n_eff" if name == "params" and how == "C001" else name
        values = {q: float(result.cell("q", row, q)) for q in rule.relation.quantities}
        return f"{rule.code}: {substituted(rule, subject, values)}"
    return str(how) if how else None


#: How each FLOPs-per-token convention is shown, in order.
CONVENTION_LABELS: dict[str, str] = {
    "megatron-general": "Megatron-LM (GQA, gated MLP, MoE)",
    "megatron": "Narayanan et al. 2021",
    "palm": "PaLM 6N + 12·L·H·Q·T",
    "6N": "6N",
}


def conventions_note(result: AuditResult, row: int) -> str:
    """The FLOPs per token used, and every other convention the claim's fields allow, side by side."""
    def arch(col: str) -> Any:
        return result.cell("architecture", row, col)

    used = arch("flops_per_token_how")
    parts = []
    for key, text in CONVENTION_LABELS.items():
        v = arch(key)
        if v == v and v > 0:
            mark = " (used)" if key == used else ""
            parts.append(f"{text}: {fmt.sci(float(v), 4)}{mark}")
    assumed = "; head_dim assumed d_model / heads" if bool(arch("head_dim_assumed")) else ""
    causal = "; attention term halved for causal masking" if result.config.causal_halving else ""
    return "FLOPs per token by convention: " + "; ".join(parts) + assumed + causal


def catalog_note(result: AuditResult, row: int) -> str:
    """Which datasheet figure a peak came from, and whether the precision was assumed."""
    accel = load_catalog().by_id(str(result.cell("hardware", row, "accelerator")))
    prec = result.cell("hardware", row, "precision")
    assumed = " (assumed: the claim does not state its precision)" if bool(
        result.cell("hardware", row, "precision_assumed")) else ""
    return (f"datasheet: {accel.name}, dense {prec}{assumed}: {fmt.sig(accel.peaks_tflops[prec], 5)} TFLOP/s "
            f"({accel.source_compute})")


def _min_chips_note(result: AuditResult, row: int) -> str:
    cfg = result.config
    params = float(result.cell("q", row, "params"))
    mem = float(result.cell("q", row, "memory_per_chip"))
    return (f"M001: ⌈{fmt.sig(cfg.bytes_per_param)} B × {fmt.count(params)} / {fmt.sig(mem / 1e9, 4)} GB⌉ = "
            f"{int(result.cell('q', row, 'min_chips_memory')):,}")


def quantity_records(result: AuditResult, row: int) -> dict[str, dict[str, Any]]:
    """Per quantity with a value: value, unit, source, the original text (claimed) or how it was derived."""
    out: dict[str, dict[str, Any]] = {}
    text = result.claims.text
    for name in SHOWN_QUANTITIES:
        src = result.cell("source", row, name)
        if src is None:
            continue
        v = result.cell("q", row, name)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        q = BY_NAME[name]
        rec: dict[str, Any] = {"value": _clean(float(v)), "unit": q.unit, "source": src,
                               "display": fmt.value(name, float(v))}
        if src == "claimed":
            rec["text"] = result.cell("text", row, name) if name in text.columns else None
        else:
            rec["how"] = derivation(result, row, name)
            if result.cell("how", row, name) in RULES:
                rec["rule"] = result.cell("how", row, name)
        out[name] = rec
    return out


def claim_record(result: AuditResult, row: int, findings: list[Finding]) -> dict[str, Any]:
    """The JSON-ready record of one claim."""
    def info(col: str) -> Any:
        return result.cell("info", row, col)

    def hw(col: str) -> Any:
        return result.cell("hardware", row, col)

    extras = {str(k): result.claims.extras[k].iat[row] for k in result.claims.extras.columns if k != "phases"}
    record: dict[str, Any] = {
        "id": info("id"),
        "name": info("name"),
        "source": info("source"),
        "status": result.status.iat[row],
        "input": {"file": info("file"), "row": int(info("row"))},
        "hardware": {
            "text": hw("hardware_text"),
            "accelerator": hw("accelerator"),
            "name": hw("accelerator_name"),
            "precision": hw("precision"),
            "precision_assumed": bool(hw("precision_assumed")),
        },
        "quantities": quantity_records(result, row),
        "findings": [f.to_dict() for f in findings],
        "extra": {k: _extra_value(v) for k, v in extras.items() if _present(v)},
    }
    phase_rows = result.phase_rows(row)
    if phase_rows:
        sub = result.phase_result
        grouped = findings_by_row(sub, rows=np.array(phase_rows))
        record["phases"] = [claim_record(sub, i, grouped.get(i, [])) for i in phase_rows]
    return record


def _present(v: Any) -> bool:
    if v is None:
        return False
    if isinstance(v, float) and math.isnan(v):
        return False
    return True


#: Integers longer than this are shown as text: JSON readers (and Python's own int/str limit) choke on them.
_MAX_INT_DIGITS = 300


def _extra_value(v: Any) -> Any:
    """An extra field's value made JSON-safe, recursively: non-finite floats become None, huge ints text."""
    v = _clean(v)
    if isinstance(v, bool) or v is None or isinstance(v, (str, float)):
        return v
    if isinstance(v, int):
        # 3.32 bits per decimal digit; str() of a longer int raises in Python 3.11+ (the int/str limit).
        return v if v.bit_length() <= _MAX_INT_DIGITS * 3.32 else f"(an integer of about {int(v.bit_length() / 3.32)} digits)"
    if isinstance(v, (list, tuple)) or (hasattr(v, "tolist") and not isinstance(v, dict)):
        items = v.tolist() if hasattr(v, "tolist") else v
        return [_extra_value(x) for x in items]
    if isinstance(v, dict):
        return {str(k): _extra_value(x) for k, x in v.items()}
    return str(v)


def summary(result: AuditResult) -> dict[str, Any]:
    """Counts by status, by severity and by rule (non-ok findings)."""
    status_counts = Counter(result.status.tolist())
    sev = result.findings["severity"].astype(str)
    by_rule = result.findings.loc[sev != "ok", "rule"].value_counts().sort_index()
    return {
        "claims": len(result),
        "status": {s: int(status_counts.get(s, 0)) for s in STATUSES},
        "findings": {s: int((sev == s).sum()) for s in SEVERITIES},
        "rules": {str(k): int(v) for k, v in by_rule.items()},
    }


def to_json(result: AuditResult) -> dict[str, Any]:
    """``{"claims": [...], "summary": {...}}``: the stable JSON form of an audit."""
    grouped = findings_by_row(result)
    claims = [claim_record(result, row, grouped.get(row, [])) for row in range(len(result))]
    return {"claims": claims, "summary": summary(result)}


def estimate_json(result: AuditResult) -> dict[str, Any]:
    """``{"quantities": {...}, "findings": [...]}`` for ``estimate``."""
    grouped = findings_by_row(result)
    return {"quantities": quantity_records(result, 0),
            "findings": [f.to_dict() for f in grouped.get(0, [])]}


__all__ = ["check", "check_records", "estimate", "to_json", "estimate_json", "summary", "claim_record",
           "quantity_records", "derivation", "label", "Claims", "AuditResult", "Config"]
