"""The library API on an existing distributed engine: Dask's ``map_partitions`` runs :func:`audit.api.audit_partition`
unchanged, on a small local cluster, and gives what one process gives for the same claims."""

from __future__ import annotations

import pandas as pd
import pytest

from audit.api import audit_partition, check_frame, claims_frame, findings_frame, partition_meta

#: One pytest-xdist worker runs these tests (pyproject.toml: loadgroup): one cluster, one import of Dask.
pytestmark = pytest.mark.xdist_group("dask")

# GPT-3 175B as its paper states it (Brown et al. 2020, Table D.1: 3.14e23 FLOP, 300B tokens; C = 6·N·D gives
# 6 × 175e9 × 300e9 = 3.15e23), the same run with the compute 1000x too large, and runs without compute.
CLAIMS = pd.DataFrame({
    "id": [f"run-{i}" for i in range(12)],
    "params": ["175B", "175B", "7B", "70B"] * 3,
    "tokens": ["300B", "300B", "2T", "2T"] * 3,
    "compute_flops": [3.14e23, 3.14e26, None, None] * 3,
    "hardware": ["V100", "V100", "A100", "H100"] * 3,
})


@pytest.fixture(scope="module", autouse=True)
def dask_modules():
    """dask.dataframe and distributed, or every test here skipped without them: imported by the first test that
    runs, not when the tests are collected (about a second that every process collecting the suite would pay)."""
    return pytest.importorskip("dask.dataframe"), pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client(dask_modules):
    distributed = dask_modules[1]
    # Threads, not processes: a cluster of two workers that starts in well under a second. Its scheduler's HTTP
    # server on a free port (":0"): with None it still took 8787, and two test workers' clusters at once warned
    # "Port 8787 is already in use".
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.mark.parametrize("what", ["claims", "findings"])
def test_map_partitions_equals_one_process(client, what, dask_modules):
    ddf = dask_modules[0].from_pandas(CLAIMS, npartitions=3)
    got = ddf.map_partitions(audit_partition, what, meta=partition_meta(what)).compute()
    one = check_frame(CLAIMS)
    want = claims_frame(one) if what == "claims" else findings_frame(one)
    # `row` counts rows within a partition, `file` names the partition: the rest is the claim's own
    got, want = got.drop(columns=["row", "file"]), want.drop(columns=["row", "file"])
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))
    # Each row keeps its claim's label in the whole frame (across partitions), so results join back to it.
    ids = got["id"] if what == "claims" else got["claim_id"].str.split("/").str[0]
    assert (CLAIMS.loc[got.index, "id"].to_numpy() == ids.to_numpy()).all()


def test_a_partition_keeps_its_labels():
    # A partition of a frame indexed by run labels: the claims and findings carry them (they were 0, 1, ...).
    part = CLAIMS.head(3).set_axis(["r-a", "r-b", "r-c"])
    assert audit_partition(part).index.tolist() == ["r-a", "r-b", "r-c"]
    assert set(audit_partition(part, "findings").index) == {"r-a", "r-b", "r-c"}


def test_partition_verdicts_are_the_papers():
    claims = audit_partition(CLAIMS.head(2))
    # 3.14e23 against 6 × 175e9 × 300e9 = 3.15e23: within tolerance; 3.14e26 is 997x off: C001 fails.
    assert claims["status"].tolist()[1] == "fail"
    assert "C001" in claims["rules"].tolist()[1].split()
    assert "C001" not in claims["rules"].tolist()[0].split()


def test_empty_partition_has_the_columns():
    out = audit_partition(CLAIMS.head(0))
    assert list(out.columns) == list(partition_meta().columns) and len(out) == 0


def test_the_meta_has_the_dtypes_of_a_partition():
    """Dask takes ``partition_meta`` as the partitions' schema: the dtypes of an audited partition, the sources
    categorical (claimed, derived, catalog) as the engine keeps them."""
    meta, out = partition_meta(), audit_partition(CLAIMS)
    assert {c: str(t) for c, t in out.dtypes.items()} == {c: str(t) for c, t in meta.dtypes.items()}
    assert list(out["params_source"].cat.categories) == ["claimed", "derived", "catalog"]

