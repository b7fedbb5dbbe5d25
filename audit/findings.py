"""Findings as plain records, and the words and formulas that explain them.

The engine produces numbers (a long table); this module turns one row of it into a :class:`Finding` with a
message and the formula with the values substituted. Every output format renders these same records.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
import pandas as pd

from audit import formatting as fmt
from audit.engine import AuditResult
from audit.quantities import BY_NAME
from audit.rules import RULES, RelationRule


@dataclass(frozen=True)
class Finding:
    """One check on one claim (flake8's ``Violation``, for training arithmetic)."""

    claim_id: str
    rule: str
    name: str
    severity: str
    quantity: str
    claimed: float | None
    expected: float | None
    ratio: float | None
    message: str
    formula: str
    #: The best-fitting known causes (see :mod:`audit.explain`), best first; empty when none fits.
    explanations: tuple[dict[str, Any], ...] = ()

    @property
    def explanation(self) -> str | None:
        """The best explanation as a sentence, or None."""
        return self.explanations[0]["text"] if self.explanations else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN as None)."""
        data = {f: getattr(self, f) for f in _FIELDS}
        data["explanations"] = [dict(e) for e in self.explanations]
        data["explanation"] = self.explanation
        for key in ("claimed", "expected", "ratio"):
            v = data[key]
            if v is not None and (not isinstance(v, float) or not math.isfinite(v)):
                data[key] = None
        return data


_FIELDS = ("claim_id", "rule", "name", "severity", "quantity", "claimed", "expected", "ratio", "message", "formula")


def label(name: str) -> str:
    """A quantity's display label."""
    if name == "n_eff":
        return "Parameters (N)"
    if name == "catalog_peak":
        return "Datasheet peak"
    q = BY_NAME.get(name)
    return q.label if q else name


