"""The result of an audit: built once by :func:`audit.pipeline.audit_claims`, then only read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from audit.catalog import Catalog, load_catalog
from audit.claims import Claims
from audit.config import Config


@dataclass(frozen=True)
class AuditResult:
    """Everything an audit found, as columnar frames (one row per claim, or one per finding).

    - ``q``: float64 value of every work column;
    - ``source``: ``claimed`` | ``derived`` | ``catalog`` | None per work column;
    - ``how``: the rule code (or note) that derived a value;
    - ``hardware``: catalog match per claim (accelerator id and name, precision used, assumed or not);
    - ``findings``: long table, columns :data:`audit.findings.FINDING_COLUMNS`;
    - ``status``: ``pass`` | ``warn`` | ``fail`` | ``invalid`` | ``unchecked`` per claim;
    - ``explanations``: long table of the known causes that fit each non-ok finding (:mod:`audit.explain`);
    - ``architecture``: FLOPs per token by every convention the claim's fields allow, and the one used;
    - ``phase_result`` and ``phase_parent``: a multi-phase run's phases, audited as claims, and the row of the
      run each belongs to;
    - ``catalog``: the accelerators used (:meth:`accelerators`).
    """

    claims: Claims
    config: Config
    q: pd.DataFrame
    source: pd.DataFrame
    how: pd.DataFrame
    hardware: pd.DataFrame
    findings: pd.DataFrame
    status: pd.Series
    explanations: pd.DataFrame
    architecture: pd.DataFrame
    phase_result: "AuditResult | None" = None
    phase_parent: np.ndarray | None = None
    #: The accelerator catalog the audit used (None: the bundled one); a ``--catalog FILE`` adds rows to it.
    catalog: Catalog | None = None
    #: Which way each value of ``q`` may be off where the claim wrote it as a bound ("less than 3K GPU weeks") or
    #: it was derived from one (int8: -1 at most, +1 at least, 2 either way, 0 exact); None when no claim writes a
    #: bound. Read with :meth:`bound`.
    bounds: pd.DataFrame | None = None
    #: Column arrays read by :meth:`cell`, filled on first use (rendering reads millions of cells).
    _columns: dict[tuple[str, str], np.ndarray] = field(default_factory=dict, init=False, repr=False,
                                                        compare=False)
    #: Things made from the result on first use and kept (the result is frozen: the cache is a dict filled in
    #: place, never a new attribute): ``"claims"``, the :class:`audit.records.ClaimRecords` of this result made
    #: on the first :func:`audit.records.claim_record`; ``"derivation_patterns"`` (:meth:`derivation_patterns`);
    #: ``"stated_figures"`` and ``"stated_leaves"``, the stated figures each relation check ties
    #: (:meth:`audit.rules.RelationRule.stated_figures`); ``"R001 lowest estimates"``, the lowest compute estimate
    #: of every claim for R001's words.
    _records: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    #: Positions of each finding's explanations, grouped on first use (:meth:`explanation_groups`).
    _explanation_groups: dict[int, list[int]] = field(default_factory=dict, init=False, repr=False,
                                                       compare=False)

    def accelerators(self) -> Catalog:
        """The accelerator catalog the audit used (the bundled one unless a catalog file was given)."""
        return self.catalog if self.catalog is not None else load_catalog()

    def cell(self, table: str, row: int, col: str) -> Any:
        """One value of ``q``, ``source``, ``how``, ``hardware``, ``architecture``, ``info`` or ``text``.

        Reads a cached numpy column (``DataFrame.at`` costs ~10 µs a call).
        """
        arr = self._columns.get((table, col))
        return (self.column(table, col) if arr is None else arr)[row]

    def bound(self, row: int, col: str) -> int:
        """Which way the value of ``col`` on ``row`` may be off: -1 at most, +1 at least, 2 either way, 0 exact."""
        if self.bounds is None or col not in self.bounds.columns:
            return 0
        return int(self.cell("bounds", row, col))

    def column(self, table: str, col: str) -> np.ndarray:
        """A whole column of ``q``, ``source``, ``how``, ``hardware``, ``architecture``, ``info`` or ``text``, as
        the numpy array :meth:`cell` reads (cached)."""
        key = (table, col)
        arr = self._columns.get(key)
        if arr is None:
            if table == "text":  # one column: the texts of other number columns are not made
                arr = self._columns[key] = self.claims.text_of(col).to_numpy()
                return arr
            frame = self.claims.info if table == "info" else getattr(self, table)
            arr = self._columns[key] = _source_cells(frame[col]) if table == "source" else frame[col].to_numpy()
        return arr

    def derivation_patterns(self) -> np.ndarray:
        """For each claim, a number that two claims share exactly when every quantity of theirs has the same
        source and was derived the same way (``source`` and ``how`` equal, cell by cell): what a claim's values
        were derived from depends only on that, and a large batch has few such patterns (51 in 100,000
        synthetic claims). Made once, with numpy."""
        patterns = self._records.get("derivation_patterns")
        if patterns is None:
            codes = [pd.factorize(frame[col])[0] for frame in (self.source, self.how) for col in frame.columns]
            matrix = np.ascontiguousarray(np.column_stack(codes)) if codes else np.zeros((len(self), 1), dtype=np.int64)
            rows = matrix.view(np.dtype((np.void, matrix.dtype.itemsize * matrix.shape[1]))).ravel()
            patterns = self._records["derivation_patterns"] = np.unique(rows, return_inverse=True)[1].ravel()
        return patterns

    def explanation_rows(self, finding_index: int) -> list[int]:
        """Positions in ``explanations`` of one finding's explanations, best first."""
        return self.explanation_groups().get(finding_index, [])

    def explanation_groups(self) -> dict[int, list[int]]:
        """Positions in ``explanations`` of each finding's explanations (by the finding's index), best first;
        grouped once, with numpy (as ``groupby("finding").indices``: stable, by finding)."""
        if not self._explanation_groups and len(self.explanations):
            findings = self.explanations["finding"].to_numpy()
            order = np.argsort(findings, kind="stable")
            keys, starts = np.unique(findings[order], return_index=True)
            bounds = [*starts.tolist(), len(order)]
            positions = order.tolist()
            self._explanation_groups.update({int(k): positions[bounds[j]:bounds[j + 1]]
                                             for j, k in enumerate(keys.tolist())})
        return self._explanation_groups

    def phase_rows(self, row: int) -> list[int]:
        """Rows of ``phase_result`` that are phases of claim ``row``."""
        if self.phase_parent is None:
            return []
        return [int(i) for i in np.flatnonzero(self.phase_parent == row)]

    def __len__(self) -> int:
        return len(self.q)


def _source_cells(column: pd.Series) -> np.ndarray:
    """A ``source`` column's cells as :meth:`AuditResult.cell` gives them: its texts, None where it has none. The
    column is categorical (its codes are the engine's: :func:`audit.state.source_frame`); ``to_numpy`` would give
    NaN for none."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return column.to_numpy()
    texts = np.array([*column.cat.categories.tolist(), None], dtype=object)
    return texts[column.cat.codes.to_numpy().astype(np.intp)]  # code -1 (none): the None at the end
