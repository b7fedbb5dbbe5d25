"""What compute notes count and miscount (audit.notes): the chips a hardware estimate counts (V008), the passes
counted twice (V009), a count per example divided by the batch size (V010), and the arithmetic reader they share.

The notes are Epoch AI's own (notable_ai_models.csv, CC-BY), quoted as they are in the file; every expected figure
is worked out by hand in the comment beside it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.api import check_records, claims_frame, findings_frame, render
from audit.notes import batch_size_divisor, chip_count, chip_counts, geometric_means, passes_counted_twice, products

EPOCH_MODELS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "epoch" / "notable_ai_models.csv"

QRNN = ("6 FLOP / parameter / token * 135000000 parameters ['Likely' confidence] * 103000000 tokens * 14 epochs = "
        "1.16802e+18 FLOP\n\n31330000000000 FLOP / sec / GPU [fp16 assumed] * 1 GPU * 12 hours * 3600 sec / hour * "
        "0.3 [assumed utilization] = 4.060368e+17 FLOP \n\nsqrt(4.060368e+17*1.16802e+18) = 6.8866472e+17 FLOP \n")
BIG_LITTLE = ("Using the 6ND formula: \n6×number of tokens×number of parameters×number of epochs\n"
              "6×1.28×10^6×77360000×110=6.5353728e+16 FLOPs\n\n9.32*10^9 (flops per inference)*1.28×10^6(dataset "
              "size)/16 (batch size) * 110 epochs * 3 (to account for backpropagation)= 2.46048e+17 FLOPs")
ZIP_CNN = ("Its a deep CNN so we assume a backward-forward ratio of 2:1\n 2*64660*3*23*167693=1496338054440\n"
           "\"The network was trained for 23\npasses through the training set (167,693 pattern presentations).\"")


# ------------------------------------------------------------------------------- the arithmetic reader

def test_a_times_sign_is_an_operator_not_a_letter():
    # "×" (U+00D7) lies in the Latin-1 letter block: it was read as the start of a word ("×10"), so
    # 6 × 1.28 × 10^6 × 77,360,000 × 110 was no product. 6 × 1.28e6 × 7.736e7 × 110 = 6.5353728e16.
    found = [p for p in products("6×1.28×10^6×77360000×110=6.5353728e+16") if len(p.factors) > 1]
    assert found[0].value == pytest.approx(6 * 1.28e6 * 77360000 * 110, rel=1e-12)


def test_a_parenthesis_of_words_annotates_the_figure_before_it():
    # Big-Little Net: one product of the per-image FLOPs, the images, the batch-size divisor, the epochs and the
    # 3 for the backward pass: 9.32e9 × 1.28e6 / 16 × 110 × 3 = 2.46048e17.
    product = next(p for p in products(BIG_LITTLE) if len(p.factors) > 5)
    assert product.value == pytest.approx(2.46048e17, rel=1e-12)
    assert product.text == "9.32 × 10^9 × 1.28 × 10^6 / 16 × 110 × 3"
    assert [f.unit for f in product.factors if "batch" in f.unit] == ["( batch size )"]


# ------------------------------------------------------------------------------- V008: chips in the notes

@pytest.mark.parametrize("notes, compute, estimates, chips", [
    # QRNN: the hardware estimate 31.33e12 × 1 × 12 × 3600 × 0.3 = 4.060368e17 is one of the two estimates whose
    # geometric mean √(4.060368e17 × 1.16802e18) = 6.8866e17 is the compute.
    (QRNN, 6.8866472e17, (1.16802e18, 4.060368e17), 1.0),
    # Sparse all-MLP: 112 × 3600 × 0.33 × 32 × 125e12 = 5.32224e20, the stated compute.
    (("112 hours on 32 V100 GPUs\nassumed 0.33 util rate\n\n112 hours *3600 seconds / hour *0.33 utilization *32 "
      "gpus *125000000000000 FLOPs=532224000000000000000\n"), 5.32224e20, (), 32.0),
    # ALIGN: 14,820 TPU core-days are no count of chips.
    ("14820 TPU core-days * 86400 s * 61.5e12 FLOP/s * 0.3 = 2.36e22", 2.36e22, (), None),
    # GLM-130B-like: GPUs per server are no count of the run's chips (96 servers × 8 GPUs × ... two counts).
    ("96 servers * 8 GPU/server * 3.12e14 FLOP/s * 60 days * 86400 s * 0.325 = 4.04e23", 4.04e23, (), None),
    # GPUs per node are no count of the run's chips: 8 × 64 nodes = 512 GPUs, and 8 × 64 × 312e12 × 24 × 3600 ×
    # 0.4 = 1.38e21.
    ("8 GPUs per node * 64 nodes * 312e12 FLOP/s * 24 hours * 3600 * 0.4 = 1.38e21", 1.38e21, (), None),
    # GPU-hours: 6.4 million GPU hours × 3600 × 989e12 × 0.4 = 9.1e24.
    ("6.4 million GPU hours * 3600 * 989e12 * 0.4 = 9.1e24", 9.1e24, (), None),
    # The product is no estimate of this compute (6.5e19 against 1e21).
    ("For scale: 8 GPUs * 24 hours * 3600 * 312e12 * 0.3 = 6.5e19", 1e21, (), None),
])
def test_chip_count_reads_the_count_of_a_hardware_estimate(notes, compute, estimates, chips):
    found = chip_count(notes, compute, estimates)
    assert (found is None) if chips is None else (found is not None and found.chips == chips)


def test_chip_counts_of_a_column_use_the_geometric_means_estimates():
    notes = pd.Series([QRNN, None, QRNN], dtype=object)
    compute = np.array([6.8866472e17, 6.8866472e17, 5e17])  # the last: neither the compute nor an estimate
    high, low = geometric_means(notes, compute)
    found = chip_counts(notes, compute, high, low)
    assert found[0].chips == 1.0 and found[0].factor == "1 GPU" and found[1] is None and found[2] is None


def test_qrnn_states_no_chips_and_the_notes_one_gpu_makes_fp32_impossible():
    # QRNN (Epoch's row): 6.8866472e17 FLOP in 12 h on one V100 at FP32. NVIDIA's V100 SXM2 datasheet: 15.7 TFLOP/s
    # FP32, so MFU = 6.8866472e17 / (1 × 12 × 3600 × 15.7e12) = 6.8866472e17 / 6.7824e17 = 1.01537.
    result = check_records([{"id": "qrnn", "params": 135000000, "compute_flops": 6.8866472e17,
                             "dataset_size": 103000000, "epochs": 14, "wall_clock_days": 0.5,
                             "hardware": "NVIDIA V100 SXM2 32GB", "precision": "FP32", "domain": "Language",
                             "compute_notes": QRNN}])
    findings = findings_frame(result).set_index("rule")
    assert findings.loc["V008", "expected"] == 1.0
    assert findings.loc["U001", "claimed"] == pytest.approx(6.8866472e17 / (12 * 3600 * 15.7e12), rel=1e-4)
    assert findings.loc["U001", "severity"] in ("warning", "error")
    assert claims_frame(result)["status"].iloc[0] in ("warn", "fail")
    # The finding shows how the MFU it judges was derived, with the values substituted (12 h × 1 chip = 12).
    u001 = next(f for f in json.loads(render(result, "json"))["claims"][0]["findings"] if f["rule"] == "U001")
    assert u001["formula"].startswith("C003: MFU = C / (3600 · chip_hours · peak) = 6.887e17 / (3600 × 12 × 1.57e13) "
                                      "= 1.015; ")


@pytest.mark.skipif(not EPOCH_MODELS.exists(), reason=f"Epoch AI's model database is not at {EPOCH_MODELS}")
def test_on_epochs_file_the_notes_count_equals_every_stated_hardware_quantity():
    # The reading's own check on real data: wherever a row states its "Hardware quantity" and its notes count
    # chips, the two agree (20 rows, measured when V008 was added).
    frame = pd.read_csv(EPOCH_MODELS)
    compute = pd.to_numeric(frame["Training compute (FLOP)"], errors="coerce").to_numpy(dtype=float)
    notes = frame["Training compute notes"].astype(object)
    high, low = geometric_means(notes, compute)
    found = chip_counts(notes, compute, high, low)
    stated = pd.to_numeric(frame["Hardware quantity"], errors="coerce").to_numpy(dtype=float)
    both = [(c.chips, s) for c, s in zip(found, stated) if c is not None and not math.isnan(s)]
    assert len(both) >= 20
    assert all(c == s for c, s in both), both


# ------------------------------------------------------------------------------- V009 and V010: slips

def test_passes_counted_twice_in_zip_cnn():
    # 167,693 presentations = 23 passes × 7,291 examples: the product 2 × 64,660 × 3 × 23 × 167,693 = 1.4963e12
    # counts the 23 twice; once, it is 1.4963e12 / 23 = 6.5058e10.
    slip = passes_counted_twice(ZIP_CNN, 1496338054440.0, 7291)
    assert slip is not None and slip.factor == "23" and slip.product == "2 × 64660 × 3 × 23 × 167693"
    assert 1496338054440.0 * slip.correction == pytest.approx(2 * 64660 * 3 * 167693, rel=1e-12)


@pytest.mark.parametrize("notes, compute, dataset, epochs", [
    ("2*64660*3*23*7291=65058444360", 65058444360.0, 7291, math.nan),  # counted once
    ("2*64660*14582*3=5657220480", 5657220480.0, 7291, math.nan),  # the 2 is FLOPs per multiply-add
    (ZIP_CNN, 1496338054440.0, 7291, 10.0),  # stated epochs 10: the 23 is no count of passes the claim states
    (ZIP_CNN, 1496338054440.0, 5000, math.nan),  # 167,693 is not 23 × 5,000
])
def test_passes_counted_twice_reads_nothing_else(notes, compute, dataset, epochs):
    assert passes_counted_twice(notes, compute, dataset, epochs) is None


def test_batch_size_divisor_in_big_little_net():
    # 9.32e9 FLOP per image × 1.28e6 images × 110 epochs × 3 = 3.937e18; the notes divide it by 16.
    slip = batch_size_divisor(BIG_LITTLE, 2.46048e17)
    assert slip is not None and slip.correction == 16.0
    assert 2.46048e17 * slip.correction == pytest.approx(9.32e9 * 1.28e6 * 110 * 3, rel=1e-12)


@pytest.mark.parametrize("notes, compute", [
    # FLOPs per batch times the number of batches: 4.1e12 × 1.28e6 / 256 × 90 = 1.845e18, right.
    ("4.1e12 FLOP per batch * 1.28e6 images / 256 (batch size) * 90 epochs = 1.845e18", 1.845e18),
    # A per-image count, no division by the batch size: 9.32e9 × 1.28e6 × 110 × 3 = 3.937e18.
    ("9.32*10^9 (flops per inference)*1.28×10^6 images * 110 epochs * 3 = 3.937152e18; batch size 256", 3.937152e18),
    # The division is not in the product that is the compute.
    (BIG_LITTLE, 3.937152e18),
])
def test_batch_size_divisor_reads_nothing_else(notes, compute):
    assert batch_size_divisor(notes, compute) is None
