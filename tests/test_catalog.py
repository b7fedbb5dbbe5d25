"""The accelerator catalog: alias lookup, datasheet peaks, sources for every figure, no silent fallback."""

from __future__ import annotations

import pandas as pd
import pytest

from audit.api import check_records, to_json
from audit.catalog import PRECISION_COLUMNS, load_catalog
from audit.resources import data_path
from conftest import A100_BF16, H100_SXM_BF16, MI300X_BF16, TPU_V4_BF16, one_finding

# H800 SXM5: NVIDIA's H800 datasheet gives the H100 SXM5's tensor throughput (BF16 1,979 TFLOPS with sparsity,
# i.e. 989.4 dense); only NVLink and FP64 are cut.
H800_BF16 = H100_SXM_BF16


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.mark.parametrize("name, accel_id, bf16_peak, memory_gb", [
    ("H100", "h100-sxm5-80gb", H100_SXM_BF16, 80),
    ("H100 SXM5 80GB", "h100-sxm5-80gb", H100_SXM_BF16, 80),
    ("NVIDIA H100 80GB HBM3", "h100-sxm5-80gb", H100_SXM_BF16, 80),   # nvidia-smi's name
    ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb", A100_BF16, 80),       # nvidia-smi's name
    ("A100 80GB", "a100-sxm4-80gb", A100_BF16, 80),
    ("A100-SXM4-40GB", "a100-sxm4-40gb", A100_BF16, 40),
    ("TPU v4", "tpu-v4", TPU_V4_BF16, None),
    ("TPUv4", "tpu-v4", TPU_V4_BF16, None),
    ("Google Cloud TPU v4", "tpu-v4", TPU_V4_BF16, None),
    ("MI300X", "mi300x", MI300X_BF16, 192),                           # AMD MI300X: 192 GB HBM3
    ("AMD Instinct MI300X", "mi300x", MI300X_BF16, 192),
    ("H800", "h800-sxm5-80gb", H800_BF16, 80),
    ("  nvidia   h100  ", "h100-sxm5-80gb", H100_SXM_BF16, 80),       # case, spacing and vendor words
])
def test_alias_resolves_to_the_datasheet_row(catalog, name, accel_id, bf16_peak, memory_gb):
    accel = catalog.lookup(name)
    assert accel is not None, f"{name!r} not found"
    assert accel.id == accel_id
    assert accel.peak_flops("bf16") == pytest.approx(bf16_peak, rel=1e-12)
    if memory_gb is not None:
        assert accel.memory_gb == memory_gb


def test_tpu_v4_memory_is_32_gib(catalog):
    # Cloud TPU v4 docs: 32 GiB HBM per chip = 32 × 2^30 bytes = 34.36 GB.
    assert catalog.lookup("TPU v4").memory_gb * 1e9 == pytest.approx(32 * 2**30, rel=1e-3)


def test_h100_pcie_is_a_different_row_with_its_own_peak(catalog):
    # H100 whitepaper v1.04 Table 1: H100 PCIe BF16 756 TF dense (1,513 sparse), not the SXM5's 989.4.
    pcie = catalog.lookup("H100 PCIe")
    assert pcie.id == "h100-pcie-80gb"
    assert pcie.peak_flops("bf16") == pytest.approx(756e12, rel=1e-12)


@pytest.mark.parametrize("name, accel_id", [
    ("H100 (PCIe)", "h100-pcie-80gb"),     # the words in parentheses name the variant
    ("A100 (40GB)", "a100-sxm4-40gb"),
    ("V100 (16GB)", "v100-sxm2-16gb"),
    ("H100 (Hopper)", "h100-sxm5-80gb"),   # a remark in parentheses that names no variant is ignored
])
def test_parenthesized_variant_is_not_dropped(catalog, name, accel_id):
    assert catalog.lookup(name).id == accel_id

@pytest.mark.parametrize("name, accel_id, memory_gb", [
    # A remark that gives a memory size picks the variant of that size: 94 GB is the H100 NVL (NVIDIA H100 NVL
    # product brief: 94 GB HBM3), not the 80 GB SXM5 that "H100" alone reads as.
    ("H100 (94GB memory)", "h100-nvl-94gb", 94),
    ("A100 (80GB memory)", "a100-sxm4-80gb", 80),  # the size the bare name reads as: unchanged
    ("V100 (16 GB HBM2)", "v100-sxm2-16gb", 16),  # "V100" alone reads as the 32 GB card
])
def test_a_remarked_memory_size_picks_its_variant(catalog, name, accel_id, memory_gb):
    found = catalog.lookup(name)
    assert (found.id, found.memory_gb) == (accel_id, memory_gb)


