"""The work state of one evaluation: what the engine knows about every claim while it derives and checks.

The engine (:mod:`audit.engine`) creates and fills it; each rule's ``evaluate`` reads it and returns findings.
It lives in its own module so that rules and engine both depend on it and not on each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np
from audit.lazy import pandas as pd  # imported on first use: quick start-up

from audit.catalog import Catalog
from audit.claims import Claims
from audit.config import Config
from audit.columns import distinct_codes, distinct_pairs
from audit.findings import FindingsPart
from audit.notes import assumed_utilizations, chip_counts, compute_sums, geometric_means
from audit.quantities import SPARSE_PATTERN


#: Where a work value came from, by code: the work state's ``source`` frame holds a code per cell (int8), -1 where
#: there is no value (no source), else the position of its source in this tuple. Codes are compared and copied as
#: numbers, and a frame of them is an eighth of the memory of one of strings (a new object array of 100,000 claims
#: × 46 work columns cost more to allocate, page by page, than most rules cost to run); the texts are made where
#: words are (:func:`source_texts`), and the result's frame is a categorical over the same codes
#: (:func:`source_frame`).
SOURCES: tuple[str, ...] = ("claimed", "derived", "catalog")
NO_SOURCE, CLAIMED, DERIVED, CATALOG = -1, 0, 1, 2
#: Each code's text; code -1 (no source) takes the last, None, as numpy reads a negative index.
_SOURCE_TEXTS = np.array([*SOURCES, None], dtype=object)


def source_code(text: str | None) -> int:
    """The code of a source's text (None: :data:`NO_SOURCE`)."""
    return NO_SOURCE if text is None else SOURCES.index(text)


def source_texts(codes: np.ndarray) -> np.ndarray:
    """The sources' texts of an array of codes, as objects (None where there is none)."""
    return _SOURCE_TEXTS[np.asarray(codes, dtype=np.intp)]


def source_dtype() -> "pd.CategoricalDtype":
    """The dtype of a result's ``source`` columns: the categories :data:`SOURCES`, in that order, so that a
    column's categorical codes are the engine's codes."""
    return pd.CategoricalDtype(list(SOURCES))


def source_frame(codes: pd.DataFrame) -> pd.DataFrame:
    """A frame of source codes (int8) as the result shows it: each column categorical over :data:`SOURCES`, its
    codes the frame's own (no copy): compared with a text (``== "claimed"``) as the texts were."""
    dtype = source_dtype()
    return pd.DataFrame({name: pd.Categorical.from_codes(codes[name].to_numpy(), dtype=dtype, validate=False)
                         for name in codes.columns}, index=codes.index, copy=False)


def text_codes(column: pd.Series) -> tuple[np.ndarray, list[str | None]]:
    """Each row's number among the distinct texts of a column (a missing value is None, any other value its
    ``str``, as ``fillna("").astype(str)`` reads it), and those texts: a text test then runs once per distinct
    text, not once per row."""
    codes, values = distinct_codes(column)
    return codes, [None if value is None else str(value) for value in values]


#: An architecture field that says the model is dense ("dense", "dense transformer", "Dense decoder-only"), unless it
#: also names experts (:data:`audit.quantities.SPARSE_PATTERN`: "dense and MoE layers" is a mixture of experts).
_DENSE_WORD = re.compile(r"\bdense\b", re.IGNORECASE)


def says_dense(architecture: pd.Series) -> np.ndarray:
    """Claims whose ``architecture`` text says dense (no experts), read once per distinct text."""
    codes, texts = text_codes(architecture)
    sparse = re.compile(SPARSE_PATTERN, flags=re.IGNORECASE)
    return np.array([text is not None and _DENSE_WORD.search(text) is not None and sparse.search(text) is None
                     for text in texts], dtype=bool)[codes] if len(texts) else np.zeros(len(architecture), bool)


def effective_params(active: np.ndarray, total: np.ndarray) -> np.ndarray:
    """N in C = 6·N·D: the active parameter count when given (mixture-of-experts), else the total."""
    return np.where(~np.isnan(active), active, total)


def refresh_effective(q: pd.DataFrame, how: pd.DataFrame) -> None:
    """Recompute what follows from the parameter counts after they changed: N, and F where F = 6N."""
    q["n_eff"] = effective_params(q["active_params"].to_numpy(dtype=float), q["params"].to_numpy(dtype=float))
    six = (how["flops_per_token"] == "6N").to_numpy()
    q.loc[six, "flops_per_token"] = 6.0 * q.loc[six, "n_eff"]