def _num(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def solved_formula(rule: type[RelationRule], subject: str) -> tuple[str, list[str], list[str], float, bool]:
    """The relation solved for ``subject``: (symbol, numerator quantities, denominator quantities, constant,
    constant in numerator)."""
    exps = dict(rule.relation.exponents)
    e_s = exps[subject]
    num = [q for q, e in rule.relation.exponents if q != subject and -e / e_s > 0]
    den = [q for q, e in rule.relation.exponents if q != subject and -e / e_s < 0]
    return rule.symbols[subject], num, den, rule.relation.constant, (1 / e_s) > 0


def substituted(rule: type[RelationRule], subject: str, values: dict[str, float], symbols: dict[str, str] | None = None
                ) -> str:
    """``MFU = C / (chip_hours · 3600 · peak) = 5.48e23 / (1,022,362 × 3600 × 3.12e14) = 0.4769``."""
    symbols = symbols or rule.symbols
    sym, num, den, k, k_up = solved_formula(rule, subject)
    k_text = fmt.sig(k, 6)

    def side(names: list[str], with_k: bool, use_values: bool) -> str:
        parts = [k_text] if with_k and k != 1 else []
        for name in names:
            parts.append(fmt.operand(name, values[name]) if use_values else symbols[name])
        if not parts:
            return "1"
        joiner = " × " if use_values else " · "
        return joiner.join(parts)

    def expr(use_values: bool) -> str:
        top = side(num, k_up, use_values)
        bottom_parts = den + (["__k"] if (not k_up and k != 1) else [])
        if not bottom_parts:
            return top
        names = [n for n in bottom_parts if n != "__k"]
        bottom = side(names, "__k" in bottom_parts, use_values)
        if len(names) + ("__k" in bottom_parts) > 1:
            bottom = f"({bottom})"
        return f"{top} / {bottom}"

    result = _solve(rule, subject, values)
    return f"{symbols[subject]} = {expr(False)} = {expr(True)} = {fmt.operand(subject, result)}"


def _solve(rule: type[RelationRule], subject: str, values: dict[str, float]) -> float:
    exps = dict(rule.relation.exponents)
    total = math.log(rule.relation.constant)
    for name, e in exps.items():
        if name != subject:
            total -= e * math.log(values[name])
    return math.exp(total / exps[subject])


def _relation_message(rule: type[RelationRule], subject: str, claimed: float, expected: float, severity: str,
                      source: str) -> str:
    verb = "agrees with" if severity == "ok" else "differs from"
    what = "claimed" if source == "claimed" else source
    r = claimed / expected if expected else float("nan")
    return (f"{label(subject)} {fmt.value(subject, claimed)} ({what}) {verb} {fmt.value(subject, expected)} "
            f"implied by {rule.formula} (ratio {fmt.ratio(r)})")


def explanation_records(result: AuditResult, finding_index: int, f: Any) -> tuple[dict[str, Any], ...]:
    """The explanations of one finding as dicts with a sentence each."""
    ex = result.explanations
    if ex is None or len(ex) == 0:
        return ()
    groups = _explanation_groups(result)
    if finding_index not in groups:
        return ()
    rows = ex.iloc[groups[finding_index]]
    from audit.explain import causes_by_code

    causes = causes_by_code()
    out = []
    quantity = str(f["quantity"])
    for e in rows.to_dict("records"):
        cause = causes[e["cause"]]
        factor = float(e["factor"])
        corrected = _num(e["corrected"])
        if e["cause"] == "moe-active-share":
            params = float(result.cell("q", int(f["row"]), "params"))
            text = (f"{cause.name}: consistent with about {fmt.count(corrected or 0)} active of "
                    f"{fmt.count(params)} parameters (the figures fit {fmt.sig(100 / factor)} % of N)")
        elif e["fit"] == "in range":
            text = f"{cause.name}: a factor of {fmt.sig(_num(f['ratio']) or 0)} is within 1-{fmt.sig(factor)}x"
        else:
            way = "too high" if float(e["direction"]) > 0 else "too low"
            after = (f"MFU would be {fmt.sig((corrected or 0) * 100)} %" if f["rule"] in ("U001", "U002")
                     else f"the ratio would be {fmt.ratio(corrected or float('nan'))}")
            text = (f"{cause.name} (x{_factor_text(factor)}): the {label(quantity)} figure looks {way} by "
                    f"that factor; fixed, {after}")
        out.append({"cause": cause.code, "name": cause.name, "factor": factor,
                    "direction": "high" if float(e["direction"]) > 0 else "low", "corrected": corrected,
                    "fit": str(e["fit"]), "text": text, "description": cause.description,
                    "reference": cause.reference})
    return tuple(out)


def _explanation_groups(result: AuditResult) -> dict[int, np.ndarray]:
    """Positions of each finding's explanations (grouped once per result, not searched per finding)."""
    cached = getattr(result, "_explanation_groups", None)
    if cached is None:
        ex = result.explanations
        cached = {int(k): v for k, v in ex.groupby("finding").indices.items()} if len(ex) else {}
        result._explanation_groups = cached  # type: ignore[attr-defined]
    return cached


def _factor_text(x: float) -> str:
    if abs(x - round(x)) < 1e-6 and x < 1e6:
        return f"{int(round(x)):,}"
    if abs(x - 4 / 3) < 1e-9:
        return "4/3"
    return fmt.sig(x, 3)


def describe(result: AuditResult, f: Any, finding_index: int | None = None) -> Finding:
    """Turn one row of ``result.findings`` into a :class:`Finding` with its message and formula."""
    row = int(f["row"])
    rule = RULES[f["rule"]]
    severity = str(f["severity"])
    quantity = str(f["quantity"])
    claimed, expected, ratio = _num(f["claimed"]), _num(f["expected"]), _num(f["ratio"])
    detail = f["detail"]
    claim_id = str(result.cell("info", row, "id"))
    formula = rule.formula
    if issubclass(rule, RelationRule):
        values = {name: float(result.cell("q", row, name)) for name in rule.relation.quantities}
        formula = substituted(rule, quantity, values, _symbols_for(rule, result, row))
        message = _relation_message(rule, quantity, claimed or 0.0, expected or 0.0, severity,
                                    str(result.cell("source", row, quantity)))
        if rule.code in ("C003", "C005") and bool(result.cell("hardware", row, "precision_assumed")):
            message += f"; precision not stated, {result.cell('hardware', row, 'precision')} assumed"
    else:
        message = _bound_message(rule.code, result, row, claimed, expected, severity, detail)
        formula = _bound_formula(rule.code, result, row, claimed, expected) or rule.formula
    explanations = explanation_records(result, finding_index, f) if finding_index is not None else ()
    return Finding(claim_id=claim_id, rule=rule.code, name=rule.name, severity=severity, quantity=quantity,
                   claimed=claimed, expected=expected, ratio=ratio, message=message, formula=formula,
                   explanations=explanations)


def _symbols_for(rule: type[RelationRule], result: AuditResult, row: int) -> dict[str, str]:
    symbols = dict(rule.symbols)
    if "n_eff" in symbols and result.cell("how", row, "n_eff") == "active_params":
        symbols["n_eff"] = "N_active"
    return symbols


def _bound_message(code: str, result: AuditResult, row: int, claimed: float | None, expected: float | None,
                   severity: str, detail: Any) -> str:
    cfg = result.config
    low, high = cfg.band
    band = f"{fmt.sig(low * 100)}-{fmt.sig(high * 100)} %"
    if code in ("U001", "U002"):
        name = "MFU" if code == "U001" else "HFU"
        v = claimed or 0.0
        how = result.cell("how", row, name.lower())
        origin = "claimed" if detail in ("claimed", "below-mfu") else f"implied by {how}"
        if detail == "below-mfu":
            return (f"HFU {fmt.sig(v * 100)} % is below MFU {fmt.sig((expected or 0) * 100)} %: HFU counts "
                    f"recomputation on top of model FLOPs, so it cannot be lower")
        if v > 1:
            original = result.cell("text", row, name.lower()) if detail == "claimed" else None
            # Only a stated figure can be a percentage typed as a fraction; a derived one is arithmetic.
            looks_percent = detail == "claimed" and v <= 100 and not (
                original and ("%" in original or "percent" in original))
            hint = f" ({fmt.sig(v)} looks like a percentage: {fmt.sig(v / 100)} was meant?)" if looks_percent else ""
            return f"{name} {fmt.sig(v * 100)} % ({origin}) is above 100 %: physically impossible{hint}"
        if severity == "warning":
            side = "below" if v < low else "above"
            return f"{name} {fmt.sig(v * 100)} % ({origin}) is {side} the plausible band {band}"
        return f"{name} {fmt.sig(v * 100)} % ({origin}) is within the plausible band {band}"
    if code == "U003":
        verdict = "exceeds" if severity == "error" else "is within"
        return (f"Achieved {fmt.value('achieved_flops_per_chip', claimed)} per chip {verdict} the peak "
                f"{fmt.value('peak_flops_per_chip', expected)}")
    if code == "M001":
        params = float(result.cell("q", row, "params"))
        mem = float(result.cell("q", row, "memory_per_chip"))
        state = cfg.bytes_per_param * params
        base = (f"training state {fmt.sig(cfg.bytes_per_param)} B × {fmt.count(params)} params = "
                f"{fmt.sig(state / 1e12, 3)} TB needs at least {int(expected or 0):,} × {fmt.sig(mem / 1e9, 4)} GB")
        if severity == "ok":
            return f"{fmt.count(claimed or 0)} chips hold the {base}"
        return (f"{fmt.count(claimed or 0)} chips cannot hold the {base} (offloading or a wrong chip count or "
                f"model size?)")
    if code == "H001":
        text = result.cell("hardware", row, "hardware_text")
        close = f"; close matches: {detail}" if detail else "; no close match"
        return f"unknown accelerator {text!r}: no peak or memory, hardware checks skipped{close}"
    if code == "H002":
        return (f"no {detail} peak for {result.cell('hardware', row, 'accelerator_name')} in the catalog; "
                f"hardware checks skipped")
    if code == "C009":
        return _outlier_message(result, row, detail)
    if code == "C010":
        phases = len(result.phase_rows(row))
        verb = "agrees with" if severity == "ok" else "differs from"
        return (f"{label(quantity_of(result, row, claimed))} {fmt.value(quantity_of(result, row, claimed), claimed)} "
                f"(claimed) {verb} {fmt.value(quantity_of(result, row, claimed), expected)} summed over "
                f"{phases} phases (ratio {fmt.ratio((claimed or 0) / (expected or 1))})")
    if code == "H003":
        cores = float(result.cell("hardware", row, "slice_cores"))
        per = float(result.cell("hardware", row, "cores_per_chip"))
        text = result.cell("hardware", row, "hardware_text")
        if severity == "ok":
            return f"{int(claimed or 0):,} chips match the slice {text!r}: {int(cores):,} TensorCores / {int(per)} per chip"
        return (f"{int(claimed or 0):,} chips claimed, but the slice {text!r} counts TensorCores: "
                f"{int(cores):,} / {int(per)} per chip = {int(expected or 0):,} chips")
    if code == "V001":
        return str(detail)
    if code == "V002":
        return f"duplicate id {detail!r}: also used by an earlier claim"
    return str(detail or "")


def _outlier_message(result: AuditResult, row: int, detail: Any) -> str:
    import json

    data = json.loads(detail)
    cands = data["candidates"]
    text = result.claims.text
    def stated(name: str) -> str:
        if name == "catalog_peak":
            return f"the datasheet peak for {result.cell('hardware', row, 'accelerator_name')}"
        original = text.at[row, name] if name in text.columns else None
        return f"{label(name)} ({original})" if original else label(name)
    if len(cands) == 1:
        name = cands[0]
        implied = data["implied"].get(name)
        value = f"; the others imply {fmt.value(name, implied)}" if implied is not None else ""
        return (f"the {stated(name)} figure is the likely outlier: without it, the other {data['others']} stated "
                f"figures agree{value}")
    listed = ", ".join(stated(c) for c in cands)
    return (f"any one of these figures, if wrong, would explain the disagreement (the rest then agree): {listed}")


def quantity_of(result: AuditResult, row: int, claimed: float | None) -> str:
    """The quantity of a C010 finding (the one whose claimed value it carries)."""
    f = result.findings
    hit = f[(f["row"] == row) & (f["rule"] == "C010") & (f["claimed"] == claimed)]
    return str(hit["quantity"].iloc[0]) if len(hit) else "chip_hours"


def _bound_formula(code: str, result: AuditResult, row: int, claimed: float | None, expected: float | None
                   ) -> str | None:
    if code == "C010" and result.phase_result is not None:
        name = quantity_of(result, row, claimed)
        parts = [fmt.operand(name, float(result.phase_result.cell("q", i, name))) for i in result.phase_rows(row)]
        return f"{name} = Σ phases = {' + '.join(parts)} = {fmt.operand(name, expected or 0)}"
    if code == "M001":
        params = float(result.cell("q", row, "params"))
        mem = float(result.cell("q", row, "memory_per_chip"))
        bpp = result.config.bytes_per_param
        return (f"min chips = ⌈{fmt.sig(bpp)} · N / memory⌉ = ⌈{fmt.sig(bpp)} × {fmt.count(params)} / "
                f"{fmt.sci(mem, 4)}⌉ = {int(expected or 0):,}")
    if code == "U003":
        return f"achieved ≤ peak: {fmt.sci(claimed or 0, 4)} ≤ {fmt.sci(expected or 0, 4)}"
    return None


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
    frame = _selected(result, rows, worse_than_ok)
    for i, f in zip(frame.index.tolist(), frame.to_dict("records")):
        yield describe(result, f, int(i))


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