def test_a_remarked_memory_size_no_variant_has_is_not_resolved(catalog):
    # No H100 has 40 GB (H100 whitepaper v1.04: 80 GB SXM5 and PCIe, 94 GB NVL): reading "H100 (40GB)" as the
    # 80 GB SXM5 would check the memory against twice what the claim says; it is an unknown accelerator (H001).
    assert catalog.lookup("H100 (40GB)") is None
    assert any("H100" in c for c in catalog.close_matches("H100 (40GB)"))



@pytest.mark.parametrize("name", ["H1000", "A1000", "H100X", "B2000", ""])
def test_near_misses_are_unknown(catalog, name):
    assert catalog.lookup(name) is None


@pytest.mark.parametrize("name, accel_id", [
    ("TPU v4 pod", "tpu-v4"),  # a pod of TPU v4 chips: the accelerator is read, no count (the chips come elsewhere)
    ("Cloud TPU v3 Pod", "tpu-v3"),  # Noisy Student (Xie et al. 2020)
    ("16 GB NVIDIA V100", "v100-sxm2-16gb"),  # the memory written before the name (DALL-E, Ramesh et al. 2021)
])
def test_a_pod_or_a_memory_written_first_names_the_accelerator(catalog, name, accel_id):
    assert catalog.lookup(name).id == accel_id


def test_h1000_close_matches_include_an_h100(catalog):
    close = catalog.close_matches("H1000")
    assert close, "no close matches"
    assert any("H100" in c for c in close), close


def test_a10_is_not_a_prefix_match(catalog):
    # A10 (125 TF bf16 per NVIDIA's A10 datasheet) is neither an A100 nor an A10G.
    assert catalog.lookup("A10").id == "a10"
    assert catalog.lookup("A10").peak_flops("bf16") == pytest.approx(125e12)
    assert catalog.lookup("A10G").id == "a10g"


def test_volta_has_no_bf16_peak(catalog):
    # NVIDIA V100 datasheet: no bfloat16 tensor cores; 125 TF is FP16 tensor.
    v100 = catalog.lookup("V100")
    assert v100.peak_flops("bf16") is None
    assert v100.peak_flops("fp16") == pytest.approx(125e12)
    assert v100.default_precision == "fp16"


def test_catalog_has_at_least_40_rows(catalog):
    assert len(catalog) >= 40
    ids = [a.id for a in catalog]
    assert len(set(ids)) == len(ids)


def test_every_figure_has_a_source():
    frame = pd.read_csv(data_path("accelerators.csv"), dtype=str, keep_default_na=False)
    sources = {"memory_gb": "source_memory", "tdp_w": "source_tdp",
               **{col: "source_compute" for col in PRECISION_COLUMNS.values()}}
    missing = [(row["id"], col) for _, row in frame.iterrows() for col, src in sources.items()
               if row[col].strip() and not row[src].strip()]
    assert missing == []
    # And every row states at least one peak or says why not.
    for _, row in frame.iterrows():
        assert row["source_compute"].strip(), row["id"]


def test_every_alias_resolves_to_its_own_row(catalog):
    frame = pd.read_csv(data_path("accelerators.csv"), dtype=str, keep_default_na=False)
    for _, row in frame.iterrows():
        for alias in [row["id"], row["name"], *[a for a in row["aliases"].split(";") if a.strip()]]:
            hit = catalog.lookup(alias)
            assert hit is not None and hit.id == row["id"], (alias, row["id"], hit and hit.id)


def test_dense_peaks_are_not_sparse_headlines(catalog):
    # NVIDIA prints 2:4-sparse figures as headlines (H100 SXM "1,979 TFLOPS"); the catalog keeps dense ones.
    assert catalog.lookup("H100").peak_flops("bf16") < 1.5e15
    assert catalog.lookup("A100").peak_flops("bf16") == pytest.approx(312e12)  # not 624


# ------------------------------------------------------------------------------- unknown hardware in a claim


def test_unknown_accelerator_gives_h001_and_no_peak():
    doc = to_json(check_records([{"id": "h1000-run", "params": "70B", "tokens": "1.4T", "hardware": "H1000",
                                  "chips": 2048, "chip_hours": "1M"}]))
    claim = doc["claims"][0]
    h001 = one_finding(claim, "H001")
    assert h001["severity"] == "warning"
    assert "H1000" in h001["message"]
    assert "H100" in h001["message"].split("close matches", 1)[1]
    assert claim["status"] == "warn"
    assert claim["hardware"]["accelerator"] is None
    q = claim["quantities"]
    # No silent fallback: nothing taken from a catalog row, so nothing that needs a peak or memory.
    for name in ("peak_flops_per_chip", "memory_per_chip", "mfu", "min_chips_memory"):
        assert name not in q, name
    assert [f["rule"] for f in claim["findings"] if f["rule"] in ("C003", "C005", "C006", "M001", "U001")] == []