@dataclass(frozen=True)
class Prefill:
    """Values given to the engine for a quantity before it derives anything (NaN where none).

    They fill the quantity where the claim does not state it (source ``derived``, ``how`` = ``note``); where the
    claim states it, rule ``check`` (if any) compares the two. Multi-phase totals are prefilled with
    ``check="C010"``; ``estimate``'s compute-optimal split with ``note="split"`` and no check.
    """

    values: np.ndarray
    note: str
    check: str | None = None
    #: Rows where the value only bounds the quantity from below (None: nowhere): a sum over the phases that give a
    #: figure, not over all of a run's phases. Such a value fills nothing; rule ``check`` compares it one way.
    floor: np.ndarray | None = None

    def filled(self) -> np.ndarray:
        """The values that fill the quantity: finite and positive, not a lower bound only (NaN elsewhere)."""
        values = np.asarray(self.values, dtype=float)
        usable = np.isfinite(values) & (values > 0)
        if self.floor is not None:
            usable &= ~np.asarray(self.floor, dtype=bool)
        return np.where(usable, values, np.nan)


#: The file name of a multi-phase run's phases, audited as claims of their own (:func:`audit.pipeline.audit_claims`).
PHASES_FILE = "<phases>"

#: Which way a value may be off (:attr:`WorkState.directions`): -1 at most the figure, +1 at least it, and
#: UNBOUNDED either way (derived from an "at most" figure and an "at least" one), in words.
UNBOUNDED = 2
BOUND_WORDS: dict[int, str] = {-1: "at most", 1: "at least", UNBOUNDED: "either way"}


@dataclass
class TextReadings:
    """What the claims' text fields say that rules ask for on every pass, for every claim of the batch: read
    once per evaluation and shared by every :class:`WorkState` the engine makes of the same claims (the
    re-resolutions of the outlier search too). None: not read yet."""

    #: :func:`finetunes`.
    finetune: np.ndarray | None = None
    #: :meth:`WorkState._sparse_text`: (said sparse, said dense).
    sparse: tuple[np.ndarray, np.ndarray] | None = None
    #: :meth:`WorkState.compute_stages`, every claim.
    compute_stages: np.ndarray | None = None
    #: :meth:`WorkState.compute_estimates`, every claim.
    compute_estimates: tuple[np.ndarray, np.ndarray] | None = None
    #: :meth:`WorkState.assumed_utilization`, every claim.
    assumed_utilization: np.ndarray | None = None
    #: :meth:`WorkState.chip_counts`, every claim.
    chip_counts: np.ndarray | None = None


def finetunes(claims: Claims) -> np.ndarray:
    """Claims that are fine-tunes (they name a base model)."""
    codes, texts = text_codes(claims.info["base_model"])
    return np.array([text is not None and text.strip() != "" for text in texts], dtype=bool)[codes]


def sparse_text(claims: Claims) -> tuple[np.ndarray, np.ndarray]:
    """Per claim, whether its ``architecture`` or parameter notes say mixture-of-experts
    (:data:`audit.quantities.SPARSE_PATTERN`), and whether its architecture says dense (:func:`says_dense`)."""
    info = claims.info
    arch = pd.Series(info["architecture"] if "architecture" in info else None, index=info.index, dtype=object)
    notes = pd.Series(info["params_notes"] if "params_notes" in info else None, index=info.index, dtype=object)
    # Once per distinct (architecture, notes) pair: the pattern is searched in the two texts joined.
    arch_code, arch_texts = text_codes(arch)
    notes_code, notes_texts = text_codes(notes)
    pair_code, arch_of, notes_of = distinct_pairs(arch_code, notes_code, len(notes_texts))
    pattern = re.compile(SPARSE_PATTERN, flags=re.IGNORECASE)
    said = np.array([pattern.search(f"{arch_texts[a] or ''} {notes_texts[n] or ''}") is not None
                     for a, n in zip(arch_of.tolist(), notes_of.tolist())], dtype=bool)[pair_code]
    return said, says_dense(arch)


