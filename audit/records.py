"""Results as records and words: the one place where numbers become findings with messages, derivations with
their values substituted, and JSON-ready claim records. Every renderer reads these.

Numbers written out are rounded to :data:`audit.rounding.SIGNIFICANT_DIGITS` significant digits, so that every
format is the same on every machine.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from math import isfinite
from typing import Any, Iterator

import numpy as np
import pandas as pd

from audit import formatting as fmt
from audit.explain import causes_by_code
from audit.findings import SEVERITIES, STATUSES, Finding
from audit.flops import CONVENTION_LABELS
from audit.quantities import BY_NAME, INPUT_QUANTITIES, label
from audit.result import AuditResult
from audit.rounding import SIGNIFICANT_DIGITS, round_value
from audit.rules import RULES, RelationRule
from audit.sheets import sheet_label, split_sheet
from audit.state import BOUND_WORDS, UNBOUNDED

#: Quantities shown for a claim, in order (internal helpers like ``n_eff`` are left out).
SHOWN_QUANTITIES: tuple[str, ...] = (*INPUT_QUANTITIES, "flops_per_token", "recompute_factor", "tokens_per_param",
                                     "memory_per_chip", "training_state_bytes", "min_chips_memory")


def _num(x: Any) -> float | None:
    """A finite number rounded for output, or None."""
    if x is None:
        return None
    x = float(x)
    return None if not math.isfinite(x) else round_value(x)


def _nums(values: pd.Series) -> list[float | None]:
    """:func:`_num` of every value of a float column."""
    return _rounded(values.to_numpy(dtype=float).tolist())


def _rounded(xs: list[float]) -> list[float | None]:
    """:func:`_num` of each float (``round_value`` of a finite float is ``float(format(x, ".12g"))``: the same,
    without its type checks)."""
    spec = f".{SIGNIFICANT_DIGITS}g"
    return [float(format(x, spec)) if isfinite(x) else None for x in xs]


# ------------------------------------------------------------------------------------------------ findings


def describe(result: AuditResult, f: dict[str, Any], finding_index: int | None = None) -> Finding:
    """Turn one row of ``result.findings`` into a :class:`Finding` with its message and formula."""
    rule = RULES[f["rule"]]
    explanations = explanation_records(result, finding_index, f) if finding_index is not None else ()
    return Finding(claim_id=str(result.cell("info", int(f["row"]), "id")), rule=rule.code, name=rule.name,
                   severity=str(f["severity"]), quantity=str(f["quantity"]), claimed=_num(f["claimed"]),
                   expected=_num(f["expected"]), ratio=_num(f["ratio"]), message=rule.message(result, f),
                   formula=rule.formula_text(result, f), explanations=explanations)


def _slipped_figure(cause: Any, rule: str, subject: str, direction: float, way: str) -> tuple[str, str]:
    """The figure a cause says is wrong, and which way: the one its slip names when that is another figure of the
    rule's relation than the finding's subject (a per-GPU throughput given as the cluster's makes C004's tokens
    look too high: the throughput is too low), else the subject as the finding measures it."""
    relation = getattr(RULES.get(rule), "relation", None)
    exps = dict(relation.exponents) if relation is not None else {}
    # A figure the relation holds only through another (the wall-clock and the chips through the chip-hours of C003,
    # chip_hours = chips · 24 · days) moves it as that one does.
    for figure, via in _FEEDS.items():
        if figure not in exps and via in exps:
            exps[figure] = exps[via]
    named = [q for q, _ in cause.slips if q in exps and q != subject]
    if len(named) != 1 or subject not in exps or len(cause.slips) != 1:
        return subject, way
    # Σ eᵢ·ln xᵢ = ln k: a figure a stated f times too high moves the subject's ratio by f^(e_a/e_s).
    high = (direction > 0) == (exps[named[0]] / exps[subject] > 0)
    return named[0], "too high" if high else "too low"


#: Figures that enter a relation through one of its quantities, with its exponent: chip_hours = chips · 24 · days.
_FEEDS: dict[str, str] = {"wall_clock_days": "chip_hours", "chips": "chip_hours"}


def explanation_records(result: AuditResult, finding_index: int, f: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """The explanations of one finding as dicts with a sentence each."""
    positions = result.explanation_rows(finding_index)
    return _explanations_at(result, positions, f) if positions else ()


def _explanations_at(result: AuditResult, positions: list[int], f: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """The explanations at ``positions`` of ``result.explanations`` (one finding's, best first) as dicts."""
    causes = causes_by_code()
    quantity = str(f["quantity"])
    out = []
    # Cached column arrays (AuditResult.cell), not DataFrame.iloc + to_dict: ~250 µs a finding on a large batch.
    keys = ("cause", "factor", "corrected", "fit", "direction")
    for pos in positions:
        e = {k: result.cell("explanations", pos, k) for k in keys}
        cause = causes[e["cause"]]
        factor = float(e["factor"])
        corrected = _num(e["corrected"])
        if e["cause"] == "moe-active-share" and RULES[str(f["rule"])].utilization:  # the share for the band
            params = float(result.cell("q", int(f["row"]), "params"))
            low, high = result.config.band
            mfu = float(f["claimed"])
            text = (f"{cause.name}: with N the active parameters of a mixture of experts, about "
                    f"{fmt.count(corrected or 0)} active of {fmt.count(params)} would give an MFU of "
                    f"{fmt.sig(math.sqrt(low * high) * 100)} % ({fmt.count(low / mfu * params)} to "
                    f"{fmt.count(high / mfu * params)} active for {fmt.sig(low * 100)}-{fmt.sig(high * 100)} %)")
        elif e["cause"] == "moe-active-share":
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
            after = (f"{label(RULES[f['rule']].quantity)} would be {fmt.sig((corrected or 0) * 100)} %"
                     if RULES[f["rule"]].utilization
                     else f"the ratio would be {fmt.ratio(corrected or float('nan'))}")
            figure, way = _slipped_figure(cause, str(f["rule"]), quantity, float(e["direction"]), way)
            text = (f"{cause.name} (x{_factor_text(factor)}): the {label(figure)} figure looks {way} by "
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
    """Each selected finding with its claim row: the words from the rule, everything else read once per column
    (claim ids, the rounded numbers, which findings have explanations) rather than once per finding."""
    frame = _selected(result, rows, worse_than_ok)
    ids = result.claims.info["id"].to_numpy()
    groups = result.explanation_groups()
    for i, f in zip(frame.index.tolist(), _records(frame)):
        rule = RULES[f["rule"]]
        row = int(f["row"])
        where = groups.get(i)
        yield row, Finding(claim_id=str(ids[row]), rule=rule.code, name=rule.name, severity=str(f["severity"]),
                           quantity=str(f["quantity"]), claimed=_num(f["claimed"]), expected=_num(f["expected"]),
                           ratio=_num(f["ratio"]), message=rule.message(result, f),
                           formula=rule.formula_text(result, f),
                           explanations=() if where is None else _explanations_at(result, where, f))


#: Cell types that ``pandas``' ``maybe_box_native`` returns unchanged.
_NATIVE = frozenset({str, float, int, bool, tuple, type(None)})


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """``frame.to_dict("records")``, about four times faster: each column is read once with ``tolist()`` (Python
    numbers, as ``to_dict`` gives them), and the cells of object and extension columns are boxed as ``to_dict``
    boxes them only when one of them is not already a plain Python value."""
    from pandas.core.dtypes.cast import maybe_box_native

    columns = frame.columns.tolist()
    lists = []
    for name in columns:
        column = frame[name]
        values = column.tolist()
        if (column.dtype == object or isinstance(column.dtype, pd.api.extensions.ExtensionDtype)) and any(
                type(v) not in _NATIVE for v in values):
            values = [maybe_box_native(v) for v in values]
        lists.append(values)
    return [dict(zip(columns, cells)) for cells in zip(*lists)] if columns else [{} for _ in range(len(frame))]


def _finding_positions(result: AuditResult, rows: np.ndarray) -> np.ndarray:
    """Positions in ``result.findings`` of the findings of claims ``rows`` (sorted), by claim and in the frame's
    order within a claim: the findings' rows are sorted once (stably) per result, then each selection is a
    search, not a scan."""
    made = result._records.get("findings by row")
    if made is None:
        found = result.findings["row"].to_numpy(dtype=np.int64)
        order = np.argsort(found, kind="stable")
        made = result._records["findings by row"] = (order, found[order])
    order, by_row = made
    if not len(rows):
        return order[:0]
    if rows[-1] - rows[0] + 1 == len(rows):  # a range of claims: one slice
        return order[np.searchsorted(by_row, rows[0], "left"):np.searchsorted(by_row, rows[-1], "right")]
    return order[np.isin(by_row, rows)]


def _finding_dicts(result: AuditResult, rows: np.ndarray | None = None) -> dict[int, list[dict[str, Any]]]:
    """Every finding (of claims ``rows``, sorted; None: of every claim) as :meth:`Finding.to_dict` writes it,
    grouped by claim row, in the order of :func:`findings_by_row` (for the JSON records: no :class:`Finding`
    objects in between)."""
    frame = result.findings
    if rows is not None:
        frame = frame.iloc[_finding_positions(result, rows)]
    if not len(frame):
        return {}
    groups = result.explanation_groups()
    claimed, expected, ratio = (_nums(frame[c]) for c in ("claimed", "expected", "ratio"))
    out: dict[int, list[dict[str, Any]]] = {}
    records = _records(frame)
    finding_rows = frame["row"].tolist()
    id_column = result.column("info", "id")
    ids = {row: str(id_column[row]) for row in dict.fromkeys(finding_rows)}
    # Formulas a rule at a time, so that a rule reads its columns once for all its findings.
    by_rule: dict[str, list[int]] = {}
    for j, f in enumerate(records):
        by_rule.setdefault(f["rule"], []).append(j)
    formulas: list[str] = [""] * len(records)
    for code, positions in by_rule.items():
        for j, text in zip(positions, RULES[code].formula_texts(result, [records[j] for j in positions])):
            formulas[j] = text
    for j, (i, row, f) in enumerate(zip(frame.index.tolist(), finding_rows, records)):
        rule = RULES[f["rule"]]
        where = groups.get(i)
        explanations = () if where is None else _explanations_at(result, where, f)
        record = {"claim_id": ids[row], "rule": rule.code, "name": rule.name, "severity": str(f["severity"]),
                  "quantity": str(f["quantity"]), "claimed": claimed[j], "expected": expected[j], "ratio": ratio[j],
                  "message": rule.message(result, f), "formula": formulas[j],
                  "explanations": list(explanations),
                  "explanation": explanations[0]["text"] if explanations else None}
        group = out.get(row)
        if group is None:
            out[row] = [record]
        else:
            group.append(record)
    return out


# ------------------------------------------------------------------------------------- derived quantities


def derivation(result: AuditResult, row: int, name: str, sources: bool = True) -> str | None:
    """How a derived or catalog value was obtained, with the values substituted (and the datasheet's citation
    for a catalog figure unless ``sources`` is False)."""
    return _derivation(result, row, name, result.cell("source", row, name), result.cell("how", row, name), sources)


def _derivation(result: AuditResult, row: int, name: str, src: Any, how: Any, sources: bool = True) -> str | None:
    """:func:`derivation`, given the value's source and how it was derived."""
    if src == "claimed" or src is None:
        return None
    if name == "peak_flops_per_chip" and src == "catalog":
        return catalog_note(result, row, sources)
    if name == "memory_per_chip" and how == "mix":
        parts = [result.accelerators().by_id(i) for i in result.cell("hardware", row, "mix")]
        return "datasheets: " + "; ".join(f"{a.name}, {fmt.memory(a.memory_gb * 1e9)}"
                                          + (f" ({a.source_memory})" if sources else "") for a in parts)
    if name == "memory_per_chip":
        accel = result.accelerators().by_id(str(how))
        cited = f" ({accel.source_memory})" if sources else ""
        return f"datasheet: {accel.name}, {fmt.memory(accel.memory_gb * 1e9)}{cited}"
    if how == "split":
        tpp = fmt.sig(result.config.tokens_per_param_optimal)
        return (f"compute-optimal split, {tpp} tokens per parameter (Hoffmann et al. 2022): "
                f"N = √(C / (6 · {tpp})), D = {tpp} · N")
    if name == "flops_per_token":
        return conventions_note(result, row)
    if name == "recompute_factor" and isinstance(result.cell("architecture", row, "recompute_mode"), str):
        # From the claim's activation_recompute; a factor a relation derived (C015: HFU / MFU) says so below.
        mode = result.cell("architecture", row, "recompute_mode")
        base = "4/3: full recomputation repeats the forward pass (4 passes instead of 3)" if mode == "full" else \
            ("1: no recomputation" if mode == "none" else "selective: the attention core's forward pass again")
        with_arch = " (logit layer not recomputed, from the architecture)" if how == "recompute (architecture)" else ""
        return f"activation_recompute = {mode}: r = {base}{with_arch} = {fmt.sig(float(result.cell('q', row, name)), 4)}"
    if name == "tokens_per_param":
        return (f"tokens / params = {fmt.count(result.cell('q', row, 'tokens'))} / "
                f"{fmt.count(result.cell('q', row, 'params'))} = {fmt.sig(float(result.cell('q', row, name)), 4)}")
    rule = RULES.get(str(how))
    if rule is not None:  # a value a rule derived outside any relation says itself how (M001's training state)
        text = rule.derivation_text(result, row, name)
        if text is not None:
            return text
    if rule is not None and issubclass(rule, RelationRule):
        return f"{rule.code}: {rule.substituted_texts(result, [row], _relation_subject(rule, name))[0]}"
    if rule is not None:  # a value a non-relation rule set (E008: PUE 1.0 assumed)
        return f"{rule.code}: {rule.formula}"
    return str(how) if how else None


#: Quantities whose derivation :func:`_derivation` writes in words of its own, whatever derived them.
_SPECIAL_DERIVATIONS = frozenset({"peak_flops_per_chip", "memory_per_chip", "flops_per_token", "recompute_factor",
                                  "tokens_per_param", "training_state_bytes", "min_chips_memory"})


def _relation_subject(rule: type[RelationRule], name: str) -> str:
    """The quantity a relation's derivation of ``name`` is solved for: a relation solved for N fills the parameter
    count, so its formula is the one for N."""
    return name if name in rule.relation.quantities else "n_eff"


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


def _conventions_notes(result: AuditResult, rows: np.ndarray) -> list[str]:
    """:func:`conventions_note` of each of ``rows``, a column at a time."""
    used = result.column("architecture", "flops_per_token_how")[rows].tolist()
    labelled = []
    for key, text in CONVENTION_LABELS.items():
        values = result.column("architecture", key)[rows].astype(float)
        shown = np.flatnonzero(values > 0)  # NaN is not > 0
        if len(shown):
            labelled.append((key, text, dict(zip(shown.tolist(), fmt.scis(values[shown].tolist(), 4)))))
    assumed = result.column("architecture", "head_dim_assumed")[rows].tolist()
    causal = "; attention term halved for causal masking" if result.config.causal_halving else ""
    out = []
    for j, how in enumerate(used):
        parts = [f"{text}: {texts[j]}{' (used)' if key == how else ''}"
                 for key, text, texts in labelled if j in texts]
        out.append("FLOPs per token by convention: " + "; ".join(parts)
                   + ("; head_dim assumed d_model / heads" if bool(assumed[j]) else "") + causal)
    return out


def _tokens_per_param_notes(result: AuditResult, rows: np.ndarray) -> list[str]:
    """The derivation of the tokens per parameter of each of ``rows`` (:func:`derivation`), a column at a time."""
    def column(name: str) -> list[float]:
        return result.column("q", name)[rows].astype(float).tolist()

    tokens, params = fmt.counts(column("tokens")), fmt.counts(column("params"))
    ratio = fmt.sigs(column("tokens_per_param"), 4)
    return [f"tokens / params = {t} / {p} = {r}" for t, p, r in zip(tokens, params, ratio)]


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
    return _QuantityColumns(result).records(row)


class _QuantityColumns:
    """The columns :func:`quantity_records` reads, each read once for many rows (``result.cell`` costs about
    1 µs a value, and a claim has 43 quantities to look at)."""

    def __init__(self, result: AuditResult) -> None:
        self.result = result
        text = result.claims.text
        self.hardware = {c: result.hardware[c].to_numpy() for c in ("mix", "precision", "precision_assumed",
                                                                    "accelerator")}
        self.columns = []
        for name in SHOWN_QUANTITIES:
            self.columns.append((name, BY_NAME[name].unit, result.column("source", name),
                                 result.q[name].to_numpy(), result.how[name].to_numpy(),
                                 text[name].to_numpy() if name in text.columns else None))
        #: Texts of derivations that do not depend on the row (:func:`derivation`).
        self.cache: dict[Any, str] = {}

    def derivation(self, result: AuditResult, row: int, name: str, src: Any, how: Any) -> str | None:
        """:func:`derivation`; a datasheet's peak or memory, which does not depend on the row, is made once for
        each accelerator, mix and precision."""
        if name == "memory_per_chip" or (name == "peak_flops_per_chip" and src == "catalog"):
            hardware = self.hardware
            mix = hardware["mix"][row]
            key = (name, src, how, None if mix is None else tuple(mix)) + (
                (hardware["precision"][row], bool(hardware["precision_assumed"][row]), hardware["accelerator"][row])
                if name == "peak_flops_per_chip" else ())
            text = self.cache.get(key)
            if text is None:
                text = self.cache[key] = _derivation(result, row, name, src, how)  # type: ignore[assignment]
            return text
        return _derivation(result, row, name, src, how)

    def all_records(self, rows: np.ndarray | None = None) -> dict[int, dict[str, dict[str, Any]]]:
        """:func:`quantity_records` of claims ``rows`` (None: every claim) by row, made a column at a time: the
        rows where a quantity has a value found with numpy, each distinct value rounded and formatted once, and
        the derivations that can be made a column at a time made so (:meth:`_derivations`)."""
        result = self.result
        if rows is None:
            rows = np.arange(len(result))
        out: dict[int, dict[str, dict[str, Any]]] = {row: {} for row in rows.tolist()}
        for name, unit, sources, values, hows, texts in self.columns:
            bounds = _bounds_column(result, name)
            numbers = values[rows]
            numbers = numbers.astype(float) if numbers.dtype.kind != "f" else numbers
            at = np.flatnonzero(np.not_equal(sources[rows], None) & ~np.isnan(numbers))
            if not len(at):
                continue
            found = numbers[at]
            at = rows[at]
            # Distinct by bit pattern, so that -0.0 and 0.0 (equal, but written differently) stay apart.
            _, first, inverse = np.unique(found.view(np.int64), return_index=True, return_inverse=True)
            distinct = found[first].tolist()
            rounded = _rounded(distinct)
            shown = fmt.values(name, distinct)
            made = self._derivations(name, at, sources, hows)
            for row, k, src, how in zip(at.tolist(), inverse.ravel().tolist(), sources[at].tolist(),
                                        hows[at].tolist()):
                # _record, inline: it runs for every quantity of every claim.
                rec: dict[str, Any] = {"value": rounded[k], "unit": unit, "source": src, "display": shown[k]}
                if bounds is not None and bounds[row]:
                    _mark_bound(rec, int(bounds[row]))
                if src == "claimed":
                    rec["text"] = texts[row] if texts is not None else None
                else:
                    text = made.get(row)
                    rec["how"] = text if text is not None else self.derivation(result, row, name, src, how)
                    if how in RULES:
                        rec["rule"] = how
                out[row][name] = rec
        return out

    def _derivations(self, name: str, rows: np.ndarray, sources: np.ndarray, hows: np.ndarray) -> dict[int, str]:
        """The derivations (:func:`derivation`) of the values of ``name`` at ``rows`` that can be made a column at
        a time: those a relation derived (:meth:`RelationRule.substituted_texts`, a relation at a time), the
        tokens per parameter and the FLOPs per token; the others are made one by one."""
        if name in ("tokens_per_param", "flops_per_token"):
            src, how = sources[rows], hows[rows]
            rows = rows[np.not_equal(src, "claimed") & np.not_equal(src, None) & np.not_equal(how, "split")]
            if not len(rows):
                return {}
            made = (_tokens_per_param_notes(self.result, rows) if name == "tokens_per_param"
                    else _conventions_notes(self.result, rows))
            return dict(zip(rows.tolist(), made))
        return self._relation_derivations(name, rows, sources, hows)

    def _relation_derivations(self, name: str, rows: np.ndarray, sources: np.ndarray,
                              hows: np.ndarray) -> dict[int, str]:
        """The derivations (:func:`derivation`) of the values of ``name`` that a relation derived, made a relation
        at a time (:meth:`RelationRule.substituted_texts`); the others are made one by one."""
        if name in _SPECIAL_DERIVATIONS and name != "peak_flops_per_chip":
            return {}
        groups: dict[str, list[int]] = {}
        for row, src in zip(rows.tolist(), sources[rows].tolist()):
            # A peak is a datasheet's unless a relation derived it (C003 for a part the catalog does not know).
            if src != "claimed" and src is not None and hows[row] != "split" and not (
                    src == "catalog" and name == "peak_flops_per_chip"):
                rule = RULES.get(str(hows[row]))
                if rule is not None and issubclass(rule, RelationRule):
                    groups.setdefault(rule.code, []).append(row)
        made: dict[int, str] = {}
        for code, members in groups.items():
            rule = RULES[code]
            subject = _relation_subject(rule, name)
            for row, text in zip(members, rule.substituted_texts(self.result, members, subject)):  # type: ignore[attr-defined]
                made[row] = f"{code}: {text}"
        return made

    def records(self, row: int) -> dict[str, dict[str, Any]]:
        """:func:`quantity_records` of one row."""
        out: dict[str, dict[str, Any]] = {}
        for name, unit, sources, values, hows, texts in self.columns:
            src = sources[row]
            if src is None:
                continue
            v = values[row]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            out[name] = self._record(row, name, unit, src, _num(v), fmt.value(name, float(v)), hows, texts)
        return out

    def _record(self, row: int, name: str, unit: str, src: str, value: Any, display: str, hows: Any,
                texts: Any, how_text: str | None = None) -> dict[str, Any]:
        """One quantity's record: its value, unit, source and display, with its text as stated or how it was
        derived (``how_text``: that derivation, when already made)."""
        rec: dict[str, Any] = {"value": value, "unit": unit, "source": src, "display": display}
        if (way := self.result.bound(row, name)) != 0:
            _mark_bound(rec, way)
        if src == "claimed":
            rec["text"] = texts[row] if texts is not None else None
        else:
            rec["how"] = how_text if how_text is not None else self.derivation(self.result, row, name, src, hows[row])
            if hows[row] in RULES:
                rec["rule"] = hows[row]
        return rec


#: What the display of a value written as a bound, or derived from one, starts with ("≥ 19.9 %"); a value
#: bounded neither way says so after it.
_BOUND_MARKS: dict[int, str] = {-1: "≤ ", 1: "≥ ", UNBOUNDED: ""}


def _bounds_column(result: AuditResult, name: str) -> np.ndarray | None:
    """Which way each claim's value of ``name`` may be off (AuditResult.bounds), or None when none is a bound."""
    if result.bounds is None or name not in result.bounds.columns:
        return None
    column = result.column("bounds", name)
    return column if column.any() else None


def _mark_bound(rec: dict[str, Any], way: int) -> None:
    """A quantity's record said to be a bound: ``bound`` ("at most", "at least", "either way") and its display
    ("≤ 504,000 chip-h", "≥ 19.9 %", "3.97 USD/chip-h (unbounded: from figures that are bounds both ways)")."""
    rec["bound"] = BOUND_WORDS[way]
    rec["display"] = (f"{_BOUND_MARKS[way]}{rec['display']}" if way != UNBOUNDED
                      else f"{rec['display']} (unbounded: from figures that are bounds both ways)")


def claim_record(result: AuditResult, row: int, findings: list[Finding]) -> dict[str, Any]:
    """The JSON-ready record of one claim (the columns it reads are read once per result: :class:`ClaimRecords`,
    kept while the result lives)."""
    records = result._records.get("claims")
    if records is None:
        records = result._records["claims"] = ClaimRecords(result)
    return records.record(row, [f.to_dict() for f in findings])


class ClaimRecords:
    """:func:`claim_record` for many claims of one result: every column it reads is read once, here.

    :meth:`record` makes one claim's record (the words of its phases' findings with it: a report that details a
    few claims of a large batch); :meth:`chunk` makes those of a range of claims, the words of all their findings
    and phases' findings a rule at a time (:func:`claim_chunks`, which writes every claim).
    """

    def __init__(self, result: AuditResult, extra_order: dict[str, None] | None = None,
                 phase_rows_before: int = 0) -> None:
        self.result = result
        #: Added to the input row of each claim (:meth:`_every_phase`: a phase's row among the phases of the input).
        self.row_offset = 0
        self.phase_rows_before = phase_rows_before
        info, hardware = result.claims.info, result.hardware
        self.info = {c: info[c].to_numpy() for c in ("id", "name", "source", "file", "row")}
        self.hardware = {c: hardware[c].to_numpy() for c in ("hardware_text", "accelerator", "accelerator_name",
                                                               "precision", "precision_assumed")}
        self.status = result.status.to_numpy()
        extras = result.claims.extras
        self.extras = [(str(k), extras[k].to_numpy()) for k in extras.columns if k != "phases"]
        if extra_order is not None:  # in the order the batches so far met them (claim_chunks)
            extra_order.update(dict.fromkeys(k for k, _ in self.extras))
            place = {k: i for i, k in enumerate(extra_order)}
            self.extras.sort(key=lambda item: place[item[0]])
        self.quantities = _QuantityColumns(result)
        self._phases: tuple[dict[int, list[int]], ClaimRecords] | None = None

    def record(self, row: int, findings: list[dict[str, Any]],
               quantities: dict[str, dict[str, Any]] | None = None,
               phases: tuple[dict[int, list[dict[str, Any]]], dict[int, dict[str, dict[str, Any]]]] | None = None
               ) -> dict[str, Any]:
        """The record of claim ``row`` with its ``findings`` (as :meth:`Finding.to_dict` writes them) and its
        ``quantities`` (default: :func:`quantity_records` of the row); ``phases``: the findings and quantities of
        the phases, by phase row, when already made (:meth:`chunk`), else made for this claim's phases."""
        info, hw = self.info, self.hardware
        record: dict[str, Any] = {
            "id": info["id"][row],
            "name": info["name"][row],
            "source": info["source"][row],
            "status": self.status[row],
            "input": _input(info["file"][row], int(info["row"][row]) + self.row_offset),
            "hardware": {
                "text": hw["hardware_text"][row],
                "accelerator": hw["accelerator"][row],
                "name": hw["accelerator_name"][row],
                "precision": hw["precision"][row],
                "precision_assumed": bool(hw["precision_assumed"][row]),
            },
            "quantities": self.quantities.records(row) if quantities is None else quantities,
            "findings": findings,
            "extra": {k: extra_value(v) for k, v in ((k, values[row]) for k, values in self.extras)
                      if _present(v)},
        }
        made = self._phase_rows(row)
        if made:
            by_parent, phase_records = made
            if phases is None:
                grouped = {i: [f.to_dict() for f in fs]
                           for i, fs in findings_by_row(phase_records.result, rows=np.array(by_parent[row])).items()}
                record["phases"] = [phase_records.record(i, grouped.get(i, [])) for i in by_parent[row]]
            else:
                grouped, every = phases
                record["phases"] = [phase_records.record(i, grouped.get(i, []), every[i]) for i in by_parent[row]]
        return record

    def chunk(self, start: int, stop: int) -> list[dict[str, Any]]:
        """The records of claims ``start`` to ``stop`` (excluded), each column read once for all of them: the
        words of their findings a rule at a time, their quantities a column at a time, and the same for their
        phases (:func:`to_json`, :func:`claim_chunks`)."""
        rows = np.arange(start, stop)
        findings = _finding_dicts(self.result, rows)
        quantities = self.quantities.all_records(rows)
        phases = None
        every = self._every_phase()
        if every is not None:
            sub, parent = every[1], self.result.phase_parent
            at = np.flatnonzero((parent >= start) & (parent < stop))
            phases = (_finding_dicts(sub.result, at), sub.quantities.all_records(at))
        return [self.record(row, findings.get(row, []), quantities[row], phases) for row in range(start, stop)]

    def _phase_rows(self, row: int) -> tuple[dict[int, list[int]], ClaimRecords] | None:
        """The phases of every claim (grouped once) and the records of the phases, when claim ``row`` has phases."""
        every = self._every_phase()
        return every if every is not None and row in every[0] else None

    def _every_phase(self) -> tuple[dict[int, list[int]], ClaimRecords] | None:
        """The phase rows of every claim (grouped once) and the records of the phases; None without phases."""
        result = self.result
        if result.phase_parent is None or result.phase_result is None:
            return None
        if self._phases is None:
            by_parent: dict[int, list[int]] = {}
            for i, parent in enumerate(result.phase_parent.tolist()):
                by_parent.setdefault(int(parent), []).append(i)
            self._phases = (by_parent, ClaimRecords(result.phase_result))
            self._phases[1].row_offset = self.phase_rows_before
        return self._phases


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


def extra_value(v: Any) -> Any:
    """An extra field's value made JSON-safe, recursively: non-finite floats become None, huge ints text."""
    if isinstance(v, (np.datetime64, np.timedelta64, dt.date, dt.time, dt.timedelta)):
        # A spreadsheet's date cell (a datetime64 column): ISO 8601 text, None when missing (NaT). numpy's
        # tolist() of a datetime64[ns] is an int of nanoseconds, which is no date (and a timedelta64 is an integer).
        if v is pd.NaT or (isinstance(v, (np.datetime64, np.timedelta64)) and np.isnat(v)):
            return None
        if isinstance(v, (np.datetime64, np.timedelta64)):
            v = pd.Timestamp(v) if isinstance(v, np.datetime64) else pd.Timedelta(v)
        return v.isoformat()
    v = _clean(v)
    if isinstance(v, bool) or v is None or isinstance(v, (str, float)):
        return v
    if isinstance(v, int):
        # 3.32 bits per decimal digit; str() of a longer int raises in Python 3.11+ (the int/str limit).
        return v if v.bit_length() <= _MAX_INT_DIGITS * 3.32 else f"(an integer of about {int(v.bit_length() / 3.32)} digits)"
    if isinstance(v, (list, tuple)) or (hasattr(v, "tolist") and not isinstance(v, dict)):
        # An array's own items (numpy scalars, which the branches above read), not tolist()'s ints for dates.
        items = list(v) if isinstance(v, np.ndarray) else v.tolist() if hasattr(v, "tolist") else v
        return [extra_value(x) for x in items]
    if isinstance(v, dict):
        return {str(k): extra_value(x) for k, x in v.items()}
    return str(v)


def summary(result: AuditResult) -> dict[str, Any]:
    """Counts by status, by severity and by rule (non-ok findings); the findings of a run's phases count too."""
    status_counts = Counter(result.status.tolist())
    tally = _tally(result.findings)
    if result.phase_result is not None:
        tally += _tally(result.phase_result.findings)
    by_severity: Counter[str] = Counter()
    by_rule: Counter[str] = Counter()
    for (rule, severity), count in tally.items():
        by_severity[severity] += count
        if severity != "ok":
            by_rule[rule] += count
    return {
        "claims": len(result),
        "status": {s: int(status_counts.get(s, 0)) for s in STATUSES},
        "findings": {s: by_severity.get(s, 0) for s in SEVERITIES},
        "rules": {k: by_rule[k] for k in sorted(by_rule)},
    }


def _tally(findings: pd.DataFrame) -> Counter[tuple[str, str]]:
    """How many findings of each (rule, severity), both as text (``str`` of the cell, as ``astype(str)`` spells
    it; a missing one "nan"), counted as pairs of categorical codes (a batch has millions of findings and a few
    dozen pairs): one ``bincount``, about a tenth of the time of pandas' groupby on the two columns."""
    if not len(findings):
        return Counter()
    rule, severity = pd.Categorical(findings["rule"]), pd.Categorical(findings["severity"])
    width = len(severity.categories) + 1  # code -1 (missing) counts as a category of its own
    pairs = (rule.codes.astype(np.int64) + 1) * width + severity.codes.astype(np.int64) + 1
    counts = np.bincount(pairs)
    rules = ["nan", *(str(x) for x in rule.categories)]
    severities = ["nan", *(str(x) for x in severity.categories)]
    return Counter({(rules[k // width], severities[k % width]): int(counts[k]) for k in np.flatnonzero(counts)})


def input_notes(result: AuditResult) -> dict[str, list[dict[str, Any]]]:
    """What was said about the inputs as they were read: columns not understood (with a did-you-mean) and
    notes, per file (a column that was not read is never dropped without a word)."""
    return input_notes_of(result.claims.unread_columns, result.claims.notes)


def input_notes_of(unread_columns: list[tuple[str, str, str | None]], notes: list[tuple[str, str]]
                   ) -> dict[str, list[dict[str, Any]]]:
    """:func:`input_notes` from the (file, column, suggestion) of each column not read and the (file, message)
    of each note (of one input, or added up across batches: :class:`audit.stream.StreamSummary`)."""
    return {
        "unread_columns": [{**_in_file(f), "column": c, "suggestion": s} for f, c, s in unread_columns],
        "notes": [{**_in_file(f), "message": m} for f, m in notes],
    }


def _in_file(file: Any) -> dict[str, Any]:
    """``{"file": ...}``; for a sheet of a workbook read with ``--sheet all`` (``book.xlsx[cluster-b]``), the file
    and the sheet apart: ``{"file": "book.xlsx", "sheet": "cluster-b"}`` (:mod:`audit.sheets`)."""
    path, sheet = split_sheet(file)
    return {"file": path} if sheet is None else {"file": path, "sheet": sheet}


def place(said: dict[str, Any]) -> Any:
    """The file of a claim's ``input``, a note or a column not read, as the text reports name it: with its sheet,
    when it has one (``book.xlsx[cluster-b]``, :func:`audit.sheets.sheet_label`)."""
    return said["file"] if "sheet" not in said else sheet_label(said["file"], said["sheet"])


def _input(file: Any, row: int) -> dict[str, Any]:
    """A claim's ``input``: its file (and sheet, :func:`_in_file`) and its row."""
    return {**_in_file(file), "row": row}


#: Claims whose records are made (and written) at once by :func:`claim_chunks`: the records of a benchmark claim
#: (bench/scale.py) take about 18 kB of memory and 8 kB of JSON text, so a chunk holds about 20 MB whatever the size
#: of the batch; larger chunks are no faster, much smaller ones slower.
CHUNK_CLAIMS = 1_000


def claim_chunks(result: AuditResult, size: int | None = None, extra_order: dict[str, None] | None = None,
                 phase_rows_before: int = 0) -> Iterator[list[dict[str, Any]]]:
    """The claim records of :func:`to_json`, a chunk of ``size`` claims (default :data:`CHUNK_CLAIMS`) at a time,
    in claim order: memory is bounded by the chunk, not the batch (``report.json_out`` writes each chunk as it
    comes). Every claim is written, so every finding gets its words here; everything else is read a column at
    a time (:class:`ClaimRecords`), not a cell at a time.

    For a batch of a larger input (:class:`audit.stream.JsonWriter`), written as the input in one piece is:
    ``extra_order``, the extra fields met in the batches before it, in order (the batch's own are added): a claim's
    extra fields are written in that order, the order of the columns of the input read in one piece (each file's
    new columns after those of the files before it); ``phase_rows_before``, the phases of the batches before it: a
    phase's input row is its row among the phases of the whole input."""
    size = size or CHUNK_CLAIMS
    records = ClaimRecords(result, extra_order, phase_rows_before)
    for start in range(0, len(result), size):
        yield records.chunk(start, min(len(result), start + size))


def json_summary(result: AuditResult) -> dict[str, Any]:
    """The ``summary`` of :func:`to_json`: :func:`summary`, and the input columns that were not read and the notes
    (``input``: :func:`input_notes`)."""
    return {**summary(result), "input": input_notes(result)}


def to_json(result: AuditResult) -> dict[str, Any]:
    """``{"claims": [...], "summary": {...}}``: the stable JSON form of an audit (:func:`claim_chunks` and
    :func:`json_summary`); the summary also lists the input columns that were not read (``summary.input``)."""
    claims = [record for chunk in claim_chunks(result) for record in chunk]
    return {"claims": claims, "summary": json_summary(result)}


def estimate_json(result: AuditResult) -> dict[str, Any]:
    """``{"quantities": {...}, "findings": [...]}`` for ``estimate``."""
    grouped = findings_by_row(result)
    return {"quantities": quantity_records(result, 0), "findings": [f.to_dict() for f in grouped.get(0, [])]}