def test_known_accelerator_fills_peak_and_memory_from_the_catalog():
    doc = to_json(check_records([{"id": "a", "params": "70B", "hardware": "H100", "chips": 8}]))
    q = doc["claims"][0]["quantities"]
    assert q["peak_flops_per_chip"]["value"] == H100_SXM_BF16
    assert q["peak_flops_per_chip"]["source"] == "catalog"
    assert q["memory_per_chip"]["value"] == 80e9
    assert q["memory_per_chip"]["source"] == "catalog"


def test_cli_hardware_lists_and_looks_up(cli_run):
    res = cli_run("hardware")
    assert res.exit_code == 0, res.output
    assert "h100-sxm5-80gb" in res.stdout and "tpu-v4" in res.stdout and "mi300x" in res.stdout
    res = cli_run("hardware", "H100")
    assert res.exit_code == 0, res.output
    assert "989.4" in res.stdout
    assert "whitepaper" in res.stdout.lower()   # the source is shown
    res = cli_run("hardware", "MI300X", "--format", "json")
    assert res.exit_code == 0, res.output
    [row] = res.json()
    assert row["id"] == "mi300x" and row["peak_tflops"]["bf16"] == pytest.approx(1307.4)


def test_cli_hardware_unknown_is_a_usage_error_with_close_matches(cli_run):
    res = cli_run("hardware", "H1000")
    assert res.exit_code == 2
    assert "H1000" in res.stderr and "H100" in res.stderr


def test_epoch_spelling_of_the_mi250x_resolves():
    # Epoch AI's hardware column writes "AMD Radeon Instinct MI250X" (AMD's own name before 2021).
    from audit.catalog import load_catalog

    hit = load_catalog().lookup("AMD Radeon Instinct MI250X")
    assert hit is not None and hit.peak_flops("bf16") == pytest.approx(383e12)


# ------------------------------------------------------------------------------- families and close matches


def test_every_row_has_a_family_of_its_vendor():
    frame = pd.read_csv(data_path("accelerators.csv"), dtype=str, keep_default_na=False)
    assert (frame["family"].str.strip() != "").all()
    # A family never spans vendors: its name starts with the row's vendor.
    for _, row in frame.iterrows():
        assert row["family"].startswith(row["vendor"] + " "), (row["id"], row["family"], row["vendor"])


@pytest.mark.parametrize("name, family", [
    ("GTX 1070", "NVIDIA"), ("GTX 1080 Ti", "NVIDIA"), ("H1000", "NVIDIA Hopper"), ("MI400", "AMD CDNA"),
    ("TPU v8", "Google TPU"), ("Tesla P40", "NVIDIA Pascal"), ("RTX 3080", "NVIDIA"), ("Ascend 920", "Huawei Ascend"),
    ("Trainium4", "AWS Trainium"), ("Gaudi 4", "Intel Gaudi"),
])
def test_close_matches_stay_in_the_family(catalog, name, family):
    close = catalog.close_matches(name)
    assert close, name
    by_name = {a.name: a for a in catalog}
    assert all(by_name[c].family.startswith(family) for c in close), close


def test_a_geforce_card_never_suggests_a_data_center_part(catalog):
    # Issue 9: "GTX 1080 Ti" must not suggest an H100. (It is in the catalog now; its neighbours are GeForce.)
    for name in ("GTX 1080 Ti", "GTX 1070", "GeForce GTX 1660", "RTX 3080"):
        close = catalog.close_matches(name)
        assert not any(c.startswith(("NVIDIA H", "NVIDIA A100", "NVIDIA B")) for c in close), (name, close)


@pytest.mark.parametrize("name", ["Graphcore IPU", "Graphcore Colossus MK2", "CPU", "Intel Xeon", "3090",
                                  "SambaNova SN40L", "Groq LPU", "Apple M2"])
def test_no_suggestion_without_a_family(catalog, name):
    assert catalog.lookup(name) is None
    assert catalog.close_matches(name) == []


@pytest.mark.parametrize("name", ["K800", "GTX 10800 Ti", "GTX 580 Ti", "TPU v10", "Ascend 9100", "K40x",
                                  "TITAN", "TITAN X", "RTX 6000", "V100 DGXS 64GB", "Quadro RTX 9000"])
