"""One audit from claims to result: phases, the engine, explanations and statuses, in that order.

Each stage reads what the previous ones produced; the :class:`audit.result.AuditResult` is built once at the
end and not changed afterwards.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

import numpy as np
import pandas as pd

from audit import phases
from audit.catalog import Catalog, load_catalog
from audit.claims import Claims
from audit.config import Config
from audit.engine import evaluate
from audit.explain import explain, no_explanations
from audit.findings import rule_is, status_of, worst_status
from audit.reading import claims_from_records
from audit.result import AuditResult
from audit.rules import codes_where
from audit.state import PHASES_FILE, Prefill


def audit_claims(claims: Claims, config: Config | None = None, catalog: Catalog | None = None,
                 prefill: Mapping[str, Prefill] | None = None,
                 used: Mapping[str, np.ndarray] | None = None, words: bool = True) -> AuditResult:
    """Audit claims, expanding multi-phase runs (a claim without phases is audited as it is).

    ``prefill`` and ``used`` go to the engine (:func:`audit.engine.evaluate`). ``words=False`` leaves out what
    only a report's words show: the outlier search (the rules of stage ``outlier``: notes, which change no
    status) and the explanations. The statuses, quantities and the findings of every other rule are the same;
    the claims table (``--format csv|parquet`` without ``--findings``) shows nothing else, and is the same.
    """
    config = config or Config.default()
    catalog = catalog or load_catalog()
    expansion = phases.expand(claims)
    phase_result: AuditResult | None = None
    parent: np.ndarray | None = None
    given = dict(prefill or {})
    spent = dict(used or {})
    if expansion is not None:
        if len(expansion.invalid):
            claims = dataclasses.replace(claims, invalid=pd.concat([claims.invalid, expansion.invalid],
                                                                   ignore_index=True))
        if expansion.records:
            # Phases are audited as claims of their own; a phase's own phases are not expanded.
            phase_claims = claims_from_records(expansion.records, file=PHASES_FILE)
            phase_result = _audit(phase_claims, config, catalog, {}, {}, words=words)
            parent = expansion.parents
            sums = phases.totals(phase_result.q, parent, claims)
            given.update(sums)
            for code, spare in phases.spare_relations(parent, claims, sums).items():
                spent[code] = spare | np.asarray(spent.get(code, False), dtype=bool)
    return _audit(claims, config, catalog, given, spent, phase_result, parent, words=words)


def _audit(claims: Claims, config: Config, catalog: Catalog, prefill: Mapping[str, Prefill],
           used: Mapping[str, np.ndarray], phase_result: AuditResult | None = None,
           parent: np.ndarray | None = None, words: bool = True) -> AuditResult:
    # A figure near the top of the float range (1e308 tokens) overflows products to inf, which the checks treat as
    # a value out of range: numpy's warning would only print a source line on standard error.
    with np.errstate(over="ignore"):
        ev = evaluate(claims, config, catalog, used=used, prefill=prefill, outliers=words)
    notes = rule_is(ev.findings, codes_where("note"))
    status = status_of(ev.findings, len(claims), notes, rule_is(ev.findings, codes_where("invalidates")))
    if phase_result is not None and parent is not None:
        status = worst_status(status, phase_result.status, parent)  # a run is as bad as its worst phase
    return AuditResult(claims=ev.claims, config=config, q=ev.q, source=ev.source, how=ev.how, hardware=ev.hardware,
                       findings=ev.findings, status=status,
                       explanations=explain(ev) if words else no_explanations(), architecture=ev.architecture,
                       phase_result=phase_result, phase_parent=parent, catalog=catalog, bounds=ev.bounds)
