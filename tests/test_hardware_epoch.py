"""The catalog against Epoch AI's databases (``../shared/data/epoch/``, CC-BY, Epoch AI).

1. Every row of ``notable_ai_models.csv`` that names a real accelerator resolves, as one name
   (:meth:`Catalog.lookup`) or as a mix of several (:meth:`Catalog.lookup_mix`); the exceptions are listed with
   their reason.
2. Where ``audit/data/accelerators.csv`` and ``ml_hardware.csv`` disagree (dense 16-bit tensor peak, FP32, TF32,
   FP8, memory), each disagreement is listed with its reason; a new one without a reason fails, and so does a
   listed one that no longer occurs (the list stays true).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from audit.catalog import load_catalog, split_mix

EPOCH = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "epoch"
MODELS = EPOCH / "notable_ai_models.csv"
HARDWARE = EPOCH / "ml_hardware.csv"

needs_models = pytest.mark.skipif(not MODELS.exists(), reason=f"Epoch AI's model database is not at {MODELS}")
needs_hardware = pytest.mark.skipif(not HARDWARE.exists(), reason=f"Epoch AI's hardware database is not at {HARDWARE}")

#: Names in Epoch's `Training hardware` column that are not a real accelerator the catalog can hold, with why.
#: (None today: every name in the file is an accelerator with a catalog row. Add e.g. "CPU" here with its reason.)
NOT_ACCELERATORS: dict[str, str] = {}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def hardware_cells():
    return pd.read_csv(MODELS, usecols=["Training hardware"])["Training hardware"].dropna().astype(str).tolist()


@needs_models
def test_every_epoch_row_naming_hardware_resolves(catalog, hardware_cells):
    unresolved = sorted({cell for cell in hardware_cells
                         if catalog.lookup(cell) is None and catalog.lookup_mix(cell) is None
                         and not all(part in NOT_ACCELERATORS for part in split_mix(cell))})
    assert unresolved == []
    assert len(hardware_cells) > 300    # the file was read (345 rows name hardware in the 2025-10-28 release)


@needs_models
def test_every_name_epoch_uses_resolves_exactly(catalog, hardware_cells):
    names = sorted({part for cell in hardware_cells for part in split_mix(cell)})
    unknown = [n for n in names if catalog.lookup(n) is None and n not in NOT_ACCELERATORS]
    assert unknown == []
    stale = [n for n in NOT_ACCELERATORS if n not in names]
    assert stale == [], "listed as exceptions but no longer in Epoch's file"


@needs_models
@pytest.mark.parametrize("cell, ids", [
    # Epoch's spellings of the variants the catalog had no row for (issue 9: 73 % of these rows resolved).
    ("NVIDIA Tesla V100 DGXS 32 GB", ["v100-dgxs-32gb"]),
    ("NVIDIA Tesla V100 SXM3 32 GB", ["v100-sxm3-32gb"]),
    ("NVIDIA GeForce GTX TITAN X", ["gtx-titan-x"]),
    ("NVIDIA Tesla K40t", ["k40"]),
    ("Google TPU v6e Trillium", ["tpu-v6e"]),
    ("Huawei Ascend 910B", ["ascend-910b"]),
    ("Cerebras CS-2", ["cerebras-wse2"]),
    # Mixes: each part resolved, in order.
    ("NVIDIA Tesla V100 DGXS 32 GB,Huawei Ascend 910", ["v100-dgxs-32gb", "ascend-910"]),
    ("Google TPU v4,Google TPU v3", ["tpu-v4", "tpu-v3"]),
    ("Amazon Trainium1,NVIDIA A100,NVIDIA H100 SXM5 80GB", ["trainium1", "a100-sxm4-80gb", "h100-sxm5-80gb"]),
    ("Google TPU v2,Google TPU v1", ["tpu-v2", "tpu-v1"]),
])
def test_epoch_spellings_resolve_to_their_rows(catalog, hardware_cells, cell, ids):
    assert any(cell == c or cell in split_mix(c) for c in hardware_cells)    # Epoch writes it so
    single = catalog.lookup(cell)
    got = [single.id] if single is not None else [a.id for a in catalog.lookup_mix(cell)]
    assert got == ids


# ------------------------------------------------------------------------------- disagreements with ml_hardware

#: Epoch columns compared, in FLOP/s or bytes; "tensor16" is Epoch's `Tensor-FP16/BF16` column, or its `FP16`
#: column where the tensor one is blank, against the catalog's bf16 peak (fp16 where the part has no bf16).
_EPOCH_COLUMNS = {
    "fp32": "FP32 (single precision) performance (FLOP/s)",
    "tf32": "TF32 (TensorFloat-32) performance (FLOP/s)",
    "fp8": "FP8 performance (FLOP/s)",
    "memory": "Memory (bytes)",
}
#: Differences up to 2 % are rounding (15.67 vs 15.7 TF; 80 GB vs 79.6).
TOLERANCE = 0.02

_GIB = "Epoch records the vendor's GiB figure as GB (32 GiB = 34.36 GB); the catalog converts to decimal GB"
_NON_TENSOR_FP16 = ("Epoch leaves the tensor column blank and its FP16 column is the non-tensor (CUDA-core) FP16 "
                    "rate; the catalog's is the datasheet's dense tensor rate")

#: (Epoch's hardware name, quantity) -> why the catalog's figure differs. Each catalog figure is the vendor's.
KNOWN_DISAGREEMENTS: dict[tuple[str, str], str] = {
    # Units.
    ("Google TPU v2", "memory"): _GIB,
    ("Google TPU v3", "memory"): _GIB,
    ("Google TPU v4", "memory"): _GIB,
    ("Google TPU v7 Ironwood", "memory"): _GIB + " (192 GiB = 206.16 GB)",
    ("Amazon Trainium1", "memory"): _GIB,
    ("Amazon Trainium2", "memory"): _GIB + " (96 GiB = 103.08 GB)",
    ("NVIDIA GB300 (Blackwell Ultra)", "memory"):
        "Epoch uses the 288 GB marketing capacity; the catalog the usable 279 GB per GPU of the GB300 NVL72",
    # A different SKU behind the same bare name.
    ("NVIDIA A100", "memory"): "a different SKU: Epoch's bare 'A100' is the 40 GB launch part; the catalog's bare "
                               "A100 is the 80 GB SXM4 (larger-memory rule, same 312 TF peak)",
    ("NVIDIA A100 PCIe", "memory"): "a different SKU: Epoch's 'A100 PCIe' is the 40 GB card; the catalog's bare "
                                    "'A100 PCIe' is the 80 GB card (same peak)",
    ("NVIDIA Tesla V100 SXM2", "memory"): "a different SKU: Epoch's row is the 16 GB SXM2; the catalog's bare "
                                          "'V100 SXM2' is the 32 GB part (same 125 TF peak)",
    ("NVIDIA P100", "tensor16"): "a different SKU: Epoch's bare 'P100' has the PCIe card's figures (18.7 FP16); "
                                 "the catalog's bare P100 is the SXM2 part (21.2)",
    ("NVIDIA P100", "fp32"): "a different SKU: Epoch's bare 'P100' is the PCIe card (9.3); the catalog's is the "
                             "SXM2 (10.6)",
    ("Huawei Ascend 910B", "memory"): "a different variant: Epoch gives 32 GB (the 910B4's) for '910B'; the catalog's "
                                      "910B is the 910B2 with 64 GB, as Epoch itself lists for 910B1-B3",
    ("Huawei Ascend 910 (320 TFLOPS)", "tensor16"):
        "a different bin: Epoch's row is a 320 TF 910 variant; the lookup drops the parenthesised figure and finds "
        "the 910, which Huawei's launch announcement gives as 256 TF FP16",
    ("AMD Radeon Instinct MI300", "tensor16"):
        "Epoch's pre-launch 'MI300' row carries MI250X figures (383 TF, 47.9 FP32, 128 GB, from TechPowerUp); "
        "the MI300X datasheet gives 1307.4 TF dense and 192 GB",
    ("AMD Radeon Instinct MI300", "fp32"): "Epoch's pre-launch 'MI300' row carries MI250X figures; MI300X is 163.4",
    ("AMD Radeon Instinct MI300", "memory"): "Epoch's pre-launch 'MI300' row carries MI250X figures; MI300X has 192 GB",
    # Accumulate mode on GeForce cards.
    ("NVIDIA GeForce RTX 4090", "tensor16"):
        "Epoch lists the FP16-accumulate rate (330); training accumulates in FP32, half that rate on GeForce (165.2)",
    ("NVIDIA GeForce RTX 2080 Ti 11GB", "tensor16"):
        "Epoch lists the Founders Edition FP16-accumulate rate (113.8); the catalog has the reference card's "
        "FP32-accumulate rate from the Turing whitepaper (53.8)",
    ("NVIDIA GeForce RTX 3090", "tensor16"): _NON_TENSOR_FP16 + " (35.6 vs 71 with FP32 accumulate)",
    # Non-tensor FP16 where Epoch has no tensor figure.
    ("NVIDIA A10 PCIe", "tensor16"): _NON_TENSOR_FP16,
    ("NVIDIA A10G", "tensor16"): _NON_TENSOR_FP16,
    ("NVIDIA RTX A6000", "tensor16"): _NON_TENSOR_FP16,
    ("NVIDIA Quadro RTX 4000", "tensor16"): _NON_TENSOR_FP16,
    ("NVIDIA Quadro RTX 5000", "tensor16"): _NON_TENSOR_FP16,
    ("NVIDIA Quadro RTX 6000", "tensor16"): _NON_TENSOR_FP16,
    ("NVIDIA Quadro RTX 8000", "tensor16"): _NON_TENSOR_FP16,
    # Clock: Epoch's figure at another clock than the vendor's.
    ("Intel Habana Gaudi3", "tensor16"): "Epoch gives the effective 1678 at the 1600 MHz shipping clock; Intel's "
                                         "spec is 1835 at 1750 MHz",
    ("Intel Habana Gaudi3", "fp8"): "as its BF16: 1678 effective vs Intel's 1835",
    ("Intel Habana Gaudi2", "tensor16"): "Epoch lists 450; Intel's Hot Chips 2024 table gives 432",
    ("NVIDIA Tesla K80", "fp32"): "Epoch's 8.126 is TechPowerUp's 824 MHz boost; NVIDIA's datasheet gives 8.73 at "
                                  "875 MHz",
    ("NVIDIA Tesla V100 DGXS 16 GB", "fp32"): "Epoch's 16.2 is a TechPowerUp boost-clock figure; the DGX Station's "
                                              "V100 is NVIDIA's 15.7",
    ("NVIDIA Tesla P100 PCIe 16GB", "fp32"): "Epoch's 9.526 is TechPowerUp's boost-clock computation; NVIDIA's "
                                             "datasheet says 9.3",
    ("NVIDIA P100 PCIe 16GB", "tensor16"): "Epoch's 19.1 is a boost-clock computation; NVIDIA's datasheet says 18.7",
    ("NVIDIA P100 PCIe 16GB", "fp32"): "Epoch's 9.56 is a boost-clock computation; NVIDIA's datasheet says 9.3",
    # Epoch figures of unknown or inconsistent origin.
    ("NVIDIA H800 SXM5", "fp32"): "Epoch's 59.3 is TechPowerUp-derived; the H800 SXM5 has the H100 SXM5's 66.9",
    ("NVIDIA H800 SXM5", "tf32"): "Epoch's 454.5 is inconsistent with its own 989 BF16; the H100 SXM5's is 494.7",
    ("AMD Instinct MI355X", "fp8"): "Epoch's 4600 is the MI350X's FP8 (its own INT8 5033.2 is the MI355X's)",
    ("NVIDIA GB200", "fp32"): "Epoch has the 2024 datasheet's 90 per GPU; NVIDIA's 2025 GB200 NVL72 table gives 80",
    ("NVIDIA B200", "fp32"): "Epoch's 62.08 has no vendor source; NVIDIA's 2025 HGX table gives 75",
    ("NVIDIA B200", "tf32"): "Epoch's 1125 is half its BF16 figure; NVIDIA prints TF32 2.2 PF with sparsity, "
                             "1100 dense",
    ("NVIDIA B100", "tf32"): "Epoch's 875 is half its BF16 figure; NVIDIA prints TF32 1.8 PF with sparsity, 900 dense",
}


def _disagreements(catalog) -> dict[tuple[str, str], tuple[str, float, float]]:
    """(Epoch name, quantity) -> (catalog id, Epoch's value, the catalog's) beyond TOLERANCE."""
    frame = pd.read_csv(HARDWARE)
    found: dict[tuple[str, str], tuple[str, float, float]] = {}
    for _, row in frame.iterrows():
        name = str(row["Hardware name"])
        accel = catalog.lookup(name)
        if accel is None:
            continue

        def epoch(column: str) -> float | None:
            value = row[column]
            return None if pd.isna(value) else float(value)

        tensor = epoch("Tensor-FP16/BF16 performance (FLOP/s)")
        pairs = {"tensor16": (tensor if tensor is not None else epoch("FP16 (half precision) performance (FLOP/s)"),
                              accel.peak_flops("bf16") or accel.peak_flops("fp16"))}
        for quantity in ("fp32", "tf32", "fp8"):
            pairs[quantity] = (epoch(_EPOCH_COLUMNS[quantity]), accel.peak_flops(quantity))
        pairs["memory"] = (epoch(_EPOCH_COLUMNS["memory"]),
                           None if math.isnan(accel.memory_gb) else accel.memory_gb * 1e9)
        for quantity, (theirs, ours) in pairs.items():
            if theirs is not None and ours is not None and abs(theirs / ours - 1) > TOLERANCE:
                found[(name, quantity)] = (accel.id, theirs, ours)
    return found


@needs_hardware
def test_disagreements_with_epoch_ml_hardware_have_reasons(catalog):
    found = _disagreements(catalog)
    unexplained = {k: v for k, v in found.items() if k not in KNOWN_DISAGREEMENTS}
    assert unexplained == {}, "a new disagreement with Epoch's ml_hardware.csv: find which is right and say why"
    stale = sorted(k for k in KNOWN_DISAGREEMENTS if k not in found)
    assert stale == [], "listed disagreements that no longer occur: remove them"


@needs_hardware
def test_most_epoch_hardware_rows_are_compared(catalog):
    names = pd.read_csv(HARDWARE)["Hardware name"].astype(str)
    matched = sum(catalog.lookup(n) is not None for n in names)
    assert matched >= 80     # 87 of Epoch's 175 rows name a part the catalog holds (2025 release)