def test_new_names_are_exact_not_loose(catalog, name):
    # TITAN / TITAN X / RTX 6000 each name several different cards, so none is an alias.
    assert catalog.lookup(name) is None


# ------------------------------------------------------------------------------- rows added for Epoch's names


@pytest.mark.parametrize("name, accel_id, precision, peak_tflops, memory_gb", [
    # Each figure as the vendor states it (see the row's source_* columns).
    ("NVIDIA Tesla V100 DGXS 32 GB", "v100-dgxs-32gb", "fp16", 125, 32),   # DGX Station: 500 TF / 4 GPUs
    ("Tesla V100-SXM3-32GB", "v100-sxm3-32gb", "fp16", 125, 32),           # DGX-2: 2 PF / 16 GPUs
    ("NVIDIA Tesla K80", "k80", "fp32", 8.73, 24),                         # K80 datasheet, per board
    ("NVIDIA Tesla K40c", "k40", "fp32", 5.04, 12),                        # 2880 cores x 2 x 875 MHz
    ("NVIDIA GeForce GTX 580", "gtx-580", "fp32", 1.581, 1.536),           # 512 x 2 x 1544 MHz
    ("NVIDIA GeForce GTX TITAN X", "gtx-titan-x", "fp32", 6.605, 12),      # 3072 x 2 x 1075 MHz
    ("NVIDIA GeForce RTX 2080 Ti 11GB", "rtx-2080-ti", "fp16", 53.8, 11),  # Turing whitepaper, FP32 accumulate
    ("NVIDIA Quadro RTX 6000", "quadro-rtx-6000", "fp16", 130.5, 24),
    ("NVIDIA RTX A6000", "rtx-a6000", "bf16", 154.8, 48),                  # 309.7 sparse / 2
    ("Huawei Ascend 910", "ascend-910", "fp16", 256, 32),                  # Huawei, Aug 2019
    ("Google TPU v6e Trillium", "tpu-v6e", "bf16", 918, 32),
])
def test_rows_for_epoch_names(catalog, name, accel_id, precision, peak_tflops, memory_gb):
    accel = catalog.lookup(name)
    assert accel is not None and accel.id == accel_id
    assert accel.peak_flops(precision) == pytest.approx(peak_tflops * 1e12, rel=1e-12)
    assert accel.memory_gb == pytest.approx(memory_gb)


def test_multi_gpu_boards_are_counted_per_board(catalog):
    # A K80 board holds 2 GK210 GPUs; a GTX 590 2 GF110s; a Tesla S1070 box 4 GPUs. The per-GPU K80 row is half.
    assert catalog.lookup("K80").unit == "package"
    assert catalog.lookup("GTX 590").unit == "package"
    assert catalog.lookup("Tesla S1070").unit == "system"
    gk210 = catalog.lookup("K80 GK210")
    assert gk210.unit == "gpu"
    assert gk210.peak_flops("fp32") * 2 == pytest.approx(catalog.lookup("K80").peak_flops("fp32"))


def test_parts_without_a_comparable_flop_figure_have_no_peak(catalog):
    # TPU v1 is INT8-only (92 TOPS, Jouppi et al. 2017); Cerebras publishes no dense FLOP/s for the WSE-2.
    for name in ("TPU v1", "Cerebras CS-2"):
        accel = catalog.lookup(name)
        assert accel is not None and accel.peaks_tflops == {}, name


def test_pre_tensor_core_parts_default_to_fp32(catalog):
    for name in ("K80", "K40", "GTX 580", "GTX TITAN X", "M40", "GTX 1080 Ti", "Tesla S1070"):
        accel = catalog.lookup(name)
        assert accel.default_precision == "fp32" and "bf16" not in accel.peaks_tflops, name


# ------------------------------------------------------------------------------- mixes


@pytest.mark.parametrize("text, ids", [
    ("NVIDIA A100,NVIDIA V100", ["a100-sxm4-80gb", "v100-sxm2-32gb"]),
    ("Google TPU v3, Google TPU v4", ["tpu-v3", "tpu-v4"]),
    ("A100 + H100", ["a100-sxm4-80gb", "h100-sxm5-80gb"]),
    ("A100 and H100", ["a100-sxm4-80gb", "h100-sxm5-80gb"]),
    ("TPU v4; TPU v5e; TPU v6e", ["tpu-v4", "tpu-v5e", "tpu-v6e"]),
    ("A100, NVIDIA A100", ["a100-sxm4-80gb"]),                              # the same part twice: one
])
def test_lookup_mix_resolves_each_part(catalog, text, ids):
    assert catalog.lookup(text) is None
    assert [a.id for a in catalog.lookup_mix(text)] == ids


