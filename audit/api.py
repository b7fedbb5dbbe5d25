"""The library API: audit files, records or a DataFrame's worth of claims, estimate from a few quantities, and
turn results into JSON-ready records. The command line is a thin layer over these functions; they never print.

A value a claim cannot use is a finding (V001, the claim ``invalid``), never an exception. What raises: an input
that cannot be used at all (a missing or unreadable file, a file none of whose columns is understood) raises
:class:`LoadError` (``.file``, ``.message``); a wrong argument raises ``TypeError`` or ``ValueError`` (a report
format that does not exist, ``check_records`` given a DataFrame); a catalog file that cannot be used raises
:class:`audit.catalog_file.CatalogFileError`, a ``ValueError``.

>>> from audit.api import check_records, to_json
>>> result = check_records([{"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": "3.14e23"}])
>>> result.status.tolist()
['pass']
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from audit.catalog import Catalog
from audit.config import Config
from audit.engine import compute_optimal_split
from audit.pipeline import audit_claims
from audit.reading import ColumnMap, LoadError, claims_from_records, load
from audit.records import claim_record, estimate_json, summary, to_json
from audit.result import AuditResult
from audit.state import Prefill


def check(paths: Sequence[str] | str | Path = (), config: Config | None = None, stdin: io.BufferedReader | None = None,
          sheet: str | None = None, columns: str | Path | ColumnMap | None = None, profile: str | None = None,
          mlflow: str | None = None, experiments: Sequence[str] = (), catalog: Catalog | None = None,
          words: bool = True) -> AuditResult:
    """Audit claim files (no paths and no ``mlflow``: the bundled corpus of published runs). ``sheet``: the sheet
    of .xlsx input to read (a name, or a number from 1; default the first). ``columns``: a column map (a .toml or
    .json file, or a :class:`ColumnMap`) laid over ``profile`` (``"epoch"``; recognised from the header when not
    given; ``"none"``: never). ``mlflow``: also audit the runs of this MLflow tracking store (an ``mlruns/``
    folder or a URI such as ``sqlite:///runs.db``), ``experiments``: only these; ``catalog``: the accelerators
    (default the bundled catalog). How each input was read (columns
    not understood, notes) is in ``result.claims.unread_columns`` and ``result.claims.notes``. ``words=False``:
    only what the claims table shows (:func:`audit.pipeline.audit_claims`)."""
    claims = load(_path_list(paths), stdin, sheet=sheet, columns=columns, profile=profile, mlflow=mlflow,
                  experiments=experiments)
    return audit_claims(claims, config, catalog, prefill=_catalog_prefill(claims, catalog), words=words)


def _path_list(paths: Sequence[str] | str | Path) -> list[str]:
    """Paths as a list: one path given alone (``check("runs.csv")``, a ``Path``) is that one file; it was read
    as a sequence of one-character paths ("/: is a folder, not a file")."""
    if isinstance(paths, (str, Path)):
        return [str(paths)]
    return [str(p) for p in paths]


def check_records(records: list[dict[str, Any]], config: Config | None = None,
                  catalog: Catalog | None = None) -> AuditResult:
    """Audit in-memory claims (dicts with the canonical field names or their aliases); ``catalog``: the
    accelerators (default the bundled catalog). A missing value (None, NaN, ``pd.NA``, ``pd.NaT``, as
    ``DataFrame.to_dict("records")`` gives them) is a figure not stated, as in :func:`check_frame`."""
    if isinstance(records, (pd.DataFrame, Mapping, str)):
        raise TypeError(f"check_records takes a list of dicts (one per claim), not a {type(records).__name__}"
                        + ("; check_frame audits a DataFrame" if isinstance(records, pd.DataFrame) else ""))
    claims = claims_from_records([{k: v for k, v in r.items() if not _missing(v)} if isinstance(r, Mapping) else r
                                  for r in records])
    return audit_claims(claims, config, catalog, prefill=_catalog_prefill(claims, catalog))


def _missing(value: Any) -> bool:
    """A value that states nothing: None, a float NaN, ``pd.NA`` or ``pd.NaT`` (not an empty list or text)."""
    return value is None or value is pd.NA or value is pd.NaT or (
        isinstance(value, (float, np.floating)) and bool(np.isnan(value)))


def _catalog_prefill(claims: Any, catalog: Catalog | None) -> dict[str, Prefill]:
    """Your catalog's price and average power where claims need them (:func:`audit.catalog_file.catalog_prefill`)."""
    if catalog is None:
        return {}
    from audit.catalog_file import catalog_prefill

    return catalog_prefill(claims, catalog)


def estimate(quantities: Mapping[str, Any], config: Config | None = None, catalog: Catalog | None = None,
             references: Mapping[str, str | None] | None = None) -> AuditResult:
    """Solve for everything the given quantities determine.

    Given compute but neither parameters nor tokens, split it compute-optimally (about 20 tokens per
    parameter, Hoffmann et al. 2022) before solving the rest; the split used C = 6·N·D, so C001 does not then
    check the compute against it. ``references`` chooses reference values by key (``grid``, ``site`` for the
    PUE, ``price_from``; :mod:`audit.planning`); when an energy answer is asked for without a power per chip,
    the accelerator's TDP (an upper bound) and PUE 1.0 are used, each said in its derivation. ``catalog``: the
    accelerators (default the bundled catalog; :func:`audit.catalog_file.load_catalog_file` adds your own).
    """
    from audit.catalog import load_catalog
    from audit.planning import ENERGY_QUANTITIES, power_prefill, reference_prefill

    config = config or Config.default()
    catalog = catalog or load_catalog()
    record = {k: v for k, v in quantities.items() if v is not None}
    record.setdefault("id", "estimate")
    claims = claims_from_records([record], file="<estimate>")
    values = claims.values
    prefill = reference_prefill(references or {}, record)
    asked = bool(prefill) or any(record.get(q) is not None for q in ENERGY_QUANTITIES)
    prefill.update(power_prefill(catalog, record.get("hardware"), record, asked))
    compute = float(values["compute_flops"].to_numpy(dtype=float)[0])
    if not np.isnan(compute) and bool(values[["params", "active_params", "tokens"]].iloc[0].isna().all()):
        n, d = compute_optimal_split(compute, config.tokens_per_param_optimal)
        prefill.update({"params": Prefill(np.array([n]), note="split"),
                        "tokens": Prefill(np.array([d]), note="split")})
        return audit_claims(claims, config, catalog, prefill=prefill, used={"C001": np.array([True])})
    return audit_claims(claims, config, catalog, prefill=prefill)


# ---------------------------------------------------------------------------------- DataFrames: load, audit, render


def load_frame(paths: Sequence[str] | str | Path, sheet: str | None = None) -> pd.DataFrame:
    """Claim files as one DataFrame of cells and headers as written (one row per claim, in input order; files
    one after the other), ready to filter or edit with pandas and hand to :func:`check_frame`, which reads the
    headers (aliases, units in brackets, column maps, profiles) as :func:`check` does. Files of different
    layouts are best loaded and checked one by one."""
    from audit.reading.paths import ReadOptions, read_path

    paths = _path_list(paths)
    if not paths:
        raise LoadError("(no input)", "no input files")
    options = ReadOptions(sheet=sheet)
    frames = [read_path(p, options=options).frame for p in paths]
    return pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0].reset_index(drop=True)


