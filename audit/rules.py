"""The rules: every check train-audit makes, each one class with a stable code that is never reused.

A rule holds everything about one check: its code, name and worst severity; its docstring, which is its
documentation (``train-audit rules`` and the HTML report print it, nothing repeats it by hand); how it is
evaluated on whole columns of claims; the message and the formula of one of its findings; and the text of its
tolerance. Defining a subclass with a ``code`` registers it: the engine, ``train-audit rules`` and every
renderer read the registry, so a new rule is one class (and its test).

Codes: ``C`` relations among quantities (each can derive a missing quantity or check a claimed one), ``U``
utilization bounds, ``M`` memory, ``H`` hardware and catalog, ``V`` validity of the input, ``E`` energy, carbon
and cost (relations and bounds), ``R`` regulatory compute thresholds.

Relations are data: ``subject = constant × Π term^exponent`` (:class:`Relation`); the engine solves and checks
them generically (:mod:`audit.engine`). Other rules implement :meth:`Rule.evaluate` over the engine's work state.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
from audit.lazy import pandas as pd  # imported on first use: quick start-up

from audit import formatting as fmt
from audit.columns import map_unique
from audit.config import Config
from audit.findings import SEVERITIES, SEVERITY_RANK, FindingsPart, concat_parts, findings_part
from audit.notes import TOKENS_SEEN_HOW, assumed_utilization, compute_sum, dataset_units
from audit.quantities import BY_NAME, CLUSTER_FROM_CHIP, INPUT_QUANTITIES, label
from audit.flops import ARCHITECTURE_CONVENTIONS
from audit.state import (BOUND_WORDS, CATALOG, CLAIMED, DERIVED, NO_SOURCE, UNBOUNDED, WorkState, effective_params,
                         finetunes, source_texts, total_only_claims)
from audit.totals import ADDITIVE, total_rows

if TYPE_CHECKING:  # only for annotations: the result module does not import the rules
    from audit.result import AuditResult

#: A finding as the rules read it: one row of the findings table (:data:`audit.findings.FINDING_COLUMNS`).
FindingRow = Mapping[str, Any]

#: Slack on inequalities so that a value printed as exactly its bound is not flagged by rounding.
_SLACK = 1e-9


#: Severities as the engine's relations hold them (positions in SEVERITIES).
_OK, _WARNING, _ERROR = (SEVERITY_RANK[name] for name in ("ok", "warning", "error"))


def severity_of_ratio(ratio: np.ndarray, ok: float, warn: float, slack: np.ndarray | float = 0.0) -> np.ndarray:
    """``ok`` within the first tolerance factor, ``warning`` within the second, else ``error``; and never a
    problem within ``slack``, the log half-width of the compared figures (a difference smaller than the precision
    the figures were stated with is no difference: "7B on 1T tokens" cannot tell 1.4x from 1x)."""
    return np.asarray(SEVERITIES, dtype=object)[severity_codes_of_ratio(ratio, ok, warn, slack)].astype(str)


def severity_codes_of_ratio(ratio: np.ndarray, ok: float, warn: float,
                            slack: np.ndarray | float = 0.0) -> np.ndarray:
    """:func:`severity_of_ratio` as positions in :data:`audit.findings.SEVERITIES` (int8): the engine's
    relations compare and combine these, not strings."""
    with np.errstate(divide="ignore", invalid="ignore"):
        off = np.abs(np.log(ratio))
    return severity_codes_of_offset(off, ok, warn, slack)


def severity_codes_of_offset(off: np.ndarray, ok: float, warn: float,
                             slack: np.ndarray | float = 0.0) -> np.ndarray:
    """:func:`severity_codes_of_ratio` of the ratios whose ``|ln ratio|`` is ``off``: a caller that judges the same
    ratios several ways (other tolerances, no slack) takes their logarithm once."""
    ok_bound = np.maximum(math.log(ok), slack) + _SLACK
    warn_bound = np.maximum(math.log(warn), slack) + _SLACK
    # NaN ratios (off is NaN) compare false with both bounds: an error, as np.where made it with strings.
    return np.where(off <= ok_bound, _OK, np.where(off <= warn_bound, _WARNING, _ERROR)).astype(np.int8)


def shown_ratio(r: float, severity: str, tolerance: tuple[float, float]) -> str:
    """A finding's ratio as its words show it, never rounded onto the tolerance its verdict says it lies beyond
    (:func:`audit.formatting.ratio`): an error's beyond the warning factor, a warning's beyond the ok one."""
    ok, warn = tolerance
    return fmt.ratio(r, warn if severity == "error" else ok if severity == "warning" else None)


@dataclass(frozen=True)
class Relation:
    """``subject = constant × Π term^exponent``, read in log space as Σ eᵢ·log xᵢ = log k.

    ``exponents`` holds every quantity with its exponent on the left-hand side form (subject +1, others
    negated), so each quantity can be solved for when the others are known.
    """

    exponents: tuple[tuple[str, float], ...]
    constant: float

    @functools.cached_property
    def quantities(self) -> tuple[str, ...]:
        """The quantities the relation ties, in order."""
        return tuple(q for q, _ in self.exponents)

    @property
    def powers(self) -> np.ndarray:
        """The exponents as an array, in the order of :attr:`quantities`."""
        return np.array([e for _, e in self.exponents], dtype=float)

    @functools.cached_property
    def _scalar_powers(self) -> dict[str, tuple[float, tuple[float, ...]]]:
        """Per subject: 1/e_t and each quantity's power in x_t = k^(1/e_t) · Π x_i^(-e_i/e_t), as :meth:`solve`
        computes them (the subject's own power is 0)."""
        out = {}
        for t, (subject, e_t) in enumerate(self.exponents):
            powers = tuple(0.0 if i == t else -e / e_t for i, (_, e) in enumerate(self.exponents))
            out[subject] = (1.0 / e_t, powers)
        return out

    def solve(self, values: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Solve each row of ``values`` (rows × quantities) for its ``target`` column:
        x_t = k^(1/e_t) · Π_{i≠t} x_i^(-e_i/e_t).

        Computed with products (not exp/log) so that a copied or simple value stays exact to the last bit: per
        target, the terms are multiplied left to right, each ``x_i^p`` by the C library's ``pow`` (a power of 1 is
        the value itself, as ``pow`` gives it), then times ``k^(1/e_t)``. Whole columns, no matrix of terms.
        """

        def power(x: np.ndarray, p: float) -> np.ndarray:
            """``pow`` of each element. ``float_power``, whose loop calls the C library's ``pow``: ``power``
            dispatches to SIMD kernels on CPUs that have them (AVX-512: one element in ten differs from ``pow`` in
            the last bit, so a claim's figures depended on the machine). Never numpy's shortcut for a
            one-element exponent (``1/x`` for -1, ``x*x`` for 2): the exponent is a whole column, and a
            one-element operand (passed with stride 0) is padded to two."""
            if len(x) == 1:
                return np.float_power(np.repeat(x, 2), np.full(2, p))[:1]
            return np.float_power(x, np.full(len(x), p))

        exponents = [e for _, e in self.exponents]
        target = np.asarray(target)
        n = len(values)
        out = np.empty(n)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for t, e_t in enumerate(exponents):
                rows = np.flatnonzero(target == t)
                if len(rows) == 0:
                    continue
                every = len(rows) == n
                product: np.ndarray | None = None
                for i, e in enumerate(exponents):
                    p = -e / e_t
                    if i == t or p == 0:
                        continue
                    x = np.ascontiguousarray(values[:, i]) if every else values[rows, i]
                    term = x if p == 1.0 else power(x, p)
                    product = term if product is None else product * term
                inverse = 1.0 / e_t
                # k^(1/e_t), by pow, as for more rows.
                scale = power(np.full(2, self.constant), inverse)[0]
                out[rows] = scale * (np.ones(len(rows)) if product is None else product)
        return out

    def solve_one(self, subject: str, values: Mapping[str, float]) -> float:
        """The value of ``subject`` that the other quantities' ``values`` imply.

        The same operations as :meth:`solve`, in the same order, on Python floats (``math.pow`` is the C
        library's ``pow``, as numpy's ``power`` is): about 3 µs instead of 40 µs for numpy on a one-row array,
        and it runs for every formula a report writes. A case ``math.pow`` refuses (0 to a negative power, an
        overflow) goes through :meth:`solve`."""
        inverse, powers = self._scalar_powers[subject]
        try:
            product = 1.0
            for (name, _), p in zip(self.exponents, powers):
                product *= 1.0 if p == 0 else math.pow(float(values[name]), p)
            return math.pow(self.constant, inverse) * product
        except (ValueError, OverflowError, ZeroDivisionError):
            pass
        names = self.quantities
        row = np.array([[float(values[q]) if q != subject else np.nan for q in names]])
        return float(self.solve(row, np.array([names.index(subject)]))[0])


# --------------------------------------------------------------------------------------------- the registry


#: Every rule by code, in the order they were defined; filled by :meth:`Rule.__init_subclass__`.
RULES: dict[str, type["Rule"]] = {}

#: The order codes are listed in: relations, bounds, memory, hardware, validity.
_PREFIX_ORDER = "CUMHV"


def register(rule: type["Rule"]) -> type["Rule"]:
    """Add a rule to the registry; a code is never reused by another rule."""
    other = RULES.get(rule.code)
    if other is not None and other.__qualname__ != rule.__qualname__:
        raise ValueError(f"rule code {rule.code} is already used by {other.__name__}")
    RULES[rule.code] = rule
    return rule


def unregister(code: str) -> None:
    """Remove a rule from the registry (for tests that define a rule of their own)."""
    RULES.pop(code, None)


def all_rules() -> tuple[type["Rule"], ...]:
    """Every rule, ordered by kind (C, U, M, H, V) and number."""
    def key(r: type[Rule]) -> tuple[int, str]:
        kind = _PREFIX_ORDER.find(r.code[:1])
        return (kind if kind >= 0 else len(_PREFIX_ORDER), r.code)
    return tuple(sorted(RULES.values(), key=key))


def _utilization_relations() -> list[str]:
    """The relations that tie a peak to a utilization (C003, C005, ...): a peak they derive is the claim's own
    figures divided by its MFU or HFU."""
    return [r.code for r in relation_rules()
            if "peak_flops_per_chip" in r.relation.quantities and {"mfu", "hfu"} & set(r.relation.quantities)]


def relation_rules() -> tuple[type["RelationRule"], ...]:
    """The relation rules in the order the engine applies them (:attr:`RelationRule.order`)."""
    rel = [r for r in RULES.values() if issubclass(r, RelationRule)]
    return tuple(sorted(rel, key=lambda r: (r.order, r.code)))


def codes_where(attribute: str) -> tuple[str, ...]:
    """The codes of the rules whose class attribute ``attribute`` is set (true or non-empty), in code order:
    what is special about a rule is read from the rule, never from a list of codes elsewhere."""
    return tuple(r.code for r in all_rules() if getattr(r, attribute))


def rules_of_stage(stage: str) -> tuple[type["Rule"], ...]:
    """The rules the engine evaluates at ``stage`` (``prefill``, ``prepare``, ``outlier``, ``check`` or
    ``summary``), by code."""
    return tuple(r for r in all_rules() if r.stage == stage)


# ------------------------------------------------------------------------------------------------- the base


class Rule:
    """Base class: a check with a stable code, a name, a severity, a formula and a docstring.

    Subclasses override :meth:`evaluate` (vectorized: findings for every claim it applies to),
    :meth:`message` and :meth:`formula_text` (words for one finding) and :meth:`tolerance_text`.
    """

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    quantity: ClassVar[str] = ""
    formula: ClassVar[str] = ""
    #: The worst severity the rule can give.
    severity: ClassVar[str] = "error"
    #: When the engine evaluates it: ``prefill`` (before relations), ``relation``, ``outlier`` (after the
    #: relations), ``check`` (after every derivation).
    stage: ClassVar[str] = "check"
    #: Whether a text report prints the finding's formula under its message.
    show_formula: ClassVar[bool] = False
    #: The finding's claimed value is a utilization judged against the plausible band (explanations move it
    #: into the band rather than towards a ratio of 1).
    utilization: ClassVar[bool] = False
    #: Shown first among a claim's findings, whatever its severity (the outlier: the most actionable).
    leads: ClassVar[bool] = False
    #: Its info findings say how a figure was read or found, they check nothing: a claim with only such
    #: findings is ``unchecked``, not ``pass``.
    note: ClassVar[bool] = False
    #: Its findings are values that could not be used: the claim is ``invalid`` whatever else holds, the rule
    #: cannot be switched off (``--ignore``), and a report names the field of each finding.
    invalidates: ClassVar[bool] = False
    #: The quantity of its findings that falls with the active share when a mixture-of-experts claim gives only
    #: its total parameters (a compute or an MFU stated against 6·N_total·D): the explanations then offer the
    #: active count that fits. A utilization rule's share is the one that brings the MFU into the band.
    active_share_of: ClassVar[str] = ""
    #: A compute it derives counts the total parameters (6·N·D): an MFU derived from that compute falls with
    #: the active share of a mixture-of-experts model.
    derives_from_total_params: ClassVar[bool] = False
    #: Its findings are about the row as read (its cells, its id), not about a training run: they are kept on a
    #: total row (V018), where every check and note that takes the row for one run is left out.
    of_the_row: ClassVar[bool] = False
    #: The HTML report's chart its findings mark: ``utilization`` (the verdict colours the MFU chart) or
    #: ``compute`` (its claimed and implied compute are plotted against each other).
    chart: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("code"):
            if cls.severity not in SEVERITIES:
                raise ValueError(f"rule {cls.code}: unknown severity {cls.severity!r}")
            register(cls)

    @classmethod
    def doc(cls) -> str:
        """The rule's documentation (its docstring, dedented)."""
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def derivation_text(cls, result: "AuditResult", row: int, name: str) -> str | None:
        """How the rule derived the value of ``name`` for claim ``row``, in words with the values substituted,
        when it derives one outside the relations (M001's training state); None otherwise."""
        return None

    @classmethod
    def summary(cls) -> str:
        """The documentation's first paragraph, on one line (its first sentence may run on: C021's formula)."""
        doc = cls.doc()
        return " ".join(doc.split("\n\n", 1)[0].split()) if doc else cls.name

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        """What counts as ok, warning and error for this rule, with the reason (None: exact)."""
        return None

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        """The rule's findings for every claim it applies to, made with :func:`audit.findings.findings_part`
        (None or an empty part: none)."""
        return None

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        """One finding in words."""
        return str(f["detail"] or "")

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        """The finding's formula, with the values substituted where the rule can."""
        return cls.formula

    @classmethod
    def formula_texts(cls, result: "AuditResult", findings: Sequence[FindingRow]) -> list[str]:
        """:meth:`formula_text` of many findings of this rule (a rule may read its columns once for all)."""
        return [cls.formula_text(result, f) for f in findings]


def _judged_sides(state: WorkState, name: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which of ``rows`` a bound check may call too high, which too low, and which it cannot judge at all. A value
    written as a bound, or derived from one (:attr:`WorkState.directions`), is known on one side only: Snowflake
    Arctic's "less than 3K GPU weeks" makes its MFU at least 19.9 %, which may be too high (above 100 % it is) but
    not too low; its price, "less than $2 million" over those weeks, is bounded neither way."""
    way = state.direction(name)[rows]
    return (way == 0) | (way == 1), (way == 0) | (way == -1), way == UNBOUNDED


def _as_bounded(result: "AuditResult", f: FindingRow, text: str) -> str:
    """A judged value's words, "at least" or "at most" before it where it is a bound (AuditResult.bounds)."""
    way = result.bound(int(f["row"]), str(f["quantity"]))
    return f"{BOUND_WORDS[way]} {text}" if way in (1, -1) else text


def _utilization_message(name: str, result: "AuditResult", f: FindingRow) -> str:
    """U001 and U002: a utilization against 100 % and the plausible band."""
    low, high = result.config.band
    band = f"{fmt.sig(low * 100)}-{fmt.sig(high * 100)} %"
    row, detail, v = int(f["row"]), f["detail"], float(f["claimed"])
    how = result.cell("how", row, name.lower())
    origin = "claimed" if detail in ("claimed", "below-mfu") else f"implied by {how}"
    pct = _as_bounded(result, f, f"{fmt.percent(v)} %")  # "MFU at least 19.9 %": a bound's words, with its figure
    if v > 1:
        original = result.cell("text", row, name.lower()) if detail == "claimed" else None
        # Only a stated figure can be a percentage typed as a fraction; a derived one is arithmetic.
        looks_percent = detail == "claimed" and v <= 100 and not (
            original and ("%" in original or "percent" in original))
        hint = f" ({fmt.sig(v)} looks like a percentage: {fmt.sig(v / 100)} was meant?)" if looks_percent else ""
        if f["severity"] != "error":  # within the precision of the figures (U001's evaluate): not proven impossible
            return (f"{name} {pct} ({origin}) is above 100 %, but by less than the precision of the "
                    f"figures it comes from: possible only if their rounding hides that much{hint}")
        return f"{name} {pct} ({origin}) is above 100 %: physically impossible{hint}"
    if f["severity"] == "warning" and v < low:
        return (f"{name} {pct} ({origin}) is below {fmt.sig(result.config.floor * 100)} %: the hardware "
                f"could have done {fmt.sig(1 / v, 2)} times the compute in the time stated, so the compute, the "
                f"hardware or the time describe something else")
    if f["severity"] == "warning":
        return (f"{name} {pct} ({origin}) is above {fmt.sig(result.config.ceiling * 100)} %, beyond "
                f"measured matrix-multiply ceilings")
    if f["severity"] == "info":
        side = "below" if v < low else "above"
        return f"{name} {pct} ({origin}) is {side} the usual band {band}: unusual, not impossible"
    way = result.bound(row, str(f["quantity"]))
    if way == 1 and v < low or way == -1 and v > high:
        # A bound whose open side reaches into the band ("at least 13.8 %" against 15-65 %): not outside it.
        return (f"{name} {pct} ({origin}) may be within the plausible band {band}: a bound, it may be "
                f"{'higher' if way == 1 else 'lower'}")
    if not low <= v <= high:  # outside, but by less than the precision of the figures it comes from
        return (f"{name} {pct} ({origin}) is outside the usual band {band} by less than the precision "
                f"of the figures it comes from")
    if way in (1, -1):  # a bound holds on one side: the band is judged on that side alone
        return (f"{name} {pct} ({origin}) is not {'below' if way == 1 else 'above'} the plausible band {band} (a "
                f"bound: it may be {'higher' if way == 1 else 'lower'})")
    return f"{name} {pct} ({origin}) is within the plausible band {band}"


#: The largest ratio a relation's ok verdict calls agreement (in log space): 1.25x, the most that attention and
#: embeddings add to 6·N·D (PaLM, App. B: 2-25 %). An ok beyond it is accepted by the rule's tolerance (C001's
#: 2x, a goodput side's 1.5x), and its words say that instead.
_AGREES = math.log(1.25)


def _ratio_tolerance_text(rule: type[Rule], config: Config) -> str:
    """The tolerance of a rule that compares a ratio with its (ok, warning) factors."""
    ok, warn = config.tolerance(rule.code)
    text = (f"ok within a factor {fmt.sig(ok)}, warning within {fmt.sig(warn)}, error beyond. "
            f"{config.reasons.get(rule.code, '')}").strip()
    goodput = getattr(rule, "goodput_quantity", None)
    if goodput and rule.code in config.goodput:
        ok_g, warn_g = config.goodput[rule.code]
        text += (f" A stated {label(goodput)} above the implied one: ok within {fmt.sig(ok_g)}, warning within "
                 f"{fmt.sig(warn_g)}. {config.reasons.get(f'{rule.code}-goodput', '')}").rstrip()
    return text


def _bounds_text(result: "AuditResult", row: int) -> str:
    """Words for a relation that holds only as an inequality on a claim (detail ``stated-bound``): the figures it
    writes as bounds ("up to 112"), as written."""
    from audit.units import bound_of  # pandas and pyarrow: not for the light commands (rules, hardware)

    said = []
    for name in result.claims.stated_text.columns:
        text = result.cell("text", row, name)
        kind = bound_of(text)
        if kind is not None and result.cell("source", row, name) == "claimed":
            which = "an upper" if kind == "upper" else "a lower"
            said.append(f"{label(name)} as {which} bound ({str(text).strip()!r})")
    what = " and ".join(said) if said else "a figure as a bound"
    return (f"the claim writes {what}, so the relation holds only as an inequality, which these figures satisfy "
            f"(off the other way, they would not)")


class RelationRule(Rule):
    """A rule made of one relation: derives the one unknown quantity or checks a fully known claim."""

    stage = "relation"
    show_formula = True
    relation: ClassVar[Relation]
    #: Which quantity a finding is about, in order of preference: the first one the claim states.
    subjects: ClassVar[tuple[str, ...]]
    #: Symbols used in formulas, by quantity.
    symbols: ClassVar[dict[str, str]]
    #: Order of application: the first relation able to derive a quantity derives it.
    order: ClassVar[int] = 1000
    #: The source recorded for a value this relation derives.
    derived_source: ClassVar[str] = "derived"
    #: Whether a finding says that the precision (and so the peak) was assumed rather than stated.
    uses_peak: ClassVar[bool] = False
    #: A quantity whose stated value may exceed the value the relation implies by a goodput factor (a stated
    #: steady-state MFU against the end-to-end one): checked with :attr:`audit.config.Config.goodput`.
    goodput_quantity: ClassVar[str | None] = None
    #: Whether a stated compute (the left-hand side) is also weighed as hardware FLOPs: a compute that counts
    #: the recomputed forward pass exceeds the model FLOPs by r (4/3). When that reading fits and the model
    #: reading does not, the finding is info and says so (detail ``hardware-compute``).
    weighs_compute_reading: ClassVar[bool] = False
    #: The goodput side applies only where none of these is stated (a stated rate is steady-state as well, so
    #: an MFU implied from it is too); empty: wherever the rule has a goodput side.
    goodput_unless_stated: ClassVar[tuple[str, ...]] = ()
    #: Nor where one of these (a throughput) is stated and F per token comes from an architecture: a stated MFU
    #: above the one a throughput implies by 6N is the attention FLOPs 6N leaves out (torchtitan's and PaLM's MFU
    #: count them), not goodput; with the architecture they are counted, and nothing is left to allow.
    goodput_unless_architecture: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def applies(cls, state: WorkState) -> np.ndarray | None:
        """Rows the relation may derive or check on (None: every row)."""
        return None

    @classmethod
    def upper_bound(cls, state: WorkState) -> np.ndarray | None:
        """Rows on which the relation only bounds: its left-hand side (the first quantity, e.g. C) may fall below
        the right-hand side by any factor, as the compute of a mixture-of-experts model whose active parameters are
        not stated falls below 6·N_total·D (None: no such rows)."""
        return None

    @classmethod
    def lower_bound(cls, state: WorkState) -> np.ndarray | None:
        """Rows on which the relation only bounds from below: its left-hand side (the compute) may exceed the
        right-hand side by any factor, as a compute that its notes build as a sum of several trainings exceeds
        6·N·D of the one the claim describes (None: no such rows)."""
        return None

    @classmethod
    def assumed_utilization(cls, state: WorkState) -> np.ndarray | None:
        """Per row, the utilization at which the claim's notes estimated its left-hand side (the compute) from the
        hardware and time (NaN: no such estimate; None: the relation does not read one). Where the relation then
        disagrees, the run reached another utilization: an error only when that one is impossible (above 100 %)
        or below the floor below which a utilization is flagged (``Config.floor``), else a warning (detail
        ``assumed-utilization``)."""
        return None

    @classmethod
    def bound_message(cls, result: "AuditResult", f: FindingRow) -> str | None:
        """Words for a finding on a row where the relation only bounds (detail ``lower-bound``), else None."""
        if f["detail"] != "lower-bound":
            return None
        row, subject = int(f["row"]), str(f["quantity"])
        stages = compute_sum(result.cell("info", row, "compute_notes"),
                             float(result.claims.values["compute_flops"].iat[row]))
        rhs = float(f["expected"]) if subject == "compute_flops" else None
        rhs_text = f" = {fmt.value('compute_flops', rhs)}" if rhs else ""
        return (f"{label('compute_flops')} is a sum of stages in its notes ({stages}): {cls.formula.split(' = ')[1]}"
                f"{rhs_text} describes one of them, so it bounds the compute from below only, and the compute is "
                f"above it (ratio {fmt.ratio(float(f['claimed']) / float(f['expected']))})")

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return _ratio_tolerance_text(cls, config)

    @classmethod
    def solved_for(cls, subject: str) -> tuple[list[str], list[str], bool]:
        """The relation solved for ``subject``: (numerator quantities, denominator quantities, constant in the
        numerator)."""
        num, den, k_up = _solved_for(cls, subject)
        return list(num), list(den), k_up

    @classmethod
    def _solved_for(cls, subject: str) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
        exps = dict(cls.relation.exponents)
        e_s = exps[subject]
        num = tuple(q for q, e in cls.relation.exponents if q != subject and -e / e_s > 0)
        den = tuple(q for q, e in cls.relation.exponents if q != subject and -e / e_s < 0)
        return num, den, (1 / e_s) > 0

    @classmethod
    def substituted(cls, subject: str, values: Mapping[str, float], symbols: Mapping[str, str] | None = None,
                    derived: frozenset[str] = frozenset()) -> str:
        """``MFU = C / (chip_hours · 3600 · peak) = 5.48e23 / (1,022,362 × 3600 × 3.12e14) = 0.4769``; operands
        in ``derived`` (values the tool derived, not stated) are marked ``*``."""
        symbolic, top, bottom = cls._template(subject, symbols or cls.symbols)
        operands = {name: fmt.operand(name, values[name]) + ("*" if name in derived else "")
                    for name in cls.relation.quantities if name != subject}
        return cls._assembled(symbolic, top, bottom, operands,
                              fmt.operand(subject, cls.relation.solve_one(subject, values)))

    @staticmethod
    def _assembled(symbolic: str, top: tuple[Any, ...], bottom: tuple[Any, ...] | None,
                   operands: Mapping[str, str], result: str) -> str:
        """The formula from its :meth:`_template` and the operands' texts."""
        def side(parts: tuple[Any, ...]) -> tuple[str, int]:
            items = ([parts[0]] if parts[0] else []) + [operands[name] for name in parts[1:]]
            return (" × ".join(items) if items else "1"), len(items)

        numeric, _ = side(top)
        if bottom is not None:
            below, n = side(bottom)
            numeric = f"{numeric} / ({below})" if n > 1 else f"{numeric} / {below}"
        return f"{symbolic} = {numeric} = {result}"

    @classmethod
    def _template(cls, subject: str, symbols: Mapping[str, str]) -> tuple[str, tuple[Any, ...], tuple[Any, ...] | None]:
        """The formula solved for ``subject``, made once per rule, subject and symbols: its symbolic side, and the
        operands above and below the fraction bar (None below: no fraction), each side led by the constant's text
        when the constant is written there (else by None)."""
        key = (cls, subject, tuple(sorted(symbols.items())))
        template = _SYMBOLIC.get(key)
        if template is not None:
            return template
        num, den, k_up = cls.solved_for(subject)
        k = cls.relation.constant
        k_text = fmt.sig(k, 6)
        k_below = not k_up and k != 1
        top = ((k_text if k_up and k != 1 else None), *num)
        bottom = None if not den and not k_below else ((k_text if k_below else None), *den)

        def symbolic_side(parts: tuple[Any, ...]) -> tuple[str, int]:
            items = ([parts[0]] if parts[0] else []) + [symbols[name] for name in parts[1:]]
            return (" · ".join(items) if items else "1"), len(items)

        expr, _ = symbolic_side(top)
        if bottom is not None:
            below, n = symbolic_side(bottom)
            expr = f"{expr} / ({below})" if n > 1 else f"{expr} / {below}"
        template = _SYMBOLIC[key] = (f"{symbols[subject]} = {expr}", top, bottom)
        return template

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row, subject = int(f["row"]), str(f["quantity"])
        claimed, expected = float(f["claimed"]), float(f["expected"])
        source = str(result.cell("source", row, subject))
        what = "claimed" if source == "claimed" else source
        r = claimed / expected if expected else float("nan")
        # An ok beyond 1.25x is the tolerance's doing, not agreement: the words say so (C001 accepts 2x).
        loose = f["severity"] == "ok" and f["detail"] is None and abs(math.log(r)) > _AGREES if r > 0 else False
        bound = f["detail"] == "stated-bound"
        verb = "is within the tolerance of" if loose else "is consistent with" if bound else \
            "agrees with" if f["severity"] == "ok" else "differs from"
        ties, via = cls._ties_words(result, row, subject)
        shown = shown_ratio(r, str(f["severity"]), result.config.tolerance(cls.code))
        head = (f"{label(subject)} {fmt.value(subject, claimed)} ({what}) {verb} {fmt.value(subject, expected)} "
                f"implied by {cls.formula}")
        if via:
            text = (f"{head}, with {via} derived from the stated {label(subject)} itself, so the check ties the "
                    f"stated {ties} (ratio {shown})")
        else:
            text = f"{head}, which ties the stated {ties} (ratio {shown})"
        if f["detail"] == "within-precision":
            text += "; " + cls._precision_text(result, row)
        if bound:
            text += "; " + _bounds_text(result, row)
        if f["detail"] == "hfu-as-mfu":
            factor = float(result.cell("q", row, "recompute_factor"))
            text += (f"; the claim states activation recomputation (r = {fmt.sig(factor)}) and the ratio is r: the "
                     f"stated {label(subject)} likely counts the recomputed forward pass (an HFU quoted as MFU), "
                     f"unless the run's goodput was {fmt.percent(1 / factor)} %")
        if loose:
            ok_tol = result.config.tolerance(cls.code)[0]
            goodput = cls.goodput_quantity and result.config.goodput.get(cls.code)
            rate = any(result.cell("source", row, name) == "claimed" for name in cls.goodput_unless_architecture
                       if name in result.source.columns)
            if goodput and abs(math.log(r)) > math.log(ok_tol) + _SLACK and rate:  # a steady-state pair
                text += (f"; a stated {label(cls.goodput_quantity)} above the one a throughput implies by 6N is ok "
                         f"within a factor {fmt.sig(goodput[0])}: the attention FLOPs, which 6N leaves out and an "
                         f"MFU such as PaLM's counts (give the architecture to count them)")
            elif goodput and abs(math.log(r)) > math.log(ok_tol) + _SLACK:  # only the goodput side accepts it
                text += (f"; a stated {label(cls.goodput_quantity)} above the implied one is ok within a factor "
                         f"{fmt.sig(goodput[0])}, the goodput of a run (`train-audit rules {cls.code}` says why)")
            else:
                text += (f"; {cls.code} is ok within a factor {fmt.sig(ok_tol)} (`train-audit rules {cls.code}` says "
                         f"why)")
        if cls.uses_peak and bool(result.cell("hardware", row, "precision_assumed")):
            text += f"; precision not stated, {result.cell('hardware', row, 'precision')} assumed"
        return text

    @classmethod
    def _ties_words(cls, result: "AuditResult", row: int, subject: str) -> tuple[str, str]:
        """Which stated figures a check of ``subject`` ties together, in words, and through which operands the
        subject came back ("" when none): a stated figure compared with a value derived from it (Tokens against
        C / 6N when C = F · D came from these tokens) cancels out, and the check then ties the other figures only
        (:meth:`ties`). The same for every claim of a derivation pattern: made once per pattern."""
        pattern = int(result.derivation_patterns()[row])
        memo = result._records.setdefault("ties words", {})
        key = (cls, pattern, subject)
        words = memo.get(key)
        if words is None:
            figures, through = cls.ties(result, row, subject)
            ties = ", ".join(dict.fromkeys(_TIE_LABELS.get(n) or label(n) for n in figures)) or "figures"
            words = memo[key] = (ties, " and ".join(cls.symbols.get(q, q) for q in through))
        return words

    @classmethod
    def _precision_text(cls, result: "AuditResult", row: int) -> str:
        """Why a ratio beyond the tolerance is no finding: the stated figure written with the fewest digits, and
        the range its last digit allows (``Tokens "1T" is anything from 500B to 1.5T``)."""
        # Here, not at the top: audit.significance imports pandas (rules must not, for --help).
        from audit.significance import _is_python_float_repr, relative_half_width

        widest, width = None, 0.0
        text = result.claims.text
        for name in cls.stated_figures(result, row):
            if name in text.columns:
                w = relative_half_width(text[name].iat[row])
                if w > width:
                    widest, width = name, w
        if widest is None:
            return "within the rounding of the stated figures"
        value = float(result.cell("q", row, widest)) if widest in result.q.columns else float("nan")
        written = str(text[widest].iat[row])
        if value != value:
            return f"within the rounding of the stated figures ({label(widest)} written \"{written}\")"
        # A number column prints a whole number as "1.0": its ".0" is not a stated digit (significance.py).
        as_number = " (a number cell: its .0 is not a stated digit)" if _is_python_float_repr(written) else ""
        return (f"within the rounding of the stated figures: {label(widest)} written \"{written}\"{as_number} is "
                f"anything from {fmt.value(widest, value * (1 - width))} to {fmt.value(widest, value * (1 + width))}")

    @classmethod
    def formula_texts(cls, result: "AuditResult", findings: Sequence[FindingRow]) -> list[str]:
        """:meth:`formula_text` of many findings: the relation's columns are read once, with numpy, for all of
        them (the same texts, about twice as fast for a large batch)."""
        rows = np.fromiter((int(f["row"]) for f in findings), dtype=np.int64, count=len(findings))
        return cls._substituted_rows(result, rows, [str(f["quantity"]) for f in findings], marked=True)

    @classmethod
    def substituted_texts(cls, result: "AuditResult", rows: Sequence[int], subject: str) -> list[str]:
        """:meth:`substituted` for ``subject`` with each claim's values in ``rows`` (the derivation of a value
        this relation derived), the relation's columns read once for all."""
        return cls._substituted_rows(result, np.asarray(rows, dtype=np.int64), [subject] * len(rows), marked=False)

    @classmethod
    def _substituted_rows(cls, result: "AuditResult", rows: np.ndarray, subjects: Sequence[str],
                          marked: bool) -> list[str]:
        """The substituted formula of each row for its subject; ``marked``: as :meth:`formula_text` writes it
        (derived operands marked, N_active for a claim that states its active parameters), else as
        :meth:`substituted` with the default symbols."""
        names = cls.relation.quantities
        values = {n: result.column("q", n)[rows].astype(float).tolist() for n in names}
        no = [False] * len(rows)
        derived = {n: (result.column("source", n)[rows] == "derived").tolist() if marked else no for n in names}
        active = ((result.column("how", "n_eff")[rows] == "active_params").tolist()
                  if marked and "n_eff" in cls.symbols else no)
        with_active = {**cls.symbols, "n_eff": "N_active"}
        if cls.substituted.__func__ is not RelationRule.substituted.__func__:  # type: ignore[attr-defined]
            # A rule that writes its formulas its own way: one at a time, through its own substituted.
            return [cls.substituted(subject, {n: values[n][j] for n in names},
                                    with_active if active[j] else cls.symbols,
                                    frozenset(n for n in names if derived[n][j]))
                    for j, subject in enumerate(subjects)]
        # A column at a time: the rows grouped by subject and symbols, each group's operands formatted a column at
        # a time (fmt.operands) and put into the formula's template, as substituted writes them.
        groups: dict[tuple[str, bool], list[int]] = {}
        for j, (subject, with_n_active) in enumerate(zip(subjects, active)):
            groups.setdefault((subject, with_n_active), []).append(j)
        out = [""] * len(rows)
        for (subject, with_n_active), members in groups.items():
            columns = {n: [values[n][j] for j in members] for n in names}
            texts = []
            for n in names:
                if n != subject:
                    marks = [derived[n][j] for j in members]
                    column = fmt.operands(n, columns[n])
                    texts.append([t + "*" for t in column] if all(marks) else
                                 [t + "*" if m else t for t, m in zip(column, marks)] if any(marks) else column)
            texts.append(fmt.operands(subject, cls._solved_column(subject, columns)))
            template = cls._formula_template(subject, with_active if with_n_active else cls.symbols)
            for j, parts in zip(members, zip(*texts)):
                out[j] = template.format(*parts)
        return out

    @classmethod
    def _solved_column(cls, subject: str, columns: Mapping[str, list[float]]) -> list[float]:
        """:meth:`Relation.solve_one` of each row of ``columns`` (a list of values per quantity): the same
        operations, in the same order, without a dict per row."""
        relation = cls.relation
        inverse, powers = relation._scalar_powers[subject]
        scale = math.pow(relation.constant, inverse)
        terms = [(columns[name], p) for name, p in zip(relation.quantities, powers) if p != 0]
        out = []
        for j in range(len(columns[subject])):
            try:
                product = 1.0
                for column, p in terms:
                    product *= math.pow(column[j], p)
                out.append(scale * product)
            except (ValueError, OverflowError, ZeroDivisionError):
                out.append(relation.solve_one(subject, {name: columns[name][j] for name in relation.quantities}))
        return out

    @classmethod
    def _formula_template(cls, subject: str, symbols: Mapping[str, str]) -> str:
        """:meth:`substituted`'s text with ``{0}``, ``{1}``, ... for the operands (in the order of the relation's
        quantities, the subject left out) and the last for the result; made once per rule, subject and symbols."""
        key = (cls, subject, tuple(sorted(symbols.items())))
        template = _FORMULA_TEMPLATES.get(key)
        if template is None:
            symbolic, top, bottom = cls._template(subject, symbols)

            def escaped(parts: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
                if parts is None:
                    return None
                head = parts[0].replace("{", "{{").replace("}", "}}") if parts[0] else parts[0]
                return (head, *parts[1:])

            others = [n for n in cls.relation.quantities if n != subject]
            template = _FORMULA_TEMPLATES[key] = cls._assembled(
                symbolic.replace("{", "{{").replace("}", "}}"), escaped(top), escaped(bottom),  # type: ignore[arg-type]
                {n: f"{{{i}}}" for i, n in enumerate(others)}, f"{{{len(others)}}}")
        return template

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        return cls.formula_texts(result, [f])[0]

    @classmethod
    def stated_figures(cls, result: "AuditResult", row: int) -> list[str]:
        """The stated figures a check of this relation ties together: each operand's own, or, for a derived one,
        the stated figures it was derived from (recursively through the relations that derived it)."""
        # What a claim's values come from depends only on its pattern of sources and derivations
        # (AuditResult.derivation_patterns): walked once per pattern, not per claim.
        pattern = int(result.derivation_patterns()[row])
        figures = result._records.setdefault("stated_figures", {})
        key = (cls, pattern)
        known = figures.get(key)
        if known is None:
            memo = result._records.setdefault("stated_leaves", {})
            found: dict[str, None] = {}
            for name in cls.relation.quantities:
                found.update(dict.fromkeys(_stated_leaves(result, row, name, memo, set(), pattern)))
            known = figures[key] = list(found)
        return list(known)

    @classmethod
    def ties(cls, result: "AuditResult", row: int, subject: str) -> tuple[list[str], list[str]]:
        """The stated figures a check of ``subject`` ties, and the operands (other than ``subject``) derived from
        ``subject`` itself. With none, :meth:`stated_figures`; with some, the subject cancels out of the
        comparison, so the figures are those of the other operands without it (remembered per pattern)."""
        pattern = int(result.derivation_patterns()[row])
        memo_ties = result._records.setdefault("stated_ties", {})
        key = (cls, pattern, subject)
        known = memo_ties.get(key)
        if known is None:
            memo = result._records.setdefault("stated_leaves", {})
            others = {q: _stated_leaves(result, row, q, memo, set(), pattern)
                      for q in cls.relation.quantities if q != subject}
            through = [q for q, leaves in others.items() if subject in leaves]
            if through and result.cell("source", row, subject) == "claimed":
                found: dict[str, None] = {}
                for leaves in others.values():
                    found.update(dict.fromkeys(n for n in leaves if n != subject))
                known = (list(found), through)
            else:
                known = (cls.stated_figures(result, row), [])
            memo_ties[key] = known
        return list(known[0]), list(known[1])


def _stated_leaves(result: "AuditResult", row: int, name: str, memo: dict[tuple[int, str], tuple[str, ...]],
                   active: set[str], pattern: int) -> tuple[str, ...]:
    """The stated figures (and ``"datasheet"``) that one quantity of one claim comes from, in the order a
    depth-first walk through the relations that derived it meets them, each once; remembered per (``pattern``,
    quantity), since claims of one derivation pattern walk the same derivations. A quantity met again within its
    own walk (a cycle, which derivations do not make) counts as stated."""
    key = (pattern, name)
    known = memo.get(key)
    if known is not None:
        return known
    source, how = result.cell("source", row, name), result.cell("how", row, name)
    if source == "claimed" or name in active:
        return (name,)
    if source == "catalog":
        return ("datasheet",)
    parents: list[str] = []
    rule = RULES.get(str(how))
    if rule is not None and issubclass(rule, RelationRule):
        parents = [other for other in rule.relation.quantities
                   if other != name and not (name == "params" and other == "n_eff")]
    elif name == "flops_per_token":
        # F from an architecture (C007) comes from its fields; 6N from N alone.
        parents = list(_ARCHITECTURE_PARENTS.get(str(how), ("n_eff",)))
        if how == "palm" and result.cell("source", row, "head_dim") != "claimed":
            parents.append("d_model")  # head_dim assumed d_model / heads
    elif name == "chips" and how in ("H003", "H004"):
        return ("hardware",)  # chips read from the hardware text (TPU v4-2048: 2048 cores; "256x A100")
    elif name == "throughput_tokens_per_s" and how == CLUSTER_FROM_CHIP:
        parents = ["throughput_per_chip", "chips"]  # "380 tokens/s/GPU" times the accelerators
    elif name == "n_eff":
        parents = [str(how)] if how in ("params", "active_params") else []
    elif str(how).startswith("dataset_size"):  # dataset tokens, or D read from the dataset's notes
        parents = ["dataset_size"]
    active.add(name)
    leaves: dict[str, None] = {}
    for other in parents:
        leaves.update(dict.fromkeys(_stated_leaves(result, row, other, memo, active, pattern)))
    active.discard(name)
    memo[key] = out = tuple(leaves)
    return out


#: How the stated figures that are not quantities are named in a check's message.
_TIE_LABELS = {"datasheet": "datasheet", "hardware": "Hardware"}

#: The fields FLOPs per token comes from, by the convention that gave it (audit/flops.py).
_ARCHITECTURE_PARENTS: dict[str, tuple[str, ...]] = {
    "megatron-general": ("layers", "d_model", "heads", "head_dim", "kv_heads", "ffn_dim", "seq_len", "vocab_size",
                         "experts_per_token"),
    "palm": ("n_eff", "layers", "heads", "head_dim", "seq_len"),
}

#: The symbolic side of each formula (:meth:`RelationRule.substituted`), by (rule, subject, symbols).
_SYMBOLIC: dict[tuple[Any, str, tuple[tuple[str, str], ...]], tuple[str, tuple[Any, ...], tuple[Any, ...] | None]] = {}

#: Each formula as a template for its operands' texts (:meth:`RelationRule._formula_template`), by (rule, subject,
#: symbols).
_FORMULA_TEMPLATES: dict[tuple[Any, str, tuple[tuple[str, str], ...]], str] = {}


@functools.lru_cache(maxsize=None)
def _solved_for(rule: type[RelationRule], subject: str) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """:meth:`RelationRule.solved_for`, worked out once per rule and subject."""
    return rule._solved_for(subject)


# ------------------------------------------------------------------------------------------------ relations


class ComputeSixND(RelationRule):
    """Training compute is about six FLOPs per parameter per token: C ≈ 6·N·D.

    **What it checks.** The claimed compute against 6 × parameters × tokens, with N the *active* parameters
    when a mixture-of-experts claim gives them. With one of the three missing, it derives it.

    **Why it matters.** It is the first consistency test of any training report: a unit slip (PF-days read as
    FLOP, millions for billions) or total parameters used for a mixture-of-experts model show up here first.
    6ND leaves out attention and embeddings (2-25 %), and its other known departures (hardware FLOPs with
    recomputation, 4/3; words counted for tokens; estimates good to about 2x) compound: within 2x is no finding
    (tolerance below), and a ratio beyond 1.25x is said to be within the tolerance, not to agree.

    A mixture-of-experts model that does not state its active parameters (its ``architecture``, its parameter
    notes or an expert count say it is one) is held only to the bound C ≤ 6·N_total·D: a compute below it is
    consistent with some share of the parameters active per token, and the finding says which share.

    **Example.** GPT-3: 6 × 174.6e9 × 300e9 = 3.14e23 FLOP; Brown et al. report 3.64e3 PF-days = 3.14e23. Pass.
    DBRX (132B total, "36B parameters active", 12T tokens) with compute 2.6e24 and no active count given: 27 % of
    6·N_total·D = 9.5e24, consistent with about 36B active parameters.

    A compute that its notes build as a sum of several trainings (``compute_notes``, Epoch AI's "Training compute
    notes": "Total: 1.07e23 + 6.2e22 = 1.69e23") is held only to the bound C ≥ 6·N·D: the stated model and
    tokens are one of the trainings. D is the tokens stated, or the dataset size times the epochs, where the
    dataset's notes (``dataset_notes``) may say that the size counts words (4/3 tokens each) or other datapoints
    such as examples or sentence pairs, which are not tokens (:mod:`audit.notes`).

    A compute that its notes estimate from the hardware and time at an assumed utilization (Epoch AI's practice
    when a source states none: "123000000000000 FLOP / chip / sec * 512 TPUs * 32 hours * 3600 sec / hour * 0.33
    [assumed utilization]") is no independent figure: beyond the tolerance, the disagreement says that the run
    reached another utilization, u × 6·N·D / C. Where that one is possible (from the floor below which a
    utilization is itself flagged, 1 %, to 100 %), the finding is a warning that says so, not an error.
    ALBERT-xxlarge, Epoch's row: 2.39e21 at an assumed 33 % against 6 × 235M × 262B = 3.69e20 (6.47x), so 5.1 %
    reached: a warning (its weights are shared across 12 layers, so it does about ten times the work of 6 FLOP per
    parameter per token).

    **References.** Kaplan et al. 2020, *Scaling Laws for Neural Language Models*, Sec. 2.1 (C ≈ 6N per token);
    Hoffmann et al. 2022, *Training Compute-Optimal LLMs* (Chinchilla), Sec. 3; Lan et al. 2019, *ALBERT*,
    Sec. 3.1 (cross-layer parameter sharing); Epoch AI, *Estimating training compute of deep learning models*
    (2022): the hardware method at an assumed utilization.
    """

    code = "C001"
    name = "compute-6nd"
    quantity = "compute_flops"
    formula = "C = 6 · N · D"
    relation = Relation((("compute_flops", 1.0), ("n_eff", -1.0), ("tokens", -1.0)), 6.0)
    subjects = ("compute_flops", "tokens", "n_eff")
    symbols = {"compute_flops": "C", "n_eff": "N", "tokens": "D"}
    order = 40
    active_share_of = "compute_flops"
    derives_from_total_params = True
    chart = "compute"

    @classmethod
    def applies(cls, state: WorkState) -> np.ndarray | None:
        # A fine-tune's total compute includes the base model's, whose tokens the claim does not give (C017).
        return ~state.finetune()

    @classmethod
    def upper_bound(cls, state: WorkState) -> np.ndarray | None:
        # A mixture-of-experts claim without its active count: 6·N_total·D only bounds the compute from above.
        return state.total_only()

    @classmethod
    def lower_bound(cls, state: WorkState) -> np.ndarray | None:
        # A compute its notes build as a sum of trainings (audit.notes): 6·N·D of this one bounds it from below.
        return state.compute_stages() != ""

    @classmethod
    def assumed_utilization(cls, state: WorkState) -> np.ndarray | None:
        # A compute its notes estimate from the hardware at an assumed utilization (audit.notes).
        return state.assumed_utilization()

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        if f["detail"] == "assumed-utilization":
            return cls._assumed_utilization_message(result, f)
        if f["detail"] not in ("upper-bound", "upper-bound-reached"):
            return cls.bound_message(result, f) or super().message(result, f)
        row = int(f["row"])
        c, n, d = (float(result.cell("q", row, name)) for name in ("compute_flops", "params", "tokens"))
        share = c / (6.0 * n * d)
        if f["detail"] == "upper-bound-reached":
            derived = "" if result.cell("source", row, "compute_flops") == "claimed" else " (derived)"
            return (f"{label('compute_flops')} {fmt.value('compute_flops', c)}{derived} is {fmt.sig(share * 100)} % "
                    f"of 6·N·D = {fmt.value('compute_flops', 6.0 * n * d)} with N = {fmt.value('params', n)}, the "
                    f"total of a mixture-of-experts model: the compute of every parameter active per token, which a "
                    f"sparse model's is a fraction of. A figure behind the compute counts the total parameters (an "
                    f"MFU or hours worked out with them?); state active_params to check it")
        return (f"{label('compute_flops')} {fmt.value('compute_flops', c)} is {fmt.sig(share * 100)} % of 6·N·D = "
                f"{fmt.value('compute_flops', 6.0 * n * d)} with N = {fmt.value('params', n)}, the total of a "
                f"mixture-of-experts model (its active parameters are not stated): consistent if about "
                f"{fmt.value('params', share * n)} parameters are active per token; state active_params to check it")

    @classmethod
    def _assumed_utilization_message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        c, six = float(f["claimed"]), float(f["expected"])
        u = assumed_utilization(result.cell("info", row, "compute_notes"),
                                float(result.claims.values["compute_flops"].iat[row]))
        reached = f"{fmt.sig(u * six / c * 100)} %" if math.isfinite(u) else "another utilization"
        assumed = f"{fmt.sig(u * 100)} %" if math.isfinite(u) else "a utilization"
        return (f"{label('compute_flops')} {fmt.value('compute_flops', c)} (claimed) differs from "
                f"{fmt.value('compute_flops', six)} implied by C = 6 · N · D (ratio {fmt.ratio(c / six)}), and its "
                f"notes estimate it from the hardware and time at an assumed utilization of {assumed}: with 6 · N · D "
                f"as the work done, the run reached {reached}, which is possible. The assumed utilization, N or D is "
                f"off (or the model does more than 6 FLOP per parameter per token: shared weights, long sequences): "
                f"a warning, not an error")


class ChipHours(RelationRule):
    """Accelerator-hours are accelerators times wall-clock hours: chip_hours = chips × 24 × days.

    **What it checks.** Claimed GPU-/TPU-hours against the chip count and the training duration; with one of
    the three missing, it derives it.

    **Why it matters.** GPU-days written as GPU-hours (24x), or node-hours for GPU-hours (8x), are common slips,
    and an implied duration of years or minutes shows a figure is for a different run.

    **Example.** LLaMA-65B: 2,048 A100 × 24 × 21 days = 1,032,192 GPU-hours vs 1,022,362 reported (1 %). Pass.

    **References.** Touvron et al. 2023, *LLaMA*, Sec. 2.4 and Table 15.
    """

    code = "C002"
    name = "chip-hours"
    quantity = "chip_hours"
    formula = "chip_hours = chips · 24 · days"
    relation = Relation((("chip_hours", 1.0), ("chips", -1.0), ("wall_clock_days", -1.0)), 24.0)
    subjects = ("chip_hours", "wall_clock_days", "chips")
    symbols = {"chip_hours": "chip_hours", "chips": "chips", "wall_clock_days": "days"}
    order = 50


class ComputeFromHardware(RelationRule):
    """Compute equals chip-seconds times peak FLOP/s times utilization: C = chip_hours × 3600 × peak × MFU.

    **What it checks.** That the compute, the accelerator time, the accelerator's peak (from the catalog
    for the stated hardware and precision, unless claimed) and the MFU agree; with one missing (usually MFU),
    it derives it. An MFU derived this way is *end-to-end*: it includes downtime, restarts and evaluation.

    Both readings of a stated compute are weighed: when the stated MFU is below the implied one by about the
    recomputation factor (4/3, or the claim's own r), the compute fits as *hardware* FLOPs (the recomputed
    forward pass counted) and the finding is info, saying so. The other way round, a stated MFU above the implied
    one that only the goodput allowance accepts, at the claim's own stated recomputation factor (within 3 %), is a
    warning: an HFU quoted as MFU (a team's sheet: "MFU" 50.7 % with full recomputation, 38.0 % implied, 1.33x),
    unless the run's goodput was 1/r, as its words say. A compute whose notes build it as a sum of several
    trainings (``compute_notes``: "1.07e23 + 6.2e22 = 1.69e23") ran only partly on the stated hardware: the
    relation then bounds it from below only.

    **Why it matters.** It ties the model arithmetic to the hardware: a compute figure the hardware could not
    have delivered, or an MFU that the stated GPU-hours contradict, is the heart of most misreports.

    **Example.** LLaMA-65B: 6 × 65.2e9 × 1.4e12 = 5.48e23 FLOP over 1,022,362 A100-hours at 312 TFLOP/s
    implies MFU = 5.48e23 / (1,022,362 × 3600 × 312e12) = 47.7 %. BloombergGPT (Epoch's row): 2.36e23 FLOP on
    512 A100 × 1,270 h implies 32.3 % against the stated 24.6 %; as hardware FLOPs, 2.36e23 / (4/3) gives 24.2 %.

    **References.** Chowdhery et al. 2022, *PaLM*, Sec. 4.1 and App. B (definition of MFU).
    """

    code = "C003"
    name = "compute-from-hardware"
    quantity = "mfu"
    formula = "C = chip_hours · 3600 · peak · MFU"
    relation = Relation((("compute_flops", 1.0), ("chip_hours", -1.0), ("peak_flops_per_chip", -1.0),
                         ("mfu", -1.0)), 3600.0)
    subjects = ("mfu", "compute_flops", "chip_hours")
    symbols = {"compute_flops": "C", "chip_hours": "chip_hours", "peak_flops_per_chip": "peak", "mfu": "MFU"}
    order = 80
    uses_peak = True
    goodput_quantity = "mfu"
    weighs_compute_reading = True
    active_share_of = "mfu"

    @classmethod
    def applies(cls, state: WorkState) -> np.ndarray | None:
        # A fine-tune's hardware and time describe the fine-tune alone: C016 checks them against its own compute.
        return ~state.finetune()

    @classmethod
    def lower_bound(cls, state: WorkState) -> np.ndarray | None:
        # A compute its notes build as a sum of trainings: the stated hardware and time ran one of them.
        return state.compute_stages() != ""

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        if f["detail"] == "hardware-compute":
            row = int(f["row"])
            c = float(result.cell("q", row, "compute_flops"))
            r = float(result.cell("q", row, "recompute_factor"))
            r = r if r > 1 else FULL_RECOMPUTE
            return (f"{super().message(result, f)}; read as hardware FLOPs (the recomputed forward pass counted, "
                    f"r = {fmt.sig(r, 3)}), the compute is {fmt.value('compute_flops', c / r)} of model FLOPs and "
                    f"the figures agree: the stated compute likely counts hardware FLOPs")
        return cls.bound_message(result, f) or super().message(result, f)


class TokensFromThroughput(RelationRule):
    """Tokens processed equal throughput times training time: D = throughput × 86400 × days.

    **What it checks.** Claimed tokens against the whole-cluster tokens-per-second figure and the duration.

    **Why it matters.** A per-GPU throughput quoted as the cluster's, or a duration that excludes a phase, shows
    up as a ratio near the chip count or the phase's share.

    **Example.** LLaMA-65B: 380 tokens/s/GPU × 2,048 GPUs = 778,240 tokens/s; × 86400 × 21 days = 1.41e12
    tokens vs 1.4e12 reported. Pass.

    **References.** Touvron et al. 2023, *LLaMA*, Sec. 2.4.
    """

    code = "C004"
    name = "tokens-from-throughput"
    quantity = "tokens"
    formula = "D = throughput · 86400 · days"
    relation = Relation((("tokens", 1.0), ("throughput_tokens_per_s", -1.0), ("wall_clock_days", -1.0)), 86400.0)
    subjects = ("tokens", "throughput_tokens_per_s", "wall_clock_days")
    symbols = {"tokens": "D", "throughput_tokens_per_s": "throughput", "wall_clock_days": "days"}
    order = 60


class TokensFromChipThroughput(RelationRule):
    """Tokens processed equal the throughput per accelerator times the accelerator-hours:
    D = throughput per chip · 3600 · chip-hours.

    **What it checks.** Claimed tokens against a tokens-per-second figure stated per accelerator ("24k tokens/s
    per GPU", ``throughput_scope`` "per GPU") and the chip-hours. The chip count cancels, so the check needs none:
    a model card that gives a per-GPU rate and GPU-hours but no GPU count is checked, and of the three figures
    the missing one is derived from the other two (the GPU-hours a rate and a token count take).

    **Why it matters.** A per-GPU rate beside GPU-hours is how small-model reports state their speed; a rate
    measured on a faster setup than the run's, GPU-days written as GPU-hours or the tokens of another stage show
    up as a ratio. The rate is a steady-state figure and chip-hours are end to end, so tokens somewhat below the
    product are goodput, as in C004.

    **Example.** TinyLlama 1.1B: 24,000 tokens/s per A100-40G × 3,456 A100 GPU-hours (the repository's time "on
    300B tokens") × 3600 = 2.99e11 tokens, against 300B stated: ratio 1.005. Pass.

    **References.** Zhang et al. 2023, TinyLlama repository README (github.com/jzhang38/TinyLlama), "Blazingly
    Fast": 24k tokens per second per A100-40G GPU; 3,456 A100 GPU hours taken on 300B tokens.
    """

    code = "C021"
    name = "tokens-from-chip-throughput"
    quantity = "tokens"
    formula = "D = throughput per chip · 3600 · chip-hours"
    relation = Relation((("tokens", 1.0), ("throughput_per_chip", -1.0), ("chip_hours", -1.0)), 3600.0)
    subjects = ("tokens", "throughput_per_chip", "chip_hours")
    symbols = {"tokens": "D", "throughput_per_chip": "throughput per chip", "chip_hours": "chip-hours"}
    order = 62


class AchievedFromMFU(RelationRule):
    """Achieved FLOP/s per accelerator equal MFU times peak: achieved = MFU × peak.

    **What it checks.** A claimed sustained TFLOP/s per GPU against the MFU and the peak; with MFU missing it
    derives it from the achieved rate (steady-state MFU). A stated MFU may sit above the one an end-to-end rate
    implies by the goodput factor (as in C003), and above the one a throughput implies by 6N by the same factor:
    the attention FLOPs that 6N leaves out and MFUs such as PaLM's and torchtitan's count (torchtitan's Llama 3 8B:
    58.2 % stated, 45.9 % by 6N, 55.2 % with attention). With the architecture given, attention is counted and
    nothing is allowed: HFU quoted as MFU (4/3 above) is a warning.

    **Why it matters.** Papers state one or the other; when they state both, the peak they divided by shows
    (a sparse peak halves MFU; an A100 peak used for an H100 inflates it 3x).

    **Example.** Llama 3.1 405B: 400 TFLOP/s per H100 / 989.4 = 40.4 %; the paper reports 41 %. Pass.

    **References.** Llama Team 2024, *The Llama 3 Herd of Models*, Table 4; Narayanan et al. 2021,
    *Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM*, Table 1; Chowdhery et al.
    2022 (PaLM), App. B (MFU with attention FLOPs); pytorch/torchtitan, docs/performance.md.
    """

    code = "C005"
    name = "achieved-from-mfu"
    quantity = "achieved_flops_per_chip"
    formula = "achieved = MFU · peak"
    relation = Relation((("achieved_flops_per_chip", 1.0), ("mfu", -1.0), ("peak_flops_per_chip", -1.0)), 1.0)
    subjects = ("achieved_flops_per_chip", "mfu")
    symbols = {"achieved_flops_per_chip": "achieved", "mfu": "MFU", "peak_flops_per_chip": "peak"}
    order = 90
    uses_peak = True
    # An achieved rate derived from tokens over wall-clock time is end-to-end: a stated (steady-state) MFU may
    # exceed the MFU it implies by the goodput factor, as in C003.
    goodput_quantity = "mfu"
    goodput_unless_stated = ("achieved_flops_per_chip",)
    goodput_unless_architecture = ("throughput_tokens_per_s", "throughput_per_chip")


class PeakMatchesCatalog(RelationRule):
    """A claimed peak FLOP/s per accelerator matches the datasheet's dense figure for that precision.

    **What it checks.** ``peak_flops_per_chip`` when a claim states it, against the catalog's dense peak for
    the hardware and precision. Without a claimed peak, the catalog's figure is used (source: the datasheet).

    **Why it matters.** NVIDIA prints 2:4-sparse figures as headlines from A100 on (H100 SXM "1,979 TFLOPS"
    is 989.4 dense); MFU computed against a sparse peak is half the true value. A ratio of 2 is named as such.

    **Example.** A claim of 1,979 TFLOP/s for an H100 SXM in bf16: 1,979 / 989.4 = 2.0. Error (sparse peak).

    **References.** NVIDIA H100 Tensor Core GPU Architecture whitepaper v1.04, Table 1 (dense | sparse).
    """

    code = "C006"
    name = "peak-matches-catalog"
    quantity = "peak_flops_per_chip"
    formula = "peak = catalog peak (hardware, precision)"
    relation = Relation((("peak_flops_per_chip", 1.0), ("catalog_peak", -1.0)), 1.0)
    subjects = ("peak_flops_per_chip",)
    symbols = {"peak_flops_per_chip": "peak", "catalog_peak": "datasheet"}
    order = 10
    derived_source = "catalog"


class ComputeFromArchitecture(RelationRule):
    """Training compute equals the architecture's FLOPs per token times tokens: C = F · D.

    **What it checks.** When a claim gives the architecture (layers, width, heads, sequence length, vocabulary,
    FFN width, ...), F is counted by the most complete convention the fields allow (Megatron-LM's
    ``num_floating_point_operations`` with grouped-query attention, gated MLPs and top-k experts; else PaLM's
    6N + 12·L·H·Q·T). The compute is checked (or derived) with that F, and the quantity's derivation names the
    convention and lists the others side by side.

    **Why it matters.** 6ND leaves out attention, which grows with sequence length: at 8K-128K context the
    difference is 10-100 %, and an MFU computed with 6N understates the work done.

    **Example.** PaLM 540B: 6 × 540.35e9 + 12 × 118 × 48 × 256 × 2048 = 3.278e12 FLOPs per token
    (Chowdhery et al. 2022, App. B); × 780e9 tokens = 2.56e24 FLOP.

    **References.** Chowdhery et al. 2022 (PaLM), App. B; Narayanan et al. 2021 (Megatron-LM), Sec. 5.1;
    Megatron-LM ``training.py`` ``num_floating_point_operations``.
    """

    code = "C007"
    name = "compute-from-architecture"
    quantity = "compute_flops"
    formula = "C = F · D"
    relation = Relation((("compute_flops", 1.0), ("flops_per_token", -1.0), ("tokens", -1.0)), 1.0)
    subjects = ("compute_flops", "tokens")
    symbols = {"compute_flops": "C", "flops_per_token": "F", "tokens": "D"}
    order = 30
    active_share_of = "compute_flops"

    @classmethod
    def applies(cls, state: WorkState) -> np.ndarray | None:
        # Only where F comes from an architecture (with F = 6N this relation is C001 again), and not on a
        # fine-tune, whose total compute includes the base model's (C017).
        return state.how["flops_per_token"].isin(ARCHITECTURE_CONVENTIONS).to_numpy() & ~state.finetune()


class HFUFromRecompute(RelationRule):
    """HFU is MFU times the recomputation factor: HFU = r · MFU.

    **What it checks.** A claimed HFU against the MFU and the activation recomputation the claim states
    (``activation_recompute``: none, selective or full). Full recomputation repeats every layer's forward pass:
    4 passes instead of 3, so r = 4/3 (slightly less with the logit layer, which is not recomputed, when the
    architecture is given); selective recomputation repeats only the attention core (r from the architecture).

    **Why it matters.** HFU quoted as MFU overstates useful work by r; an HFU/MFU pair whose ratio does not match
    the stated recomputation was computed with different FLOP counts or peaks.

    **Example.** Full recomputation, MFU 41.0 % → HFU 54.7 %.

    **References.** Narayanan et al. 2021, Sec. 5.1 (96 vs 72 coefficient); Korthikanti et al. 2022,
    *Reducing Activation Recomputation in Large Transformer Models*, Sec. 5; Chowdhery et al. 2022, App. B.
    """

    code = "C008"
    name = "hfu-from-recompute"
    quantity = "hfu"
    formula = "HFU = r · MFU"
    relation = Relation((("hfu", 1.0), ("recompute_factor", -1.0), ("mfu", -1.0)), 1.0)
    subjects = ("hfu", "mfu")
    symbols = {"hfu": "HFU", "recompute_factor": "r", "mfu": "MFU"}
    order = 100

    @classmethod
    def applies(cls, state: WorkState) -> np.ndarray | None:
        # A stated hardware rate over the datasheet's peak is the HFU itself (C014), where r times an MFU is built on
        # an r that may be assumed (C015's 4/3): GPT-NeoX-20B's 117 TFLOP/s per A100 (Black et al. 2022, Sec. 3)
        # is an HFU of 117 / 312 = 37.5 %, which this relation, first in line, gave as 4/3 × 29.5 % = 39.4 %. There
        # C013 (achieved_hw = r · achieved) checks what this relation would.
        peak = np.isfinite(state.col("peak_flops_per_chip")) | np.isfinite(state.col("catalog_peak"))
        return ~(state.stated("achieved_hardware_flops_per_chip") & peak)
    # A stated (steady-state) HFU may exceed r times an MFU derived from the end-to-end time by goodput, as C003.
    goodput_quantity = "hfu"
    goodput_unless_stated = ("mfu",)


class AchievedFromThroughput(RelationRule):
    """Throughput gives the sustained FLOP/s per accelerator: achieved = throughput · F / chips.

    **What it checks.** With the whole-cluster tokens per second, the FLOPs per token (from the architecture,
    else 6N) and the chip count, the steady-state FLOP/s per accelerator; with the peak (C005) this is the
    throughput-based MFU. Beside the end-to-end MFU implied by chip-hours (C003), the gap between the two is
    downtime, restarts and evaluation: steady-state MFU versus goodput.

    **Why it matters.** Papers quote steady-state MFU measured over good steps; chip-hours include everything.
    The two differ by 5-30 % on healthy runs; more means a phase or a restart is missing from one figure.

    **Example.** PaLM 540B: 238.3K tokens/s × 3.278e12 FLOP / 6144 chips = 127 TFLOP/s = 46.2 % of 275.

    **References.** Chowdhery et al. 2022 (PaLM), Sec. 4.1 and Table 3.
    """

    code = "C011"
    name = "achieved-from-throughput"
    quantity = "achieved_flops_per_chip"
    formula = "achieved = throughput · F / chips"
    relation = Relation((("achieved_flops_per_chip", 1.0), ("throughput_tokens_per_s", -1.0),
                         ("flops_per_token", -1.0), ("chips", 1.0)), 1.0)
    subjects = ("achieved_flops_per_chip", "throughput_tokens_per_s")
    symbols = {"achieved_flops_per_chip": "achieved", "throughput_tokens_per_s": "throughput",
               "flops_per_token": "F", "chips": "chips"}
    order = 70


class TokensFromEpochs(RelationRule):
    """Tokens processed are the dataset's tokens times the epochs: D = dataset_tokens · epochs.

    **What it checks.** Claimed training tokens against the dataset size and the number of passes over it.

    **Why it matters.** Reports give the dataset size where the tokens processed belong (or the reverse); older
    reports count words (about 1.3 tokens per English word) where tokens belong.

    **Example.** 300B tokens from a 180B-token corpus means 1.67 epochs.

    **References.** Epoch AI, *Data on Notable AI Models*, "Training dataset size" and "Epochs" columns.
    """

    code = "C012"
    name = "tokens-from-epochs"
    quantity = "tokens"
    formula = "D = dataset_tokens · epochs"
    relation = Relation((("tokens", 1.0), ("dataset_tokens", -1.0), ("epochs", -1.0)), 1.0)
    subjects = ("tokens", "dataset_tokens", "epochs")
    symbols = {"tokens": "D", "dataset_tokens": "dataset_tokens", "epochs": "epochs"}
    order = 20


class HardwareFromModelFlops(RelationRule):
    """Hardware FLOP/s are model FLOP/s times the recomputation factor: achieved_hw = r · achieved.

    **What it checks.** A sustained rate stated as hardware FLOPs (``achieved_hardware_flops_per_chip``, or a
    stated rate read so by C015) against the model FLOP/s and the recomputation factor r (4/3 with full
    activation recomputation); it derives the model FLOP/s, and with the peak the MFU (C005).

    **Why it matters.** Megatron-LM and its descendants report TFLOP/s per GPU counted with the recomputed
    forward pass; taken as model FLOPs they overstate the MFU by r.

    **Example.** MT-NLG 530B: 126 TFLOP/s of hardware FLOPs per A100 with full recomputation: 126 / (4/3) =
    94.5 TFLOP/s of model FLOPs, an MFU of 94.5 / 312 = 30.3 %.

    **References.** Narayanan et al. 2021, Sec. 5.1; Smith et al. 2022 (MT-NLG), Sec. 3.
    """

    code = "C013"
    name = "hardware-from-model-flops"
    quantity = "achieved_hardware_flops_per_chip"
    formula = "achieved_hw = r · achieved"
    relation = Relation((("achieved_hardware_flops_per_chip", 1.0), ("recompute_factor", -1.0),
                         ("achieved_flops_per_chip", -1.0)), 1.0)
    subjects = ("achieved_hardware_flops_per_chip", "achieved_flops_per_chip")
    symbols = {"achieved_hardware_flops_per_chip": "achieved_hw", "recompute_factor": "r",
               "achieved_flops_per_chip": "achieved"}
    order = 95


class HardwareComputeFromModel(RelationRule):
    """Hardware FLOPs are model FLOPs times the recomputation factor: C_hw = r · C.

    **What it checks.** A total compute counted as hardware FLOPs (``hardware_compute_flops``, or a stated compute
    read so by C019) against the model-FLOPs compute and the recomputation factor r (4/3 with full activation
    recomputation); it derives the model compute, which C = 6·N·D and the hardware relations then use.

    **Why it matters.** OPT-175B's 4.3e23 FLOP and BloombergGPT's 2.36e23 count the recomputed forward pass; read
    as model FLOPs they overstate the MFU by r and disagree with the throughput.

    **Example.** OPT-175B: 4.3e23 / (4/3) = 3.23e23 FLOP of model FLOPs, against 6 × 175e9 × 300e9 = 3.15e23.

    **References.** Narayanan et al. 2021, Sec. 5.1 (hardware FLOPs with recomputation); Zhang et al. 2022 (OPT),
    metaseq logbook; Wu et al. 2023 (BloombergGPT), Sec. 2.
    """

    code = "C018"
    name = "hardware-compute"
    quantity = "hardware_compute_flops"
    formula = "C_hw = r · C"
    relation = Relation((("hardware_compute_flops", 1.0), ("recompute_factor", -1.0), ("compute_flops", -1.0)),
                        1.0)
    subjects = ("hardware_compute_flops", "compute_flops")
    symbols = {"hardware_compute_flops": "C_hw", "recompute_factor": "r", "compute_flops": "C"}
    order = 30


class HardwareComputeReading(Rule):
    """A stated total compute is read as hardware FLOPs when it is r × 6·N·D and the claim counts hardware FLOPs.

    **What it checks.** Whether a stated ``compute_flops`` counts the recomputed forward pass. It is read as
    hardware FLOPs when it is the recomputation factor (4/3 for full recomputation, unless the architecture gives
    another) times 6·N·D of the stated parameters and tokens, closer to that than to 6·N·D itself, *and* the claim
    itself counts hardware FLOPs elsewhere: it states an HFU, activation recomputation, or a FLOP/s per chip that
    is hardware FLOPs (C015). The finding says so; C018 then derives the model-FLOPs compute.

    **Why it matters.** A compute figure 4/3 of 6·N·D is honest when it counts recomputation; read as model FLOPs
    it gives an MFU a third too high, which the throughput and the HFU then contradict.

    **Example.** BloombergGPT: 2.36e23 FLOP = 1.37 × 6 × 50.6e9 × 569e9, and its 102 TFLOP/s per A100 are hardware
    FLOPs (C015): the compute is read as hardware FLOPs, 1.77e23 of model FLOPs.

    **References.** Narayanan et al. 2021, Sec. 5.1; Wu et al. 2023 (BloombergGPT), Sec. 2; Zhang et al. 2022 (OPT).
    """

    code = "C019"
    note = True
    name = "hardware-compute-reading"
    quantity = "compute_flops"
    formula = "C_hw = r · 6 · N · D"
    severity = "info"
    stage = "prepare"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        c, chw = "compute_flops", "hardware_compute_flops"
        claimed = state.stated(c)
        free = claimed & np.isnan(state.col(chw))
        n_src = state.stated("n_eff")
        # D as stated, or as Epoch AI gives it: dataset size (tokens) × epochs (C012 derives it later).
        d_src = state.stated("tokens")
        tokens = np.where(d_src, state.col("tokens"), state.col("dataset_tokens") * state.col("epochs"))
        free &= n_src & np.isfinite(tokens) & ~state.total_only() & ~state.finetune()
        if not free.any():
            return None
        hfu = state.stated("hfu")
        hw_rate = state.stated("achieved_hardware_flops_per_chip")
        r_known = state.col("recompute_factor")
        counts_hardware = hfu | hw_rate | (r_known > 1)
        r = np.where(r_known > 1, r_known, FULL_RECOMPUTE)
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = state.col(c) / (6.0 * state.col("n_eff") * tokens)
            as_hardware = np.abs(np.log(rho / r))
            as_model = np.abs(np.log(rho))
        slack_d = np.where(d_src, state.slack("tokens"), state.slack("dataset_tokens", "epochs"))
        ok = math.log(state.config.tolerance("C008")[0]) + state.slack(c, "n_eff") + slack_d + _SLACK
        move = free & counts_hardware & np.isfinite(rho) & (as_hardware <= ok) & (as_model > ok) & \
            (as_hardware < as_model)
        rows = np.flatnonzero(move)
        if len(rows) == 0:
            return None
        state.restate(rows, c, chw)
        state.set_derived("recompute_factor", np.where(move & np.isnan(r_known), FULL_RECOMPUTE, np.nan), cls.code)
        reason = np.where(hfu, "hfu", np.where(hw_rate, "rate", "recompute"))
        return findings_part(rows, cls.code, "info", c, state.col(chw)[rows], (6.0 * state.col("n_eff") * tokens)[rows],
                              detail=reason[rows].astype(object))

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        stated = fmt.value("compute_flops", float(f["claimed"]))
        why = {"hfu": "the claim states an HFU", "rate": "its FLOP/s per chip are hardware FLOPs (C015)",
               "recompute": "the claim states activation recomputation"}[str(f["detail"])]
        return (f"the stated compute {stated} is read as hardware FLOPs (the recomputed forward pass counted): it is "
                f"{fmt.ratio(float(f['claimed']) / float(f['expected']))} 6·N·D = "
                f"{fmt.value('compute_flops', float(f['expected']))}, about the recomputation factor, and {why}")


class HardwareFromHFU(RelationRule):
    """Hardware FLOP/s per accelerator equal HFU times peak: achieved_hw = HFU · peak.

    **What it checks.** A rate stated as hardware FLOPs against the stated HFU and the datasheet peak (the
    hardware twin of C005).

    **Why it matters.** A paper that gives both its TFLOP/s per GPU and its HFU divided by a peak; when they
    disagree, the peak it used shows (a sparse peak halves the HFU).

    **Example.** BLOOM: 150 TFLOP/s per A100 / 312 TFLOP/s = 48 % HFU.

    **References.** Chowdhery et al. 2022 (PaLM), App. B (HFU); Narayanan et al. 2021, Sec. 5.1.
    """

    code = "C014"
    name = "hardware-from-hfu"
    quantity = "achieved_hardware_flops_per_chip"
    formula = "achieved_hw = HFU · peak"
    relation = Relation((("achieved_hardware_flops_per_chip", 1.0), ("hfu", -1.0), ("peak_flops_per_chip", -1.0)),
                        1.0)
    subjects = ("achieved_hardware_flops_per_chip", "hfu")
    symbols = {"achieved_hardware_flops_per_chip": "achieved_hw", "hfu": "HFU", "peak_flops_per_chip": "peak"}
    order = 105
    uses_peak = True


#: Full activation recomputation: 4 passes instead of 3 (Narayanan et al. 2021, Sec. 5.1).
FULL_RECOMPUTE = 4.0 / 3.0

#: How close a stated MFU, accepted only as goodput, must be to r times the implied one to be read as an HFU quoted
#: as MFU (the claim stating its recomputation): 3 %, the rounding of a utilization written to two digits (38 % is
#: 37.5-38.5 %, ± 1.3 %) twice over. Full recomputation's 4/3 then spans 1.29x-1.37x: a goodput of 73-77 % would
#: be flagged too, which the finding's words allow for.
HFU_AS_MFU_FIT = 1.03


class HardwareFlopsReading(Rule):
    """A stated FLOP/s per accelerator is read as hardware FLOPs when the claim's figures say so.

    **What it checks.** Whether a stated ``achieved_flops_per_chip`` counts model FLOPs or hardware FLOPs (with the
    recomputed forward pass). It is read as hardware FLOPs when the claim states an HFU or activation recomputation,
    unless the claim's own MFU is that rate over the peak (and its HFU is not): llm-foundry's MPT-70B, MFU 42.57 %
    and 421.3 TFLOP/s per H100 (42.57 % of 989.4), is model FLOPs beside its HFU of 56.76 %; such a rate, and one
    where the claim states neither, has both readings weighed against the rate the other figures imply (throughput,
    compute and chip-hours), and the hardware reading, with full recomputation (r = 4/3), is taken only when it
    agrees within tolerance and the model reading does not. Either way the finding says which reading was taken and
    why; C013 then derives the model FLOP/s. When nothing else in the claim implies a rate, the model reading stands
    and an info gives what the hardware reading would: MT-NLG's 126 TFLOP/s per A100 is 40.4 % of the 312 TFLOP/s
    peak as model FLOPs, 126 / (4/3) / 312 = 30.3 % as hardware FLOPs. A stated MFU that is the stated rate over the
    peak ("163 TFLOP/s per GPU, 52 % of peak", written as MFU) is read with it, as HFU: HFU quoted as MFU, a warning
    (the only one this rule gives: an MFU that overstates the useful work by r).

    **Why it matters.** Megatron-LM (Narayanan et al. 2021: 163 TFLOP/s per GPU, 52 % of peak, for its 1T
    model), BLOOM (about 150 TFLOP/s) and MT-NLG (126 TFLOP/s) count hardware FLOPs. Read as model FLOPs they
    give an MFU a third too high, and an HFU "below" the MFU.

    **Example.** BLOOM 176B: the throughput implies 98.5 TFLOP/s of model FLOPs per A100. The stated 150 is
    1.52x that as model FLOPs, and 150 / (4/3 × 98.5) = 1.14x as hardware FLOPs: read as hardware FLOPs.

    **References.** Narayanan et al. 2021, Sec. 5.1 and Table 1; Smith et al. 2022 (MT-NLG), Sec. 3;
    BigScience Workshop 2022 (BLOOM), Sec. 3.5; mosaicml/llm-foundry, scripts/train/benchmarking/README.md (MFU,
    HFU and model TFLOP/s per GPU).
    """

    code = "C015"
    note = True
    name = "hardware-flops-reading"
    quantity = "achieved_flops_per_chip"
    formula = "achieved_hw = r · achieved"
    severity = "warning"
    stage = "prepare"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        ach, hw = "achieved_flops_per_chip", "achieved_hardware_flops_per_chip"
        src = state.stated(ach)
        free = src & np.isnan(state.col(hw))
        if not free.any():
            return None
        hfu = state.stated("hfu")
        r = state.col("recompute_factor")
        # A stated MFU that is the stated rate over the peak ("163 TFLOP/s, 52 % of peak") is one figure with it,
        # not a second witness: both are weighed against the rest, and read alike.
        peak = state.col("peak_flops_per_chip")
        peak = np.where(np.isnan(peak), state.col("catalog_peak"), peak)  # not yet derived from the catalog's
        near = math.log(state.config.tolerance("C005")[0]) + _SLACK
        with np.errstate(divide="ignore", invalid="ignore"):
            tied_off = np.abs(np.log(state.col("mfu") * peak / state.col(ach)))
            hfu_off = np.abs(np.log(state.col("hfu") * peak / state.col(ach)))
        mfu_tied = state.stated("mfu") & (tied_off <= near + state.slack("mfu", ach))
        hfu_tied = hfu & (hfu_off <= near + state.slack("hfu", ach))
        # A stated HFU or recomputation makes the rate hardware FLOPs, unless the claim's own MFU is that rate over
        # the peak (and its HFU is not): llm-foundry's MPT-70B row, MFU 42.57 %, HFU 56.76 %, 421.3 TFLOP/s =
        # 42.57 % of 989.4, is model FLOPs, weighed against the rest like a rate no field qualifies.
        definite = free & (hfu | (r > 1)) & ~(mfu_tied & ~hfu_tied)
        ambiguous = free & ~definite
        implied = np.full(len(state.q), np.nan)
        fits = np.zeros(len(state.q), dtype=bool)
        tied = ambiguous & mfu_tied & np.isnan(state.col("hfu"))
        if ambiguous.any() and state.resolve is not None:
            rows = np.flatnonzero(ambiguous)
            q1, s1, h1, p1 = (f.loc[rows].reset_index(drop=True).copy()
                              for f in (state.q, state.source, state.how, state.precision))
            q1[ach], s1[ach], h1[ach], p1[ach] = np.nan, np.int8(NO_SOURCE), None, 0.0
            with_mfu = tied[rows]
            q1.loc[with_mfu, "mfu"], s1.loc[with_mfu, "mfu"], h1.loc[with_mfu, "mfu"] = np.nan, NO_SOURCE, None
            p1.loc[with_mfu, "mfu"] = 0.0
            state.resolve(rows, q1, s1, h1, p1)
            rate = q1[ach].to_numpy(dtype=float)  # the model FLOP/s the other figures imply
            stated = state.col(ach)[rows]
            lam = state.slack(ach)[rows] + p1[ach].to_numpy(dtype=float)
            ok = np.maximum(math.log(state.config.tolerance("C005")[0]), lam) + _SLACK
            with np.errstate(divide="ignore", invalid="ignore"):
                model_off = np.abs(np.log(stated / rate))
                hardware_off = np.abs(np.log(stated / (FULL_RECOMPUTE * rate)))
            fits[rows] = np.isfinite(model_off) & (model_off > ok) & (hardware_off <= ok) & (hardware_off < model_off)
            implied[rows] = rate
        move = definite | fits
        # Nothing else in the claim implies a rate (no throughput, compute or time beside it): the model reading
        # stands, and the finding says what the hardware reading would give (MT-NLG's 126 TFLOP/s on an A100 is
        # 40 % MFU as model FLOPs, 30 % as hardware FLOPs with full recomputation).
        undecided = np.flatnonzero(ambiguous & np.isnan(implied)) if state.resolve is not None else np.array([], int)
        overridden = (mfu_tied & (hfu | (r > 1)))[undecided]  # a stated HFU or recomputation, and the MFU ties it
        alone = findings_part(undecided, cls.code, "info", ach, state.col(ach)[undecided],
                              state.col(ach)[undecided] / FULL_RECOMPUTE,
                              detail=np.where(overridden, "mfu-tied", np.where(
                                  mfu_tied[undecided], "undecided-mfu", "undecided")).astype(object))
        rows = np.flatnonzero(move)
        if len(rows) == 0:
            return alone
        state.restate(rows, ach, hw)
        as_hfu = np.flatnonzero(fits & tied)
        if len(as_hfu):  # HFU quoted as MFU: the stated "MFU" is the hardware rate over the peak
            state.restate(as_hfu, "mfu", "hfu")
        state.set_derived("recompute_factor", np.where(fits & np.isnan(r), FULL_RECOMPUTE, np.nan), cls.code)
        reason = np.where(hfu, "hfu", np.where(r > 1, "recompute", np.where(tied, "fits-mfu", "fits")))
        # An HFU in the MFU's place is a misreport (its MFU overstates the useful work by r): a warning.
        return concat_parts([alone, findings_part(rows, cls.code, np.where(reason[rows] == "fits-mfu", "warning",
                                                                             "info"), ach, state.col(hw)[rows],
                                                  implied[rows], detail=reason[rows].astype(object))])

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        stated = fmt.value("achieved_flops_per_chip", float(f["claimed"]))
        head = f"the stated {stated} per chip is read as hardware FLOPs (the recomputed forward pass counted)"
        if f["detail"] == "hfu":
            hfu, mfu = (float(result.cell("q", row, name)) for name in ("hfu", "mfu"))
            if math.isclose(hfu, mfu, rel_tol=1e-9):  # llm-foundry's rows without activation checkpointing
                return (f"the stated {stated} per chip is read as hardware FLOPs: the claim states an HFU, equal to "
                        f"its MFU ({fmt.percent(hfu)} %: nothing recomputed), so its hardware and model FLOPs are "
                        f"the same")
            return f"{head}: the claim states an HFU"
        if f["detail"] == "recompute":
            mode = result.cell("architecture", row, "recompute_mode")
            return f"{head}: the claim states {mode} activation recomputation"
        if f["detail"] == "mfu-tied":
            mfu = float(result.cell("q", row, "mfu"))
            return (f"the stated {stated} per chip is read as model FLOPs, though the claim counts recomputation "
                    f"(an HFU or activation recomputation): it is the stated MFU, {fmt.percent(mfu)} %, of the peak, "
                    f"and HFU counts the recomputed FLOPs, MFU does not")
        if f["detail"] in ("undecided", "undecided-mfu"):
            model = float(f["expected"])
            peak = float(result.cell("q", row, "peak_flops_per_chip"))
            mfu = (f" and an MFU of {fmt.percent(model / peak)} %" if peak > 0 else "")
            # A stated MFU that is the rate over the peak reads it as model FLOPs too (Llama 3's Table 4: 400
            # TFLOP/s and 41 %); it is no independent witness, so the hardware reading is still given.
            why = (f"it is the stated MFU, {fmt.percent(float(result.cell('q', row, 'mfu')))} %, of the peak, and no "
                   f"other figure of the claim (throughput, compute and time, HFU, recomputation) weighs it"
                   if f["detail"] == "undecided-mfu" else "no other figure of the claim (throughput, compute and "
                   "time, HFU, recomputation) weighs it")
            return (f"the stated {stated} per chip is read as model FLOPs: {why}. Counted as hardware FLOPs with full "
                    f"recomputation, as Megatron-LM, MT-NLG and BLOOM report theirs, it would give "
                    f"{fmt.value('achieved_flops_per_chip', model)} of model FLOPs{mfu} (r = 4/3)")
        rate = float(f["expected"])
        text = (f"{head}: the other figures imply {fmt.value('achieved_flops_per_chip', rate)} of model FLOPs, "
                f"{fmt.ratio(float(f['claimed']) / rate)} off as model FLOPs but "
                f"{fmt.ratio(float(f['claimed']) / (FULL_RECOMPUTE * rate))} as hardware FLOPs with full "
                f"recomputation (r = 4/3, assumed)")
        if f["detail"] == "fits-mfu":
            hfu = float(result.cell("q", row, "hfu"))
            mfu = float(result.cell("q", row, "mfu"))
            text += (f". The stated MFU, {fmt.percent(hfu)} %, is that rate over the peak: HFU quoted as MFU, read "
                     f"as HFU; the MFU the figures give is {fmt.percent(mfu)} %")
        return text


class FinetuneFromHardware(RelationRule):
    """A fine-tune's own compute equals its chip-seconds times peak times utilization.

    **What it checks.** For a claim that names a base model (a fine-tune), C = chip_hours × 3600 × peak × MFU
    with C the fine-tune's compute (``finetune_compute_flops``), not the total: the hardware and time of a
    fine-tune describe the fine-tune alone. C003 and the compute checks against the total do not run on it.

    **Why it matters.** Epoch AI's ``Training compute`` of a fine-tuned model includes the base model's
    compute while its hardware and hours describe the fine-tune: checked against the total, the implied MFU
    is hundreds of per cent.

    **Example.** A fine-tune of 5.67e21 FLOP on 64 H100s for 30 hours: MFU = 5.67e21 / (1,920 × 3600 ×
    989.4e12) = 82.9 %: a warning (above the band), where the total 1.2e24 would give 17,500 %.

    **References.** Epoch AI, *Data on Notable AI Models*, columns "Base model" and "Finetune compute".
    """

    code = "C016"
    name = "finetune-from-hardware"
    quantity = "mfu"
    formula = "C_finetune = chip_hours · 3600 · peak · MFU"
    relation = Relation((("finetune_compute_flops", 1.0), ("chip_hours", -1.0), ("peak_flops_per_chip", -1.0),
                         ("mfu", -1.0)), 3600.0)
    subjects = ("mfu", "finetune_compute_flops", "chip_hours")
    symbols = {"finetune_compute_flops": "C_finetune", "chip_hours": "chip_hours", "peak_flops_per_chip": "peak",
               "mfu": "MFU"}
    order = 85
    uses_peak = True
    goodput_quantity = "mfu"

    @classmethod
    def applies(cls, state: WorkState) -> np.ndarray | None:
        return state.finetune()


class FinetuneSixND(RelationRule):
    """A fine-tune's own compute is about six FLOPs per parameter per fine-tuning token: C_finetune ≈ 6·N·D.

    **What it checks.** For a claim that names a base model (a fine-tune), its own compute
    (``finetune_compute_flops``) against 6 × parameters × tokens, the tokens being those of the fine-tuning (Epoch
    AI's dataset size and epochs of a fine-tuned row describe the fine-tuning data). With one of the three missing
    it derives it; C016 then ties the fine-tune's compute to its hardware. The tolerance is C001's.

    **Why it matters.** C001 cannot check a fine-tune (its total compute includes the base model's): this is the
    same test on the part the fine-tune's own figures describe.

    **Example.** Minerva 540B (Lewkowycz et al. 2022): fine-tune compute 2.14e23 FLOP (Epoch AI) against
    6 × 540.35e9 × 26e9 tokens = 8.43e22: 2.5x, a warning (the 1,024 "chips" of a v4-1024 slice are TensorCores).

    **References.** Kaplan et al. 2020, Sec. 2.1; Epoch AI, *Data on Notable AI Models*, "Finetune compute".
    """

    code = "C020"
    name = "finetune-6nd"
    quantity = "finetune_compute_flops"
    formula = "C_finetune = 6 · N · D"
    relation = Relation((("finetune_compute_flops", 1.0), ("n_eff", -1.0), ("tokens", -1.0)), 6.0)
    subjects = ("finetune_compute_flops", "tokens", "n_eff")
    symbols = {"finetune_compute_flops": "C_finetune", "n_eff": "N", "tokens": "D"}
    order = 42

    @classmethod
    def applies(cls, state: WorkState) -> np.ndarray | None:
        return state.finetune()


class FinetuneScope(Rule):
    """A fine-tune's total compute includes its base model's; its hardware figures describe the fine-tune.

    **What it checks.** For a claim that names a base model: that the fine-tune's own compute, when stated, is
    at most the total (error otherwise), and it says that the total is not checked against the fine-tune's
    hardware and time (C016 checks the fine-tune's own compute instead).

    **Why it matters.** This is the most common false alarm on real databases: a fine-tune's MFU computed from
    the base model's compute and the fine-tune's GPU-hours.

    **Example.** ``base_model: Qwen2.5-72B``, compute 8.1e24 FLOP, fine-tune compute 5.67e21 FLOP: info.

    **References.** Epoch AI, *Data on Notable AI Models*, README: "Training compute" of fine-tuned models.
    """

    code = "C017"
    note = True
    name = "finetune-scope"
    quantity = "compute_flops"
    formula = "C_finetune ≤ C"
    severity = "error"
    stage = "prepare"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        rows = np.flatnonzero(state.finetune() & ~np.isnan(state.col("compute_flops")))
        total, part = state.col("compute_flops")[rows], state.col("finetune_compute_flops")[rows]
        lam = state.slack("compute_flops", "finetune_compute_flops")[rows]
        ok, warn = state.config.tolerance(cls.code)
        with np.errstate(invalid="ignore", divide="ignore"):
            excess = np.log(part / total)  # > 0: the fine-tune alone is larger than the total
        sev = np.where(excess > np.maximum(math.log(warn), lam) + _SLACK, "error",
                       np.where(excess > np.maximum(math.log(ok), lam) + _SLACK, "warning", "info"))
        return findings_part(rows, cls.code, sev, "compute_flops", total, part)

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return _ratio_tolerance_text(cls, config)

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        base = result.cell("info", row, "base_model")
        total = fmt.value("compute_flops", float(f["claimed"]))
        part = float(f["expected"])
        if f["severity"] in ("warning", "error"):
            return (f"the fine-tune's own compute {fmt.value('compute_flops', part)} exceeds the total {total}, "
                    f"which includes the base model {base!r}")
        own = (f"its own compute ({fmt.value('compute_flops', part)})" if math.isfinite(part)
               else "its own compute (not stated)")
        return (f"compute {total} includes the base model {base!r}: the hardware and time describe the fine-tune, "
                f"so they are checked against {own}, not the total")


class PhasesSum(Rule):
    """A multi-phase run's totals are the sums over its phases.

    **What it checks.** A claim with ``phases`` (each with its own hardware, chips, duration, precision, and
    optionally tokens and compute) is audited phase by phase; the phases' chip-hours, tokens and compute are
    summed, and their hardware capacity Σ chip_hours × peak gives the run's effective peak. A total the claim
    states is checked against the sum; a total it does not state is filled from it. Where only some phases give
    a figure, their sum is a floor under the stated total: at or above it is consistent; below it by no more than
    a run's goodput allows (C003's allowance: a phase's figure derived from a steady-state rate over end-to-end
    hours overstates it by that), ok and said; further below, a finding (a run's total cannot be less than a part).

    **Why it matters.** Runs change cluster size or precision midway (PaLM: 6,144 chips, then 3,072); a total
    taken from one phase, or a phase left out, shows up here.

    **Example.** PaLM 540B: 6,144 chips × 1,200 h + 3,072 chips × 336 h = 8,404,992 chip-hours. Its first phase
    alone, at the stated 238.3K tokens/s, gives 1.03T tokens of a run of 780B (76 %): within its goodput.

    **References.** Chowdhery et al. 2022 (PaLM), Sec. 4 and App. B.
    """

    code = "C010"
    name = "phases-sum"
    quantity = "chip_hours"
    formula = "total = Σ phases"
    stage = "prefill"
    show_formula = True

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return _ratio_tolerance_text(cls, config)

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        parts: list[FindingsPart | None] = []
        ok_tol, warn_tol = state.config.tolerance(cls.code)
        for name, given in state.prefill.items():
            if given.check != cls.code:
                continue
            values = np.asarray(given.values, dtype=float)
            stated = ~np.isnan(state.col(name))
            rows = np.flatnonzero(stated & np.isfinite(values) & (values > 0))
            if len(rows):
                claimed = state.col(name)[rows]
                sev = severity_of_ratio(claimed / values[rows], ok_tol, warn_tol, state.slack(name)[rows])
                detail = None
                if given.floor is not None:
                    # The phases that give the figure sum to a floor under the total: a total at or above it is
                    # consistent, however far (the other phases' share). Below it, by as much as a run's goodput
                    # allows: a phase's tokens or compute are mostly derived from a steady-state rate over its
                    # end-to-end hours (PaLM: 238.3K tokens/s for 1,200 hours is 1.03T, of a run of 780B; 76 %).
                    floor = np.asarray(given.floor, dtype=bool)[rows]
                    ok_g, warn_g = state.config.goodput.get("C003", (ok_tol, warn_tol))
                    below = severity_of_ratio(claimed / values[rows], ok_g, warn_g, state.slack(name)[rows])
                    sev = np.where(floor, np.where(claimed >= values[rows], "ok", below), sev)
                    detail = np.where(floor, "floor", None).astype(object)
                parts.append(findings_part(rows, cls.code, sev, name, claimed, values[rows], detail=detail))
        return concat_parts(parts)

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row, name = int(f["row"]), str(f["quantity"])
        claimed, expected = float(f["claimed"]), float(f["expected"])
        phases = result.phase_rows(row)
        tolerance = result.config.tolerance(cls.code)
        if f["detail"] == "floor":
            tolerance = result.config.goodput.get("C003", tolerance)
            giving = [i for i in phases if math.isfinite(float(result.phase_result.cell("q", i, name)))] \
                if result.phase_result is not None else []
            head = (f"{label(name)} {fmt.value(name, claimed)} (claimed) against the {fmt.value(name, expected)} "
                    f"that {len(giving)} of its {len(phases)} phases give (the others give none; ratio "
                    f"{shown_ratio(claimed / expected, str(f['severity']), tolerance)})")
            if claimed >= expected:
                return f"{head}: at least that, as a run's total is"
            if f["severity"] == "ok":
                return (f"{head}: below it by no more than a run's goodput allows (a phase's figure derived from a "
                        f"steady-state rate over its end-to-end hours overstates it by that)")
            return f"{head}: a run's total cannot be less than a part of it, beyond what goodput explains"
        verb = "agrees with" if f["severity"] == "ok" else "differs from"
        return (f"{label(name)} {fmt.value(name, claimed)} (claimed) {verb} {fmt.value(name, expected)} summed over "
                f"{len(phases)} phases (ratio {shown_ratio(claimed / expected, str(f['severity']), tolerance)})")

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        phases = result.phase_result
        if phases is None:
            return cls.formula
        row, name = int(f["row"]), str(f["quantity"])
        values = [float(phases.cell("q", i, name)) for i in result.phase_rows(row)]
        # A phase that gives no such figure is not a term of the sum (a floor over the phases that do: "nan" read
        # as a number that was there).
        parts = [fmt.operand(name, v) if v == v else "(not stated)" for v in values]
        return f"{name} = Σ phases = {' + '.join(parts)} = {fmt.operand(name, float(f['expected']))}"


class Outlier(Rule):
    """Which single stated figure, if wrong, would make all the others agree.

    **What it checks.** For a claim whose relations disagree, each stated figure in turn is set aside and the
    relations are solved again from the rest. A figure whose removal leaves every remaining check within
    tolerance is the likely error; the finding gives the value the other figures imply for it.

    **Why it matters.** A report that states six figures where three would do can tell which one is off; a
    reader should look there first.

    **Example.** LLaMA-65B with 1,022,362/24 "GPU-hours": the GPU-hours figure is the outlier; chips and days
    imply 1,032,192.

    **References.** Over-determined linear systems: a single-outlier (leave-one-out) test.
    """

    code = "C009"
    leads = True
    note = True
    name = "outlier"
    quantity = "claim"
    formula = "leave one stated figure out; the rest agree"
    severity = "info"
    stage = "outlier"

    #: Variant claims re-solved in one call of the engine: large enough that the relations' per-call cost is paid
    #: a few times, small enough to bound the memory (a candidate's rows are never split: a call holds more only
    #: when one candidate alone has more).
    batch_rows: ClassVar[int] = 1 << 16

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        """Each candidate figure is cleared on the affected rows that state it and the relations solved again,
        vectorized over the rows: the variants of several candidates are stacked and re-solved together."""
        if not state.relation_findings or state.initial_rows is None or state.disagree is None:
            return None
        bad_rows = np.unique(np.concatenate([f.row[f.worse_than_ok()] for f in state.relation_findings]))
        if len(bad_rows) == 0:
            return None
        columns = [str(c) for c in state.q.columns]
        # Column-major (rows × columns) arrays of the affected claims: the engine reads and writes whole columns.
        q0, s0, h0, p0 = state.initial_rows(bad_rows)
        at = {c: j for j, c in enumerate(columns)}
        involved = {c for r in relation_rules() for c in r.relation.quantities}
        candidates = sorted((involved - {"n_eff", "flops_per_token", "recompute_factor"}) & set(columns))
        # The candidates some affected claim states, with the rows that state them.
        names: list[str] = []
        stated_rows: list[np.ndarray] = []
        peak_stated = s0[:, at["peak_flops_per_chip"]] == CLAIMED
        for cand in candidates:
            # The datasheet is a suspect only where the claim states no peak of its own: against a stated peak
            # (a sparse 9 PFLOP/s for a B200's dense 4.5 in FP8), "without the datasheet the rest agree" would
            # blame the datasheet for the claim's figure (C006 says which).
            rows = np.flatnonzero((s0[:, at[cand]] == CATALOG) & ~peak_stated if cand == "catalog_peak"
                                  else s0[:, at[cand]] == CLAIMED)
            if len(rows):
                names.append(cand)
                stated_rows.append(rows)
        if not names:
            return None
        n = len(bad_rows)
        fit = np.zeros((n, len(names)), dtype=bool)
        strong = np.zeros((n, len(names)), dtype=bool)
        implied_m = np.full((n, len(names)), np.nan)
        # The variants a relation of the first pass is known to disagree on are not solved again (:meth:`_settled`):
        # they do not fit, as an unsolved variant is taken to.
        settled = cls._settled(state, bad_rows, q0, h0, at, names)
        solve_rows = [rows[~settled[rows, k]] for k, rows in enumerate(stated_rows)]
        groups: list[list[int]] = [[]]
        size = 0
        for k, rows in enumerate(solve_rows):
            if not len(rows):
                continue
            if groups[-1] and size + len(rows) > cls.batch_rows:
                groups.append([])
                size = 0
            groups[-1].append(k)
            size += len(rows)
        # The columns with a value on some affected claim: the others are empty in every variant too (most of the
        # work columns, in most batches) and are filled, not copied.
        filled = (~np.isnan(q0).all(axis=0),
                  (s0 != NO_SOURCE).any(axis=0),
                  np.array([h0[:, j].tolist().count(None) < len(h0) for j in range(h0.shape[1])], dtype=bool),
                  (p0 != 0).any(axis=0) | np.signbit(p0).any(axis=0))
        # One buffer per work array, as large as the largest batch of variants, reused by every batch.
        groups = [group for group in groups if group]
        largest = max((sum(len(solve_rows[g]) for g in group) for group in groups), default=0) * len(columns)
        buffers = tuple(np.empty(largest, dtype=values.dtype) for values in (q0, s0, h0, p0))
        for group in groups:
            cls._resolve_without(state, bad_rows, (q0, s0, h0, p0), filled, columns,
                                 [(at[names[g]], g, solve_rows[g]) for g in group], fit, strong, implied_m,
                                 buffers)
        # Prefer the figures whose removal also leaves a plausible utilization.
        fit = np.where(strong.any(axis=1)[:, None], strong, fit)
        local = np.flatnonzero(fit.sum(axis=1) >= 1)
        if len(local) == 0:
            return None
        stated_claimed = (s0[:, [at[c] for c in candidates]] == CLAIMED).sum(axis=1)
        # Each claim's suspects, grouped by their pattern (a handful of patterns, whatever the number of claims):
        # one tuple of names per pattern, the implied values taken by whole columns.
        fit_l = fit[local]
        if fit_l.shape[1] <= 62:  # each row's pattern as one integer (the first figure the highest bit): the
            # distinct integers in order are the distinct rows in np.unique(axis=0)'s order, found faster
            bits = np.left_shift(1, np.arange(fit_l.shape[1] - 1, -1, -1, dtype=np.int64))
            keys, pattern_of = np.unique(fit_l.astype(np.int64) @ bits, return_inverse=True)
            patterns = (keys[:, None] & bits[None, :]) != 0
        else:
            patterns, pattern_of = np.unique(fit_l, axis=0, return_inverse=True)
        pattern_of = np.asarray(pattern_of).reshape(-1)
        cands = np.empty(len(local), dtype=object)
        values = np.empty(len(local), dtype=object)
        first = np.zeros(len(local), dtype=int)
        for k, pattern in enumerate(patterns):
            which = np.flatnonzero(pattern)
            where = np.flatnonzero(pattern_of == k)
            names_k = tuple(names[j] for j in which)
            cands[where] = [names_k] * len(where)
            values[where] = list(map(tuple, implied_m[local[where]][:, which].tolist()))
            first[where] = which[0]
        single = fit_l.sum(axis=1) == 1
        subject = np.where(single, np.array(names, dtype=object)[first], "claim").astype(object)
        stated_m = q0[:, [at[c] for c in names]]
        claimed = np.where(single, stated_m[local, first], np.nan)
        expected = np.where(single, implied_m[local, first], np.nan)
        others = np.maximum(stated_claimed[local] - 1, 0)
        return findings_part(bad_rows[local], cls.code, "info", subject, claimed, expected,
                              detail=others.astype(object), candidates=cands, implied=values)

    @staticmethod
    def _settled(state: WorkState, bad_rows: np.ndarray, q0: np.ndarray, h0: np.ndarray, at: Mapping[str, int],
                 names: list[str]) -> np.ndarray:
        """Which variants (affected claims × ``names``, the figure left out) would disagree if solved again, known
        from the relations' findings: a check worse than ok, by a relation k whose figures were all known before
        any relation ran, of a claim no relation was spent on beforehand (``state.preused``), without a figure
        that neither k nor any relation before it (in their order) reads.

        Exact: the relations see a claim's figures as they were before any relation ran; without such a figure,
        each relation before k does on the variant, in the first pass, what it did on the claim (it reads the
        same values, its masks read the figure neither: they read the texts, the expert and active parameter
        counts, how F per token was found; N and F = 6N, which the variant computes again, are required to come
        out as they were). So k then checks the variant as it checked the claim (its figures are known from the
        start, so it checks at its first look), after the same earlier checks, whose signatures (the repeats a
        check is dropped for) are the same: it is recorded, with the same verdict (its values, precisions and
        sources are stated or known from the start, never written; the figure is none of its subjects, of the
        figures its goodput side or its reading of the compute asks about), worse than ok: the variant
        disagrees. ``tests/test_outlier_settled.py`` compares with solving every variant."""
        n = len(bad_rows)
        out = np.zeros((n, len(names)), dtype=bool)
        if not n or not names:
            return out

        def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return (a == b) | (np.isnan(a) & np.isnan(b))

        # N and F = 6N as the variants compute them again (from figures other than the parameter counts).
        n_eff = effective_params(q0[:, at["active_params"]], q0[:, at["params"]])
        six = h0[:, at["flops_per_token"]] == "6N"
        fpt = np.where(six, 6.0 * n_eff, q0[:, at["flops_per_token"]])
        eligible = same(n_eff, q0[:, at["n_eff"]]) & same(fpt, q0[:, at["flops_per_token"]])
        for mask in (state.preused or {}).values():
            eligible &= ~np.asarray(mask, dtype=bool)[bad_rows]
        # The figures the relations' masks read (RelationRule.applies, upper_bound, lower_bound; the engine's
        # mixture-of-experts exclusion): a variant without one of them is never settled.
        masks_read = {"experts", "active_params"}
        parameters = {"n_eff", "flops_per_token", "params", "active_params"}
        read: set[str] = set()
        touched: dict[str, set[str]] = {}
        for rule in relation_rules():
            read |= set(rule.relation.quantities)
            if read & parameters:  # N and F = 6N follow from the parameter counts
                read |= {"params", "active_params"}
            touched[rule.code] = read | masks_read | set(rule.subjects) | set(rule.goodput_unless_stated) | \
                ({"compute_flops"} if rule.weighs_compute_reading else set())
        for part in state.relation_findings:
            worse = part.worse_than_ok()
            rule = next((r for r in relation_rules() if r.code == part.rule), None)
            if rule is None or not worse.any():
                continue
            free = [k for k, name in enumerate(names) if name not in touched[part.rule]]
            if not free:
                continue
            rows = part.row[worse]
            local = np.searchsorted(bad_rows, rows)
            local = local[(local < n) & (bad_rows[np.minimum(local, n - 1)] == rows)]
            known = ~np.isnan(q0[local][:, [at[c] for c in rule.relation.quantities]]).any(axis=1)
            hit = local[known & eligible[local]]
            out[np.ix_(hit, free)] = True
        return out

    @staticmethod
    def _take_rows(values: np.ndarray, blocks: list[np.ndarray], filled: np.ndarray, empty: Any,
                   buffer: np.ndarray | None = None) -> np.ndarray:
        """``values`` (rows × columns) at the rows of each block in turn (distinct, increasing positions), as a
        column-major array, taken column by column; a block of every row is copied whole. A column that is not
        ``filled`` holds only ``empty`` (NaN, no source, None, 0.0) and is made so, not copied. The array is new, or
        the start of ``buffer`` (1-D, of the same dtype, large enough), every cell of which is written: the
        variants of one batch after another reuse the memory (new memory costs more than writing it)."""
        shape = (sum(len(rows) for rows in blocks), values.shape[1])
        if buffer is not None:
            out = buffer[:shape[0] * shape[1]].reshape(shape, order="F")
            out[:, ~np.asarray(filled, dtype=bool)] = empty
        elif values.dtype == object and empty is None:  # numpy fills a new object array with None itself
            out = np.empty(shape, dtype=object, order="F")
        else:
            out = np.full(shape, empty, dtype=values.dtype, order="F")
        columns = np.flatnonzero(filled).tolist()
        start = 0
        for rows in blocks:
            part = slice(start, start + len(rows))
            start += len(rows)
            every = len(rows) == len(values)
            for j in columns:
                out[part, j] = values[:, j] if every else values[rows, j]
        return out

    @classmethod
    def _resolve_without(cls, state: WorkState, bad_rows: np.ndarray,
                         initial: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                         filled: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], columns: list[str],
                         variants: list[tuple[int, int, np.ndarray]], fit: np.ndarray, strong: np.ndarray,
                         implied: np.ndarray, buffers: tuple[np.ndarray, ...] | None = None) -> None:
        """Re-solve the affected claims without one stated figure, for several figures at once: ``variants`` holds
        (the figure's column, its index in ``fit``, the rows (positions in ``bad_rows``) that state it). Fills, on
        those rows, ``fit`` (the rest agree and no utilization exceeds 100 %), ``strong`` (and the utilization is
        plausible) and ``implied`` (the value the rest imply for the figure). ``filled`` marks, for each of the
        ``initial`` arrays, the columns that hold a value (NaN, no source, None and 0.0 are no value: a column of
        only those is made, not copied); ``buffers``, when given, memory for the variants' work arrays (see
        :meth:`_take_rows`), which they hold until the next call."""
        take = np.concatenate([rows for _, _, rows in variants])
        cleared = np.concatenate([np.full(len(rows), col) for col, _, rows in variants])
        stacked = np.arange(len(take))
        q1, s1, h1, p1 = (cls._take_rows(values, [rows for _, _, rows in variants], has, empty, buffer)
                          for values, has, empty, buffer in zip(initial, filled, (np.nan, NO_SOURCE, None, 0.0),
                                                                buffers or (None,) * 4))
        q1[stacked, cleared] = np.nan
        s1[stacked, cleared] = NO_SOURCE
        h1[stacked, cleared] = None
        p1[stacked, cleared] = 0.0
        # What follows from the parameter counts (audit.state.refresh_effective), on the arrays.
        at = {c: j for j, c in enumerate(columns)}
        q1[:, at["n_eff"]] = effective_params(q1[:, at["active_params"]], q1[:, at["params"]])
        six = h1[:, at["flops_per_token"]] == "6N"
        q1[six, at["flops_per_token"]] = 6.0 * q1[six, at["n_eff"]]
        # Frames of one block each over the arrays: the engine works in them without a copy.
        frames = (pd.DataFrame(q1, columns=columns, dtype=float, copy=False),
                  pd.DataFrame(s1, columns=columns, dtype=np.int8, copy=False),
                  pd.DataFrame(h1, columns=columns, dtype=object, copy=False),
                  pd.DataFrame(p1, columns=columns, dtype=float, copy=False))
        bad = state.disagree(bad_rows[take], *frames)
        solved = frames[0].to_numpy(dtype=float)
        mfu = frames[0]["mfu"].to_numpy(dtype=float)
        low, high = state.config.band
        agree = ~bad & ~(~np.isnan(mfu) & (mfu > 1))
        plausible = np.isnan(mfu) | ((mfu >= low) & (mfu <= high))
        start = 0
        # The catalog's peak is never solved for: without it, the peak the rest imply is the claim's own peak.
        catalog_peak, peak = at["catalog_peak"], at["peak_flops_per_chip"]
        for col, k, rows in variants:
            part = slice(start, start + len(rows))
            start += len(rows)
            fit[rows, k] = agree[part]
            strong[rows, k] = agree[part] & plausible[part]
            implied[rows, k] = solved[part, peak if col == catalog_peak else col]

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        cands = tuple(f["candidates"])

        def stated(name: str) -> str:
            if name == "catalog_peak":
                peak, precision = float(result.cell("q", row, name)), result.cell("hardware", row, "precision")
                at = f" at {precision}" if isinstance(precision, str) else ""
                given = f" ({fmt.value('peak_flops_per_chip', peak)}{at})" if math.isfinite(peak) else ""
                return f"the datasheet peak for {result.cell('hardware', row, 'accelerator_name')}{given}"
            original = result.cell("text", row, name) if result.claims.has_text(name) else None
            return f"{label(name)} ({fmt.written(original)})" if original else label(name)

        if len(cands) == 1:
            name = cands[0]
            implied = f["implied"][0]
            value = f"; the others imply {fmt.value(name, implied)}" if math.isfinite(implied) else ""
            what = stated(name) if name == "catalog_peak" else f"the {stated(name)}"
            others = int(f["detail"])
            # "the other 0 stated figures agree" read as nonsense (a run's tokens against its phases' sum).
            if others == 0 and value:
                value = f": the derived figures imply {fmt.value(name, implied)}"
            rest = ("no other stated figure enters the disagreement" if others == 0 else
                    "without it, the other stated figure agrees with what is derived" if others == 1 else
                    f"without it, the other {others} stated figures agree")
            return f"{what} figure is the likely outlier: {rest}{value}"

        def suspect(name: str, implied: float) -> str:
            would = f" would have to be about {fmt.value(name, implied)}" if math.isfinite(implied) else ""
            return f"{stated(name)}{would}"

        # A figure that would have to be impossible is no fix: a fraction of an accelerator, a utilization above 100 %;
        # nor is one that would have to be what it is (PaLM's compute 2.5272e24 "would have to be about 2.53e24").
        def same(name: str, value: float) -> bool:
            stated = float(result.cell("q", row, name)) if name in result.q.columns else math.nan
            return math.isfinite(value) and stated > 0 and value > 0 and abs(math.log(value / stated)) < _SAME_VALUE

        pairs = [(c, v) for c, v in zip(cands, f["implied"]) if not _impossible_value(c, v) and not same(c, v)] or \
            list(zip(cands, f["implied"]))
        listed = "; or ".join(suspect(c, v) for c, v in pairs)
        return f"any one of these figures, if wrong, would explain the disagreement (the rest then agree): {listed}"


#: A suspect whose implied value is within 1 % of the figure stated is no fix (rounding, not a slip).
_SAME_VALUE = math.log(1.01)


def _impossible_value(name: str, value: float) -> bool:
    """Whether a value a quantity would have to take is impossible: below one of a count of things (chips,
    parameters, tokens: "300B tokens would have to be 3.5e-9" is no fix), or above 100 % of a utilization. Epochs
    may be a fraction of one."""
    q = BY_NAME.get(name)
    if q is None or not math.isfinite(value):
        return False
    counted = q.integer or (q.kind == "count" and name not in _FRACTIONAL_COUNTS)
    return bool((counted and value < 1) or (q.fraction and value > 1))


#: Quantities of kind count that may be below one: a fraction of an epoch, a ratio.
_FRACTIONAL_COUNTS = frozenset({"epochs", "recompute_factor", "tokens_per_param"})


class TpuSliceCores(Rule):
    """TPU slice names count TensorCores, not chips: ``v4-2048`` is 1,024 chips.

    **What it checks.** When the hardware is written as a Cloud TPU slice (``v4-2048``, ``v5p-8960``), the chip
    count it implies (TensorCores / cores per chip: 2 on v2-v4 and v5p, 1 on v5e and v6e) against the claimed
    chips; without a claimed count, the chips are derived from it.

    **Why it matters.** The per-chip peak (275 TFLOP/s on v4) is per chip; counting cores as chips doubles the
    capacity and halves the implied MFU.

    **Example.** ``hardware: TPU v4-2048, chips: 2048``: warning, the slice has 1,024 chips.

    **References.** Google Cloud TPU documentation, "TPU v4" (v4-8 = 4 chips, each with 2 TensorCores).
    """

    code = "H003"
    name = "tpu-slice-cores"
    quantity = "chips"
    formula = "chips = cores / cores_per_chip"
    severity = "warning"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        hw = state.hardware
        cores = hw["slice_cores"].to_numpy(dtype=float)
        per = hw["cores_per_chip"].to_numpy(dtype=float)
        chips = state.col("chips")
        rows = np.flatnonzero(~np.isnan(cores) & ~np.isnan(per) & (state.source["chips"].to_numpy() == CLAIMED))
        expected = cores[rows] / per[rows]
        sev = np.where(np.abs(chips[rows] - expected) < 0.5, "ok", "warning")
        return findings_part(rows, cls.code, sev, "chips", chips[rows], expected)

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        cores = float(result.cell("hardware", row, "slice_cores"))
        per = float(result.cell("hardware", row, "cores_per_chip"))
        text = result.cell("hardware", row, "hardware_text")
        claimed, expected = float(f["claimed"]), float(f["expected"])
        if f["severity"] == "ok":
            return f"{int(claimed):,} chips match the slice {text!r}: {int(cores):,} TensorCores / {int(per)} per chip"
        return (f"{int(claimed):,} chips claimed, but the slice {text!r} counts TensorCores: "
                f"{int(cores):,} / {int(per)} per chip = {int(expected):,} chips")

    @classmethod
    def derivation_text(cls, result: "AuditResult", row: int, name: str) -> str | None:
        """The chips a slice name gives: "H003: chips = cores / cores_per_chip = 256 / 2 = 128 ('TPU v3-256')"."""
        if name != "chips":
            return None
        cores = float(result.cell("hardware", row, "slice_cores"))
        per = float(result.cell("hardware", row, "cores_per_chip"))
        text = result.cell("hardware", row, "hardware_text")
        return (f"{cls.code}: chips = cores / cores_per_chip = {fmt.count(cores)} / {fmt.count(per)} = "
                f"{fmt.count(cores / per)} (the TensorCores of {text!r})")


# ---------------------------------------------------------------------------------------------------- bounds


class _Utilization(Rule):
    """A utilization (MFU or HFU, the rule's ``quantity``), claimed or derived: at most 100 %, and within the
    plausible band (:attr:`audit.config.Config.band`)."""

    utilization = True

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        low, high = config.band
        return (f"usual band {fmt.sig(low * 100)}-{fmt.sig(high * 100)} % (outside: info), warning above "
                f"{fmt.sig(config.ceiling * 100)} % or below {fmt.sig(config.floor * 100)} %, error above 100 %. "
                f"{config.reasons.get('band', '')} {config.reasons.get('floor', '')}").strip()

    @classmethod
    def _floor(cls, state: WorkState, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A value the utilization may not be below (NaN: none), and its log half-width."""
        return np.full(len(rows), np.nan), np.zeros(len(rows))

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        low, high = state.config.band
        values = state.col(cls.quantity)
        rows = np.flatnonzero(~np.isnan(values))
        high_ok, low_ok, neither = _judged_sides(state, cls.quantity, rows)
        rows, high_ok, low_ok = rows[~neither], high_ok[~neither], low_ok[~neither]
        v = values[rows]
        # A figure stated to k digits may be off by half a unit of its last digit (and a derived one by what
        # its inputs may be): only a value beyond a bound by more than that is flagged.
        lam = state.slack(cls.quantity)[rows] + _SLACK
        floor, floor_lam = cls._floor(state, rows)
        # Below its floor (HFU below MFU): by more than the precision and the floor's tolerance (the two are often
        # counted with different FLOP conventions), a warning; beyond the second factor, an error.
        ok_f, warn_f = state.config.tolerance(cls.code)
        with np.errstate(divide="ignore", invalid="ignore"):
            short = np.log(floor / v)
            below = ~np.isnan(floor) & (short > np.maximum(math.log(ok_f), lam + floor_lam))
            far_below = below & (short > np.maximum(math.log(warn_f), lam + floor_lam))
            # A bound is judged on the side it holds (_judged_sides): "at least 19.9 %" may be too high, not low.
            below &= low_ok
            far_below &= low_ok
            above_one = (np.log(v) > lam) & high_ok
            # Above 100 % as written, by less than the precision ("1T" tokens is 0.5-1.5T): not proven impossible,
            # but only the rounding could save it, a warning as U003 makes it (it was ok, or info, and passed).
            above_ceiling = ((np.log(v / state.config.ceiling) > lam) | (v > 1)) & high_ok
            below_floor = (np.log(min(state.config.floor, low) / v) > lam) & low_ok
            outside = ((np.log(v / high) > lam) & high_ok) | ((np.log(low / v) > lam) & low_ok)
        sev = np.where(above_one | far_below, "error",
                       np.where(above_ceiling | below | below_floor, "warning", np.where(outside, "info", "ok")))
        detail = np.where(below, "below-mfu", source_texts(state.source[cls.quantity].to_numpy()[rows]))
        return findings_part(rows, cls.code, sev, cls.quantity, v, np.where(below, floor, np.nan), detail=detail)

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        return _utilization_message(cls.quantity.upper(), result, f)

    show_formula = True

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        """The bounds, after the relation that derived a derived utilization, with its values substituted (C003:
        MFU = C / (3600 · chip_hours · peak) = …): the figure judged is traceable where the finding is shown."""
        row = int(f["row"])
        rule = RULES.get(str(result.cell("how", row, cls.quantity))) if f["detail"] != "claimed" else None
        if rule is None or not issubclass(rule, RelationRule) or cls.quantity not in rule.relation.quantities:
            return cls.formula
        return f"{rule.code}: {rule.substituted_texts(result, [row], cls.quantity)[0]}; {cls.formula}"


class MFUPlausible(_Utilization):
    """Model FLOPs utilization is at most 100 % and usually within a plausible band (15-65 %).

    **What it checks.** The MFU, claimed or derived. Above 100 % is impossible (error): the claim asks for more
    arithmetic than the hardware can do. Outside the band 15-65 % is worth a note (info): above it is near what
    measured matrix-multiply kernels reach, and above 80 % (the ceiling) beyond them (a warning); below it is
    unusual for a tuned run and often means a time that covers more than the training (evaluation, restarts,
    post-training), a peak above the one the run used (a 2:4-sparse figure, or FP8's for a BF16 run), or a compute that
    counts only part of the work (info); below 1 % (the floor) the hardware could have done a
    hundred times the compute in the time stated, so the figures describe different things (a warning: StyleGAN's
    row, whose compute counts each image as one token, implies 0.0065 %).

    **Why it matters.** An MFU is where every other error surfaces: PF-days read as FLOP, GPU-days as
    GPU-hours, total instead of active parameters, a sparse peak.

    **Example.** A claim of 46.2 written where a fraction belongs is 4,620 %: error, "46.2 % was meant?".

    **References.** Chowdhery et al. 2022 (PaLM), Sec. 4.1: 46.2 % MFU; stas00/ml-engineering, *Maximum
    Achievable Matmul FLOPS* (about 80 % of peak on H100).
    """

    code = "U001"
    name = "mfu-plausible"
    quantity = "mfu"
    formula = "0 < MFU ≤ 1; band 15 %-65 %"
    active_share_of = "mfu"
    chart = "utilization"


class HFUPlausible(_Utilization):
    """Hardware FLOPs utilization is at most 100 %, within the plausible band, and never below MFU.

    **What it checks.** A claimed HFU: above 100 % is impossible; outside 15-65 % a note (info) and above 80 % a
    warning, as for MFU (U001); below the MFU an error, because HFU counts the recomputed FLOPs on top of the
    model FLOPs (HFU ≥ MFU by definition).

    **Why it matters.** HFU quoted as MFU flatters a run by the recomputation factor (4/3 with full
    activation recomputation).

    **Example.** PaLM 540B: MFU 46.2 %, HFU 57.8 % (Chowdhery et al. 2022, Table 3). Pass.

    **References.** Chowdhery et al. 2022 (PaLM), Sec. 4.1 and App. B; Korthikanti et al. 2022, *Reducing
    Activation Recomputation in Large Transformer Models*.
    """

    code = "U002"
    name = "hfu-plausible"
    quantity = "hfu"
    formula = "MFU ≤ HFU ≤ 1; band 15 %-65 %"

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        ok, warn = config.tolerance(cls.code)
        return (f"{super().tolerance_text(config)} HFU below MFU: ok within a factor {fmt.sig(ok)}, warning within "
                f"{fmt.sig(warn)}, error beyond. {config.reasons.get(cls.code, '')}").strip()

    @classmethod
    def _floor(cls, state: WorkState, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # HFU counts recomputation on top of the model FLOPs: never below MFU.
        return state.col("mfu")[rows], state.slack("mfu")[rows]

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        if f["detail"] == "below-mfu":
            return (f"HFU {fmt.sig(float(f['claimed']) * 100)} % is below MFU {fmt.sig(float(f['expected']) * 100)} %: "
                    f"HFU counts recomputation on top of model FLOPs, so it cannot be lower")
        return super().message(result, f)


class AchievedBelowPeak(Rule):
    """Sustained FLOP/s per accelerator cannot exceed the accelerator's peak.

    **What it checks.** A claimed ``achieved_flops_per_chip`` against the peak for the hardware and precision.

    Also the rate the compute and the chip-hours imply, C / (3600 · chip_hours), when an MFU is stated. Above the
    peak by more than the precision of the figures it comes from is an error; above it as written but by less (a
    "2T" tokens is 1.5-2.5T) is a warning: not proven impossible, but only the rounding could save it.

    **Why it matters.** An achieved rate above the dense peak is impossible; between the dense and the
    2:4-sparse peak, it is usually the sparse figure taken for dense somewhere upstream.

    **Example.** 1,200 TFLOP/s claimed on an H100 SXM in bf16 (dense peak 989.4): error. A 70B model on "2T"
    tokens, 1,024 H100 for "8 days" at a stated 60 % MFU: 6 × 70e9 × 2e12 / (1,024 × 192 h × 3600) = 1,187
    TFLOP/s, 120 % of the peak: a warning ("2T" and "8 days" could be 1.5T and 8.5 days).

    **References.** NVIDIA H100 whitepaper v1.04, Table 1.
    """

    code = "U003"
    name = "achieved-below-peak"
    quantity = "achieved_flops_per_chip"
    formula = "achieved ≤ peak"
    show_formula = True

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        peak = state.col("peak_flops_per_chip")
        # A peak that the claim's own utilization gave (C003: C / (3600 · chip_hours · MFU), C005: achieved / MFU;
        # a mix of accelerators without counts has no datasheet peak) bounds nothing: achieved ≤ peak is then
        # MFU ≤ 1, which U001 checks.
        circular = state.how["peak_flops_per_chip"].isin(_utilization_relations()).to_numpy()  # hashed, not sorted
        peak = np.where(circular, np.nan, peak)
        parts: list[FindingsPart | None] = []
        stated = np.zeros(len(peak), dtype=bool)
        for name in ("achieved_flops_per_chip", "achieved_hardware_flops_per_chip"):
            this = state.stated(name)
            stated |= this
            rows = np.flatnonzero(this & ~np.isnan(peak))
            rows = rows[_judged_sides(state, name, rows)[0]]  # "up to 400 TFLOP/s" may be below any peak
            ach = state.col(name)[rows]
            lam = state.slack(name, "peak_flops_per_chip")[rows] + _SLACK
            sev = cls._severity(np.log(ach / peak[rows]), lam)
            parts.append(findings_part(rows, cls.code, sev, name, ach, peak[rows], detail="claimed"))
        # The rate the compute and the chip-hours imply, when the MFU is stated (a derived MFU is checked
        # against 100 % by U001): impossible is impossible, whoever states the MFU.
        # A fine-tune's hardware and hours describe the fine-tune: its own compute, not the total (C017). A
        # compute its notes build as a sum of trainings (audit.notes) ran on more than the stated hardware.
        compute = np.where(state.finetune(), state.col("finetune_compute_flops"), state.col("compute_flops"))
        compute = np.where(state.compute_stages() != "", np.nan, compute)
        hours = state.col("chip_hours")
        mfu_stated = state.stated("mfu")
        not_circular = ((state.how["compute_flops"] != "C003") & (state.how["chip_hours"] != "C003")).to_numpy()
        implied_rows = np.flatnonzero(~stated & mfu_stated & not_circular & ~np.isnan(compute) & ~np.isnan(hours)
                                      & ~np.isnan(peak))
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = compute[implied_rows] / (hours[implied_rows] * 3600.0)
            lam = state.slack("compute_flops", "finetune_compute_flops", "chip_hours",
                              "peak_flops_per_chip")[implied_rows] + _SLACK
            sev = cls._severity(np.log(rate / peak[implied_rows]), lam)
        parts.append(findings_part(implied_rows, cls.code, sev, "achieved_flops_per_chip", rate,
                                     peak[implied_rows], detail="implied"))
        return concat_parts(parts)

    @staticmethod
    def _severity(log_ratio: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """Above the peak by more than the precision of the figures: an error; above it at face value, by less: a
        warning (as U001 treats an MFU above 100 %: not proven impossible, but nothing says the rounding hides
        it); at or below: ok."""
        return np.where(log_ratio > lam, "error", np.where(log_ratio > _SLACK, "warning", "ok"))

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        verdict = "exceeds" if f["severity"] == "error" else "is within"
        rate = fmt.value("achieved_flops_per_chip", float(f["claimed"]))
        peak = fmt.value("peak_flops_per_chip", float(f["expected"]))
        if f["severity"] == "warning":
            share = f"{fmt.sig(float(f['claimed']) / float(f['expected']) * 100)} %"
            what = "The compute and chip-hours imply" if f["detail"] == "implied" else (
                "Achieved" if f["quantity"] == "achieved_flops_per_chip" else "Achieved hardware")
            return (f"{what} {rate} per chip, {share} of the peak {peak}: above it as written, possible only if "
                    f"the rounding of the figures it comes from hides that much; ask for them to more digits")
        if f["detail"] == "implied":
            tail = (": physically impossible, whatever the MFU stated" if f["severity"] == "error" else "")
            return (f"The compute and chip-hours imply {rate} per chip, which {verdict} the peak {peak}{tail}")
        kind = "Achieved" if f["quantity"] == "achieved_flops_per_chip" else "Achieved hardware"
        return f"{kind} {rate} per chip {verdict} the peak {peak}"

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        # The comparison as it came out, not as it should be: "1.187e15 ≤ 9.894e14" would read as a false sum.
        sign = "≤" if float(f["claimed"]) <= float(f["expected"]) else ">"
        if f["detail"] == "implied":
            row = int(f["row"])
            h = float(result.cell("q", row, "chip_hours"))
            c = float(f["claimed"]) * h * 3600.0
            return (f"C / (chip_hours · 3600) ≤ peak: {fmt.sci(c, 4)} / ({fmt.hours(h)} × 3600) = "
                    f"{fmt.sci(float(f['claimed']), 4)} {sign} {fmt.sci(float(f['expected']), 4)}")
        return f"achieved ≤ peak: {fmt.sci(float(f['claimed']), 4)} {sign} {fmt.sci(float(f['expected']), 4)}"



def _catalog_row_peaks(result: "AuditResult", row: int) -> dict[str, float] | None:
    """The catalog's dense peaks (TFLOP/s by precision) of the accelerator a claim names, None when it names none
    of the catalog's (unknown, or a mix)."""
    accelerator = result.cell("hardware", row, "accelerator")
    try:
        return result.accelerators().by_id(str(accelerator)).peaks_tflops
    except KeyError:
        return None


class MemoryFit(Rule):
    """The training state should fit in the accelerators' memory: chips × memory ≥ 16 bytes × parameters.

    **What it checks.** The fewest accelerators whose memory holds weights, gradients and Adam state at 16 bytes
    per parameter (mixed precision), before activations, against the claimed chip count. Too few for the full
    state is an info (CPU or NVMe offloading, 8-bit optimizers and sparse embedding updates exist); too few
    for the 16-bit weights alone (2 bytes per parameter; 0.5 for a fine-tune, whose frozen weights may be
    4-bit) is a warning.

    **Why it matters.** Too few chips for the weights means a wrong chip count, a wrong model size, or a
    technique the report should name; the finding says how many chips the state needs.

    **Example.** 70B parameters × 16 B = 1.12 TB; an 80 GB H100 holds 80 GB, so at least ⌈1.12e12/8e10⌉ = 14;
    8 H100s hold the 140 GB of weights but not the state: info; one H100 holds neither: warning.

    **References.** Rajbhandari et al. 2020, *ZeRO: Memory Optimizations Toward Training Trillion Parameter
    Models*, Sec. 3.1 (2 + 2 + 12 bytes per parameter with Adam in mixed precision).
    """

    code = "M001"
    name = "memory-fit"
    quantity = "chips"
    formula = "chips ≥ ⌈16 · N / memory⌉"
    severity = "warning"
    show_formula = True

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return (f"{fmt.sig(config.bytes_per_param)} bytes per parameter. "
                f"{config.reasons.get('bytes_per_param', '')}").strip()

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        need, chips = state.col("min_chips_memory"), state.col("chips")
        rows = np.flatnonzero(~np.isnan(need) & ~np.isnan(chips))
        # The rule's own inequality (chips x memory >= training state), not the rounded-up count: a derived
        # chip count can be fractional, and a claim exactly at the bound fits.
        state_bytes = state.col("training_state_bytes")[rows]
        capacity = chips[rows] * state.col("memory_per_chip")[rows]
        lam = state.slack("chips", "training_state_bytes")[rows] + _SLACK
        config = state.config
        small = np.where(state.finetune()[rows], config.frozen_bytes_per_param_qlora, config.weight_bytes_per_param)
        weights = small * state.col("params")[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            fits = np.log(state_bytes / capacity) <= lam
            weights_fit = np.log(weights / capacity) <= lam
        sev = np.where(fits, "ok", np.where(weights_fit, "info", "warning"))
        return findings_part(rows, cls.code, sev, "chips", chips[rows], need[rows])

    @classmethod
    def derivation_text(cls, result: "AuditResult", row: int, name: str) -> str | None:
        if name == "training_state_bytes":
            return f"{cls.code}: {cls._state_text(result, row)}"
        if name == "min_chips_memory":
            total = float(result.cell("q", row, "training_state_bytes"))
            mem = float(result.cell("q", row, "memory_per_chip"))
            return (f"{cls.code}: ⌈{fmt.memory(total)} / {fmt.memory(mem)}⌉ = "
                    f"{int(result.cell('q', row, 'min_chips_memory')):,}")
        return None

    @classmethod
    def _state_text(cls, result: "AuditResult", row: int) -> str:
        """``16 B × 70B params = 1.12 TB`` (or the adapter fine-tune's split into frozen and trained)."""
        cfg = result.config
        params = float(result.cell("q", row, "params"))
        total = float(result.cell("q", row, "training_state_bytes"))
        bpp = cfg.bytes_per_param
        if math.isclose(total, bpp * params, rel_tol=1e-12):
            return f"{fmt.sig(bpp)} B × {fmt.count(params)} params = {fmt.memory(total)}"
        trained = float(result.cell("q", row, "trainable_params"))
        trained = 0.0 if math.isnan(trained) else trained
        frozen = (total - bpp * trained) / (params - trained) if params > trained else 0.0
        return (f"{fmt.sig(frozen)} B × {fmt.count(params - trained)} frozen + {fmt.sig(bpp)} B × "
                f"{fmt.count(trained)} trained params (adapter fine-tune) = {fmt.memory(total)}")

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        mem = float(result.cell("q", row, "memory_per_chip"))
        base = (f"training state ({cls._state_text(result, row)}), which needs at least {int(f['expected']):,} × "
                f"{fmt.memory(mem)}")
        n = float(f["claimed"])
        chips = f"{fmt.count(n)} chip" if n == 1 else f"{fmt.count(n)} chips"
        if f["severity"] == "ok":
            return f"{chips} {'holds' if n == 1 else 'hold'} the {base}{cls._memory_read(result, row)}"
        if f["severity"] == "info":
            return (f"{chips} cannot hold the full {base}, but they hold the weights: offloading, an 8-bit "
                    f"optimizer or sharded state, worth a sentence in the report{cls._memory_read(result, row)}")
        return (f"{chips} cannot hold even the 16-bit weights, let alone the {base} (a wrong chip count or "
                f"model size?){cls._memory_read(result, row)}")

    @staticmethod
    def _memory_read(result: "AuditResult", row: int) -> str:
        """What memory a hardware name that gives none was read with ("A100": the 80 GB variant), or ""."""
        text = result.claims.info.at[row, "hardware"]
        variants = result.accelerators().memory_variants(text) if isinstance(text, str) else None
        if variants is None:
            return ""
        accel, sizes = variants
        others = ", ".join(fmt.memory(gb * 1e9) for gb in sizes if gb != accel.memory_gb)
        return (f"; {text!r} gives no memory size: read as the {accel.name} ({fmt.memory(accel.memory_gb * 1e9)}), "
                f"other variants {others}")

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        params = float(result.cell("q", row, "params"))
        total = float(result.cell("q", row, "training_state_bytes"))
        mem = float(result.cell("q", row, "memory_per_chip"))
        bpp = result.config.bytes_per_param
        if math.isclose(total, bpp * params, rel_tol=1e-12):
            return (f"min chips = ⌈{fmt.sig(bpp)} · N / memory⌉ = ⌈{fmt.sig(bpp)} × {fmt.count(params)} / "
                    f"{fmt.sci(mem, 4)}⌉ = {int(f['expected']):,}")
        return f"min chips = ⌈state / memory⌉ = ⌈{fmt.sci(total, 4)} / {fmt.sci(mem, 4)}⌉ = {int(f['expected']):,}"


class UnknownAccelerator(Rule):
    """The hardware named is not in the accelerator catalog.

    **What it checks.** That the ``hardware`` text matches a catalog name or alias exactly (after dropping
    vendor words, case and punctuation). There is no loose matching: ``H1000`` is not an ``H100``.

    **Why it matters.** Without the accelerator there is no peak and no memory, so the hardware checks cannot
    run. The tool never falls back to a default accelerator; the finding lists the closest catalog names.

    **Example.** ``hardware: "H1000"``: warning, close matches NVIDIA H100 SXM5 80GB, NVIDIA H100 PCIe 80GB.

    **References.** The catalog: ``train-audit hardware``; its sources are per figure in
    ``audit/data/accelerators.csv``.
    """

    code = "H001"
    name = "unknown-accelerator"
    quantity = "hardware"
    formula = "hardware ∈ catalog"
    severity = "warning"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        hw = state.hardware
        text = hw["hardware_text"]
        maybe = np.flatnonzero((text.notna() & hw["accelerator"].isna() & hw["mix"].isna()).to_numpy(dtype=bool))
        # A blank text names no hardware: only the few texts the catalog did not match are looked at.
        rows = maybe[np.array([str(t).strip() != "" for t in text.iloc[maybe]], dtype=bool)] if len(maybe) else maybe
        catalog = state.catalog

        def close(key: tuple[str, tuple[str, ...]]) -> str:
            whole, parts = key if key is not None else (None, ())
            if parts:  # a list of accelerators: the parts the catalog does not know, each with its close matches
                return " | ".join(f"{p}: {', '.join(catalog.close_matches(p)) or 'no close match'}" for p in parts)
            return "; ".join(catalog.close_matches(whole)) if whole else ""

        keys = pd.Series(list(zip(text.iloc[rows], hw["unknown_parts"].iloc[rows])), dtype=object)
        return findings_part(rows, cls.code, "warning", "hardware", detail=map_unique(keys, close).to_numpy(dtype=object))

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        text = result.cell("hardware", row, "hardware_text")
        parts = result.cell("hardware", row, "unknown_parts")
        if parts:
            return (f"a list of accelerators {text!r} with parts the catalog does not know ({f['detail']}): no peak "
                    f"or memory, hardware checks skipped")
        close = f"; close matches: {f['detail']}" if f["detail"] else "; no close match"
        return f"unknown accelerator {text!r}: no peak or memory, hardware checks skipped{close}"


class FP32AsTF32(Rule):
    """FP32 on an accelerator with TF32 tensor cores: when the FP32 peak makes a claim impossible and the TF32
    peak makes it plausible, the matrix products ran as TF32.

    **What it checks.** A claim whose precision is FP32 on a part with a TF32 peak (NVIDIA Ampere and later):
    the MFU the other figures imply at the FP32 (non-tensor) peak. Above 100 % there, and within the ceiling at
    the TF32 peak, the claim is read at the TF32 peak (PyTorch on Ampere runs FP32 convolutions as TF32 by
    default, and matmuls did until 1.12; JAX does by default), and this finding says so; otherwise FP32 stays.
    When even the TF32 reading is above the usual utilization band, the finding is a warning: the stated FP32 and
    the compute hardly fit together (Segment Anything's row: 638 % of the FP32 peak, 79.8 % of the TF32 peak, its
    compute estimated at the 16-bit peak).

    **Why it matters.** An A100's FP32 peak is 19.5 TFLOP/s and its TF32 peak 156: a run reported as FP32
    would look eight times beyond the hardware.

    **Example.** Nucleotide Transformer: 128 A100 × 672 h with compute 8.08e21 FLOP is 134 % of the FP32
    peak and 16.7 % of the TF32 peak: read as TF32.

    **References.** NVIDIA A100 Tensor Core GPU architecture whitepaper, Sec. "TF32"; PyTorch documentation,
    "TensorFloat-32 (TF32) on Ampere (and later) devices".
    """

    code = "H005"
    note = True
    name = "fp32-as-tf32"
    quantity = "precision"
    formula = "MFU(fp32 peak) > 1 and MFU(tf32 peak) ≤ ceiling"
    severity = "info"  # a warning when the TF32 reading is still above the usual band
    stage = "prepare"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        hw = state.hardware
        fp32 = (hw["precision"] == "fp32").to_numpy(dtype=bool) & hw["accelerator"].notna().to_numpy(dtype=bool)
        if not fp32.any() or state.resolve is None:
            return None
        catalog = state.catalog
        tf32 = map_unique(hw["accelerator"].where(fp32, None),
                          lambda i: np.nan if i is None else (catalog.by_id(i).peak_flops("tf32") or np.nan))
        tf32 = tf32.to_numpy(dtype=float)
        rows = np.flatnonzero(fp32 & np.isfinite(tf32) & ~np.isnan(state.col("catalog_peak")))
        if len(rows) == 0:
            return None
        q1, s1, h1, p1 = (f.loc[rows].reset_index(drop=True).copy()
                          for f in (state.q, state.source, state.how, state.precision))
        state.resolve(rows, q1, s1, h1, p1)
        mfu = q1["mfu"].to_numpy(dtype=float)
        derived = s1["mfu"].to_numpy() != CLAIMED
        peak32 = state.col("catalog_peak")[rows]
        lam = p1["mfu"].to_numpy(dtype=float) + _SLACK
        with np.errstate(divide="ignore", invalid="ignore"):
            at_tf32 = mfu * peak32 / tf32[rows]
            switch = derived & (np.log(mfu) > lam) & (at_tf32 <= state.config.ceiling)
        rows, mfu, at_tf32 = rows[switch], mfu[switch], at_tf32[switch]
        if len(rows) == 0:
            return None
        state.q.loc[rows, "catalog_peak"] = tf32[rows]
        state.hardware.loc[rows, "catalog_peak"] = tf32[rows]
        state.hardware.loc[rows, "precision"] = "tf32"
        # Read as TF32 but still above the usual band: the reading only just fits, and the stated precision (or
        # the compute, often estimated at a 16-bit peak) is in doubt: a warning that says so.
        strained = np.log(at_tf32 / state.config.band[1]) > lam[switch]
        return findings_part(rows, cls.code, np.where(strained, "warning", "info"), "precision", mfu, at_tf32,
                              detail=np.where(strained, "strained", None))

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        name = result.cell("hardware", int(f["row"]), "accelerator_name")
        text = (f"FP32 on the {name}: the figures imply {fmt.sig(float(f['claimed']) * 100)} % of its FP32 peak but "
                f"{fmt.sig(float(f['expected']) * 100)} % of its TF32 peak, so the matrix products are read as TF32 "
                f"(the default of PyTorch's convolutions and of JAX on Ampere and later)")
        if f["detail"] == "strained":
            high = result.config.band[1]
            text += (f"; even so it is above the usual band (up to {fmt.sig(high * 100)} %): the stated FP32 and the "
                     f"compute hardly fit together (a compute estimated at a 16-bit peak, or a 16-bit run)")
        return text


class AcceleratorMix(Rule):
    """The hardware names several accelerators: a mix, with a peak when its parts are counted or share one.

    **What it checks.** A cell that lists several catalog accelerators (``"NVIDIA A100, NVIDIA V100"``,
    ``"Google TPU v3, Google TPU v4"``). When the cell counts the chips of each part (``"256x A100 + 256x
    H100"``, ``"1,024 A100, 512 H100"``), the cluster's peak is the chip-weighted mean of the parts' peaks (the
    EU AI Act GPAI guidance, Annex A), its memory per chip likewise, and the chips are their sum: a claimed chip
    count that differs is a warning. Without counts only a peak (and a memory) that every part shares is used;
    otherwise the hardware checks that need them are skipped, and this finding says so. A count beside a single
    accelerator (``"256x A100"``, ``"H100 (512)"``) gives the chips the same way.

    **Why it matters.** Taking the first part's peak would check a V100 run against an A100 (2.5x), silently.

    **Example.** ``hardware: "A100 40GB, A100 80GB"``: both 312 TFLOP/s bf16, used. ``"V100, A100"``: 125
    and 312 TFLOP/s, no shared peak: skipped. ``"256x A100 + 256x H100"``: (256 × 312 + 256 × 989.4) / 512 =
    650.7 TFLOP/s bf16, and 512 chips.

    **References.** European Commission, Guidelines on the scope of obligations for providers of
    general-purpose AI models (July 2025), Annex A.
    """

    code = "H004"
    note = True
    name = "accelerator-mix"
    quantity = "hardware"
    formula = "peak = Σ chips_i · peak_i / Σ chips_i"
    severity = "info"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        hw = state.hardware
        rows = np.flatnonzero(hw["mix"].notna().to_numpy(dtype=bool))
        parts = [findings_part(rows, cls.code, "info", "hardware",
                               detail=hw["accelerator_name"].to_numpy(dtype=object)[rows],
                               expected=hw["catalog_peak"].to_numpy(dtype=float)[rows])]
        # A claimed chip count against the chips the hardware text counts ("256x A100 + 256x H100": 512).
        counted = hw["counted_chips"].to_numpy(dtype=float)
        claimed = state.stated("chips")
        rows = np.flatnonzero(~np.isnan(counted) & claimed)
        chips = state.col("chips")[rows]
        sev = np.where(np.abs(chips - counted[rows]) < 0.5, "ok", "warning")
        parts.append(findings_part(rows, cls.code, sev, "chips", chips, counted[rows], detail="counted"))
        return concat_parts(parts)

    @classmethod
    def derivation_text(cls, result: "AuditResult", row: int, name: str) -> str | None:
        """The chips a hardware text counts: "H004: the count in the hardware text '768 DGX H100 nodes' = 6,144"
        (the formula of the rule is the mix's peak, not this)."""
        if name != "chips":
            return None
        text = result.cell("hardware", row, "hardware_text")
        return f"{cls.code}: the count in the hardware text {text!r} = {fmt.count(float(result.cell('q', row, name)))}"

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        if f["detail"] == "counted":
            text = result.cell("hardware", row, "hardware_text")
            if f["severity"] == "ok":
                return f"Accelerators {fmt.count(float(f['claimed']))} agrees with the count in '{text}'"
            return (f"Accelerators {fmt.count(float(f['claimed']))} (claimed) differs from the "
                    f"{fmt.count(float(f['expected']))} that '{text}' counts")
        prec = result.cell("hardware", row, "precision")
        peak = float(f["expected"])
        if math.isfinite(peak) and math.isfinite(float(result.cell("hardware", row, "counted_chips"))):
            return (f"a mix of {f['detail']}: the chip-weighted mean of their dense {prec} peaks, "
                    f"{fmt.value('peak_flops_per_chip', peak)} (the EU AI Act GPAI guidance, Annex A), used for the "
                    f"hardware checks")
        if math.isfinite(peak):
            return (f"a mix of {f['detail']}: they share the dense {prec} peak "
                    f"{fmt.value('peak_flops_per_chip', peak)}, used for the hardware checks")
        if math.isfinite(float(result.cell("hardware", row, "counted_chips"))):
            # Chips per part given, and still no mean: a part has no peak at the precision (TPU v1: integers only).
            return (f"a mix of {f['detail']}: not every part has a {prec or 'usual'} peak in the catalog, so the "
                    f"checks that need the peak are skipped")
        return (f"a mix of {f['detail']}: their {prec or 'usual'} peaks differ and the claim gives no chips per part, "
                f"so the checks that need the peak are skipped")


class NoPeakForPrecision(Rule):
    """The accelerator has no published peak for the stated precision.

    **What it checks.** That the catalog has a dense peak for the hardware in the claim's precision (or its
    usual one when the claim does not state it).

    **Why it matters.** A V100 has no bf16 tensor cores and an A100 no fp8: a claim of such a run is either a
    typo in the precision or the hardware, or the arithmetic ran emulated far below any tensor-core peak.

    FP32 on a TPU is the exception: its matrix units run FP32 as several bf16 passes (Google's ``precision``
    settings), so the run is possible at an unpublished fraction of the bf16 peak; that is an info, the hardware
    checks skipped.

    A precision the claim does not state is assumed (the chip's usual one); when the catalog lacks even that, the
    finding is an info: the gap is the tool's, not the claim's.

    **Example.** ``hardware: A100, precision: fp8``: warning, no fp8 peak for the A100. ``TPU v3, fp32``: info.

    **References.** Vendor datasheets, per row of ``audit/data/accelerators.csv``; Google Cloud TPU
    documentation, "Using bfloat16 with TPU models" (FP32 matrix multiplication as multi-pass bfloat16).
    """

    code = "H002"
    note = True  # an info (fp32 on a TPU) says why nothing was checked; it checks nothing
    name = "no-peak-for-precision"
    quantity = "precision"
    formula = "peak(hardware, precision) exists"
    severity = "warning"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        hw = state.hardware
        rows = np.flatnonzero((hw["accelerator"].notna() & hw["catalog_peak"].isna()).to_numpy(dtype=bool))
        precision = hw["precision"].to_numpy(dtype=object)[rows]
        tpu_fp32 = hw["tpu"].to_numpy(dtype=bool)[rows] & (precision == "fp32")
        # A precision the claim did not state is the tool's assumption, not the claim's: a catalog without that
        # peak says nothing against the claim (AlphaGo on TPU v1, an int8 chip, with bf16 assumed).
        assumed = hw["precision_assumed"].to_numpy(dtype=bool)[rows]
        severity = np.where(tpu_fp32 | assumed, "info", "warning")
        return findings_part(rows, cls.code, severity, "precision", detail=precision)

    @classmethod
    def _assumed(cls, result: "AuditResult", f: FindingRow) -> bool:
        """Whether the precision without a peak (the finding's detail) is the one the tool assumed (fp32 on a TPU
        has words of its own)."""
        row = int(f["row"])
        tpu_fp32 = bool(result.cell("hardware", row, "tpu")) and f["detail"] == "fp32"
        return bool(result.cell("hardware", row, "precision_assumed")) and not tpu_fp32

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        name = result.cell("hardware", int(f["row"]), "accelerator_name")
        if _catalog_row_peaks(result, int(f["row"])) == {}:
            # Cerebras publishes no dense FLOP/s figure for its wafers: no precision would give one.
            return (f"the catalog has no peak FLOP/s for {name} at any precision (no dense figure published); "
                    f"the hardware figures cannot be checked")
        if cls._assumed(result, f):
            return (f"precision not stated, and the catalog has no {f['detail']} peak for {name} "
                    f"(the usual precision assumed); state the precision to check the hardware figures")
        if f["severity"] == "info":
            return (f"fp32 on {name}: its matrix units run fp32 as several bf16 passes at an unpublished rate; "
                    f"hardware checks skipped")
        return f"no {f['detail']} peak for {name} in the catalog; hardware checks skipped"


class InvalidValue(Rule):
    """A field's value is not usable: unparseable, negative, zero, not finite, or a fraction of a chip.

    **What it checks.** Every input field: numbers in the field's unit or strings with units people write
    (``175B``, ``3640 PF-days``, ``46.2%``). Counts must be positive; chips whole.

    **Why it matters.** A bad value must not silently become a number: the claim is reported ``invalid`` with
    one finding per field, and the rest of the batch is still audited.

    **Example.** ``chips: 1.5`` (a fraction of an accelerator), ``params: "5 apples"`` (unknown unit).

    **References.** ``schemas/claims.schema.json``.
    """

    code = "V001"
    name = "invalid-value"
    quantity = "claim"
    formula = "value parses and is in range"
    invalidates = True
    of_the_row = True

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        inv = state.claims.invalid
        return findings_part(inv["row"].to_numpy(), cls.code, "error", inv["field"].to_numpy(dtype=object),
                              detail=inv["message"].to_numpy(dtype=object))


class DuplicateId(Rule):
    """Two claims in the input share an id.

    **What it checks.** That ids are unique across all input files. Both claims are kept and audited.

    **Why it matters.** Scripts join audit results by id; a duplicate usually means a row pasted twice or two
    sources of the same model that should be told apart.

    **Example.** Two rows with ``id: llama-65b``: the second is flagged.

    **References.** None.
    """

    code = "V002"
    name = "duplicate-id"
    quantity = "id"
    formula = "id unique"
    severity = "warning"
    of_the_row = True


    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        ids = state.claims.info["id"]
        dup = ids.duplicated(keep="first") & state.claims.info["id_given"]
        if "id_seen" in state.claims.info:  # an id used in an earlier batch of a stream (audit/stream.py)
            dup = dup | (state.claims.info["id_seen"].astype(bool) & state.claims.info["id_given"])
        rows = np.flatnonzero(dup.to_numpy(dtype=bool))
        return findings_part(rows, cls.code, "warning", "id", detail=ids.to_numpy(dtype=object)[rows])

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        return f"duplicate id {f['detail']!r}: also used by an earlier claim"


class TpuSixteenBit(Rule):
    """"FP16" on a TPU is read as bfloat16, the TPU's 16-bit format.

    **What it checks.** Nothing about the figures: it says how the precision was read. TPUs (v2 onwards) multiply
    in bfloat16 and have no IEEE fp16 matrix units, so a run "in FP16" on a TPU ran in bfloat16; its peak is the
    bf16 peak.

    **Why it matters.** Without this reading every such claim would look impossible (no fp16 peak) and nothing
    about its hardware could be checked.

    **Example.** Epoch AI's EfficientNetV2-XL: TPU v3, numerical format FP16: read as bf16 (123 TFLOP/s per chip).

    **References.** Google Cloud TPU documentation, "The bfloat16 numerical format" (TPUs support bfloat16 for
    matrix multiplication; IEEE half precision is not a matrix-unit format).
    """

    code = "H006"
    note = True
    name = "tpu-16-bit"
    quantity = "precision"
    formula = "precision(TPU, fp16) = bf16"
    severity = "info"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        read = state.hardware["precision_read"].to_numpy(dtype=object) if "precision_read" in state.hardware else None
        if read is None:
            return None
        rows = np.flatnonzero(pd.notna(read))
        return findings_part(rows, cls.code, "info", "precision", detail=read[rows])

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        name = result.cell("hardware", int(f["row"]), "accelerator_name")
        return f"precision {f['detail']} on {name} read as bf16: a TPU's 16-bit matrix format is bfloat16"


class ValueNotUsed(Rule):
    """A cell was read as *not stated*, and why.

    **What it checks.** Nothing about the figures: it says where a cell that holds something was not used as a
    figure, so that no value is dropped without a word. A fine-tune compute of 0 means "no fine-tuning" (Epoch
    AI writes it so); a cell listing several different figures ("2260275840,2290000001") gives alternatives, not
    one value; the same figure listed twice is read as that figure.

    **Why it matters.** Such cells are common in curated databases and are not errors of the claim: reporting
    them as invalid would void an honest row, using one of the figures silently would check the wrong thing.

    **Example.** Epoch AI's AbLang row, dataset size "2260275840,2290000001": not used, said so; the row's other
    figures are audited.

    **References.** Epoch AI, *Notable AI Models* documentation (fields and their conventions).
    """

    code = "V003"
    note = True
    name = "value-not-used"
    quantity = "claim"
    formula = "cell read as not stated"
    severity = "info"
    of_the_row = True

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        readings = getattr(state.claims, "readings", None)
        if readings is None or readings.empty:
            return None
        readings = readings[readings["rule"].to_numpy(dtype=object) == cls.code] if "rule" in readings else readings
        if readings.empty:
            return None
        return findings_part(readings["row"].to_numpy(dtype=int), cls.code, "info",
                              readings["field"].to_numpy(dtype=object), detail=readings["message"].to_numpy(dtype=object))


class ValueIsABound(ValueNotUsed):
    """A figure written as a bound, used as the number written, or as a range, used as its middle: said so.

    **What it checks.** Nothing about the figures: it says where a cell writes its figure as a limit, with a
    qualifier before the number ("less than 3K GPU-weeks", "up to 16", "within 90 days", "under $2 million",
    "more than 12 trillion tokens", "at least", "> 1T") or a "+" after it ("15T+", "15+ trillion tokens"). The
    number written is used as the value, as a reader of the claim would; "~", "about" and "roughly" are not
    bounds and are not reported. A range ("41-42%", "30 to 40 days", "1.2-1.5T tokens") is read as its middle,
    with half the range as the figure's precision (:mod:`audit.significance`): no check flags a difference the
    range allows.

    **Why it matters.** A check that uses a bound tests the figure it names, not the value: with "less than 3K
    GPU-weeks" of accelerator time, the MFU derived from it is a lower bound (Snowflake Arctic: 19.9 % or
    more), and an agreement or a disagreement holds only in the bound's direction: a relation that compares a
    bound, or a figure derived from one, is judged as an inequality (INTELLECT-1: "up to 112" H100 for 42 days
    put a floor of 14.9 % under its MFU, and its stated 36.2-41.4 % is above it: consistent). No qualifier is
    dropped without a word.

    **Example.** ``chip_hours: "less than 3K GPU weeks"``: read as 504,000 chip-hours, said so. Nemotron-4 340B's
    MFU "41-42%": read as 41.5 % ± 0.5, said so (it made the claim invalid, "unknown unit '-42%'").

    **References.** Snowflake AI Research 2024, *Snowflake Arctic* (blog: "less than 3K GPU weeks"); NVIDIA
    2024, *Nemotron-4 340B Technical Report*, Table 2, as Epoch AI's notes give it ("the model FLOP utilization
    (MFU), which was 41-42% (Table 2)").
    """

    code = "V011"
    name = "value-is-a-bound"
    formula = "figure written as a bound: read as the number written"

    @classmethod
    def cells(cls, readings: "pd.DataFrame") -> "pd.DataFrame":
        """The readings (row, field, message) of the cells this rule reports: figures written as a bound or a
        range. The engine reads which way each bound goes from the cell (:func:`audit.units.bound_of`)."""
        return readings[readings["rule"].to_numpy(dtype=object) == cls.code]


class DatasetUnit(Rule):
    """What a dataset size counts, as the claim's dataset notes say: tokens, words, or other datapoints.

    **What it checks.** Nothing about the figures: it says how a ``dataset_size`` was read when the claim's
    ``dataset_notes`` (Epoch AI's "Dataset size notes") give its unit, because that decides whether and how it
    enters D = dataset · epochs in C = 6·N·D. A figure in the notes within 1.2x of the size, followed by its unit
    ("2,500M words", "3.2e10 tokens", "879k ... examples"), or a tag at their start ("[WORDS]") names it
    (:mod:`audit.notes`). Words are read as 4/3 tokens each; examples, sentence pairs, images and the like are
    not tokens, so 6·N·D is not formed from them, even for a language model. Read for language models and for
    protein and genome models (domain Biology) only. Notes that call the figure the tokens a training processed
    ("the model saw 26B tokens", "pre-trained on 15.5T tokens") give D itself when no epochs are stated.

    **Why it matters.** Counting words, examples or sentence pairs as tokens makes C = 6·N·D fail on honest
    rows (BIDAF's 879k question-answer examples gave a compute "31,600 times" 6ND), and the reverse hides real
    slips.

    **Example.** BERT-Large (Epoch's row): 2.6499e9 "words" per the notes ("English Wikipedia (2,500M words)"):
    2.6499e9 × 4/3 × 40 epochs = 1.41e11 tokens, 6 × 340e6 × 1.41e11 = 2.88e20 FLOP against the stated 2.85e20.

    **References.** Epoch AI, *Notable AI Models* documentation ("Training dataset size": datapoints); OpenAI,
    "What are tokens and how to count them?" (about 0.75 words per token).
    """

    code = "V004"
    note = True
    name = "dataset-unit"
    quantity = "dataset_size"
    formula = "dataset unit from dataset_notes"
    severity = "info"
    stage = "check"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        def text(name: str) -> pd.Series:
            return pd.Series(state.info(name), dtype=object)

        notes = text("dataset_notes")
        if not notes.notna().any():  # the common case in a large batch: nothing to read
            return None
        sizes = state.col("dataset_size")
        stated = state.stated("dataset_size")
        units = dataset_units(text("domain"), text("task"), notes, np.where(stated, sizes, np.nan))
        seen = (units == "tokens") & (state.how["tokens"].to_numpy(dtype=object) == TOKENS_SEEN_HOW)
        units = np.where(seen, "tokens seen", units)
        rows = np.flatnonzero(units != "")
        if len(rows) == 0:
            return None
        return findings_part(rows, cls.code, "info", "dataset_size", sizes[rows], state.col("dataset_tokens")[rows],
                              detail=units[rows].astype(object))

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        size = fmt.value("dataset_size", float(f["claimed"]))
        unit = str(f["detail"])
        if unit == "words":
            return (f"the dataset size {size} counts words, as its notes say: read as "
                    f"{fmt.value('dataset_tokens', float(f['expected']))} tokens (4/3 tokens per word)")
        if unit == "tokens":
            return f"the dataset size {size} counts tokens, as its notes say"
        if unit == "tokens seen":
            return (f"the dataset size {size} counts the tokens seen in training, as its notes say: without stated "
                    f"epochs, D = {size}")
        return (f"the dataset size {size} counts datapoints that are not tokens (examples, sentence pairs, images), "
                f"as its notes say: C = 6·N·D is not formed from it")


class ComputeStages(Rule):
    """A compute that the claim's notes build as a sum of several trainings.

    **What it checks.** Nothing about the figures: it says when the claim's ``compute_notes`` (Epoch AI's
    "Training compute notes") state the stated compute as a sum of at least two figures that adds up to it
    ("Total: 1.07e23 + 6.2e22 = 1.69e23", :mod:`audit.notes`). Such a compute covers trainings of which the
    claim's parameters, tokens and hardware describe one, so C = 6·N·D (C001) and C = chip_hours · 3600 · peak ·
    MFU (C003) only bound it from below, nothing is derived from it, and U003 does not test the rate it implies.

    **Why it matters.** A model initialized from a separately trained encoder or a distilled teacher carries
    their compute; held to 6·N·D of its own tokens, an honest row fails by 3-12x.

    **Example.** PaLI (Epoch's row): 1.07e23 (ViT-e pre-training) + 6.2e22 (PaLI training) = 1.69e23 FLOP,
    11.6 times 6 × 16.9e9 × 143.5e9: consistent as a bound. AFM-on-device: five stages, 4.51e23 FLOP.

    **References.** Epoch AI, *Notable AI Models* documentation ("Training compute" includes all training
    stages of the released model).
    """

    code = "V005"
    note = True
    name = "compute-stages"
    quantity = "compute_flops"
    formula = "compute from compute_notes: C = C₁ + C₂ + …"
    severity = "info"
    stage = "check"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        rows = np.flatnonzero(state.compute_stages() != "")
        if len(rows) == 0:
            return None
        c = state.claims.values["compute_flops"].to_numpy(dtype=float)
        c = c if state.rows is None else c[state.rows]
        return findings_part(rows, cls.code, "info", "compute_flops", c[rows], detail=state.compute_stages()[rows])

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        return (f"the compute {fmt.value('compute_flops', float(f['claimed']))} is a sum of stages in its notes "
                f"({f['detail']}): the claim's parameters, tokens and hardware describe one of them, so they bound "
                f"it from below only")


class ComputeEstimates(Rule):
    """Two estimates of one compute, combined by their geometric mean, agree within a factor of 4.

    **What it checks.** When the claim's ``compute_notes`` state its compute as the geometric mean of two
    estimates (Epoch AI's practice when it has both a hardware estimate, chips × time × peak at an assumed
    utilization, and a count of operations, 6·N·D or FLOPs per example; :func:`audit.notes.geometric_mean`),
    that the two estimates agree within the tolerance. They estimate the same training, so they differ only by
    the assumptions each makes.

    **Why it matters.** A geometric mean hides a disagreement: estimates 100x apart give a compute 10x from
    each, and a stated compute that agrees with nothing the row states. Each estimate rests on figures (hours,
    chips, epochs, tokens per step) and on an assumed utilization; beyond a factor of 4 the utilization the two
    imply together is below 8 % or above 100 % at the usual 30 % assumed, so one of those figures is wrong. A
    claim whose ``confidence`` (Epoch's "Confidence") calls its compute speculative has said as much: its
    disagreement is info.

    **Example.** CNN Committee (NIST), Epoch's row: a GPU-hour estimate of 2.65e17 FLOP and a count of 2.6e15
    FLOP (5.2 MFLOP per example × 3 × 800,000 × 30 epochs × 7 networks), 102x apart; their geometric mean
    2.6e16 is the stated compute. RoBERTa Large: 1.66e22 and 4.36e21, 3.8x apart, agree within the tolerance.

    **References.** Epoch AI, *Estimating training compute of deep learning models* (2022): the two methods,
    counting operations and hardware time at an assumed utilization. Taking the geometric mean of both is the
    practice of Epoch's notes themselves ("Geometric mean: sqrt(1.371e23 * 1.656e22) = 4.765e22", GShard's row).
    """

    code = "V006"
    #: Its info (a speculative compute's estimates apart) checks nothing: it does not make a claim ``pass``.
    note = True
    name = "compute-estimates"
    quantity = "compute_flops"
    formula = "C = √(C₁ · C₂), C₁ / C₂ within the tolerance"
    severity = "error"
    stage = "check"
    show_formula = True

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return _ratio_tolerance_text(cls, config)

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        high, low = state.compute_estimates()
        rows = np.flatnonzero(~np.isnan(high))
        if len(rows) == 0:
            return None
        ok, warn = state.config.tolerance(cls.code)
        sev = severity_of_ratio(high[rows] / low[rows], ok, warn)
        # A source that calls its own compute speculative has said that its estimates may disagree: info.
        confidence = pd.Series(state.info("confidence"), dtype=object).iloc[rows]
        speculative = confidence.str.contains("speculative", case=False, na=False).to_numpy(dtype=bool)
        sev = np.where(speculative & (sev != "ok"), "info", sev)
        return findings_part(rows, cls.code, sev, "compute_flops", high[rows], low[rows],
                              detail=np.where(speculative, "speculative", None))

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        high, low = float(f["claimed"]), float(f["expected"])
        mean = fmt.value("compute_flops", math.sqrt(high * low))
        pair = f"{fmt.value('compute_flops', high)} and {fmt.value('compute_flops', low)}"
        if f["severity"] == "ok":
            return (f"the compute {mean} is the geometric mean of two estimates in its notes, {pair}, which agree "
                    f"(ratio {fmt.ratio(high / low)})")
        if f["detail"] == "speculative":
            return (f"the compute {mean} is the geometric mean of two estimates in its notes, {pair}, "
                    f"{fmt.ratio(high / low)} apart, as its confidence (speculative) says it may be")
        apart = shown_ratio(high / low, str(f["severity"]), result.config.tolerance(cls.code))
        return (f"the compute {mean} is the geometric mean of two estimates in its notes, {pair}, "
                f"{apart} apart: a figure or an assumption behind one of them is wrong, and the "
                f"stated compute is uncertain by that factor")

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        high, low = float(f["claimed"]), float(f["expected"])
        return (f"C = √(C₁ · C₂) = √({fmt.operand('compute_flops', high)} · {fmt.operand('compute_flops', low)}) = "
                f"{fmt.operand('compute_flops', math.sqrt(high * low))}; C₁ / C₂ = {fmt.ratio(high / low)}")


__all__ = ["Rule", "RelationRule", "Relation", "RULES", "register", "unregister", "all_rules", "relation_rules",
           "rules_of_stage", "severity_of_ratio", "severity_codes_of_ratio",
           "severity_codes_of_offset", "shown_ratio"]


# ------------------------------------------------------------------------- energy, cost, carbon (issue 13)

from audit import reference as _reference  # noqa: E402  (reference data with sources; no rule module imports it)

#: Whole-server power per accelerator over the accelerator's TDP: NVIDIA DGX A100 draws at most 6.5 kW for
#: 8 × 400 W GPUs (2.03x), DGX H100 10.2 kW for 8 × 700 W (1.82x) (NVIDIA DGX A100 and DGX H100 datasheets).
#: A figure per accelerator above TDP × PUE but within this factor includes the host servers; above it, nothing
#: in the building could draw it.
SERVER_OVER_TDP = 2.1
#: Average power below this share of TDP is implausible for a training run (accelerators at work draw 50-95 %
#: of TDP; Patterson et al. 2021, Table 4: measured averages 0.3-0.9 of TDP on V100, A100 and TPU v3).
LOW_SHARE_OF_TDP = 1.0 / 3.0
#: Quantities that state an energy figure: a claim stating one of these is checked by E005 and gets the PUE
#: default (E008).
_ENERGY_FIGURES = ("energy_mwh", "power_w_per_chip", "cluster_power_w", "co2_tonnes")


def _tdp_watts(state: WorkState) -> np.ndarray:
    """The catalog TDP of each claim's accelerator (NaN for a mix, an unknown part or no TDP)."""
    catalog = state.catalog

    def tdp(aid: Any) -> float:
        if aid is None or aid != aid:
            return np.nan
        value = catalog.by_id(aid).tdp_w
        return float(value) if value == value and value else np.nan

    return map_unique(state.hardware["accelerator"], tdp).to_numpy(dtype=float)


def _stated(state: WorkState, *names: str) -> np.ndarray:
    """Rows where the claim states at least one of ``names``."""
    out = np.zeros(len(state.q), dtype=bool)
    for name in names:
        out |= state.stated(name)
    return out


def _power_per_chip(state: WorkState) -> tuple[np.ndarray, np.ndarray]:
    """(energy / chip-hours in W, the power per accelerator a claim's figures give: that, else the stated power ×
    PUE), what E005 bounds by the TDP and E009 reports where there is none."""
    with np.errstate(divide="ignore", invalid="ignore"):
        from_energy = state.col("energy_mwh") * 1e6 / state.col("chip_hours")
        return from_energy, np.where(np.isfinite(from_energy), from_energy,
                                     state.col("power_w_per_chip") * state.col("pue"))


class PUEAssumed(Rule):
    """Without a stated PUE, energy figures are checked as chip energy: PUE 1.0 is assumed, and said.

    **What it checks.** Nothing by itself: when a claim states an energy, power, cluster-power or emissions
    figure but no ``pue``, the relations E001 and E004 need one; 1.0 (the accelerators' own energy, no
    data-centre overhead) is used and this note says so on the claim.

    **Why it matters.** A facility figure includes cooling and power conversion (hyperscale PUE 1.1-1.2, an
    average site 1.56): a ratio of that size between a stated energy and chip-hours × power is the PUE, and
    the reader should know which was assumed.

    **Example.** Llama 2 states GPU-hours, 400 W and tCO2eq but no PUE (its emissions leave out cooling):
    PUE 1.0 assumed.

    **References.** Uptime Institute Global Data Center Survey 2024 (average PUE 1.56); Google Environmental
    Report 2024 (fleet PUE 1.10); ``audit/data/energy_reference.csv``.
    """

    code = "E008"
    name = "pue-assumed"
    quantity = "pue"
    formula = "PUE = 1.0 (assumed: chips only)"
    severity = "info"
    stage = "prefill"
    note = True

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        need = _stated(state, *_ENERGY_FIGURES) & np.isnan(state.col("pue"))
        rows = np.flatnonzero(need)
        state.set_derived("pue", np.where(need, 1.0, np.nan), cls.code)
        return findings_part(rows, cls.code, "info", "pue", 1.0, np.nan, detail="assumed")

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        return ("PUE not stated: 1.0 assumed (the accelerators' own energy, no data-centre overhead); a hyperscale "
                "site adds 10-20 %, an average one 56 % (Uptime Institute 2024)")


class EnergyFromPower(RelationRule):
    """Training energy is chip-hours times average power per chip times PUE: E = chip_hours · P · PUE / 10⁶.

    **What it checks.** A stated energy (MWh) against the chip-hours, the stated average power per accelerator
    (W) and the PUE (stated, else 1.0, said by E008); with one missing it derives it (the energy of a claim that
    states a power; the average power of one that states an energy).

    **Why it matters.** GPU-hours written where wall-clock hours were meant (or the reverse) show up as an
    energy off by the chip count (8x or more); a facility energy compared with chip power differs by the PUE.

    **Example.** PaLM 540B: 8,404,992 TPU v4 chip-hours (6,144 chips × 1,200 h + 3,072 × 336 h) × 378.5 W ×
    PUE 1.08 / 10⁶ = 3,435.8 MWh.

    **References.** Chowdhery et al. 2022 (PaLM), carbon footprint section (378.5 W measured per TPU v4 chip,
    PUE 1.08); Patterson et al. 2021, *Carbon Emissions and Large Neural Network Training*, Sec. 2.
    """

    code = "E001"
    name = "energy-from-power"
    quantity = "energy_mwh"
    formula = "E = chip_hours · P · PUE / 10⁶"
    relation = Relation((("energy_mwh", 1.0), ("chip_hours", -1.0), ("power_w_per_chip", -1.0), ("pue", -1.0)),
                        1e-6)
    subjects = ("energy_mwh", "power_w_per_chip", "chip_hours")
    symbols = {"energy_mwh": "E_MWh", "chip_hours": "chip_hours", "power_w_per_chip": "P_W", "pue": "PUE"}
    order = 210


class EmissionsFromEnergy(RelationRule):
    """Emissions are energy times the grid's carbon intensity: CO2 (t) = E (MWh) · intensity (kg/kWh).

    **What it checks.** Stated emissions against the energy (stated, or derived by E001) and the carbon intensity
    of the electricity; with one missing it derives it. A derived intensity is checked for plausibility (E006).

    **Why it matters.** Hugging Face's ``co2_eq_emissions`` is in grams and people write kilograms there;
    kilograms for tonnes is 1000x. Either shows here, or as an impossible intensity.

    **Example.** PaLM 540B: 3,435.8 MWh × 0.079 t/MWh = 271.43 tCO2e, as reported. Llama 2 70B:
    1,720,320 GPU-hours × 400 W = 688.128 MWh; 291.42 tCO2eq / 688.128 MWh = 0.4235 kg/kWh.

    **References.** Chowdhery et al. 2022 (PaLM), carbon footprint section; Touvron et al. 2023 (Llama 2),
    Table 2; Patterson et al. 2021, Sec. 2.
    """

    code = "E002"
    name = "emissions-from-energy"
    quantity = "co2_tonnes"
    formula = "CO2 = E · intensity"
    relation = Relation((("co2_tonnes", 1.0), ("energy_mwh", -1.0), ("grid_kgco2_per_kwh", -1.0)), 1.0)
    subjects = ("co2_tonnes", "grid_kgco2_per_kwh", "energy_mwh")
    symbols = {"co2_tonnes": "CO2_t", "energy_mwh": "E_MWh", "grid_kgco2_per_kwh": "intensity"}
    order = 220


class CostFromPrice(RelationRule):
    """Training cost is chip-hours times the price per chip-hour: cost = chip_hours · price.

    **What it checks.** A stated cost (USD) against the chip-hours and a stated rental price per accelerator-hour;
    with one missing it derives it (a derived price is checked for plausibility, E007). A cost in 2023 USD
    (Epoch AI's ``Training compute cost (2023 USD)``) is compared as it is: inflation from 2020 to 2023 is about
    19 % (US CPI-U), far inside the tolerance.

    **Why it matters.** A total that is not hours × price was computed with other hours (a phase left out,
    GPU-days for GPU-hours) or another price.

    **Example.** DeepSeek-V3: 2.788M H800 GPU-hours × USD 2 = USD 5.576M, as reported.

    **References.** DeepSeek-AI 2024, *DeepSeek-V3 Technical Report*, Table 1; Epoch AI, *Data on Notable AI
    Models*, "Training compute cost (2023 USD)".
    """

    code = "E003"
    name = "cost-from-price"
    quantity = "cost_usd"
    formula = "cost = chip_hours · price"
    relation = Relation((("cost_usd", 1.0), ("chip_hours", -1.0), ("price_per_chip_hour", -1.0)), 1.0)
    subjects = ("cost_usd", "price_per_chip_hour", "chip_hours")
    symbols = {"cost_usd": "cost", "chip_hours": "chip_hours", "price_per_chip_hour": "price"}
    order = 230


class ClusterPower(RelationRule):
    """The cluster's power is chips times average power per chip times PUE: P_cluster = chips · P · PUE.

    **What it checks.** A stated cluster power (Epoch AI's ``Training power draw (W)``) against the chips, a
    stated power per chip and the PUE; with the power per chip missing it derives it, and E005 compares it with
    the accelerator's TDP.

    **Why it matters.** A cluster power is the figure energy is computed from; one that is not chips × power
    was computed for another cluster size.

    **Example.** Epoch AI, EXAONE 4.0 (32B): 701,356 W / 512 H200 = 1,370 W per GPU, 1.96x the 700 W TDP:
    Epoch's figure includes the servers and the data centre.

    **References.** Epoch AI, *Data on Notable AI Models*, "Training power draw (W)"; NVIDIA DGX H100
    datasheet (10.2 kW for 8 GPUs).
    """

    code = "E004"
    name = "cluster-power"
    quantity = "cluster_power_w"
    formula = "P_cluster = chips · P · PUE"
    relation = Relation((("cluster_power_w", 1.0), ("chips", -1.0), ("power_w_per_chip", -1.0), ("pue", -1.0)),
                        1.0)
    subjects = ("cluster_power_w", "power_w_per_chip")
    symbols = {"cluster_power_w": "P_cluster", "chips": "chips", "power_w_per_chip": "P_W", "pue": "PUE"}
    order = 205


class EnergyWithinTDP(Rule):
    """Energy per chip-hour is bounded by the accelerator's TDP: E ≤ chip_hours · TDP · PUE (servers aside).

    **What it checks.** The power per accelerator a claim's energy implies (energy / chip-hours, else the stated
    power × PUE) against the catalog TDP × PUE. Above TDP × PUE × 2.1 is impossible (a DGX server draws at most
    about 2x its GPUs' TDP: the figure is for more hardware, or GPU-hours were taken for wall-clock hours; with
    the PUE not stated, an average site's 1.56 is allowed on top); above
    TDP × PUE it includes the host servers (info); below a third of TDP it is implausible for training (warning);
    exactly TDP × hours (the stated power is the TDP) is an upper bound, not a measurement, and confirms nothing
    independent (info).

    **Why it matters.** An energy figure ten times below what the GPU-hours allow passes every relation that
    only ties it to itself; the datasheet is the independent figure.

    **Example.** Llama 2 70B: 400 W stated on A100-80GB (TDP 400 W): the energy 688.128 MWh is TDP × hours.
    Info. An energy of 68.8 MWh for the same hours is 40 W per GPU: warning.

    **References.** NVIDIA A100 and H100 datasheets (TDP); NVIDIA DGX A100 (6.5 kW) and DGX H100 (10.2 kW)
    datasheets; Patterson et al. 2021, Table 4 (measured average power).
    """

    code = "E005"
    name = "energy-within-tdp"
    quantity = "energy_mwh"
    formula = "E / chip_hours ≤ TDP · PUE"
    severity = "error"
    show_formula = True

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        energy = _stated(state, *_ENERGY_FIGURES)
        if not energy.any():  # most batches state no energy figure: no TDP to look up
            return None
        tdp, pue = _tdp_watts(state), state.col("pue")
        power = state.col("power_w_per_chip")
        from_energy, per_chip = _power_per_chip(state)
        with np.errstate(divide="ignore", invalid="ignore"):
            bound = tdp * pue
            ratio = per_chip / bound
        rows = np.flatnonzero(energy & np.isfinite(ratio) & (ratio > 0))
        r = ratio[rows]
        # The precision of the figures the ratio is made of: E / (chip_hours · TDP · PUE), or P / TDP (PUE cancels).
        lam = np.where(np.isfinite(from_energy), state.slack("energy_mwh", "chip_hours", "pue"),
                       state.slack("power_w_per_chip"))[rows] + _SLACK
        power_is_tdp = state.stated("power_w_per_chip")[rows] & (
            np.abs(power[rows] - tdp[rows]) <= 1e-9 * tdp[rows])
        exact = power_is_tdp | (np.abs(np.log(r)) <= 1e-9)
        # Without a stated PUE (1.0 assumed), the figure may include an average site's overhead (PUE 1.56).
        assumed = (state.how["pue"].to_numpy(dtype=object)[rows] == PUEAssumed.code)
        site = np.where(assumed, _reference.reference("pue", "industry-average").value, 1.0)
        detail = np.where(np.log(r) > np.log(SERVER_OVER_TDP * site) + lam, "impossible",
                          np.where(np.log(r) > lam, "servers",
                                   np.where(exact, "tdp", np.where(np.log(r) < math.log(LOW_SHARE_OF_TDP) - lam,
                                                                   "low", "ok"))))
        sev = pd.Series(detail).map({"impossible": "error", "servers": "info", "tdp": "info", "low": "warning",
                                     "ok": "ok"}).to_numpy(dtype=object)
        return findings_part(rows, cls.code, sev, "power_w_per_chip", per_chip[rows], bound[rows], detail=detail)

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return (f"error above {fmt.sig(SERVER_OVER_TDP)}x TDP × PUE (whole DGX servers draw at most about 2x "
                f"their GPUs' TDP), info above TDP × PUE (host servers included) or at exactly TDP × hours, "
                f"warning below {fmt.sig(LOW_SHARE_OF_TDP, 3)} of it (accelerators in training draw 50-95 % of TDP)")

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        p, bound = float(f["claimed"]), float(f["expected"])
        pue = float(result.cell("q", row, "pue"))
        tdp = bound / pue
        accel = result.cell("hardware", row, "accelerator_name")
        assumed = " (PUE 1.0 assumed)" if result.cell("how", row, "pue") == "E008" else ""
        base = (f"{fmt.sig(p, 4)} W per accelerator against the {accel}'s TDP {fmt.sig(tdp, 4)} W × PUE "
                f"{fmt.sig(pue, 3)}{assumed} (ratio {fmt.ratio(p / bound)})")
        detail = f["detail"]
        if detail == "impossible":
            site = (f" × an average site's PUE {fmt.sig(_reference.reference('pue', 'industry-average').value)}"
                    if assumed else "")
            return (f"{base}: more than a whole server could draw per accelerator ({fmt.sig(SERVER_OVER_TDP)}x"
                    f"{site}); "
                    f"the energy is for more hardware, or GPU-hours were taken for wall-clock hours")
        if detail == "servers":
            return (f"{base}: above the accelerator's TDP, so the figure may include host servers or the data "
                    f"centre, or be a slip")
        if detail == "tdp":
            return (f"{base}: the figure is TDP × hours, an upper bound rather than a measurement; it confirms "
                    f"nothing independent of the GPU-hours")
        if detail == "low":
            return (f"{base}: below a third of TDP, implausible for training (an energy this low is for fewer "
                    f"hours, or in kWh taken for MWh)")
        return f"{base}: within TDP"

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        pue = float(result.cell("q", row, "pue"))
        return (f"P = E · 10⁶ / chip_hours (or P_W · PUE) = {fmt.sig(float(f['claimed']), 4)} W; "
                f"TDP · PUE = {fmt.sig(float(f['expected']) / pue, 4)} × {fmt.sig(pue, 3)} = "
                f"{fmt.sig(float(f['expected']), 4)} W")


class EnergyNotBounded(Rule):
    """An energy or power figure whose accelerator has no published TDP is not bounded, and said so.

    **What it checks.** Nothing by itself: where a claim states an energy or a power per accelerator that E005
    would hold against the accelerator's TDP, and the catalog has no TDP for it (Google publishes none for TPU v4
    and later, AWS none for Trainium, NVIDIA none for a DGXS or SXM3 V100 board alone), this note gives the power
    per accelerator the figures imply and says that it was not bounded.

    **Why it matters.** A check that cannot run must not look like one that passed: 400 MWh for 256 TPU v6e
    chips over 4.6 days is 14 kW per chip, which no accelerator draws, and the reader should see that figure.

    **Example.** 400 MWh / (256 × 110.4 h) = 14,150 W per TPU v6e chip: no TDP published, not bounded.

    **References.** ``audit/data/ACCELERATORS.md`` (``tdp_w`` blank where no vendor figure is published).
    """

    code = "E009"
    name = "energy-not-bounded"
    quantity = "power_w_per_chip"
    formula = "E / chip_hours (no TDP to bound it)"
    severity = "info"
    note = True

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        energy = _stated(state, *_ENERGY_FIGURES)
        if not energy.any():
            return None
        tdp = _tdp_watts(state)
        _, per_chip = _power_per_chip(state)
        named = state.hardware["accelerator"].notna().to_numpy(dtype=bool)
        rows = np.flatnonzero(energy & named & np.isnan(tdp) & np.isfinite(per_chip)
                              & (per_chip > 0))
        return findings_part(rows, cls.code, "info", "power_w_per_chip", per_chip[rows], np.nan, detail="no-tdp")

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        accel = result.cell("hardware", int(f["row"]), "accelerator_name")
        watts = float(f["claimed"])
        shown = f"{fmt.sig(watts / 1e3, 4)} kW" if watts >= 1e4 else f"{fmt.sig(watts, 4)} W"
        return (f"the figures imply {shown} per accelerator, which is not bounded: no TDP is published for the "
                f"{accel} (E005 does not run)")


class _ReferenceBound(Rule):
    """A quantity (stated or derived) against a plausible range from ``audit/data/energy_reference.csv``."""

    severity = "error"
    show_formula = True
    #: Reference keys (kind, low key or None, high key) of the range.
    bounds: ClassVar[tuple[str, str | None, str]]
    #: Stated quantities that make the check apply.
    triggers: ClassVar[tuple[str, ...]]
    #: Severity above the high bound and below the low one.
    above: ClassVar[str] = "error"
    below: ClassVar[str] = "warning"

    @classmethod
    def _range(cls) -> tuple[float, float]:
        kind, low, high = cls.bounds
        lo = _reference.reference(kind, low).value if low else 0.0
        return lo, _reference.reference(kind, high).value

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        lo, hi = cls._range()
        v = state.col(cls.quantity)
        rows = np.flatnonzero(_stated(state, *cls.triggers) & np.isfinite(v) & (v > 0))
        high_ok, low_ok, neither = _judged_sides(state, cls.quantity, rows)
        rows, high_ok, low_ok = rows[~neither], high_ok[~neither], low_ok[~neither]
        x = v[rows]
        lam = state.precision[cls.quantity].to_numpy(dtype=float)[rows] + _SLACK
        with np.errstate(over="ignore"):  # a figure near the float range's top over a bound near 0: inf, above it
            sev = np.where((np.log(x / hi) > lam) & high_ok, cls.above,
                           np.where((lo > 0) & (np.log(x / max(lo, 1e-300)) < -lam) & low_ok, cls.below, "ok"))
        expected = np.where(x > hi, hi, np.where(x < lo, lo, hi))
        detail = source_texts(state.source[cls.quantity].to_numpy()[rows])
        return findings_part(rows, cls.code, sev.astype(object), cls.quantity, x, expected, detail=detail)

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        lo, hi = cls._range()
        low = f"{fmt.value(cls.quantity, lo)} ≤ " if lo > 0 else ""
        return (f"{low}{label(cls.quantity)} ≤ {fmt.value(cls.quantity, hi)}: "
                f"{fmt.value(cls.quantity, float(f['claimed']))}")


def _origin(result: "AuditResult", f: FindingRow) -> str:
    """Where a bounded value came from: stated, implied by a relation, or another derivation's note."""
    if f["detail"] == "claimed":
        return "stated"
    how = str(result.cell("how", int(f["row"]), str(f["quantity"])))
    rule = RULES.get(how)
    if rule is not None and issubclass(rule, RelationRule):
        others = [label(q) for q in rule.relation.quantities if q != f["quantity"]]
        return f"implied by {', '.join(others)} ({rule.code})"
    return how


class CarbonIntensityPlausible(_ReferenceBound):
    """A carbon intensity, stated or implied by emissions and energy, is at most about 1.2 kg CO2e per kWh.

    **What it checks.** The intensity a claim states, or the one its emissions and energy imply (E002), against
    the dirtiest electricity there is (lignite, about 1.0-1.2 kg/kWh over its life cycle).

    **Why it matters.** Emissions in kilograms written as tonnes, or grams (Hugging Face's ``co2_eq_emissions``)
    read as kilograms, give an intensity 1000x too high; nothing else can.

    **Example.** Llama 2 70B: 291.42 t / 688.128 MWh = 0.4235 kg/kWh: ok. The same row with 291,420 (kg
    written in the tonnes column): 423.5 kg/kWh: error.

    **References.** IPCC AR5 WG3 Annex III, Table A.III.2 (life-cycle emissions of coal 740-910 g/kWh);
    Ember, Global Electricity Review 2024 (world 481 g/kWh in 2023).
    """

    code = "E006"
    name = "carbon-intensity-plausible"
    quantity = "grid_kgco2_per_kwh"
    formula = "intensity ≤ 1.2 kg CO2e/kWh"
    bounds = ("grid", None, "max-plausible")
    triggers = ("co2_tonnes", "grid_kgco2_per_kwh")

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return "error above 1.2 kg CO2e/kWh (no grid emits more than its dirtiest plant: lignite)"

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        v = _as_bounded(result, f, fmt.value(cls.quantity, float(f["claimed"])))
        how = _origin(result, f)
        if f["severity"] == "error":
            return (f"Carbon intensity {v} ({how}) is above any grid's (at most about 1.2 kg CO2e/kWh): emissions "
                    f"in kg or g where tonnes belong?")
        return f"Carbon intensity {v} ({how}) is within what grids emit"


class PricePlausible(_ReferenceBound):
    """A price per accelerator-hour, stated or implied by a cost, lies between about USD 0.01 and 40.

    **What it checks.** The rental price a claim states, or the one its cost and chip-hours imply (E003), against
    the range in ``audit/data/energy_reference.csv`` (below the electricity alone; about 3x the highest on-demand
    list price). A cost in 2023 USD (Epoch AI) is compared as it is.

    **Why it matters.** A cost in thousands read as units, or cents as dollars, is off by 100-1000x; a price that
    no provider charges means the cost is for other hours.

    **Example.** DeepSeek-V3: USD 5.576M / 2.788M GPU-hours = USD 2 per GPU-hour: ok. With USD 5.576 billion:
    USD 2,000 per GPU-hour: error.

    **References.** DeepSeek-AI 2024, *DeepSeek-V3 Technical Report*, Table 1; AWS EC2 on-demand price list
    (p5.48xlarge, 2024); Google Cloud TPU pricing (2023).
    """

    code = "E007"
    name = "price-plausible"
    quantity = "price_per_chip_hour"
    formula = "0.01 ≤ price ≤ 40 USD/chip-h"
    bounds = ("price", "min-plausible", "max-plausible")
    triggers = ("cost_usd", "price_per_chip_hour")

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return "error above USD 40 per chip-hour, warning below USD 0.01 (reasons and sources in energy_reference.csv)"

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        v = _as_bounded(result, f, fmt.value(cls.quantity, float(f["claimed"])))
        how = _origin(result, f)
        if f["severity"] == "error":
            return f"Price {v} ({how}) is above any provider's (at most about USD 40): a cost in the wrong unit?"
        if f["severity"] == "warning":
            return f"Price {v} ({how}) is below the electricity an accelerator-hour costs"
        way = result.bound(int(f["row"]), cls.quantity)
        if way in (1, -1):  # a bound: judged on the side it holds
            side = "below the electricity an accelerator-hour costs" if way == 1 else "above what providers charge"
            return f"Price {v} ({how}) is not {side}"
        return f"Price {v} ({how}) is within what providers charge"


# --------------------------------------------------------------------------------------- regulatory (issue 13)


class RegulatoryThresholds(Rule):
    """Where the training compute stands against the lines regulators draw (10²³, 10²⁵, 10²⁶ FLOP).

    **What it checks.** Every line of ``audit/data/regulatory_thresholds.csv`` that a claim's compute reaches or
    straddles: the EU AI Act's presumption of systemic risk (Art. 51(2), 10²⁵ FLOP), the Commission's indicative
    criterion for a general-purpose model (GPAI Guidelines of July 2025, 10²³), and 10²⁶ in California's SB 53,
    New York's RAISE Act and the revoked 2023 US executive order. Counted as the guidelines' Annex A asks: model
    FLOPs (recomputation excluded), every precision alike, all phases summed, fine-tuning included. The claim's
    figures (its stated compute, 6·N·D, chip-hours × peak × MFU) give a range; an estimate may be off by 30 %, so
    a range that, with that margin, lies on both sides of a line straddles it, with the figures on each side.

    **Why it matters.** Obligations start at these lines; a report near one should know which side its own
    figures put it on, and how firmly.

    **Example.** Annex A: 6 × 3.8e9 × 3.3e12 = 7.524e22 FLOP (printed 7.5e22): below 10²³ by more than 30 %?
    7.524e22 × 1.3 = 9.78e22: yes, no finding. 370,000 H100-hours × 3600 × 989e12 × 0.5 = 6.587e23 (printed
    6.5e23, truncated; rounded it is 6.6e23): above 10²³. Info.

    **References.** Regulation (EU) 2024/1689, Art. 51(2); European Commission, Guidelines on the scope of the
    obligations for providers of general-purpose AI models (18 July 2025), Sec. 2.1 and Annex A; California
    SB 53 (2025); New York RAISE Act (2025); Executive Order 14110 (2023), Sec. 4.2(b).
    """

    code = "R001"
    name = "regulatory-thresholds"
    quantity = "compute_flops"
    formula = "C vs 10²³ / 10²⁵ / 10²⁶ FLOP (± 30 %)"
    severity = "info"
    note = True

    #: The quantities the estimates of the compute are made from.
    _ESTIMATE_FROM = ("compute_flops", "n_eff", "tokens", "chip_hours", "peak_flops_per_chip", "mfu")

    @classmethod
    def estimates(cls, state: WorkState) -> tuple[np.ndarray, np.ndarray]:
        """The lowest and highest training compute the claim's figures give (NaN: none)."""
        return cls._bounds(*(state.col(name) for name in cls._ESTIMATE_FROM), finetune=state.finetune(),
                           total_only=state.total_only())

    @staticmethod
    def _bounds(compute: np.ndarray, n_eff: np.ndarray, tokens: np.ndarray, chip_hours: np.ndarray,
                peak: np.ndarray, mfu: np.ndarray, finetune: np.ndarray,
                total_only: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The lowest and highest of the stated compute, 6·N·D and chip-hours · 3600 · peak · MFU (a fine-tune's
        figures describe the fine-tune, so only its stated total counts; a mixture-of-experts model without its
        active count has no 6·N·D, its N being the total)."""
        with np.errstate(invalid="ignore", over="ignore"):
            figures = np.column_stack([
                compute,
                np.where(finetune | total_only, np.nan, 6.0 * n_eff * tokens),
                np.where(finetune, np.nan, chip_hours * 3600.0 * peak * mfu),
            ])
        figures = np.where(np.isfinite(figures) & (figures > 0), figures, np.nan)
        # fmin and fmax pass over NaN (a row of NaN only stays NaN): nanmin and nanmax of the row, without their
        # copies and masks.
        return np.fmin.reduce(figures, axis=1), np.fmax.reduce(figures, axis=1)

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        low, high = cls.estimates(state)
        # A line applies to the whole run (Annex A sums the phases): a phase of a multi-phase run is not placed.
        phase = state.phases()
        low, high = np.where(phase, np.nan, low), np.where(phase, np.nan, high)
        margin = _reference.ESTIMATE_MARGIN
        parts: list[FindingsPart | None] = []
        for line in sorted({t.flop for t in _reference.thresholds()}):
            above = low * (1 - margin) > line
            straddles = ~above & (high * (1 + margin) > line)
            for mask, where in ((above, "above"), (straddles, "straddles")):
                rows = np.flatnonzero(mask)
                parts.append(findings_part(rows, cls.code, "info", "compute_flops", high[rows], line,
                                             detail=where))
        return concat_parts(parts)

    @classmethod
    def _low(cls, result: "AuditResult", row: int) -> float:
        """The lowest estimate of one claim (:meth:`estimates`, from the result's quantities), for its words."""
        # Every claim's at once, the first time a finding asks (numpy on one row costs ~50 µs a call).
        lows = result._records.get("R001 lowest estimates")
        if lows is None:
            lows = result._records["R001 lowest estimates"] = cls._bounds(
                *(result.column("q", n).astype(float) for n in cls._ESTIMATE_FROM), finetune=finetunes(result.claims),
                total_only=total_only_claims(result.claims, result.column("q", "experts").astype(float),
                                             result.column("q", "active_params").astype(float)))[0]
        return float(lows[row])

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        where = str(f["detail"])
        low, high, line = cls._low(result, int(f["row"])), float(f["claimed"]), float(f["expected"])
        # The line is matched within rounding: the finding's numbers may have been rounded on the way out.
        lines = [t for t in _reference.thresholds() if math.isclose(t.flop, line, rel_tol=1e-9)]
        names = "; ".join(f"{t.instrument}, {t.provision}" + ("" if t.in_force else f" ({t.status})") for t in lines)
        figures = fmt.sci(low) if fmt.sci(low) == fmt.sci(high) else f"{fmt.sci(low)} to {fmt.sci(high)}"
        if where == "above":
            return (f"Training compute {figures} FLOP is above the {fmt.sci(line)} FLOP line even 30 % lower "
                    f"(Annex A margin): {names}")
        side_low = low * (1 - _reference.ESTIMATE_MARGIN)
        side_high = high * (1 + _reference.ESTIMATE_MARGIN)
        return (f"Training compute {figures} FLOP straddles the {fmt.sci(line)} FLOP line: with the 30 % margin of "
                f"the EU guidelines (Annex A) it spans {fmt.sci(side_low)} (below) to {fmt.sci(side_high)} "
                f"(above): {names}")

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        line = float(f["expected"])
        sources = " | ".join(t.source for t in _reference.thresholds() if math.isclose(t.flop, line, rel_tol=1e-9))
        return f"C · (1 ± 0.3) vs {fmt.sci(line)} FLOP; sources: {sources}"



# ------------------------------------------------------------------- a compute counted forward-only (issue 9)

from audit.notes import ForwardOnly as _ForwardOnly  # noqa: E402  (the rule's own reading of the notes)
from audit.notes import forward_only as _forward_only, forward_onlys as _forward_onlys  # noqa: E402


def _stated_figure(state: WorkState, name: str) -> np.ndarray:
    """A figure as the claims state it (NaN where not stated, or where the input has no such field), for the rows
    of ``state``: what a rule reading the claims' notes compares their arithmetic with."""
    values = state.claims.values
    column = values[name].to_numpy(dtype=float) if name in values else np.full(len(values), np.nan)
    return column if state.rows is None else column[state.rows]


class ForwardOnlyCompute(Rule):
    """A training compute that the claim's notes count as the forward pass alone, 2 · N · D.

    **What it checks.** Whether the claim's ``compute_notes`` (Epoch AI's "Training compute notes") state its
    stated compute as a product 2 × N × D: a factor 2 (FLOP per parameter per token), a factor that is the claim's
    parameters (within 5 %), the data the training processed (tokens, examples, epochs), and no factor that counts
    the backward pass (a 3, 4 or 6, a non-whole factor up to 6, a utilization), the product equal to the stated
    compute within 5 %; or the same with one factor of 2·N FLOP ("2e8 FLOP/fp" for 100M parameters), or with
    one factor F that the notes call the FLOP of a forward pass ("188 GFLOP per forward pass"): F × D, training
    3 · F · D. How the notes are read is :func:`audit.notes.forward_only`; notes that say the model learned without
    back-propagation (a Hebbian or self-organizing rule, "instead of gradient descent") are not read. The
    finding compares the stated compute with 6 · N · D from the notes' own figures.

    **Why it matters.** 2 FLOP per parameter per token is one forward pass (a multiply and an add per weight);
    training by back-propagation adds a backward pass that costs about twice as much, 6 FLOP in all. A training
    compute counted as 2·N·D is about 3x too low, and when the claim states no epochs (or its datapoints are not
    tokens) C = 6·N·D (C001) cannot see it from the columns: only the notes' arithmetic shows it.

    **Example.** NPLM (Brown corpus), Epoch's row: "Forward FLOP: 16383*(1+5*30+100)+100*(1+5*30)+5*30=4127383
    ... Total FLOP: 2*4127383*800000*20=1.3207626e+14", with 4,124,233 parameters: 2 × 4,127,383 × (800,000 ×
    20 = 1.6e7) = 1.3208e14 is the stated compute; training is 6 × 4,127,383 × 1.6e7 = 3.962e14, 3x more.
    MSA Transformer: "2e8 FLOP/fp * 2.75e13 fp" = 5.5e21 for 5.49e21, with 100M parameters: 6 × 1e8 × 2.75e13 =
    1.65e22, which its notes also give ("450k * 512 * 100 * 1192 * 100M * 6 = 1.65e22"). Not flagged: "2 * 112000
    * 3 * 11.5 * 5000 * 100" (RECONTRA: the 3 counts the backward pass), "324 * 2 * 500000" (ASE+ACE: "trained
    with simple update rules instead of gradient descent").
    InternImage, Epoch's row: "Table 2 says InternImage-H uses 188 GFLOP per forward pass ... 188e9 FLOP/image *
    (427M images * 30 epochs) + (1.281M images * 20 epochs) * 3 (additional FLOPs for backward pass) = 2.408e21":
    the 3 multiplies the fine-tune's term alone, and 188e9 × 1.281e10 = 2.408e21 is the stated compute, one
    forward pass per image; training is 3 × 2.408e21 = 7.22e21.

    **References.** Kaplan et al. 2020, *Scaling Laws for Neural Language Models*, sec. 2.1 (forward pass
    2N FLOP per token, training 6N including the backward pass); Epoch AI, *Estimating training compute of deep
    learning models* (2022): training compute = 3 × forward-pass compute × examples (a backward pass is about
    twice the forward), and a forward pass is 2 FLOP per parameter per token.
    """

    code = "V007"
    name = "forward-only-compute"
    quantity = "compute_flops"
    formula = "C = 2 · N · D in the notes; training ≈ 6 · N · D"
    severity = "warning"
    stage = "check"
    show_formula = True

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return ("a warning whenever the notes state the compute as 2 · N · D: the backward pass it leaves out is a "
                "factor 3, beyond any tolerance of C = 6 · N · D")

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        if "compute_notes" not in state.claims.info:
            return None
        notes = pd.Series(state.info("compute_notes"), dtype=object)
        if not notes.notna().any():
            return None
        compute = _stated_figure(state, "compute_flops")
        readings = _forward_onlys(notes, compute, _stated_figure(state, "params"))
        # A mixture of experts may count its active parameters: read again against them where the total did not fit.
        active = _stated_figure(state, "active_params")
        again = pd.isna(readings) & np.isfinite(active)
        if again.any():
            readings[again] = _forward_onlys(notes[again].reset_index(drop=True), compute[again], active[again])
        rows = np.flatnonzero(pd.notna(readings))
        if len(rows) == 0:
            return None
        training = np.array([r.training for r in readings[rows]], dtype=float)
        return findings_part(rows, cls.code, "warning", "compute_flops", compute[rows], training,
                              detail=np.array([r.product for r in readings[rows]], dtype=object))

    @classmethod
    def _reading(cls, result: "AuditResult", f: FindingRow) -> _ForwardOnly | None:
        """The notes' reading behind a finding, read again from the claim (None if it cannot be)."""
        row = int(f["row"])
        info, values = result.claims.info, result.claims.values
        if "compute_notes" not in info or row >= len(info):
            return None
        notes = info["compute_notes"].iat[row]
        for name in ("params", "active_params"):
            n = float(values[name].iat[row]) if name in values else math.nan
            reading = _forward_only(notes, float(f["claimed"]), n)
            if reading is not None and reading.product == f["detail"]:
                return reading
        return None

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        c, six = float(f["claimed"]), float(f["expected"])
        reading = cls._reading(result, f)
        if reading is not None and reading.forward is not None:
            return (f"the compute {fmt.value('compute_flops', c)} counts one forward pass per example in its notes "
                    f"({f['detail']}: {fmt.sig(reading.forward)} FLOP per forward pass × "
                    f"{fmt.count(reading.data)} examples); training, with the backward pass (about twice the "
                    f"forward), is about 3 × that = {fmt.value('compute_flops', six)}, {fmt.ratio(six / c)} the "
                    f"stated compute")
        figures = f", N = {fmt.count(reading.params)}, D = {fmt.count(reading.data)}" if reading is not None else ""
        return (f"the compute {fmt.value('compute_flops', c)} is 2 · N · D in its notes ({f['detail']}{figures}): 2 "
                f"FLOP per parameter per token (or example) is the forward pass alone; training, with the backward "
                f"pass, is about 6 · N · D = {fmt.value('compute_flops', six)} from the same figures, "
                f"{fmt.ratio(six / c)} the stated compute")

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        c, six = float(f["claimed"]), float(f["expected"])
        reading = cls._reading(result, f)
        if reading is None:
            return (f"C = {f['detail']} = {fmt.operand('compute_flops', c)}; 6 · N · D = "
                    f"{fmt.operand('compute_flops', six)}; C / (6 · N · D) = {fmt.ratio(c / six)}")
        if reading.forward is not None:
            return (f"C = F · D = {f['detail']} = {fmt.operand('compute_flops', reading.compute)}; "
                    f"3 · F · D = 3 × {fmt.sig(reading.forward)} × {fmt.operand('tokens', reading.data)} = "
                    f"{fmt.operand('compute_flops', six)}; C / (3 · F · D) = {fmt.ratio(c / six)}")
        return (f"C = 2 · N · D = {f['detail']} = {fmt.operand('compute_flops', reading.compute)}; "
                f"6 · N · D = 6 × {fmt.operand('params', reading.params)} × "
                f"{fmt.operand('tokens', reading.data)} = {fmt.operand('compute_flops', six)}; "
                f"C / (6 · N · D) = {fmt.ratio(c / six)}")


# ------------------------------------------------------------------ what compute notes count and miscount (issue 9)

from audit.notes import ACTIVE_FROM_NOTES_HOW as _ACTIVE_FROM_NOTES_HOW  # noqa: E402
from audit.notes import CHIPS_FROM_NOTES_HOW as _CHIPS_FROM_NOTES_HOW  # noqa: E402
from audit.notes import per_distinct as _per_distinct  # noqa: E402
from audit.notes import batch_size_divisor as _batch_size_divisor  # noqa: E402
from audit.notes import passes_counted_twice as _passes_counted_twice  # noqa: E402
from audit.notes import examples_counted as _examples_counted  # noqa: E402


class ChipsFromNotes(Rule):
    """The accelerators a claim that states none counts in its compute notes' hardware estimate.

    **What it checks.** Nothing about the figures: it says where the chip count came from when the claim states
    none and its ``compute_notes`` (Epoch AI's "Training compute notes") estimate the compute from the hardware,
    writing the count as a factor: "31330000000000 FLOP / sec / GPU * 1 GPU * 12 hours * 3600 sec / hour * 0.3
    [assumed utilization]". The product must be the stated compute, or one of the two estimates whose geometric
    mean the notes state as it (within 5 %), and hold exactly one whole figure followed by a word for
    accelerators ("GPUs", "TPUs", "chips"; not GPU-hours, cores or GPUs per server), every such product agreeing
    (:func:`audit.notes.chip_count`). The count then enters chip-hours = chips × hours and C = chip_hours · 3600 ·
    peak · MFU (C002, C003) as a derived figure.

    **Why it matters.** Epoch's "Hardware quantity" is sometimes empty where the notes state the count: without
    it, a time and an accelerator that make the stated compute impossible go unchecked. On Epoch's file the
    count read from the notes equals the stated "Hardware quantity" on each of the 20 rows that state both.

    **Example.** QRNN (Epoch's row): no hardware quantity; "* 1 GPU * 12 hours" in the notes, 12 hours stated,
    an NVIDIA V100 at FP32 (15.7 TFLOP/s): C = 6.89e17 FLOP needs 6.89e17 / (1 × 12 × 3600 × 15.7e12) = 102 %
    of the peak, which U001 reports.

    **References.** Epoch AI, *Estimating training compute of deep learning models* (2022), the hardware method:
    compute = chips × peak FLOP/s × time × utilization.
    """

    code = "V008"
    note = True
    name = "chips-from-notes"
    quantity = "chips"
    formula = "chips from compute_notes: C ≈ peak × chips × hours × 3600 × u"
    severity = "info"
    stage = "check"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        if "compute_notes" not in state.claims.info:
            return None
        read = state.how["chips"].to_numpy(dtype=object) == _CHIPS_FROM_NOTES_HOW
        rows = np.flatnonzero(read)
        if len(rows) == 0:
            return None
        counts = state.chip_counts()[rows]
        detail = np.array([f"{c.factor} in {c.product}" if c is not None else "" for c in counts], dtype=object)
        return findings_part(rows, cls.code, "info", "chips", np.nan, state.col("chips")[rows], detail=detail)

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        return (f"no accelerator count stated: {fmt.count(float(f['expected']))} read from the hardware estimate in "
                f"its compute notes ({f['detail']}), and used as a derived figure")


class ActiveParamsFromNotes(Rule):
    """The active parameters a mixture-of-experts claim that states none gives in its parameter notes.

    **What it checks.** Nothing about the figures: it says where the active count came from when the claim states no
    ``active_params`` and its ``params_notes`` (Epoch AI's "Parameters notes") give one figure beside "active",
    "activated" or "activation" ("671B total parameters with 37B activated for each token", "21B active params",
    "active parameters - 47B"), below the total (:func:`audit.notes.active_params_of`). A range ("active
    parameters around 10B-30B") or two different figures give none. The count is then N in C = 6·N·D (C001), as a
    stated one would be.

    **Why it matters.** Without it, a mixture-of-experts claim is held only to C ≤ 6·N_total·D, which a compute
    from the total parameters (a slip by the active share, 18x for DeepSeek-V3) passes; with it, C001 checks the
    compute. On Epoch AI's file 20 rows give their active count only in the notes.

    **Example.** DeepSeek-V3 (Epoch's row): 671B parameters, notes "37B activated for each token", 14.8T tokens:
    6 × 37e9 × 14.8e12 = 3.29e24 FLOP, the row's stated compute.

    **References.** DeepSeek-AI 2024, *DeepSeek-V3 Technical Report*, Sec. 1 (671B total, 37B activated per token);
    Epoch AI, *Notable AI Models* documentation (Parameters notes).
    """

    code = "V012"
    note = True
    name = "active-params-from-notes"
    quantity = "active_params"
    formula = "active_params from params_notes"
    severity = "info"
    stage = "check"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        rows = np.flatnonzero(state.how["active_params"].to_numpy(dtype=object) == _ACTIVE_FROM_NOTES_HOW)
        if len(rows) == 0:
            return None
        return findings_part(rows, cls.code, "info", "active_params", np.nan, state.col("active_params")[rows])

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        return (f"no active parameter count stated: {fmt.value('params', float(f['expected']))} read from its "
                f"parameter notes, and used as N in C = 6 · N · D")


class _NotesSlipRule(Rule):
    """Shared by the rules that find a slip in the product compute notes write for the stated compute."""

    quantity = "compute_flops"
    severity = "warning"
    stage = "check"
    show_formula = True

    #: The reading of :mod:`audit.notes` that finds the slip: ``read(notes, compute, *stated figures)`` (a
    #: :class:`audit.notes.NotesSlip` or None), and the stated figures it takes after the compute.
    read: ClassVar[Callable[..., Any]]
    figures: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        if "compute_notes" not in state.claims.info:
            return None
        notes = pd.Series(state.info("compute_notes"), dtype=object)
        compute = _stated_figure(state, "compute_flops")
        found = _per_distinct(cls.read, notes, compute, *(_stated_figure(state, name) for name in cls.figures),
                              empty=None)
        rows = np.flatnonzero(pd.notna(found))
        if len(rows) == 0:
            return None
        found = found[rows]
        corrected = compute[rows] * np.array([s.correction for s in found], dtype=float)
        return findings_part(rows, cls.code, "warning", "compute_flops", compute[rows], corrected,
                              detail=np.array([f"{s.factor} in {s.product}" for s in found], dtype=object))

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return "a warning whenever the notes' product for the stated compute holds the slip"

    #: How the formula writes the compute without the slip, from the factor as written ("/16" as "16").
    corrected: ClassVar[str] = ""

    @staticmethod
    def _parts(f: FindingRow) -> tuple[float, float, str, str]:
        """The stated compute, the compute without the slip, the factor and the product as the notes write them."""
        factor, _, product = str(f["detail"]).partition(" in ")
        return float(f["claimed"]), float(f["expected"]), factor.lstrip("/"), product

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        c, fixed, factor, product = cls._parts(f)
        return (f"C = {product} = {fmt.operand('compute_flops', c)}; {cls.corrected.format(factor=factor)} = "
                f"{fmt.operand('compute_flops', fixed)}")


class PassesCountedTwice(_NotesSlipRule):
    """A training compute whose notes count the passes over the data twice.

    **What it checks.** Whether the claim's ``compute_notes`` (Epoch AI's "Training compute notes") state its
    stated compute as a product (within 5 %) that holds both the number of passes k and a factor that is k times
    the stated dataset size (within 2 %), the presentations, which already count the k passes. k is a whole
    number from 2 to 10,000; when the claim states its epochs, k must be them; a 2, 3, 4 or 6 (FLOPs per
    multiply-add, forward and backward) is not read as passes unless it is the stated epochs
    (:func:`audit.notes.passes_counted_twice`). The finding gives the compute without the extra k.

    **Why it matters.** "Trained for 23 passes through the training set (167,693 pattern presentations)": a
    product with both the 23 and the 167,693 counts the data 23 × 23 times, a compute k times too high that
    no relation among the columns can see when the claim states no epochs.

    **Example.** Zip CNN (LeCun et al. 1989), Epoch's row: 7,291 training examples, "2*64660*3*23*167693 =
    1496338054440"; 167,693 = 23 × 7,291, so the compute is 2 × 64,660 × 3 × 167,693 = 6.51e10 FLOP, 23x below
    the stated 1.5e12.

    **References.** LeCun et al. 1989, *Backpropagation Applied to Handwritten Zip Code Recognition* (23 passes,
    167,693 presentations); Epoch AI, *Estimating training compute of deep learning models* (2022): compute =
    training FLOPs per example × examples × epochs.
    """

    code = "V009"
    name = "passes-counted-twice"
    formula = "C = … × k × (k · dataset) in the notes; C / k"

    read = staticmethod(_passes_counted_twice)
    figures = ("dataset_size", "epochs")

    corrected = "C / {factor}"

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        c, fixed, factor, product = cls._parts(f)
        return (f"the compute {fmt.value('compute_flops', c)} counts the passes over the data twice in its notes "
                f"({product}): {factor} passes and the presentations, which already count them; counted once, "
                f"it is {fmt.value('compute_flops', fixed)}, {fmt.ratio(c / fixed)} less")


class BatchSizeDivisor(_NotesSlipRule):
    """A training compute whose notes divide a count per example by the batch size.

    **What it checks.** Whether the claim's ``compute_notes`` (Epoch AI's "Training compute notes") state its
    stated compute as a product (within 5 %) that holds a factor counted per example ("(flops per inference)",
    "FLOP per image"), a divisor the notes call the batch size ("/16 (batch size)"), and no factor counted per
    batch or step (:func:`audit.notes.batch_size_divisor`). The finding gives the compute with the batch size
    multiplied back.

    **Why it matters.** FLOPs per example times the examples is the work of an epoch; dividing by the batch
    size counts one example per batch, a compute too low by the batch size. Dividing is right only for a count
    per batch (FLOPs per batch times the number of batches), which the rule does not flag.

    **Example.** Big-Little Net, Epoch's row: "9.32*10^9 (flops per inference) * 1.28×10^6 (dataset size) / 16
    (batch size) * 110 epochs * 3 = 2.46048e+17"; without the division, 9.32e9 × 1.28e6 × 110 × 3 = 3.94e18
    FLOP, 16x more.

    **References.** Chen et al. 2019, *Big-Little Net* (arXiv:1807.03848): 9.32 GFLOPs per image; Epoch AI,
    *Estimating training compute of deep learning models* (2022): compute = 3 × forward FLOPs per example ×
    examples × epochs.
    """

    code = "V010"
    name = "batch-size-divisor"
    formula = "C = (FLOP per example) × … / batch in the notes; C × batch"

    read = staticmethod(_batch_size_divisor)

    corrected = "C × {factor}"

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        c, fixed, factor, product = cls._parts(f)
        return (f"the compute {fmt.value('compute_flops', c)} divides a count per example by the batch size in its "
                f"notes ({product}): FLOPs per example times examples need no division; without the division by "
                f"{factor} it is {fmt.value('compute_flops', fixed)}, {fmt.ratio(fixed / c)} more")


#: How far the examples a compute estimate counts may be from the stated epochs × dataset size before they
#: disagree: 1.5x (the ok tolerance of C = 6·N·D, config.toml), far beyond a rounded epoch count.
_EXAMPLES_FACTOR = 1.5


class ExamplesContradictEpochs(Rule):
    """Epochs that contradict the examples the compute's own estimate counts.

    **What it checks.** Whether the claim's ``compute_notes`` (Epoch AI's "Training compute notes") estimate the
    stated compute (within 5 %, or one of the two estimates whose geometric mean is the compute) as 3 × F × E: F
    the FLOP of a forward pass per example, which the notes call so ("965.3e9 FLOPs per forward pass"), 3 for the
    forward and backward pass, and E the examples, a product of whole counts (steps × batch size, images ×
    epochs) (:func:`audit.notes.examples_counted`). Where the claim states its dataset size and epochs, E is
    compared with epochs × dataset size: beyond 1.5x either way, a warning; within, ok.

    **Why it matters.** An image model's dataset size counts images, not tokens, so C = 6·N·D (C001) cannot tie
    its epochs to its compute; the notes' own estimate can. When the examples it counts are not the epochs the
    row states, one of the two is wrong (a batch size from another table, a normalised batch, epochs of another
    run), and the compute or the epochs are off by that factor.

    **Example.** ViT-G/14, Epoch's row: 3B images, 54.6 epochs ("5M steps (Table 11) * 32768 (batch size) / 3B =
    54.6"); its compute notes estimate "4096 * 5e6 * 965.3e9 * 3 = 5.93e22", one of the two estimates of the
    stated 5.85e22 (their geometric mean): 4,096 × 5e6 = 2.048e10 examples, 6.83 epochs of 3B, while 54.6 × 3e9 =
    1.638e11 is 8x more. Agrees: YOLOX-X, "281.9e9 * 2.5M * 300 * 3" with 2.5M images and 300 epochs.

    **References.** Epoch AI, *Estimating training compute of deep learning models* (2022): training compute = 3
    × forward-pass FLOPs per example × examples (a backward pass is about twice the forward); Zhai et al. 2022,
    *Scaling Vision Transformers* (ViT-G/14: Table 2, 965.3 GFLOPs at 224²; Table 11, 5M steps).
    """

    code = "V013"
    name = "examples-contradict-epochs"
    quantity = "epochs"
    formula = "C = 3 · F · E in the notes; E = epochs · dataset size"
    severity = "warning"
    stage = "check"
    show_formula = True

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return f"ok within {fmt.sig(_EXAMPLES_FACTOR)}x either way, else a warning"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        if "compute_notes" not in state.claims.info:
            return None
        dataset, epochs = _stated_figure(state, "dataset_size"), _stated_figure(state, "epochs")
        figures = np.isfinite(dataset) & (dataset > 0) & np.isfinite(epochs) & (epochs > 0)
        if not figures.any():
            return None
        notes = pd.Series(np.where(figures, state.info("compute_notes"), None), dtype=object)
        found = _per_distinct(_examples_counted, notes, _stated_figure(state, "compute_flops"), empty=None)
        rows = np.flatnonzero(pd.notna(found))
        if len(rows) == 0:
            return None
        implied = np.array([e.examples for e in found[rows]], dtype=float) / dataset[rows]
        off = np.abs(np.log(epochs[rows] / implied))
        sev = np.where(off > math.log(_EXAMPLES_FACTOR) + _SLACK, "warning", "ok").astype(object)
        return findings_part(rows, cls.code, sev, "epochs", epochs[rows], implied,
                              detail=np.array([e.product for e in found[rows]], dtype=object))

    @classmethod
    def _reading(cls, result: "AuditResult", f: FindingRow) -> Any:
        """The notes' reading behind a finding, read again from the claim (None if it cannot be)."""
        row = int(f["row"])
        info, values = result.claims.info, result.claims.values
        if "compute_notes" not in info or "compute_flops" not in values:
            return None
        return _examples_counted(info["compute_notes"].iat[row], float(values["compute_flops"].iat[row]))

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        epochs, implied = float(f["claimed"]), float(f["expected"])
        reading = cls._reading(result, f)
        examples = f"{fmt.count(reading.examples)} examples" if reading is not None else "its examples"
        if f["severity"] == "ok":
            return (f"the epochs {fmt.sig(epochs)} agree with the examples the compute's estimate in its notes counts "
                    f"({f['detail']}: {examples}, {fmt.sig(implied)} epochs of the dataset)")
        than = f"{fmt.ratio(epochs / implied)} fewer" if epochs > implied else f"{fmt.ratio(implied / epochs)} more"
        return (f"the epochs {fmt.sig(epochs)} (claimed) differ from the {fmt.sig(implied)} that the compute's "
                f"estimate in its notes counts ({f['detail']}: {examples}, {than} than epochs × dataset size): the "
                f"epochs or the compute are off by that factor")

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        epochs, implied = float(f["claimed"]), float(f["expected"])
        reading = cls._reading(result, f)
        if reading is None:
            return f"epochs = {fmt.sig(epochs)}; E / dataset size = {fmt.sig(implied)}"
        dataset = reading.examples / implied
        return (f"C = 3 · F · E = {f['detail']}: E = {fmt.count(reading.examples)}; epochs · dataset size = "
                f"{fmt.sig(epochs)} × {fmt.count(dataset)} = {fmt.count(epochs * dataset)}; ratio "
                f"{fmt.ratio(epochs * dataset / reading.examples)}")


from audit.notes import chip_time as _chip_time  # noqa: E402


class TimeIsChipHours(Rule):
    """A training time that its notes count in accelerator-hours, on a run of several accelerators.

    **What it checks.** Whether the claim's ``time_notes`` (Epoch AI's "Training time notes") give the stated
    training time as a figure counted in accelerator-time: "2248 GPU hours", "~84 GPU-days", "19 GPU years", within
    2 % once days are 24 hours and years 365 days (:func:`audit.notes.chip_time`). On a claim that states more
    than one accelerator such a time is the run's accelerator-hours, not its wall-clock time: a warning, with the
    wall-clock time the figure gives, the time divided by the accelerators.

    **Why it matters.** The training time is wall-clock hours (Epoch AI's documentation): chip-hours = chips ×
    hours. A time copied from a count of GPU-hours counts the accelerators twice, so the chip-hours, a compute
    estimated from the hardware and time (Epoch's practice when a source states none), the energy and the cost
    are all too high by the chip count, and they agree with one another, so that no relation among the figures
    can see it: the compute then implies exactly the utilization the estimate assumed.

    **Example.** StyleGAN3-R, Epoch's row: 8 V100, 2,248 hours, and the notes quote the paper: "the training times
    were 1106, 1576 (+42%) and 2248 (+103%) GPU hours". 2,248 GPU-hours on 8 GPUs are 281 hours of training (11.7
    days; a write-up of the release puts the 1024² model at "just over 8 days on 8xV100"), not 2,248: the row's
    compute, 125 TFLOP/s × 8 × 2,248 h × 3600 × 0.3 = 2.43e21 FLOP, is 8x too high. Holds: StarCoder, "625.5 hours
    = 320256 /512" with "320,256 GPU hours" in its notes: the time is the GPU-hours divided by the 512 GPUs.

    **References.** Karras et al. 2021, *Alias-Free Generative Adversarial Networks* (StyleGAN3; its training times
    at 1024², 1,106 to 2,248 GPU hours); Epoch AI, *Notable AI Models* documentation ("Training time (hours)":
    wall-clock time).
    """

    code = "V017"
    name = "time-is-chip-hours"
    quantity = "wall_clock_days"
    formula = "hours = the notes' accelerator-hours; wall-clock = hours / chips"
    severity = "warning"
    stage = "check"
    show_formula = True

    @classmethod
    def tolerance_text(cls, config: Config) -> str | None:
        return "a warning whenever the stated time is a figure the notes count in accelerator-time (within 2 %)"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        if "time_notes" not in state.claims.info:
            return None
        days, chips = _stated_figure(state, "wall_clock_days"), state.col("chips")
        several = np.isfinite(chips) & (chips > 1)
        if not several.any():
            return None
        notes = pd.Series(np.where(several, state.info("time_notes"), None), dtype=object)
        found = _per_distinct(_chip_time, notes, days * 24.0, empty=None)
        rows = np.flatnonzero(pd.notna(found))
        if len(rows) == 0:
            return None
        return findings_part(rows, cls.code, "warning", "wall_clock_days", days[rows], days[rows] / chips[rows],
                              detail=np.array([t.text for t in found[rows]], dtype=object))

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        days, wall = float(f["claimed"]), float(f["expected"])
        hours, chips = days * 24.0, days / wall
        return (f"the training time {fmt.value('chip_hours', hours)} (claimed) is the '{f['detail']}' of its time "
                f"notes: accelerator-hours, not wall-clock time. On {fmt.count(chips)} accelerators the run took "
                f"{fmt.value('chip_hours', wall * 24.0)} and used {fmt.value('chip_hours', hours)} of accelerator "
                f"time, not {fmt.value('chip_hours', hours * chips)}: the chip-hours, and a compute, an energy or a "
                f"cost worked out from this time, are {fmt.ratio(chips)} too high")

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        days, wall = float(f["claimed"]), float(f["expected"])
        chips = days / wall
        return (f"hours = {f['detail']} = {fmt.value('chip_hours', days * 24.0)}; wall-clock = hours / chips = "
                f"{fmt.value('chip_hours', days * 24.0)} / {fmt.count(chips)} = {fmt.value('chip_hours', wall * 24.0)}")


#: How many of the relations nearest to a check a V014 note names.
_NEAREST_SHOWN = 3


class TotalRow(Rule):
    """A table's total row adds up: each figure it sums equals the sum of the rows above it.

    **What it checks.** A claim named "Total" ("Totals", "Sum", "Overall", "All", "Grand total", any case, an
    optional colon or a remark in brackets: "Total (all models)"; "Total compute cluster A" names a run) in a
    file that holds other claims is the table's total row, not a training run. Each of its figures that add up
    across runs (tokens, compute, hardware compute, chip-hours, energy, emissions, cost) that other rows of the
    same file also state is compared with the sum of those rows' stated figures (a derived figure is not summed):
    it adds up when the difference is within the figures' precision (half a unit of each one's last digit, the
    total's and the rows', added: 539.00 against 31.22 + 62.44 + 153.90 + 291.42 = 538.98 adds up). Where some
    runs of the file do not state the figure, the rows that do give a floor: a total at or above it is consistent.
    When the difference equals one row's figure, the finding says so: that row counted twice in the total (the
    total is larger by it) or left out of it (smaller by it); a total larger by a figure no row has suggests a row
    missing from the table. A total row gets this check and nothing else: no relation (C001-C021), no
    plausibility band (U-rules), no energy note (E008 "PUE not stated"): its status is ``pass`` when it adds up and
    ``fail`` when it does not. Its other figures (chips: the cluster's size as often as a sum; durations, which
    overlap; per-chip power, MFU and other rates) are shown as stated and not checked; a total none of whose
    figures another row states is ``unchecked`` (V014 says so). Its cells are still read (V001, V003).

    A claim with phases of its own is a multi-phase run (C010 checks its sums), never a total row; a total row
    counts a run with phases by the total the run states, not by its phases' sums (its stated figures only). With
    one other row, the total is checked against that row (it must equal it). Several total rows in a file are each
    checked against the file's other rows. A file read in batches (more rows than ``--batch-size``), or a
    partition of a distributed frame (``audit_partition``), has no total row: a batch holds only some of the rows a
    total sums, so a row named "Total" there is audited as a run, as it was before this check.

    **Why it matters.** Papers and model cards print a summary row under their runs, and read as a run it was
    ``unchecked`` (``--fail-on fail,unchecked`` failed an honest sheet) with notes that assume one training run.
    A total that does not add up is a slip worth catching: a row left out when the table was transcribed, a
    figure mistyped, a row counted twice.

    **Example.** Llama 2's model card, "CO2 emissions during pretraining": 7B 184,320 GPU hours and 31.22 tCO2eq,
    13B 368,640 and 62.44, 34B 1,038,336 and 153.90, 70B 1,720,320 and 291.42; Total 3,311,616 and 539.00: adds up
    (184,320 + 368,640 + 1,038,336 + 1,720,320 = 3,311,616). A transcription that omits the 34B row (unreleased,
    not in the card's model list) sums to 2,273,280 GPU hours and 385.08 t: the total is 1,038,336 GPU hours and
    153.92 t more, the missing 34B row.

    **References.** Touvron et al. 2023, *Llama 2*, Table 2 and the model card (meta-llama/llama MODEL_CARD.md);
    Touvron et al. 2023, *LLaMA*, Table 15.
    """

    code = "V018"
    name = "total-row"
    quantity = "chip_hours"
    formula = "total = Σ other rows"
    severity = "error"
    stage = "check"
    show_formula = True
    of_the_row = True

    #: Terms a formula writes out before it says how many more there are.
    shown_terms: ClassVar[int] = 8

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        totals = state.totals
        if totals is None or not totals.any():
            return None
        codes = pd.factorize(pd.Series(state.info("file"), dtype=object).fillna(""))[0]
        groups = int(codes.max()) + 1
        runs = ~totals & np.logical_or.reduce([state.stated(name) for name in INPUT_QUANTITIES])
        run_count = np.bincount(codes[runs], minlength=groups)
        labels = _row_labels(state.info("name"), state.info("id"))
        parts = []
        for name in ADDITIVE:
            stated = state.stated(name)
            value = state.col(name)
            # The stated figure's half-width, from its digits (audit.significance: −ln(1 − δ) in the frame).
            width = np.abs(value) * -np.expm1(-state.precision[name].to_numpy(dtype=float))
            part = runs & stated
            count = np.bincount(codes[part], minlength=groups)
            rows = np.flatnonzero(totals & stated & (count[codes] > 0))
            if not len(rows):
                continue
            g = codes[rows]
            total_sum = np.bincount(codes[part], weights=value[part], minlength=groups)[g]
            width_sum = np.bincount(codes[part], weights=width[part], minlength=groups)[g]
            claimed = value[rows]
            tol = width[rows] + width_sum + _SLACK * np.maximum(np.abs(claimed), np.abs(total_sum))
            floor = count[g] < run_count[g]
            adds_up = np.where(floor, claimed >= total_sum - tol, np.abs(claimed - total_sum) <= tol)
            detail = np.where(floor, "floor", None).astype(object)
            # The cause, where the difference is one row's figure: looked for on the totals that do not add up only.
            for k in np.flatnonzero(~adds_up & ~floor).tolist():
                members = np.flatnonzero(part & (codes == g[k]))
                diff = claimed[k] - total_sum[k]
                match = members[np.abs(np.abs(diff) - value[members]) <= tol[k] + width[members]]
                if len(match):
                    detail[k] = ("twice: " if diff > 0 else "left out: ") + " or ".join(labels[match].tolist())
            parts.append(findings_part(rows, cls.code, np.where(adds_up, "ok", "error"), name, claimed, total_sum,
                                       detail=detail))
        return concat_parts(parts)

    @classmethod
    def summed_rows(cls, result: "AuditResult", row: int, name: str) -> tuple[list[int], int]:
        """The rows a total row's ``name`` is summed over (the other runs of its file that state it), and the
        number of runs in the file."""
        cache = result._records.get("V018 files")
        if cache is None:
            totals = total_rows_of(result)
            files = pd.factorize(pd.Series(result.claims.info["file"], dtype=object).fillna(""))[0]
            stated = np.logical_or.reduce([result.column("source", q) == "claimed" for q in INPUT_QUANTITIES])
            cache = result._records["V018 files"] = (files, ~totals & stated)
        files, runs = cache
        same = runs & (files == files[row])
        members = np.flatnonzero(same & (result.column("source", name) == "claimed"))
        return members.tolist(), int(same.sum())

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row, name = int(f["row"]), str(f["quantity"])
        claimed, expected = float(f["claimed"]), float(f["expected"])
        members, runs = cls.summed_rows(result, row, name)
        labels = _row_labels(result.column("info", "name"), result.column("info", "id"))
        listed = ", ".join(labels[members[:cls.shown_terms]].tolist())
        if len(members) > cls.shown_terms:
            listed += f" and {len(members) - cls.shown_terms:,} more"
        other = "other row" if len(members) == 1 else f"{len(members):,} other rows"
        head = f"{label(name)} {fmt.value(name, claimed)} (claimed, a total row)"
        detail = str(f["detail"] or "")
        if detail == "floor":
            of = f"{len(members):,} of the {runs:,} other runs ({listed}) state; the others state none"
            if f["severity"] == "ok":
                return f"{head} is at least the {fmt.value(name, expected)} that {of}: consistent with their sum"
            return (f"{head} is less than the {fmt.value(name, expected)} that {of}: a total cannot be less than a "
                    f"part of it")
        if f["severity"] == "ok":
            return f"{head} adds up: the {other} ({listed}) sum to {fmt.value(name, expected)}"
        diff = claimed - expected
        text = (f"{head} does not add up: the {other} ({listed}) sum to {fmt.value(name, expected)}; the total is "
                f"{fmt.value(name, abs(diff))} {'more' if diff > 0 else 'less'}")
        if detail.startswith("twice: "):
            return f"{text}, the figure of {detail[7:]}: a row counted twice in the total"
        if detail.startswith("left out: "):
            return f"{text}, the figure of {detail[10:]}: a row left out of the total"
        if diff > 0:
            return f"{text}: a row missing from the table, or a mistyped figure"
        return f"{text}: a mistyped figure, or a row that is not part of the total"

    @classmethod
    def formula_text(cls, result: "AuditResult", f: FindingRow) -> str:
        row, name = int(f["row"]), str(f["quantity"])
        members, _ = cls.summed_rows(result, row, name)
        values = result.column("q", name)
        terms = [fmt.operand(name, float(values[i])) for i in members[:cls.shown_terms]]
        if len(members) > cls.shown_terms:
            terms.append(f"… ({len(members) - cls.shown_terms:,} more)")
        return f"{name} = Σ other rows = {' + '.join(terms)} = {fmt.operand(name, float(f['expected']))}"


def total_rows_of(result: "AuditResult") -> np.ndarray:
    """Which claims of ``result`` are total rows (:func:`audit.totals.total_rows`), found once."""
    totals = result._records.get("total rows")
    if totals is None:
        totals = result._records["total rows"] = total_rows(result.claims)
    return totals


def _row_labels(names: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """How a row is named in a total's words: its name, else its id."""
    names = np.asarray(names, dtype=object)
    return np.where(pd.isna(names), np.asarray(ids, dtype=object), names).astype(object)


class ActiveParamsNeeded(Rule):
    """A mixture-of-experts claim without its active parameters: the compute and the utilization are only bounded.

    **What it checks.** Nothing by itself: on a claim that is a mixture of experts (its architecture, its parameter
    notes or an expert count say so) and states its total parameters and tokens but neither its active parameters
    nor its compute, C = 6 · N · D cannot be worked out (N is the active count), so neither can the MFU or anything
    that rests on the compute. This note says so, with the bounds the total gives: every parameter active per
    token, C ≤ 6 · N_total · D, and the MFU at most C / (3600 · chip_hours · peak) when the hardware and time are
    known.

    **Why it matters.** The other checks of such a claim pass or stay silent, and without a word a reader takes
    the compute and MFU as checked. A bound near or above 100 % MFU, or far below the usual band, is a question
    for the authors; the active count settles it.

    **Example.** DBRX (Databricks 2024): "132B total parameters", 12T tokens, 3,072 H100 for about three months,
    its architecture a mixture of experts: C ≤ 6 × 132B × 12T = 9.5e24 FLOP, MFU ≤ 9.5e24 / (3600 × 3,072 × 2,160
    h × 989.4 TFLOP/s) = 40 %. With its 36B active parameters: 2.59e24 FLOP, 11 %.

    **References.** Fedus et al. 2022 (Switch Transformer): FLOPs per token follow the active parameters; Epoch AI,
    "Estimating training compute" (MoE: count the parameters active per token).
    """

    code = "V015"
    note = True
    name = "active-params-needed"
    quantity = "active_params"
    formula = "C ≤ 6 · N_total · D; MFU ≤ C / (3600 · chip_hours · peak)"
    severity = "info"
    stage = "check"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        params, tokens, compute = state.col("params"), state.col("tokens"), state.col("compute_flops")
        rows = np.flatnonzero(state.total_only() & np.isfinite(params) & np.isfinite(tokens) & np.isnan(compute)
                              & ~state.finetune())
        if not len(rows):
            return None
        bound = 6.0 * params[rows] * tokens[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            mfu = bound / (3600.0 * state.col("chip_hours")[rows] * state.col("peak_flops_per_chip")[rows])
        return findings_part(rows, cls.code, "info", "active_params", bound, mfu, detail="total-only")

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        n, d = float(result.cell("q", row, "params")), float(result.cell("q", row, "tokens"))
        bound, mfu = float(f["claimed"]), float(f["expected"])
        text = (f"a mixture of experts without its active parameters: C = 6 · N · D needs the active count, so the "
                f"compute and the MFU are not worked out; with all {fmt.value('params', n)} active per token, "
                f"C ≤ 6 × {fmt.value('params', n)} × {fmt.value('tokens', d)} = {fmt.value('compute_flops', bound)}")
        if math.isfinite(mfu) and mfu > 0:
            text += f" and MFU ≤ {fmt.value('mfu', mfu)}"
        return text + "; state active_params to check them"


class ArchitectureApart(Rule):
    """Architecture fields that imply another parameter count than the claim states: their FLOPs are not used.

    **What it checks.** The parameters a token's matrix multiplies touch, by the architecture's fields
    (Megatron-LM's count of the projections, MLP and logits, over 6), against the claim's N (its active parameters,
    else its total). For a model the fields describe they agree to a fraction of a per cent (GPT-3 175B: 174.6B;
    PaLM 540B: 540.4B; Llama 3.1 405B: 403.8B). More than 15 % apart, with the embedding allowed for either way (a
    stated count may leave it out, as a model's name does: "Gemma 7B" has 8.54B, 7.75B without its embedding; or
    hold an untied input embedding besides the logits), the fields do not describe the model whole: an attention
    variant (multi-head latent attention), shared experts or dense layers that the fields cannot express, or a field
    in another convention (an FFN width counting both halves of a gated MLP). F per token is then not their count
    but PaLM's 6N + attention, with the claim's own N, and this note says so.

    **Why it matters.** Counted from fields that do not fit the model, F per token (and the compute and MFU derived
    from it) is off by the same factor, and a green pass would carry it: DeepSeek-V3's fields (61 layers, width
    7,168, 128 heads of 128, 8 of 256 experts of width 2,048, 129K vocabulary) imply 51.1B parameters per token
    against its 37B active, 1.38x, and gave a compute of 5.24e24 FLOP where 6·N·D is 3.29e24.

    **Example.** DeepSeek-V3 as its report gives it: 51.1B implied, 37B stated; F = 6 × 37e9 + 12 × 61 × 128 ×
    128 × 4,096 = 2.71e11 FLOP per token.

    **References.** DeepSeek-AI 2024, *DeepSeek-V3 Technical Report* (arXiv:2412.19437), Sec. 2.1 and 4.2;
    Narayanan et al. 2021 (Megatron-LM), Sec. 5.1; Chowdhery et al. 2022 (PaLM), App. B.
    """

    code = "V016"
    note = True
    name = "architecture-apart"
    quantity = "flops_per_token"
    formula = "N_arch = (projections + MLP + logits) / 6 vs N"
    severity = "info"
    stage = "check"

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        arch = state.architecture
        if "architecture_apart" not in arch:
            return None
        # A run's phases inherit its architecture: said once, of the run (DeepSeek-V3's three stages repeated it).
        rows = np.flatnonzero(arch["architecture_apart"].to_numpy(dtype=bool) & ~state.phases())
        if not len(rows):
            return None
        implied = arch["architecture_params"].to_numpy(dtype=float)[rows]
        return findings_part(rows, cls.code, "info", "flops_per_token", implied, state.col("n_eff")[rows],
                             detail="apart")

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        implied, n = float(f["claimed"]), float(f["expected"])
        which = "active parameters" if result.cell("source", row, "active_params") == "claimed" else "parameters"
        how = str(result.cell("how", row, "flops_per_token"))
        used = "6N + attention (PaLM's)" if how == "palm" else "6N"
        return (f"the architecture's fields imply {fmt.value('params', implied)} parameters per token, the claim "
                f"states {fmt.value('params', n)} {which} ({fmt.ratio(implied / n)}): they do not describe the "
                f"model whole (an attention variant, shared experts or dense layers the fields cannot express, or a "
                f"field in another convention, such as an FFN width counting both halves of a gated MLP), so F per "
                f"token is {used} with the stated count, not the fields' own")


class NothingChecked(Rule):
    """Nothing could be checked on the claim: the figures it states, and what each nearest check still needs.

    **What it checks.** Nothing about the figures: it is said on every claim on which no rule checked anything
    (status ``unchecked``), and not on an invalid one. It names the figures the claim states and, for the relations
    nearest to a check that apply to the claim and tie one of its stated figures, the figures they still need (the
    fewest first): a relation checks when every figure it ties is known, one of them twice (stated, and derived
    from the others).

    **Why it matters.** An unchecked claim is not a pass, and without a word it reads as one. Saying which figure
    would let a check run turns the gap into a question for the authors, or a column to add to a spreadsheet.

    **Example.** gpt-oss-120b's model card: 116.8B parameters (5.1B active) and 2.1M H100-hours, the tokens only
    "trillions": nothing ties them. C001 (C = 6 · N · D) still needs the compute and the tokens; C002
    (chip-hours = chips · 24 · days) the accelerators and the wall-clock; C003 the compute and the MFU.

    **References.** Issue 9 of this project ("a claim on which nothing could be checked is not a pass").
    """

    code = "V014"
    note = True
    name = "nothing-checked"
    quantity = "claim"
    formula = "no rule checked a figure of the claim"
    severity = "info"
    stage = "summary"
    of_the_row = True

    @classmethod
    def evaluate(cls, state: WorkState) -> FindingsPart | None:
        n = len(state.q)
        checked, invalid = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        for part in state.findings_so_far:
            rule = RULES[part.rule]
            if rule.invalidates:
                invalid[part.row] = True
            # As findings.status_of counts them: a note checks nothing unless it is worse than ok.
            checked[part.row if not rule.note else part.row[part.severity >= SEVERITY_RANK["warning"]]] = True
        # A phase is checked through its run (its figures feed the run's sums, C010), which this note speaks for:
        # said of every phase of a run, it was noise (Llama 3.2-Vision's four stages: four notes under a pass).
        rows = np.flatnonzero(~checked & ~invalid & ~state.phases())
        if not len(rows):
            return None
        # Per relation, over the unchecked claims only: how many figures it still needs where it applies and ties a
        # stated figure (N: the parameters or the active ones); only figures a claim can state are asked for (not F
        # per token). The nearest few per claim, fewest missing first, then in the engine's order of relations.
        stated = {name: state.stated(name)[rows] for name in INPUT_QUANTITIES}
        stated["n_eff"] = stated["params"] | stated["active_params"]
        known = ~np.isnan(state.q.to_numpy(dtype=float)[rows])
        at = {str(c): j for j, c in enumerate(state.q.columns)}
        derived = {name: state.source[name].to_numpy()[rows] == DERIVED for name in INPUT_QUANTITIES}
        relations = relation_rules()
        score = np.full((len(rows), len(relations)), np.inf)
        masks = np.zeros((len(rows), len(relations)), dtype=np.int64)  # which of its figures are missing, as bits
        for r, rule in enumerate(relations):
            quantities = rule.relation.quantities
            missing = ~known[:, [at[q] for q in quantities]]
            # A relation with every figure known derived some of them: stating one of those checks it (one figure).
            complete = ~missing.any(axis=1)
            derived_here = np.stack([derived.get(q, np.zeros(len(rows), dtype=bool)) for q in quantities], axis=1)
            missing = np.where(complete[:, None], derived_here, missing)
            count = np.where(complete, 1, missing.sum(axis=1))
            ok = missing.any(axis=1) & np.logical_or.reduce([stated.get(q, np.zeros(len(rows), dtype=bool))
                                                             for q in quantities])
            ok &= ~(missing[:, [q not in INPUT_QUANTITIES for q in quantities]].any(axis=1))
            applies = rule.applies(state)
            if applies is not None:
                ok &= np.asarray(applies, dtype=bool)[rows]
            score[:, r] = np.where(ok, count * 10_000 + rule.order, np.inf)
            # Bit 62: the figures are derived now, and one of them stated would check.
            bits = missing @ (1 << np.arange(len(quantities), dtype=np.int64))
            masks[:, r] = bits + (complete.astype(np.int64) << 62)
        top = np.argsort(score, axis=1, kind="stable")[:, :_NEAREST_SHOWN]
        shown = np.isfinite(np.take_along_axis(score, top, axis=1))
        # Words per distinct choice (claims that need the same figures share one), not per claim.
        keys = np.concatenate([np.where(shown, top, -1), np.where(shown, np.take_along_axis(masks, top, axis=1), 0)],
                              axis=1)
        distinct, which = np.unique(keys, axis=0, return_inverse=True)
        texts = []
        for key in distinct.tolist():
            items = []
            for r, bits in zip(key[:_NEAREST_SHOWN], key[_NEAREST_SHOWN:]):
                if r >= 0:
                    quantities = relations[r].relation.quantities
                    sep = "=" if bits >> 62 & 1 else ":"  # "=": derived now, one of them stated checks
                    items.append(f"{relations[r].code}{sep}" + ",".join(q for i, q in enumerate(quantities)
                                                                        if bits >> i & 1))
            texts.append(" ".join(items))
        detail = np.asarray(texts, dtype=object)[np.asarray(which).reshape(-1)]
        if state.totals is not None:  # a total row is not a run: no relation would check it (V018 checks its sums)
            detail = np.where(state.totals[rows], "", detail).astype(object)
        return findings_part(rows, cls.code, "info", "claim", detail=detail)

    @classmethod
    def message(cls, result: "AuditResult", f: FindingRow) -> str:
        row = int(f["row"])
        stated = [name for name in INPUT_QUANTITIES if result.cell("source", row, name) == "claimed"]
        if not stated:
            return "nothing could be checked: the claim states no figure"
        text = f"nothing could be checked: the claim states {_listed([label(s) for s in stated])}"
        if total_rows_of(result)[row]:
            summed = [label(s) for s in stated if s in ADDITIVE]
            return (f"{text}; it is a total row (V018), and no other row of its file states "
                    f"{_listed(summed, 'or') if summed else 'a figure that adds up across runs'} to sum")
        phases = result.phase_rows(row)
        if len(phases):
            # The phases were read and audited (their findings follow): the run states no total to hold their sums
            # to (Llama 3.2 Vision's four stages read as if they had not been read).
            summed = [f"{label(name)} {fmt.value(name, float(result.cell('q', row, name)))}"
                      for name in INPUT_QUANTITIES if result.cell("how", row, name) == "C010"
                      and result.cell("source", row, name) not in (None, "claimed")]
            sums = f", whose sums give the run's {_listed(summed)}" if summed else ""
            text += (f"; its {len(phases)} phases are audited as claims of their own{sums}, and it states no total "
                     f"of its own to check them against")
        needs = []
        for item in str(f["detail"] or "").split():
            code, sep, needed = re.split("([:=])", item, maxsplit=1)
            names = [_asked(q) for q in needed.split(",")]
            if sep == "=":  # derived now from the others: one of them stated would be checked
                needs.append(f"{code} ({RULES[code].formula}) would check {_listed(names, 'or')} if stated "
                             f"(derived now)")
            else:
                needs.append(f"{code} ({RULES[code].formula}) needs {_listed(names)}")
        return f"{text}; nearest checks: {'; '.join(needs)}" if needs else text


def _asked(name: str) -> str:
    """A figure as a note asks for it: the peak is also the accelerator's, which the catalog gives."""
    return f"{label(name)} (or the accelerator)" if name == "peak_flops_per_chip" else label(name)


def _listed(names: list[str], conjunction: str = "and") -> str:
    """Names as a reader lists them: "a", "a and b", "a, b and c" (or "a, b or c")."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {conjunction} {names[-1]}"