@pytest.mark.parametrize("text, chips, accel", [
    ("256x A100", 256, "a100-sxm4-80gb"),
    ("256 × H100", 256, "h100-sxm5-80gb"),
    ("2,048 H100 GPUs", 2048, "h100-sxm5-80gb"),        # a thousands separator, not two parts
    ("A100 x 256", 256, "a100-sxm4-80gb"),
    ("H100 (512)", 512, "h100-sxm5-80gb"),             # a name the catalog finds whole, counted in parentheses
    ("H100 (512 GPUs)", 512, "h100-sxm5-80gb"),
    ("RTX 3090", None, "rtx-3090"),                    # digits of a name are not a count
    ("NVIDIA A100 SXM4 40 GB", None, "a100-sxm4-40gb"),
    ("H1000 x 8", None, None),                         # no catalog name beside the count
    # Systems of a size their datasheet gives (audit/data/systems.csv): NVIDIA's DGX A100 and DGX H100 datasheets,
    # 8 GPUs each; Nemotron-4 340B's report writes its cluster as 768 DGX H100 nodes (6,144 H100).
    ("8x DGX A100", 64, "a100-sxm4-80gb"),             # eight servers of 8 GPUs each: 64, not 8 chips
    ("768 DGX H100 nodes", 6144, "h100-sxm5-80gb"),
    ("DGX H100 (768 nodes)", 6144, "h100-sxm5-80gb"),
    ("140 DGX A100 systems", 1120, "a100-sxm4-80gb"),
    ("768 nodes of 8x H100", 6144, "h100-sxm5-80gb"),  # a size written in: 768 x 8
    ("96 nodes x 8 A100 GPUs", 768, "a100-sxm4-80gb"),
    ("HGX H100 (8)", None, "h100-sxm5-80gb"),          # a board of GPUs: the count is not read
    ("16x HGX H100", None, None),                      # boards of 4 or 8 GPUs: the size is not known
    ("H100 (96 nodes)", None, "h100-sxm5-80gb"),       # nodes of a size not given: not chips
    ("3072 NVIDIA H100s", 3072, "h100-sxm5-80gb"),     # Databricks' words for DBRX's cluster: a plural model number
    ("2048 A100s", 2048, "a100-sxm4-80gb"),
    ("1024, 16 GB NVIDIA V100 GPUs", 1024, "v100-sxm2-16gb"),  # DALL-E's words: a count, a comma, what it counts
    # A Cloud TPU v2 or v3 device holds 4 chips (Google Cloud TPU docs); BERT (Devlin et al. 2019, Sec. A.2):
    # "16 Cloud TPUs (64 TPU chips total)".
    ("16 Cloud TPU v2", 64, "tpu-v2"),
    ("16 Cloud TPU v2 chips", 16, "tpu-v2"),                    # chips said: each is one
])
def test_a_count_beside_an_accelerator_is_its_chips(catalog, text, chips, accel):
    counted = catalog.counted(text)
    if chips is None:
        assert counted is None
        assert getattr(catalog.lookup(text), "id", None) == accel
    else:
        assert counted is not None and counted[0] == chips and counted[1].id == accel


@pytest.mark.parametrize("text, counts", [
    ("256x A100 + 256x H100", [256, 256]),
    ("1,024 A100, 512 H100", [1024, 512]),
    ("A100 (64); V100 (32)", [64, 32]),
    ("NVIDIA A100,NVIDIA V100", None),                  # no counts: none
    ("256x A100, H100", None),                          # one part without: none
])
def test_a_mix_counts_its_parts_when_each_has_a_count(catalog, text, counts):
    assert catalog.mix_counts(text) == counts


@pytest.mark.parametrize("text", [
    "H100",                                 # one name: lookup, not a mix
    "NVIDIA B300 (Blackwell Ultra, HGX)",   # a comma inside parentheses is part of one name
    "AMD Instinct MI250X / MI250",          # ROCm's name of one device: "/" is not a separator
    "H1000",
    "A100, H1000",                          # a part unknown: not resolved (resolve_mix says which)
    "",
])
def test_lookup_mix_is_none_unless_every_part_of_a_list_resolves(catalog, text):
    assert catalog.lookup_mix(text) is None


def test_resolve_mix_names_the_unknown_part(catalog):
    parts = catalog.resolve_mix("NVIDIA A100, NVIDIA H1000")
    assert [(text, a and a.id) for text, a in parts] == [("NVIDIA A100", "a100-sxm4-80gb"), ("NVIDIA H1000", None)]
    assert any("H100" in c for c in catalog.close_matches(parts[1][0]))


