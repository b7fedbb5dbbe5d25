"""Precision as people write it: every spelling is read, an unknown one is "not stated", never an invalid claim.

Each expected value is the format the text names, read by hand: mixed-precision training (Micikevicius et al.
2018) runs its matrix products in the narrowest float format it names and keeps FP32 master weights, so
"FP16/FP32 mixed" is an fp16 run; "16-bit" or "mixed precision" alone names the part's 16-bit tensor format.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from audit.catalog import PRECISION_COLUMNS, SIXTEEN_BIT, load_catalog
from audit.quantities import PRECISION_ALIASES, PRECISIONS
from audit.reading.normalize import _precision_of

EPOCH_MODELS = Path(__file__).resolve().parents[2] / "shared" / "data" / "epoch" / "notable_ai_models.csv"


@pytest.mark.parametrize("text, expected", [
    # Epoch AI's `Numerical format` column: FP16, FP32, BF16, FP8, TF32, Unknown (and blank).
    ("FP16", "fp16"), ("FP32", "fp32"), ("BF16", "bf16"), ("FP8", "fp8"), ("TF32", "tf32"), ("Unknown", None),
    # The list.
    ("mixed precision (16-bit)", "16bit"),
    ("bfloat16", "bf16"),
    ("FP16/FP32 mixed", "fp16"),
    ("fp16 mixed", "fp16"),
    ("FP8 (E4M3)", "fp8"),
    ("int8", "int8"),
    # The reference's published claims (shared/reference/published_claims.csv, column `precision`).
    ("bfloat16 (parameters and activations)", "bf16"),
    ("FP16 weights, FP32 Adam state (dynamic loss scaling)", "fp16"),
    ("bfloat16 forward/backward, float32 weight copy in optimiser state", "bf16"),
    # Other spellings.
    ("bf16", "bf16"), ("BFloat16", "bf16"), ("brain float 16", "bf16"),
    ("float16", "fp16"), ("half", "fp16"), ("half precision", "fp16"), ("torch.float16", "fp16"),
    ("torch.bfloat16", "bf16"), ("fp8 e5m2", "fp8"), ("MXFP8", "fp8"), ("BF16 with FP8 GEMMs", "fp8"),
    ("tensorfloat-32", "tf32"), ("FP32 (TF32 matmuls)", "tf32"),
    ("single precision", "fp32"), ("float32", "fp32"), ("32-bit", "fp32"),
    ("16-bit", "16bit"), ("16 bit", "16bit"), ("mixed", "16bit"), ("AMP", "16bit"), ("fp16/bf16", "16bit"),
    ("16/32-bit mixed", "16bit"),
    ("NVFP4", "fp4"), ("double precision", "fp64"), ("FP64", "fp64"),
    ("8-bit Adam, bf16 weights", "bf16"),    # "8-bit" here is the optimizer state, not a format
    ("INT8 weights, FP16 activations", "fp16"),
    # Not stated: None, and so not an invalid claim.
    ("unknown", None), ("n/a", None), ("N/A", None), ("none", None), ("not stated", None), ("unspecified", None),
    ("", None), ("  ", None), ("?", None), ("xyz", None), ("float", None), (None, None),
])
def test_precision_text_is_read(text, expected):
    assert _precision_of(text) == expected


def test_every_alias_names_a_known_precision():
    assert set(PRECISION_ALIASES.values()) <= set(PRECISIONS)
    for alias, canon in PRECISION_ALIASES.items():
        assert alias == "".join(ch for ch in alias if ch.isalnum()) and alias == alias.lower(), alias
        assert _precision_of(alias) == canon, alias
        assert _precision_of(alias.upper()) == canon, alias


def test_precisions_with_a_peak_column_and_the_rest():
    # Every catalog column is a precision; 16bit resolves to one of them per part; fp4, int8 and fp64 have no
    # column (the datasheet figures are in the rows' notes), so a claim stating them gets "no peak" (H002).
    assert set(PRECISION_COLUMNS) <= set(PRECISIONS)
    assert SIXTEEN_BIT in PRECISIONS
    assert set(PRECISIONS) - set(PRECISION_COLUMNS) == {SIXTEEN_BIT, "fp4", "int8", "fp64"}


@pytest.mark.parametrize("hardware, precision, peak", [
    # 16-bit is the part's 16-bit tensor format: bf16 where it has one, else fp16.
    ("TPU v4", SIXTEEN_BIT, 275e12),          # Cloud TPU v4 docs: 275 TF bf16 (no fp16 on TPUs)
    ("V100", SIXTEEN_BIT, 125e12),            # V100 datasheet: 125 TF fp16 tensor (no bf16 on Volta)
    ("A100", SIXTEEN_BIT, 312e12),            # A100 datasheet: bf16 = fp16 = 312 dense
    ("P100", SIXTEEN_BIT, 21.2e12),           # P100 datasheet: FP16 21.2 (packed half2; its default is fp32)
    ("GTX 1080 Ti", SIXTEEN_BIT, None),       # Pascal GeForce: FP16 at 1/64 rate, no 16-bit peak
    ("V100", "bf16", None),                   # stated bf16 on Volta stays bf16: no silent fallback to fp16
    ("TPU v4", "fp16", None),
    ("H100", "fp8", 1978.9e12),               # H100 whitepaper v1.04: FP8 1978.9 dense
    ("H100", "int8", None), ("B200", "fp4", None),
])
def test_sixteen_bit_resolves_per_part(hardware, precision, peak):
    accel = load_catalog().lookup(hardware)
    assert accel is not None
    got = accel.peak_flops(precision)
    assert (got is None) if peak is None else got == pytest.approx(peak, rel=1e-12)


def test_sixteen_bit_is_not_listed_as_a_datasheet_column():
    v100 = load_catalog().lookup("V100")
    assert SIXTEEN_BIT not in v100.peaks_tflops and list(v100.peaks_tflops) == ["fp32", "fp16"]
    assert v100.peaks_tflops[SIXTEEN_BIT] == 125        # indexing resolves it (the report's datasheet note does)
    assert v100.resolve_precision(SIXTEEN_BIT) == "fp16"
    with pytest.raises(KeyError):
        v100.peaks_tflops["bf16"]


@pytest.mark.skipif(not EPOCH_MODELS.exists(), reason=f"Epoch AI's database is not at {EPOCH_MODELS}")
def test_epoch_numerical_format_values_are_all_read():
    formats = pd.read_csv(EPOCH_MODELS, usecols=["Numerical format"])["Numerical format"].dropna().unique()
    read = {value: _precision_of(value) for value in formats}
    # Only "Unknown" reads as not stated; every other value names a precision.
    assert {v for v, p in read.items() if p is None} <= {"Unknown"}, read
    assert set(read.values()) - {None} <= set(PRECISIONS), read


# ------------------------------------------------------------------------------------------- through the audit


def _claim(tmp_path, precision, hardware="V100"):
    """One claim read from a CSV file (as Epoch's `Numerical format` column is read), audited, as JSON."""
    from audit.api import check, to_json

    path = tmp_path / "claims.csv"
    pd.DataFrame([{"id": "p", "params": "7B", "tokens": "140B", "hardware": hardware, "chips": 64,
                   "wall_clock_days": 20, "precision": precision}]).to_csv(path, index=False)
    return to_json(check([str(path)]))["claims"][0]


def test_mixed_16bit_on_a_v100_uses_its_fp16_peak(tmp_path):
    claim = _claim(tmp_path, "mixed precision (16-bit)")
    assert claim["status"] != "invalid"
    assert claim["hardware"]["precision"] == "16bit" and claim["hardware"]["precision_assumed"] is False
    # NVIDIA V100 datasheet: 125 TF FP16 tensor (Volta has no bf16).
    assert claim["quantities"]["peak_flops_per_chip"]["value"] == pytest.approx(125e12)


def test_mixed_16bit_on_a_tpu_uses_its_bf16_peak(tmp_path):
    claim = _claim(tmp_path, "FP16/BF16 mixed", hardware="TPU v4")
    # Cloud TPU v4 docs: 275 TF bf16 per chip.
    assert claim["quantities"]["peak_flops_per_chip"]["value"] == pytest.approx(275e12)


@pytest.mark.parametrize("text", ["Unknown", "n/a", "not stated", "xyz"])
def test_unknown_precision_is_not_stated_not_invalid(tmp_path, text):
    claim = _claim(tmp_path, text)
    assert claim["status"] != "invalid"
    assert [f for f in claim["findings"] if f["rule"] == "V001"] == []
    assert claim["hardware"]["precision_assumed"] is True
    assert claim["hardware"]["precision"] == "fp16"          # the V100's usual precision, said to be assumed
