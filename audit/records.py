"""Results as records and words: the one place where numbers become findings with messages, derivations with
their values substituted, and JSON-ready claim records. Every renderer reads these.

Numbers written out are rounded to :data:`audit.rounding.SIGNIFICANT_DIGITS` significant digits, so that every
format is the same on every machine.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Iterator

import numpy as np
import pandas as pd

from audit import formatting as fmt
from audit.explain import causes_by_code
from audit.findings import SEVERITIES, STATUSES, Finding
from audit.flops import CONVENTION_LABELS
from audit.quantities import BY_NAME, INPUT_QUANTITIES, label
from audit.result import AuditResult
from audit.rounding import round_value
from audit.rules import RULES, RelationRule

#: Quantities shown for a claim, in order (internal helpers like ``n_eff`` are left out).
SHOWN_QUANTITIES: tuple[str, ...] = (*INPUT_QUANTITIES, "flops_per_token", "recompute_factor", "tokens_per_param",
                                     "memory_per_chip", "training_state_bytes", "min_chips_memory")


def _num(x: Any) -> float | None:
    """A finite number rounded for output, or None."""
    if x is None:
        return None
    x = float(x)
    return None if not math.isfinite(x) else round_value(x)


# ------------------------------------------------------------------------------------------------ findings


def describe(result: AuditResult, f: dict[str, Any], finding_index: int | None = None) -> Finding:
    """Turn one row of ``result.findings`` into a :class:`Finding` with its message and formula."""
    rule = RULES[f["rule"]]
    explanations = explanation_records(result, finding_index, f) if finding_index is not None else ()
    return Finding(claim_id=str(result.cell("info", int(f["row"]), "id")), rule=rule.code, name=rule.name,
                   severity=str(f["severity"]), quantity=str(f["quantity"]), claimed=_num(f["claimed"]),
                   expected=_num(f["expected"]), ratio=_num(f["ratio"]), message=rule.message(result, f),
                   formula=rule.formula_text(result, f), explanations=explanations)


def explanation_records(result: AuditResult, finding_index: int, f: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """The explanations of one finding as dicts with a sentence each."""
    positions = result.explanation_rows(finding_index)
    if len(positions) == 0:
        return ()
    causes = causes_by_code()
    quantity = str(f["quantity"])
    out = []
    # Cached column arrays (AuditResult.cell), not DataFrame.iloc + to_dict: ~250 µs a finding on a large batch.
    keys = ("cause", "factor", "corrected", "fit", "direction")
    for pos in positions.tolist():
        e = {k: result.cell("explanations", pos, k) for k in keys}
        cause = causes[e["cause"]]
        factor = float(e["factor"])
        corrected = _num(e["corrected"])
        if e["cause"] == "moe-active-share":
            params = float(result.cell("q", int(f["row"]), "params"))
            text = (f"{cause.name}: consistent with about {fmt.count(corrected or 0)} active of "
                    f"{fmt.count(params)} parameters (the figures fit {fmt.sig(100 / factor)} % of N)")
        elif e["fit"] == "in range":
            ratio = _num(f["ratio"]) or 1.0
            off = max(ratio, 1 / ratio) if ratio > 0 else float("nan")
            text = (f"{cause.name}: the figures differ by {fmt.ratio(off)}, within the {fmt.sig(factor)}x that this "
                    f"cause can account for")
        else:
            way = "too high" if float(e["direction"]) > 0 else "too low"
            after = (f"MFU would be {fmt.sig((corrected or 0) * 100)} %" if RULES[f["rule"]].utilization
                     else f"the ratio would be {fmt.ratio(corrected or float('nan'))}")
            text = (f"{cause.name} (x{_factor_text(factor)}): the {label(quantity)} figure looks {way} by "
                    f"that factor; fixed, {after}")
        out.append({"cause": cause.code, "name": cause.name, "factor": round_value(factor),
                    "direction": "high" if float(e["direction"]) > 0 else "low", "corrected": corrected,
                    "fit": str(e["fit"]), "text": text, "description": cause.description,
                    "reference": cause.reference})
    return tuple(out)


def _factor_text(x: float) -> str:
    if abs(x - round(x)) < 1e-6 and x < 1e6:
        return f"{int(round(x)):,}"
    if abs(x - 4 / 3) < 1e-9:
        return "4/3"
    return fmt.sig(x, 3)


def _selected(result: AuditResult, rows: np.ndarray | None, worse_than_ok: bool) -> pd.DataFrame:
    frame = result.findings
    if rows is not None:
        frame = frame[frame["row"].isin(rows)]
    if worse_than_ok:
        frame = frame[frame["severity"].astype(str) != "ok"]
    return frame


def iter_findings(result: AuditResult, rows: np.ndarray | None = None, worse_than_ok: bool = False
                  ) -> Iterator[Finding]:
    """Findings in claim order (worst first within a claim), optionally for some claims or non-ok ones only."""
    for _, finding in _rows_and_findings(result, rows, worse_than_ok):
        yield finding


def findings_by_row(result: AuditResult, rows: np.ndarray | None = None, worse_than_ok: bool = False
                    ) -> dict[int, list[Finding]]:
    """Findings grouped by claim row."""
    out: dict[int, list[Finding]] = {}
    for finding_row, finding in _rows_and_findings(result, rows, worse_than_ok):
        out.setdefault(finding_row, []).append(finding)
    return out


def _rows_and_findings(result: AuditResult, rows: np.ndarray | None, worse_than_ok: bool
                       ) -> Iterator[tuple[int, Finding]]:
    frame = _selected(result, rows, worse_than_ok)
    for i, f in zip(frame.index.tolist(), frame.to_dict("records")):
        yield int(f["row"]), describe(result, f, int(i))


# ------------------------------------------------------------------------------------- derived quantities


def derivation(result: AuditResult, row: int, name: str, sources: bool = True) -> str | None:
    """How a derived or catalog value was obtained, with the values substituted (and the datasheet's citation
    for a catalog figure unless ``sources`` is False)."""
    src = result.cell("source", row, name)
    how = result.cell("how", row, name)
    if src == "claimed" or src is None:
        return None
    if name == "peak_flops_per_chip" and src == "catalog":
        return catalog_note(result, row, sources)
    if name == "memory_per_chip" and how == "mix":
        parts = [result.accelerators().by_id(i) for i in result.cell("hardware", row, "mix")]
        return "datasheets: " + "; ".join(f"{a.name}, {fmt.sig(a.memory_gb, 4)} GB"
                                          + (f" ({a.source_memory})" if sources else "") for a in parts)
    if name == "memory_per_chip":
        accel = result.accelerators().by_id(str(how))
        cited = f" ({accel.source_memory})" if sources else ""
        return f"datasheet: {accel.name}, {fmt.sig(accel.memory_gb, 4)} GB{cited}"
    if how == "split":
        tpp = fmt.sig(result.config.tokens_per_param_optimal)
        return (f"compute-optimal split, {tpp} tokens per parameter (Hoffmann et al. 2022): "
                f"N = √(C / (6 · {tpp})), D = {tpp} · N")
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
    if name == "training_state_bytes":
        return "M001: " + RULES["M001"]._state_text(result, row)  # type: ignore[attr-defined]
    if name == "min_chips_memory":
        total = float(result.cell("q", row, "training_state_bytes"))
        mem = float(result.cell("q", row, "memory_per_chip"))
        return (f"M001: ⌈{fmt.sig(total / 1e12, 4)} TB / {fmt.sig(mem / 1e9, 4)} GB⌉ = "
                f"{int(result.cell('q', row, 'min_chips_memory')):,}")
    rule = RULES.get(str(how))
    if rule is not None and issubclass(rule, RelationRule):
        # A relation solved for N fills the parameter count: its formula is the one for N.
        subject = name if name in rule.relation.quantities else "n_eff"
        values = {q: float(result.cell("q", row, q)) for q in rule.relation.quantities}
        return f"{rule.code}: {rule.substituted(subject, values)}"
    if rule is not None:  # a value a non-relation rule set (E008: PUE 1.0 assumed)
        return f"{rule.code}: {rule.formula}"
    return str(how) if how else None


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


def catalog_note(result: AuditResult, row: int, sources: bool = True) -> str:
    """Which datasheet figure a peak came from, and whether the precision was assumed."""
    prec = result.cell("hardware", row, "precision")
    assumed = " (assumed: the claim does not state its precision)" if bool(
        result.cell("hardware", row, "precision_assumed")) else ""
    mix = result.cell("hardware", row, "mix")
    if mix is not None:
        parts = [result.accelerators().by_id(i) for i in mix]
        return (f"datasheets of a mix, dense {prec}{assumed}, a peak they share: "
                + "; ".join(f"{a.name} {fmt.sig((a.peak_flops(prec) or 0) / 1e12, 5)} TFLOP/s"
                            + (f" ({a.source_compute})" if sources else "") for a in parts))
    accel = result.accelerators().by_id(str(result.cell("hardware", row, "accelerator")))
    column = accel.resolve_precision(prec)
    said = f"{column} ({prec} stated)" if column != prec else str(prec)
    cited = f" ({accel.source_compute})" if sources else ""
    return f"datasheet: {accel.name}, dense {said}{assumed}: {fmt.sig(accel.peaks_tflops[column], 5)} TFLOP/s{cited}"


# ------------------------------------------------------------------------------------------------- records


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
        rec: dict[str, Any] = {"value": _num(v), "unit": BY_NAME[name].unit, "source": src,
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
    if phase_rows and result.phase_result is not None:
        sub = result.phase_result
        grouped = findings_by_row(sub, rows=np.array(phase_rows))
        record["phases"] = [claim_record(sub, i, grouped.get(i, [])) for i in phase_rows]
    return record


def _clean(x: Any) -> Any:
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def _present(v: Any) -> bool:
    return not (v is None or (isinstance(v, float) and math.isnan(v)))


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
    """Counts by status, by severity and by rule (non-ok findings); the findings of a run's phases count too."""
    status_counts = Counter(result.status.tolist())
    findings = result.findings[["rule", "severity"]].astype({"severity": str})
    if result.phase_result is not None:
        findings = pd.concat([findings, result.phase_result.findings[["rule", "severity"]].astype({"severity": str})],
                             ignore_index=True)
    sev = findings["severity"]
    by_rule = findings.loc[sev != "ok", "rule"].value_counts().sort_index()
    return {
        "claims": len(result),
        "status": {s: int(status_counts.get(s, 0)) for s in STATUSES},
        "findings": {s: int((sev == s).sum()) for s in SEVERITIES},
        "rules": {str(k): int(v) for k, v in by_rule.items()},
    }


def input_notes(result: AuditResult) -> dict[str, list[dict[str, Any]]]:
    """What was said about the inputs as they were read: columns not understood (with a did-you-mean) and
    notes, per file (a column that was not read is never dropped without a word)."""
    return {
        "unread_columns": [{"file": f, "column": c, "suggestion": s} for f, c, s in result.claims.unread_columns],
        "notes": [{"file": f, "message": m} for f, m in result.claims.notes],
    }


def to_json(result: AuditResult) -> dict[str, Any]:
    """``{"claims": [...], "summary": {...}}``: the stable JSON form of an audit; the summary also lists the input
    columns that were not read (``summary.input``)."""
    grouped = findings_by_row(result)
    claims = [claim_record(result, row, grouped.get(row, [])) for row in range(len(result))]
    return {"claims": claims, "summary": {**summary(result), "input": input_notes(result)}}


def estimate_json(result: AuditResult) -> dict[str, Any]:
    """``{"quantities": {...}, "findings": [...]}`` for ``estimate``."""
    grouped = findings_by_row(result)
    return {"quantities": quantity_records(result, 0), "findings": [f.to_dict() for f in grouped.get(0, [])]}