def test_mix_peak_averages_by_chip_count_or_needs_a_shared_peak(catalog):
    from audit.catalog import mix_memory_gb, mix_peak

    a100, v100 = catalog.lookup("A100"), catalog.lookup("V100")
    # EU AI Act GPAI guidance: a mixed cluster's peak is averaged over its chips. 3 A100 (312 bf16) and
    # 1 V100 (125 fp16, its usual precision): (3 x 312 + 125) / 4 = 265.25 TF.
    assert mix_peak([a100, v100], counts=[3, 1]) == pytest.approx(265.25e12)
    # Without counts the peaks differ: the mix's peak cannot be checked.
    assert mix_peak([a100, v100]) is None
    # Parts that share a peak (A100 40GB and 80GB: 312) need no counts; their memories differ.
    a40, a80 = catalog.lookup("A100 40GB"), catalog.lookup("A100 80GB")
    assert mix_peak([a40, a80]) == pytest.approx(312e12)
    assert mix_memory_gb([a40, a80]) is None
    assert mix_memory_gb([a40, a80], counts=[1, 1]) == pytest.approx(60)
    # A stated precision one part lacks: no peak (V100 has no bf16).
    assert mix_peak([a100, v100], "bf16", counts=[1, 1]) is None
    # Counts that do not fit the parts: no peak.
    assert mix_peak([a100, v100], counts=[1]) is None
    assert mix_peak([a100, v100], counts=[1, 0]) is None


