"""Runs of an MLflow tracking store as claims (``train-audit check --mlflow URI``; the ``mlflow`` extra).

The store is read through MLflow's own client (``mlflow.tracking.MlflowClient``): a local ``mlruns/`` folder (a
path or a ``file:`` URI) or a database backend such as ``sqlite:///runs.db`` (an HTTP tracking server works the
same way). One run is one claim: its parameters and metrics are its fields, named as logged and mapped like a
spreadsheet's headers (aliases, units in brackets, ``--columns`` maps and profiles). A metric's value is its
latest logged value (MLflow's ``run.data.metrics``); a parameter's text is kept as logged (``"7B"``). The claim's
id is the run id, its name the run name, its source ``mlflow:<experiment>/<run id>``. A name given both as a
parameter and as a metric is read from the parameter; the metric is kept as the extra field ``metric:<name>``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from audit.claims import RawTable
from audit.reading.errors import LoadError

__all__ = ["read_mlflow", "tracking_uri"]

#: Runs asked for per request (MLflow's search pages its results).
_PAGE = 1000


def tracking_uri(uri: str) -> str:
    """A tracking URI from what the user wrote: a folder path becomes a ``file:`` URI; URIs are kept."""
    if "://" in uri or uri.startswith("file:"):
        return uri
    path = Path(uri)
    if not path.exists():
        raise LoadError(uri, "no such MLflow store (a folder such as mlruns/, or a URI such as sqlite:///runs.db)")
    if not path.is_dir():
        raise LoadError(uri, "an MLflow file store is a folder (mlruns/); a database is given as sqlite:///FILE")
    return path.resolve().as_uri()


def read_mlflow(uri: str, experiments: Sequence[str] = ()) -> RawTable:
    """Every run of the named experiments (default: all) as one raw table, columns named as logged.

    :class:`LoadError` names the store when mlflow is not installed, the store cannot be read, an experiment
    does not exist, or there is no run."""
    try:
        from mlflow.exceptions import MlflowException
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise LoadError(uri, "reading MLflow runs needs the mlflow extra: pip install 'train-audit[mlflow]'") from None
    target = tracking_uri(uri)
    if target.startswith("file:"):
        # MLflow 3 keeps the file store in maintenance mode and refuses it unless told: reading one is still fine.
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    try:
        client = MlflowClient(tracking_uri=target)
        if experiments:
            found = []
            for name in experiments:
                exp = client.get_experiment_by_name(name)
                if exp is None:
                    names = sorted(e.name for e in client.search_experiments())
                    raise LoadError(uri, f"no experiment {name!r}; the store has {', '.join(names) or 'none'}")
                found.append(exp)
        else:
            found = list(client.search_experiments())
        by_id = {e.experiment_id: e.name for e in found}
        runs: list[Any] = []
        token: str | None = None
        while True:  # every run, page by page (a store may hold more than one page)
            page = client.search_runs(list(by_id), max_results=_PAGE, order_by=["attributes.start_time ASC"],
                                      page_token=token)
            runs.extend(page)
            token = page.token
            if not token:
                break
    except MlflowException as exc:
        raise LoadError(uri, f"cannot read the MLflow store: {exc.message}") from None
    if not runs:
        raise LoadError(uri, "no runs in " + (", ".join(repr(e) for e in experiments) if experiments
                                              else "the store"))
    records: list[dict[str, Any]] = []
    for run in runs:  # one dict per run: MLflow returns runs as objects, so this loop is the reading itself
        rec: dict[str, Any] = dict(run.data.params)
        for key, value in run.data.metrics.items():
            rec[f"metric:{key}" if key in rec else key] = value
        rec.setdefault("id", run.info.run_id)
        if run.info.run_name:
            rec.setdefault("name", run.info.run_name)
        rec.setdefault("source", f"mlflow:{by_id.get(run.info.experiment_id, run.info.experiment_id)}/"
                                 f"{run.info.run_id}")
        records.append(rec)
    frame = pd.DataFrame.from_records(records)
    frame = frame[sorted(frame.columns)]
    frame = frame.astype(object).replace({np.nan: None})
    n = len(frame)
    return RawTable(frame, rows=np.arange(1, n + 1), files=np.full(n, f"mlflow:{uri}", dtype=object))
