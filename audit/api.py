"""The library API: audit files, records or a DataFrame's worth of claims, estimate from a few quantities, and
turn results into JSON-ready records. The command line is a thin layer over these functions; they never print.

>>> from audit.api import check_records, to_json
>>> result = check_records([{"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": "3.14e23"}])
>>> result.status.tolist()
['pass']
"""

from __future__ import annotations

import io
from typing import Any, Mapping, Sequence

import numpy as np

from audit.config import Config
from audit.engine import compute_optimal_split
from audit.pipeline import audit_claims
from audit.reading import claims_from_records, load
from audit.records import claim_record, estimate_json, summary, to_json
from audit.result import AuditResult
from audit.state import Prefill


def check(paths: Sequence[str] = (), config: Config | None = None, stdin: io.BufferedReader | None = None,
          sheet: str | None = None) -> AuditResult:
    """Audit claim files (no paths: the bundled corpus of published runs). ``sheet``: the sheet of .xlsx input to
    read (a name, or a number from 1; default the first). How each file was read (columns not understood, notes)
    is in ``result.claims.unread_columns`` and ``result.claims.notes``."""
    return audit_claims(load(paths, stdin, sheet=sheet), config)


def check_records(records: list[dict[str, Any]], config: Config | None = None) -> AuditResult:
    """Audit in-memory claims (dicts with the canonical field names or their aliases)."""
    return audit_claims(claims_from_records(records), config)


def estimate(quantities: Mapping[str, Any], config: Config | None = None) -> AuditResult:
    """Solve for everything the given quantities determine.

    Given compute but neither parameters nor tokens, split it compute-optimally (about 20 tokens per
    parameter, Hoffmann et al. 2022) before solving the rest; the split used C = 6·N·D, so C001 does not then
    check the compute against it.
    """
    config = config or Config.default()
    record = {k: v for k, v in quantities.items() if v is not None}
    record.setdefault("id", "estimate")
    claims = claims_from_records([record], file="<estimate>")
    values = claims.values
    compute = float(values.at[0, "compute_flops"])
    if not np.isnan(compute) and values.loc[0, ["params", "active_params", "tokens"]].isna().all():
        n, d = compute_optimal_split(compute, config.tokens_per_param_optimal)
        prefill = {"params": Prefill(np.array([n]), note="split"), "tokens": Prefill(np.array([d]), note="split")}
        return audit_claims(claims, config, prefill=prefill, used={"C001": np.array([True])})
    return audit_claims(claims, config)


__all__ = ["check", "check_records", "estimate", "to_json", "estimate_json", "summary", "claim_record",
           "AuditResult", "Config"]