def test_catalog_revision_date_follows_the_catalog_file():
    """The catalog's revision date (shown in every HTML report's footer) belongs to this exact accelerators.csv:
    editing the catalog without setting a new date in catalog_revision.json fails here."""
    import datetime
    import hashlib
    import json

    from audit.catalog import catalog_revision

    meta = json.loads(data_path("catalog_revision.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256(data_path("accelerators.csv").read_bytes()).hexdigest()
    assert meta["accelerators_csv_sha256"] == digest, (
        "accelerators.csv changed: set 'revised' to today's date and the new sha256 in catalog_revision.json")
    assert catalog_revision() == meta["revised"]
    assert datetime.date.fromisoformat(catalog_revision()) <= datetime.date.today()


def test_a_counted_mix_is_checked_at_its_chip_weighted_peak():
    """'256x A100 + 256x H100' (EU AI Act GPAI guidance, Annex A: a mixed cluster's peak is the chip-weighted mean):
    (256 x 312 + 256 x 989.4) / 512 = 650.7 TFLOP/s bf16 (NVIDIA A100 datasheet; H100 whitepaper Table 1), and 512
    chips. 6 x 7e9 x 1e12 = 4.2e22 FLOP in 10 days: 4.2e22 / (512 x 240 h x 3600 x 650.7e12) = 14.6 % MFU."""
    peak = (256 * A100_BF16 + 256 * H100_SXM_BF16) / 512
    doc = to_json(check_records([
        {"id": "counted", "params": "7B", "tokens": "1T", "hardware": "256x A100 + 256x H100", "wall_clock_days": 10},
        {"id": "more", "params": "7B", "tokens": "1T", "hardware": "256x A100 + 256x H100", "chips": 600,
         "wall_clock_days": 10}]))
    c = doc["claims"][0]
    assert c["quantities"]["peak_flops_per_chip"]["value"] == pytest.approx(peak)
    assert c["quantities"]["chips"]["value"] == 512 and c["quantities"]["chips"]["source"] == "derived"
    assert c["quantities"]["mfu"]["value"] == pytest.approx(4.2e22 / (512 * 240 * 3600 * peak))
    assert "650.7 TFLOP/s" in one_finding(c, "H004")["message"]
    # A claimed count that is not the cell's: a warning naming both.
    more = [f for f in doc["claims"][1]["findings"] if f["rule"] == "H004" and f["quantity"] == "chips"]
    assert len(more) == 1 and more[0]["severity"] == "warning"
    assert "600" in more[0]["message"] and "512" in more[0]["message"]


@pytest.mark.parametrize(("name", "accel_id"), [
    ("NVIDIA H100 Tensor Core GPU", "h100-sxm5-80gb"),    # NVIDIA's product name (datasheet title)
    ("NVIDIA B200-SXM-180GB", "b200"),                    # MLPerf Training v5.0 results' accelerator column
    ("Intel Gaudi2 AI accelerator", "gaudi2"),            # Intel's product name
    ("Blackwell B200", "b200"),                           # the family's name beside the part's
    ("A100-40G", "a100-sxm4-40gb"),                       # TinyLlama README ("16 A100-40G GPUs")
    ("H100-80G", "h100-sxm5-80gb"),                       # Phi-3 model cards ("512 H100-80G")
    ("H100 80GB SXM5", "h100-sxm5-80gb"),                 # the alias's words in another order
])
def test_names_as_papers_and_vendors_write_them(catalog, name, accel_id):
    hit = catalog.lookup(name)
    assert hit is not None and hit.id == accel_id, (name, hit and hit.id)


@pytest.mark.parametrize("name", ["NVIDIA GeForce GTX 1080", "RTX 6000", "3090", "TPU v4 pod slice of Jupiter"])
def test_a_name_missing_a_word_of_every_alias_is_not_matched_by_its_words(catalog, name):
    # "GTX 1080" has no catalog row; the GTX 1080 Ti's words hold it, but its "Ti" is not in the name: a
    # different card (8.9 against 11.3 TFLOP/s FP32), so no match rather than the wrong variant.
    assert catalog.lookup(name) is None


@pytest.mark.parametrize(("typo", "meant"), [("Guadi 2", "Intel Gaudi 2"), ("Trainum2", "AWS Trainium2")])
def test_a_misspelt_series_still_gets_its_near_spelling(catalog, typo, meant):
    assert catalog.lookup(typo) is None
    assert catalog.close_matches(typo)[0] == meant


def test_a_gb200_superchip_is_two_gpus(catalog):
    # NVIDIA GB200 NVL72: 36 GB200 Grace Blackwell Superchips = 72 Blackwell GPUs, each 2,500 dense BF16
    # TFLOP/s (5 PF with sparsity) and 186 GB. Counted as superchips, the peak and memory are per superchip.
    sc, gpu = catalog.lookup("GB200 Superchip"), catalog.lookup("GB200")
    assert sc.unit == "package" and gpu.unit == "gpu"
    assert sc.peak_flops("bf16") == pytest.approx(2 * 2500e12) and gpu.peak_flops("bf16") == pytest.approx(2500e12)
    assert sc.memory_gb == pytest.approx(2 * 186)
    assert catalog.lookup("GB300 Superchip").peak_flops("bf16") == pytest.approx(2 * 2500e12)


@pytest.mark.parametrize("text, accel, sizes", [
    ("A100", "a100-sxm4-80gb", [40, 80]),       # NVIDIA A100 datasheet: 40GB and 80GB variants
    ("NVIDIA A100", "a100-sxm4-80gb", [40, 80]),
    ("V100", "v100-sxm2-32gb", [16, 32]),       # NVIDIA V100 datasheet: 16GB and 32GB
    ("A100 40GB", None, None),                  # the memory is named: nothing assumed
    ("A100-80G", None, None),
    ("MI250X", None, None),                     # the package; its GCD (64 GB) is one die, not a variant
    ("TPU v4", None, None),                     # one memory size
])
def test_a_name_without_memory_says_which_variant_it_reads(catalog, text, accel, sizes):
    found = catalog.memory_variants(text)
    if accel is None:
        assert found is None
    else:
        assert found is not None and found[0].id == accel and found[1] == sizes


def test_the_memory_check_says_when_the_memory_was_assumed(tmp_path):
    """phi-1.5 trained on A100-40G (its model card) while a sheet writes "A100": the memory check reads the 80 GB
    variant (lenient) and now says so, naming the other size."""
    from audit.api import check, to_json

    path = tmp_path / "runs.csv"
    path.write_text("id,params,chips,hardware\nbare,1.3B,32,A100\nnamed,1.3B,32,A100 40GB\n", encoding="utf-8")
    claims = to_json(check([str(path)]))["claims"]
    m001 = {c["id"]: next(f["message"] for f in c["findings"] if f["rule"] == "M001") for c in claims}
    assert "'A100' gives no memory size: read as the NVIDIA A100 SXM4 80GB (80 GB), other variants 40 GB" \
        in m001["bare"]
    assert "gives no memory size" not in m001["named"]


def test_a_count_of_nodes_of_unknown_size_is_said_not_dropped(tmp_path):
    """"H100 (96 nodes)": how many H100 a node holds is not given, so the count is not chips; the accelerator is
    read, and the count not read is said (V003) instead of dropped. "DGX H100 (96 nodes)" is 768 H100 (NVIDIA's
    DGX H100 datasheet: 8 GPUs each), nothing to say."""
    from audit.api import check_records, to_json

    doc = to_json(check_records([{"id": "a", "hardware": "H100 (96 nodes)", "params": "7B"},
                                 {"id": "b", "hardware": "DGX H100 (96 nodes)", "params": "7B"}]))
    a, b = doc["claims"]
    said = [f["message"] for f in a["findings"] if f["rule"] == "V003"]
    assert said and "96 nodes" in said[0] and "give chips" in said[0]
    assert a["hardware"]["accelerator"] == "h100-sxm5-80gb"
    assert not [f for f in b["findings"] if f["rule"] == "V003"]
    assert b["quantities"]["chips"]["value"] == 96 * 8


@pytest.mark.parametrize(("text", "accel", "count"), [
    ("96 H100 nodes", "h100-sxm5-80gb", "96 nodes"),   # was H001, "no close match", and 'its count of 100 nodes'
    ("96 nodes of H100", "h100-sxm5-80gb", "96 nodes"),  # was H001
    ("4x A100 servers", "a100-sxm4-80gb", "4 servers"),
])
def test_nodes_of_unknown_size_around_a_name_read_the_accelerator_not_the_count(text, accel, count):
    """The count of systems before the name, the word after it (or "N nodes of NAME"): the accelerator is read,
    no chips, and the count said as written, not the digits that end the name ("H100 nodes" counts no 100)."""
    from audit.api import check_records, to_json

    [claim] = to_json(check_records([{"id": "a", "hardware": text, "params": "7B"}]))["claims"]
    assert claim["hardware"]["accelerator"] == accel
    assert "chips" not in claim["quantities"] or claim["quantities"]["chips"]["value"] is None
    said = [f["message"] for f in claim["findings"] if f["rule"] == "V003"]
    assert said == [f"Hardware written {text!r}: its count of {count} is not read as accelerators (how many each "
                    f"holds is not given); give chips"]
    assert not [f for f in claim["findings"] if f["rule"] == "H001"]


def test_nodes_of_unknown_size_beside_a_chip_count_are_not_said():
    """A team's run sheet writes the node type ("8xH100 nodes") and the GPUs in a column of their own: the chips are
    given, so the note that the hardware text's count is not read as chips (V003) was noise on every such row (38
    honest rows of 720). Without a chip count it is said, as before."""
    from audit.api import check_records, to_json

    given, alone = to_json(check_records([{"id": "a", "hardware": "8xH100 nodes", "params": "7B", "chips": 64},
                                          {"id": "b", "hardware": "8xH100 nodes", "params": "7B"}]))["claims"]
    assert given["quantities"]["chips"]["value"] == 64
    assert not [f for f in given["findings"] if f["rule"] == "V003"]
    assert [f["rule"] for f in alone["findings"] if f["rule"] == "V003"] == ["V003"]


@pytest.mark.parametrize("text, accel", [
    ("H100s", "h100-sxm5-80gb"), ("NVIDIA H100s", "h100-sxm5-80gb"), ("A100s", "a100-sxm4-80gb"),
    ("L40S", "l40s"),  # a name that ends in S is itself: NVIDIA's L40S is not a plural of the L40
    ("L40", "l40"),
])
def test_a_plural_model_number_is_the_model(catalog, text, accel):
    assert catalog.lookup(text).id == accel


@pytest.mark.parametrize("name", ["DGX-GB200", "DGX GB200", "NVIDIA DGX GB200"])
def test_a_dgx_gb200_is_a_gb200(catalog, name):
    """NVIDIA's NeMo performance tables name the system "DGX-GB200" (as "DGX-H100" and "DGX-B200", which were read):
    an unknown accelerator whose close matches were the B200 and H200, not the GB200. The peak per Blackwell GPU
    of a GB200: 2,500 TFLOP/s dense BF16 (NVIDIA's GB200 NVL72 specification table, 2025 revision: 5 PFLOP/s
    "with sparsity", halved)."""
    accel = catalog.lookup(name)
    assert accel is not None and accel.id == "gb200"
    assert accel.peak_flops("bf16") == pytest.approx(2.5e15, rel=1e-12)


def test_a_sentence_that_names_a_known_part_suggests_it(catalog):
    """Falcon2-11B's model card writes its hardware as a sentence, "on average 1024 A100 40GB GPUs in 128 p4d
    instances": not a name the catalog knows whole (H001, rightly), but its close matches were none, though the
    A100 40GB is named in it. A misspelt name keeps the suggestions of its series."""
    assert catalog.lookup("on average 1024 A100 40GB GPUs in 128 p4d instances") is None
    assert catalog.close_matches("on average 1024 A100 40GB GPUs in 128 p4d instances")[0] == "NVIDIA A100 SXM4 40GB"
    assert "NVIDIA H100 SXM5 80GB" in catalog.close_matches("H1000")