def check_frame(frame: pd.DataFrame, config: Config | None = None, columns: str | Path | ColumnMap | None = None,
                profile: str | None = None, name: str = "<DataFrame>", catalog: Catalog | None = None
                ) -> AuditResult:
    """Audit a DataFrame of claims, one row per claim: columns as a file's headers (canonical names, aliases,
    units in brackets, or a column map), cells as numbers or text (``"175B"``); a missing cell (NaN, None) is a
    figure not stated. ``name`` names the frame in messages (and reports), as a file name would."""
    return _check_frame(frame, config, columns, profile, name, catalog)


def _check_frame(frame: pd.DataFrame, config: Config | None, columns: str | Path | ColumnMap | None,
                 profile: str | None, name: str, catalog: Catalog | None, cut: bool = False) -> AuditResult:
    """:func:`check_frame`; ``cut``: the frame is a part of the claims (:attr:`audit.claims.RawTable.cut`)."""
    from audit.claims import RawTable
    from audit.reading.colmap import resolve_maps
    from audit.reading.normalize import normalize
    from audit.reading.paths import mapped_columns

    cells = frame.reset_index(drop=True)
    # Number columns stay numbers (NaN where missing), read as a Parquet file's are: integer ids with a null among
    # them, floats to pandas, are named 1 and 3, not 1.0 and 3.0. Every other missing value (None, pd.NA, NaT) is
    # None, whatever the column's dtype.
    numbers = {c: cells[c].to_numpy(dtype=np.float64, na_value=np.nan) for c in cells.columns
               if pd.api.types.is_numeric_dtype(cells[c].dtype) and not pd.api.types.is_bool_dtype(cells[c].dtype)
               and not (isinstance(cells[c].dtype, np.dtype) and cells[c].dtype.kind in "iu")}
    cells = cells.astype(object).where(cells.notna(), None)
    for c, values in numbers.items():
        cells[c] = values
    cells.columns = [str(c) for c in cells.columns]
    raw = RawTable(cells, files=np.full(len(cells), name, dtype=object), text_checked=False, cut=cut)
    table = mapped_columns(raw, name, resolve_maps(columns, profile))
    claims = normalize(table)
    return audit_claims(claims, config, catalog, prefill=_catalog_prefill(claims, catalog))


