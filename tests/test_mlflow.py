"""Runs of a real MLflow tracking store (made here with mlflow itself, not a mock) audited as claims.

Needs the ``mlflow`` extra (``pip install -e '.[mlflow]'``; the ``test`` extra includes it); skipped without it.
"""

from __future__ import annotations

import pytest

from audit.api import check, to_json
from audit.reading import LoadError

#: One pytest-xdist worker runs these tests (pyproject.toml: loadgroup), so one imports mlflow.
pytestmark = pytest.mark.xdist_group("mlflow")


@pytest.fixture(scope="module", autouse=True)
def mlflow():
    """mlflow, or every test here skipped without it: imported by the first test that runs, not when the tests are
    collected (1-2 s that every process collecting the suite would pay)."""
    return pytest.importorskip("mlflow")

#: Touvron et al. 2023 (LLaMA), Sec. 2.4 and Table 15: LLaMA-65B, 65.2B parameters, 1.4T tokens, 2,048 A100 80GB,
#: about 21 days, 1,022,362 GPU-hours.
LLAMA65 = {"params": "65.2B", "tokens": "1.4T", "gpu": "A100 80GB", "gpus": "2048", "days": "21"}
LLAMA65_GPU_HOURS = 1_022_362.0


def _store(uri: str) -> None:
    """Two runs in experiment 'pretrain': LLaMA-65B as published, and the same run with its GPU-hours logged in
    GPU-days (1,022,362 / 24 = 42,598.4: an error of 24x that the audit must catch)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("pretrain")
    for name, gpu_hours in (("llama-65b", LLAMA65_GPU_HOURS), ("llama-65b-days-as-hours", LLAMA65_GPU_HOURS / 24)):
        run = client.create_run(exp, run_name=name)
        for key, value in LLAMA65.items():
            client.log_param(run.info.run_id, key, value)
        client.log_metric(run.info.run_id, "gpu_hours", gpu_hours)
        client.set_terminated(run.info.run_id)
    client.create_experiment("empty")


@pytest.fixture(scope="module")
def file_store(tmp_path_factory):
    import os

    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store in maintenance mode
    folder = tmp_path_factory.mktemp("mlflow") / "mlruns"
    _store(folder.as_uri())
    return folder


def _by_name(result):
    return {c["name"]: c for c in to_json(result)["claims"]}


def test_runs_of_an_mlruns_folder_are_audited(file_store):
    claims = _by_name(check(mlflow=str(file_store)))
    assert set(claims) == {"llama-65b", "llama-65b-days-as-hours"}
    good, bad = claims["llama-65b"], claims["llama-65b-days-as-hours"]
    assert good["quantities"]["chip_hours"]["value"] == pytest.approx(LLAMA65_GPU_HOURS)
    assert good["quantities"]["chips"]["value"] == 2048 and good["status"] == "pass"
    assert good["source"].startswith("mlflow:pretrain/")
    # 2,048 GPUs x 21 days x 24 h = 1,032,192 GPU-hours, 24x the 42,598 logged: an error.
    assert bad["status"] == "fail"
    assert any(f["severity"] == "error" and f["quantity"] == "chip_hours" for f in bad["findings"]), bad["findings"]


def test_a_column_map_names_run_parameters(file_store, tmp_path):
    (tmp_path / "map.toml").write_text('[columns]\n"days" = { field = "wall_clock_days", unit = "hours" }\n',
                                       encoding="utf-8")
    claims = _by_name(check(mlflow=str(file_store), columns=str(tmp_path / "map.toml")))
    # The map says "days" was logged in hours: 21 hours = 0.875 days.
    assert claims["llama-65b"]["quantities"]["wall_clock_days"]["value"] == pytest.approx(21 / 24)


def test_an_sqlite_store_through_the_command_line(tmp_path, cli_run):
    pytest.importorskip("sqlalchemy")
    uri = f"sqlite:///{tmp_path / 'runs.db'}"
    _store(uri)
    res = cli_run("check", "--mlflow", uri, "--experiment", "pretrain", "--format", "json")
    assert res.exit_code == 1  # one run fails
    statuses = {c["name"]: c["status"] for c in res.json()["claims"]}
    assert statuses == {"llama-65b": "pass", "llama-65b-days-as-hours": "fail"}


def test_a_missing_experiment_or_store_is_named(file_store, tmp_path, cli_run):
    with pytest.raises(LoadError, match="no experiment 'pretrian'; the store has"):
        check(mlflow=str(file_store), experiments=["pretrian"])
    with pytest.raises(LoadError, match="no runs in 'empty'"):
        check(mlflow=str(file_store), experiments=["empty"])
    res = cli_run("check", "--mlflow", str(tmp_path / "nowhere"))
    assert res.exit_code == 2 and "no such MLflow store" in res.stderr