def mixture_of_experts(said: np.ndarray, dense: np.ndarray, experts: np.ndarray) -> np.ndarray:
    """Claims of a mixture-of-experts model: their text says so (:func:`sparse_text`) or they count more than one
    expert, and their architecture does not say dense."""
    return (said | (experts > 1)) & ~dense


def total_only_claims(claims: Claims, experts: np.ndarray, active_params: np.ndarray) -> np.ndarray:
    """Mixture-of-experts claims that do not state their active parameters: :meth:`WorkState.total_only` from a
    result's figures."""
    return mixture_of_experts(*sparse_text(claims), experts) & np.isnan(active_params)


@dataclass
class WorkState:
    """Work columns (``q``: values, ``source``: claimed | derived | catalog as codes, :data:`SOURCES`, ``how``: the
    rule or note that gave a derived value, ``precision``: the log half-width of each value, from the digits it
    was stated with and carried through derivations, see :mod:`audit.significance`), the hardware match,
    FLOPs-per-token conventions, and what the relations found."""

    claims: Claims
    config: Config
    catalog: Catalog
    q: pd.DataFrame
    source: pd.DataFrame
    how: pd.DataFrame
    precision: pd.DataFrame
    hardware: pd.DataFrame
    architecture: pd.DataFrame
    prefill: dict[str, Prefill] = field(default_factory=dict)
    #: The work columns (q, source, how, precision) of some claims (distinct positions) as they were before any
    #: relation ran, as column-major arrays (rows × the columns of ``q``): the outlier search starts again from
    #: there. Set by the engine for the outlier stage only (it undoes the relations' writes on the frames as that
    #: stage finds them; no full copy of the frames is kept).
    initial_rows: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] | None = None
    #: The relations already spent on some rows before the relations ran (the engine's ``used``; None: none): the
    #: outlier search asks which rows they may have kept a relation from.
    preused: Mapping[str, np.ndarray] | None = None
    #: Findings of the relation rules (the outlier search looks for claims they disagree on).
    relation_findings: list[FindingsPart] = field(default_factory=list)
    #: Which way each work column's value may be off, where the claim writes a figure as a bound or the value was
    #: derived from one (rows × the columns of ``q``: -1 at most, +1 at least, 2 either way, 0 exact); None when no
    #: claim writes a bound. Set by the relations (:func:`audit.engine.apply_relations`).
    directions: np.ndarray | None = None
    #: Which claims are total rows (:mod:`audit.totals`; None: none looked for): the engine keeps on them only the
    #: findings of the rules about the row as read (:attr:`audit.rules.Rule.of_the_row`) and their stated figures.
    totals: np.ndarray | None = None
    #: Every finding made before the rules of stage ``summary`` run (they read what the others found).
    findings_so_far: list[FindingsPart] = field(default_factory=list)
    #: Runs the relations on other work columns for some claims: (rows, q, source, how, precision) -> their
    #: findings (set by the engine; the frames hold the claims at positions ``rows``).
    resolve: Callable[[np.ndarray, pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame],
                      list[FindingsPart]] | None = None
    #: Like :attr:`resolve`, but saying only which of the claims the frames hold some relation disagrees on (a
    #: check worse than ok), without making findings (set by the engine; the outlier search asks it often).
    disagree: Callable[[np.ndarray, pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame],
                       np.ndarray] | None = None
    #: Positions of the claims the work columns hold, when they hold only some (None: every claim in order).
    rows: np.ndarray | None = None
    #: The stated figures read as another quantity (:meth:`restate`): (row mask, old, new), in order.
    restated: list[tuple[np.ndarray, str, str]] = field(default_factory=list)
    #: The text fields' readings of every claim, shared with the states made of the same claims.
    readings: TextReadings = field(default_factory=TextReadings, repr=False)
    #: :meth:`finetune`, computed on first use (relations ask for it on every pass).
    _finetune: np.ndarray | None = field(default=None, repr=False)
    #: :meth:`stated` per work column, computed on first use.
    _stated: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def direction(self, name: str) -> np.ndarray:
        """Which way ``name``'s value may be off on each row (:attr:`directions`; all 0 when none is a bound)."""
        if self.directions is None:
            return np.zeros(len(self.q), dtype=np.int8)
        return self.directions[:, self.q.columns.get_loc(name)]

    def phases(self) -> np.ndarray:
        """Claims that are a run's phases, not runs: their run speaks for them where a rule is about a whole run."""
        return self.info("file") == PHASES_FILE

    def info(self, name: str) -> np.ndarray:
        """A text field of the claims the work columns hold (``claims.info``), as objects."""
        values = self.claims.info[name].to_numpy(dtype=object)
        return values if self.rows is None else values[self.rows]

    def finetune(self) -> np.ndarray:
        """Claims that are fine-tunes (they name a base model): their compute may include the base model's,
        while their hardware figures describe the fine-tune alone."""
        if self._finetune is None:
            if self.readings.finetune is None:  # read once per batch: each re-resolution of some rows asks again
                self.readings.finetune = finetunes(self.claims)
            every = self.readings.finetune
            self._finetune = every if self.rows is None else every[self.rows]
        return self._finetune

    def stated(self, name: str) -> np.ndarray:
        """Rows whose claim states ``name`` (its source is :data:`CLAIMED`), read once per state and read-only: a
        stated figure stays stated (derivations fill unknown cells only) unless :meth:`restate` or :meth:`unstate`
        moves it. The rules ask often."""
        mask = self._stated.get(name)
        if mask is None:
            mask = self.source[name].to_numpy() == CLAIMED
            mask.flags.writeable = False
            self._stated[name] = mask
        return mask

    def know_stated(self, name: str, mask: np.ndarray) -> None:
        """Take ``mask`` as :meth:`stated` of ``name`` (read-only from now on): the engine, which wrote "claimed"
        into the column's sources on those rows, knows it without comparing them again."""
        mask.flags.writeable = False
        self._stated[name] = mask

    def unstate(self, rows: np.ndarray, name: str) -> None:
        """Forget the stated ``name`` of ``rows`` (value and source): the engine reads it as another quantity."""
        write_cells(self.q, name, rows, np.nan)
        write_cells(self.source, name, rows, NO_SOURCE)
        self._stated.pop(name, None)

    def restate(self, rows: np.ndarray, old: str, new: str) -> None:
        """Read the stated ``old`` figure of ``rows`` as the quantity ``new`` instead (a FLOP/s or a compute read as
        hardware FLOPs): the value, its source and its precision move; ``old`` becomes unknown. The text it was
        written as moves with it when the audit is done (:attr:`restated`)."""
        for frame, gone in ((self.q, np.nan), (self.source, NO_SOURCE), (self.precision, 0.0)):
            write_cells(frame, new, rows, frame[old].to_numpy()[rows])
            write_cells(frame, old, rows, gone)
        moved = np.zeros(len(self.q), dtype=bool)
        moved[rows] = True  # positions or a mask: kept as a mask
        self.restated.append((moved, old, new))
        self._stated.pop(old, None)
        self._stated.pop(new, None)

    def sparse(self) -> np.ndarray:
        """Claims of a mixture-of-experts model, as the claim's ``architecture``, its parameter notes
        (:data:`audit.quantities.SPARSE_PATTERN`) or an expert count above one say: N in C = 6ND is then the active
        count, which a total parameter count only bounds from above."""
        if self.readings.sparse is None:
            self.readings.sparse = self._sparse_text()
        said, dense = self.readings.sparse
        if self.rows is not None:
            said, dense = said[self.rows], dense[self.rows]
        experts = self.q["experts"].to_numpy(dtype=float) if "experts" in self.q.columns else np.full(len(self.q), np.nan)
        return mixture_of_experts(said, dense, experts)

    def compute_stages(self) -> np.ndarray:
        """The sum of stages that the claim's compute notes give for its stated compute ("1.07e23 + 6.2e22 =
        1.69e23"), "" where they give none (:func:`audit.notes.compute_sum`): such a compute covers several
        trainings, of which the claim's parameters, tokens and hardware describe one."""
        if self.readings.compute_stages is None:
            self.readings.compute_stages = compute_sums(self._compute_notes(),
                                                        self.claims.values["compute_flops"].to_numpy(dtype=float))
        sums = self.readings.compute_stages
        return sums if self.rows is None else sums[self.rows]

    def compute_estimates(self) -> tuple[np.ndarray, np.ndarray]:
        """The two estimates (larger, smaller; NaN where none) whose geometric mean the claim's compute notes
        state as its compute (:func:`audit.notes.geometric_mean`)."""
        high, low = self._compute_estimates()
        return (high, low) if self.rows is None else (high[self.rows], low[self.rows])

    def _compute_estimates(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`compute_estimates` of every claim of the batch (read once)."""
        if self.readings.compute_estimates is None:
            self.readings.compute_estimates = geometric_means(
                self._compute_notes(), self.claims.values["compute_flops"].to_numpy(dtype=float))
        return self.readings.compute_estimates

    def assumed_utilization(self) -> np.ndarray:
        """The utilization that the claim's compute notes assumed to estimate its stated compute from the hardware
        and time (NaN where they state no such estimate; :func:`audit.notes.assumed_utilization`)."""
        if self.readings.assumed_utilization is None:
            self.readings.assumed_utilization = assumed_utilizations(
                self._compute_notes(), self.claims.values["compute_flops"].to_numpy(dtype=float))
        found = self.readings.assumed_utilization
        return found if self.rows is None else found[self.rows]

    def chip_counts(self) -> np.ndarray:
        """The accelerators that a hardware estimate in the claim's compute notes counts: a
        :class:`audit.notes.ChipCount` or None per claim (:func:`audit.notes.chip_count`)."""
        if self.readings.chip_counts is None:
            high, low = self._compute_estimates()
            self.readings.chip_counts = chip_counts(
                self._compute_notes(), self.claims.values["compute_flops"].to_numpy(dtype=float), high, low)
        found = self.readings.chip_counts
        return found if self.rows is None else found[self.rows]

    def _compute_notes(self) -> pd.Series:
        """Every claim's compute notes (None where the input has no such column)."""
        info = self.claims.info
        return pd.Series(info["compute_notes"] if "compute_notes" in info else None, index=info.index, dtype=object)

    def total_only(self) -> np.ndarray:
        """Mixture-of-experts claims that do not state their active parameters: their N is a total, which bounds
        the N of 6N per token from above only."""
        return self.sparse() & np.isnan(self.q["active_params"].to_numpy(dtype=float))

    def _sparse_text(self) -> tuple[np.ndarray, np.ndarray]:
        """What the text fields of every claim say for :meth:`sparse` (read once per batch: the relations ask on
        every pass, and the regular expression costs ~0.1 s per 100,000 claims)."""
        return sparse_text(self.claims)

    def col(self, name: str) -> np.ndarray:
        """A copy of a work column's values as floats (a copy: the engine fills the columns as it goes)."""
        return self.q[name].to_numpy(dtype=float, copy=True)

    def slack(self, *names: str) -> np.ndarray:
        """The summed log half-widths of some work columns: how far a comparison of them may be off by the
        precision they were stated with alone."""
        return sum((self.precision[n].to_numpy(dtype=float) for n in names), np.zeros(len(self.q)))

    def set_derived(self, name: str, values: np.ndarray, note: str, precision: np.ndarray | None = None) -> None:
        """Fill ``name`` where it is unknown and ``values`` is finite, marking it derived by ``note`` (with the
        log half-width ``precision`` it inherits from the figures it came from; 0 when exact)."""
        mask = np.isnan(self.q[name].to_numpy()) & np.isfinite(values)
        if mask.any():
            write_cells(self.q, name, mask, values[mask])
            write_cells(self.source, name, mask, DERIVED)
            write_cells(self.how, name, mask, note)
            write_cells(self.precision, name, mask, 0.0 if precision is None else precision[mask])


def write_cells(frame: pd.DataFrame, name: str, rows: np.ndarray | slice, values: object) -> None:
    """``frame.loc[rows, name] = values``, written straight into the column's own array where pandas hands that
    out (a frame numbered 0, 1, ... so that positions are its labels, and a column that is a writable view of its
    block, as without copy-on-write): ``.loc`` costs about 0.5 ms a call on 50,000 rows, four calls per derived
    quantity, and writes in place all the same (a view taken earlier sees the new values either way)."""
    index = frame.index
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        column = frame[name].to_numpy()
        # Two copies could not overlap: arrays from two calls that do are views of the frame's own storage.
        if column.flags.writeable and np.may_share_memory(column, frame[name].to_numpy()):
            column[rows] = values
            return
    dtype = frame[name].dtype
    if isinstance(values, np.ndarray) and isinstance(dtype, np.dtype) and dtype.kind in "iu" and values.dtype != dtype:
        values = values.astype(dtype)  # a source code (int8) as the column holds it: pandas warns of upcasting
    frame.loc[rows, name] = values