def render(result: AuditResult, fmt: str = "text", title: str = "train-audit report", verbose: bool = False
           ) -> str | bytes:
    """A report in one of the output formats (``text``, ``json``, ``html``, ``markdown``, ``csv``, ``parquet``;
    bytes for binary ones), as ``train-audit check --format FMT`` writes it."""
    from audit import report

    try:
        renderer = report.get(fmt)
    except KeyError:
        raise ValueError(f"no report format {fmt!r}; the formats are {', '.join(sorted(report.renderers()))}") \
            from None
    return renderer.render(result, report.Options(title=title, verbose=verbose))


def claims_frame(result: AuditResult) -> pd.DataFrame:
    """One row per claim: id, name, file, row, status, key quantities (value and source), rules that warned or
    failed, counts of errors and warnings (``--format csv``'s table)."""
    from audit.report.table import claims_frame as _claims_frame

    return _claims_frame(result)


def findings_frame(result: AuditResult) -> pd.DataFrame:
    """One row per finding (passing checks included), in claim order: claim id, rule, severity, quantity,
    claimed and expected values, ratio, message and formula (``--findings FILE``'s table)."""
    from audit.report.table import findings_frame as _findings_frame

    return _findings_frame(result)


def audit_partition(frame: pd.DataFrame, what: str = "claims", config: Config | None = None,
                    columns: str | Path | ColumnMap | None = None, profile: str | None = None,
                    name: str = "<partition>") -> pd.DataFrame:
    """Audit one partition of a distributed DataFrame of claims and return a DataFrame: ``what="claims"`` gives
    :func:`claims_frame` (one row per claim), ``"findings"`` gives :func:`findings_frame` (one row per finding).
    A plain function of a pandas DataFrame, so Dask's ``map_partitions`` and Spark's ``mapInPandas`` run it as
    it is (see the README). Each partition is audited on its own: ``row`` counts rows within the partition, and
    a duplicate id (V002) is found within a partition only, and a row named "Total" is audited as a run (a
    partition holds only some of the rows it sums: V018 needs the whole table, :func:`check_frame`); every other
    finding is the claim's own, the same as when the whole frame is audited at once. The rows keep the
    partition's index (a finding, its claim's), so the results join back to the claims they audit, across
    partitions."""
    if what not in ("claims", "findings"):
        raise ValueError(f"what={what!r}: 'claims' or 'findings'")
    if len(frame) == 0:
        return partition_meta(what)
    result = _check_frame(frame, config, columns, profile, name, None, cut=True)
    out = claims_frame(result) if what == "claims" else findings_frame(result)
    # check_frame numbers the rows 1, 2, ...: the partition's own labels, as Dask's map_partitions expects.
    out.index = frame.index.take(out["row"].to_numpy(dtype=np.int64) - 1)
    return out


def partition_meta(what: str = "claims") -> pd.DataFrame:
    """The empty DataFrame :func:`audit_partition` returns for no claims: its columns and dtypes (Dask's ``meta``)."""
    from audit.records import SHOWN_QUANTITIES
    from audit.state import source_dtype

    if what == "findings":
        kinds = {"claim_id": object, "file": object, "row": np.int64,
                 "rule": object, "name": object, "severity": object, "quantity": object,
                 "claimed": float, "expected": float, "ratio": float, "message": object, "formula": object}
    else:
        kinds = {"id": object, "name": object, "file": object, "row": int, "status": object, "accelerator": object,
                 "precision": object}
        for q in SHOWN_QUANTITIES:
            kinds[q] = float
            kinds[f"{q}_source"] = source_dtype()  # categorical: claimed, derived, catalog
        kinds.update({"rules": object, "errors": int, "warnings": int})
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in kinds.items()})


def diff(old: AuditResult, new: AuditResult, key: str = "auto") -> dict[str, Any]:
    """What changed between two audits (claims added, removed, figures and verdicts changed), as
    ``train-audit diff --format json`` writes it (:mod:`audit.diff`)."""
    from audit.diff import diff_results

    return diff_results(old, new, key)


__all__ = ["check", "check_records", "check_frame", "audit_partition", "partition_meta", "estimate", "load_frame",
           "render", "claims_frame", "findings_frame", "diff", "to_json", "estimate_json", "summary", "claim_record",
           "AuditResult", "Config", "ColumnMap", "LoadError"]
