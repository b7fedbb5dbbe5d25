"""Architecture-aware compute in the engine: conventions, throughput MFU, HFU, precision, TPU slices, and checks
that would only restate their own derivations (which must not be reported)."""

from __future__ import annotations

import pytest

from audit.api import check_records, to_json

# PaLM 540B (Chowdhery et al. 2022, Table 1 and Sec. 4.1): 118 layers, 48 heads of 256, T = 2048,
# 6144 TPU v4 chips (275 TFLOP/s bf16), 238.3K tokens/s, MFU 46.2 % counting 6N + 12·L·H·Q·T.
PALM_ARCH = {"params": "540.35B", "layers": 118, "heads": 48, "head_dim": 256, "d_model": 18432, "seq_len": 2048,
             "hardware": "TPU v4", "chips": 6144, "throughput_tokens_per_s": "238.3K"}


def one(record: dict) -> dict:
    return to_json(check_records([record]))["claims"][0]


def test_palm_mfu_from_throughput_reproduces_46_2_percent():
    c = one({"id": "palm", **PALM_ARCH})
    f_tok = 6 * 540.35e9 + 12 * 118 * 48 * 256 * 2048
    assert c["quantities"]["flops_per_token"]["value"] == pytest.approx(f_tok)
    assert "palm" in c["quantities"]["flops_per_token"]["how"].lower()
    mfu = c["quantities"]["mfu"]["value"]
    assert mfu == pytest.approx(0.462, abs=0.001)
    assert mfu == pytest.approx(238.3e3 * f_tok / (6144 * 275e12))


def test_claimed_palm_mfu_is_checked_against_the_throughput():
    c = one({"id": "palm", **PALM_ARCH, "mfu": "46.2%"})
    f = [f for f in c["findings"] if f["rule"] == "C005"]
    assert len(f) == 1 and f[0]["severity"] == "ok"


GPT3_ARCH = {"params": "174.6B", "layers": 96, "d_model": 12288, "heads": 96, "ffn_dim": 49152, "seq_len": 2048,
             "vocab_size": 51200}


def test_full_recomputation_gives_hfu_by_the_narayanan_coefficients():
    # Narayanan et al. 2021: model 72·l·h²(1 + s/6h + V/12lh), hardware 96·l·h²(1 + s/6h + V/16lh).
    l, h, s, v = 96, 12288, 2048, 51200
    model = 72 * l * h * h * (1 + s / (6 * h) + v / (12 * l * h))
    hardware = 96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))
    # A stated FLOP/s per GPU with full recomputation is read as hardware FLOPs (issue 9, C015): HFU = 140 / 312,
    # and the model FLOPs are the hardware ones times model / hardware.
    c = one({"id": "gpt3-hfu", **GPT3_ARCH, "hardware": "A100 80GB", "achieved_flops_per_chip": "140 TFLOP/s",
             "activation_recompute": "full"})
    assert c["quantities"]["flops_per_token"]["value"] == pytest.approx(model)
    assert c["quantities"]["achieved_hardware_flops_per_chip"]["value"] == pytest.approx(140e12)
    assert c["quantities"]["hfu"]["value"] == pytest.approx(140 / 312)
    assert c["quantities"]["mfu"]["value"] == pytest.approx(140 / 312 * model / hardware)


def test_hfu_quoted_where_mfu_belongs_is_named():
    c = one({"id": "hfu-as-mfu", "hardware": "H100", "mfu": "0.55", "hfu": "0.55", "activation_recompute": "full"})
    f = [f for f in c["findings"] if f["rule"] == "C008"][0]
    assert f["ratio"] == pytest.approx(0.75)  # 0.55 / (4/3 x 0.55)
    assert f["explanations"][0]["cause"] == "recompute"


def test_a_stated_hardware_rate_gives_the_hfu_itself_not_r_times_the_mfu():
    """GPT-NeoX-20B (Black et al. 2022, Sec. 3 and Table 1): 20.56B parameters, 150,000 steps x 1,538 x 2,048 =
    472.5B tokens, 96 A100-SXM4-40GB for 1,830 hours, "117 TFLOP/s per GPU". 6 x 20.56e9 x 472.5e9 = 5.83e22 FLOP
    over 96 x 1,830 x 3600 s is 92.1 TFLOP/s of model FLOPs, so the 117 counts hardware FLOPs (C015): its HFU is
    117 / 312 = 37.5 % of the A100's dense FP16 peak. It was given as 4/3 x 29.5 % = 39.4 % (C008, with C015's
    assumed r), a figure built on an assumption where the stated one gives it directly."""
    c = one({"id": "gpt-neox-20b", "params": 20556201984, "tokens": "472.5B", "hardware": "A100-SXM4-40GB",
             "precision": "fp16", "chips": 96, "wall_clock_days": "1830 hours",
             "achieved_flops_per_chip": "117 TFLOP/s"})
    assert c["quantities"]["hfu"]["value"] == pytest.approx(117e12 / 312e12)
    assert c["quantities"]["hfu"]["how"].startswith("C014")
    assert c["status"] == "pass"


def test_unstated_precision_is_assumed_and_said():
    c = one({"id": "h100", "params": "70B", "tokens": "1.4T", "hardware": "H100", "chip_hours": 1e6})
    f = [f for f in c["findings"] if f["rule"] == "U001"]
    assert c["hardware"]["precision"] == "bf16" and c["hardware"]["precision_assumed"] is True
    assert "assumed" in c["quantities"]["peak_flops_per_chip"]["how"]
    # MFU = 6 x 70e9 x 1.4e12 / (1e6 x 3600 x 989.4e12) = 16.5 %.
    assert f[0]["claimed"] == pytest.approx(6 * 70e9 * 1.4e12 / (1e6 * 3600 * 989.4e12))


def test_fp8_precision_uses_the_fp8_peak():
    c = one({"id": "fp8", "params": "70B", "tokens": "1.4T", "hardware": "H100", "precision": "fp8",
             "chip_hours": 1e6})
    assert c["quantities"]["peak_flops_per_chip"]["value"] == pytest.approx(1978.9e12)
    assert c["quantities"]["mfu"]["value"] == pytest.approx(6 * 70e9 * 1.4e12 / (1e6 * 3600 * 1978.9e12))


def test_tpu_slice_name_gives_chips_from_cores():
    # Google Cloud TPU v4 docs: slice names count TensorCores, 2 per chip: v4-2048 = 1,024 chips.
    c = one({"id": "slice", "hardware": "TPU v4-2048"})
    assert c["quantities"]["chips"]["value"] == 1024
    assert c["quantities"]["chips"]["source"] == "derived"


@pytest.mark.parametrize("name", ["tpu-v5p-1024", "TPU_v5p-1024", "Cloud TPU v5p-1024"])
def test_a_slice_name_with_the_word_tpu_joined_to_it_is_a_slice(name):
    # As gcloud and GKE write it ("tpu-v5p-1024" was an unknown accelerator while "v5p-1024" was read): a v5p slice
    # counts TensorCores, 2 per chip (Cloud TPU v5p documentation): 1,024 cores = 512 chips.
    c = one({"id": "slice", "hardware": name})
    assert c["quantities"]["chips"]["value"] == 512
    assert not [f for f in c["findings"] if f["rule"] == "H001"]


@pytest.mark.parametrize(("name", "chips"), [
    ("1x v5p-128", 64),  # MaxText's v5p table: one slice of 128 TensorCores, 2 per chip
    ("32x v5e-256", 32 * 256),  # MaxText's v5e table: 32 slices of 256 chips (1 TensorCore each)
    ("1x v4-128", 64),
    ("2x v5e-256", 512),  # Marin 8B's retrospective: "2x v5e-256, configured using multislice"
    ("2 x TPU v5e-256", 512),
])
def test_several_slices_of_one_size_are_their_cores(name, chips):
    """Multislice training (Google Cloud TPU docs) writes a count of slices before the slice name: those were unknown
    accelerators (H001, "no close match") in MaxText's own tables, while "v5p-128" alone was read. The chips: slices
    × TensorCores per slice / TensorCores per chip (v4 and v5p: 2; v5e: 1)."""
    c = one({"id": "multislice", "hardware": name})
    assert c["quantities"]["chips"]["value"] == chips
    assert not [f for f in c["findings"] if f["rule"] == "H001"]


def test_cores_counted_as_chips_is_a_warning():
    c = one({"id": "slice", "hardware": "v4-2048", "chips": 2048})
    f = [f for f in c["findings"] if f["rule"] == "H003"]
    assert f and f[0]["severity"] == "warning" and f[0]["expected"] == 1024


def test_a_check_that_only_restates_its_derivations_is_not_reported():
    # params, tokens, chips, days and hardware: C001 derives C, C002 chip-hours, C004 throughput, C011 the
    # achieved rate and C003 the MFU; C005 (achieved = MFU x peak) then holds by construction.
    c = one({"id": "cycle", "params": "65.2B", "tokens": "1.4T", "chips": 2048, "wall_clock_days": 21,
             "hardware": "A100 80GB"})
    rules = [f["rule"] for f in c["findings"]]
    assert "C005" not in rules
    assert c["quantities"]["achieved_flops_per_chip"]["source"] == "derived"
    assert c["quantities"]["mfu"]["source"] == "derived"


def test_outlier_is_the_gpu_hours_figure():
    # LLaMA-65B with its GPU-hours divided by 24: only removing the GPU-hours makes the rest agree.
    c = one({"id": "llama", "params": "65.2B", "tokens": "1.4T", "hardware": "A100 80GB", "chips": 2048,
             "wall_clock_days": 21, "chip_hours": 1022362 / 24})
    out = [f for f in c["findings"] if f["rule"] == "C009"]
    assert len(out) == 1
    assert out[0]["quantity"] == "chip_hours"
    assert out[0]["expected"] == pytest.approx(2048 * 24 * 21)  # what chips x days imply
    assert "likely outlier" in out[0]["message"]


def test_a_check_repeating_another_by_a_longer_path_is_not_reported():
    # GPU-days written as GPU-hours: chips x 24 x days vs chip-hours (C002) is the error. Achieved FLOP/s from
    # tokens / days (C004, C011) against MFU x peak from chip-hours (C003, C005) compares the same three
    # figures again; it must not appear as a second error.
    c = one({"id": "llama-days", "params": "65.2B", "tokens": "1.4T", "hardware": "A100 80GB", "chips": 2048,
             "wall_clock_days": 21, "chip_hours": 1022362 / 24})
    relation_errors = [f["rule"] for f in c["findings"] if f["rule"].startswith("C") and f["severity"] == "error"]
    assert relation_errors == ["C002"]
    assert [f["severity"] for f in c["findings"] if f["rule"] == "U001"] == ["error"]  # its consequence stays


def test_a_rate_nothing_weighs_is_read_as_model_flops_and_the_hardware_reading_is_given():
    # MT-NLG 530B (Smith et al. 2022, Sec. 3): 126 TFLOP/s per A100, counted with the recomputed forward pass. With
    # no time, throughput or HFU beside it, the model reading stands (MFU 126 / 312 = 40.4 %), and C015 gives the
    # hardware reading: 126 / (4/3) = 94.5 TFLOP/s of model FLOPs, 94.5 / 312 = 30.3 %.
    c = one({"id": "mtnlg", "params": "530B", "tokens": "270B", "hardware": "A100 80GB", "chips": 2240,
             "achieved_flops_per_chip": "126 TFLOP/s"})
    assert c["quantities"]["mfu"]["value"] == pytest.approx(126 / 312, rel=1e-3)
    f = [f for f in c["findings"] if f["rule"] == "C015"]
    assert len(f) == 1 and f[0]["severity"] == "info"
    assert f[0]["expected"] == pytest.approx(94.5e12, rel=1e-3)
    assert "30.3 %" in f[0]["message"] and "model FLOPs" in f[0]["message"]
    assert c["status"] == "pass"


def test_a_rate_its_own_stated_mfu_gives_says_so():
    """Llama 3 (Dubey et al. 2024, Table 4): 400 TFLOP/s per H100 at 41 % MFU, 400 / 989.4 = 40.4 %: the stated MFU
    is the rate over the peak, a reason the model reading stands, which C015 said no figure of the claim gave
    ("no other figure of the claim weighs it"; a reviewer's field test)."""
    c = one({"id": "llama3-t4", "params": "405B", "hardware": "H100", "chips": 16384,
             "achieved_flops_per_chip": "400 TFLOP/s", "mfu": "41%"})
    [f] = [f for f in c["findings"] if f["rule"] == "C015"]
    assert "it is the stated MFU, 41 %, of the peak" in f["message"], f["message"]
    assert "30.3 %" in f["message"]  # the hardware reading: 400 / (4/3) / 989.4


@pytest.mark.parametrize("extra", [{"activation_recompute": "full"}, {"hfu": "56.76%"}])
def test_a_rate_that_is_the_stated_mfu_of_the_peak_stays_model_flops(extra):
    """llm-foundry's benchmark table (mosaicml/llm-foundry, scripts/train/benchmarking/README.md), MPT-70B on 64
    H100 in bf16 with activation checkpointing: MFU 42.57 %, HFU 56.76 %, "Model TFLOP" 421.3, 1,039 tokens/s per
    GPU. 0.4257 x 989.4 (the H100 SXM's dense BF16 peak) = 421.2: the rate is the MFU's, model FLOPs; HFU =
    4/3 x MFU (56.76 / 42.57 = 1.333). Read as hardware FLOPs because recomputation (or an HFU) was stated, it was
    a false alarm (C013: 421.3 "differs from" 561.4)."""
    row = {"id": "mpt-70b", "params": 64_862_437_376, "hardware": "H100 80GB", "precision": "bf16", "chips": 64,
           "mfu": "42.57%", "achieved_flops_per_chip": "421.3 TFLOP/s", **extra}
    for claim in (row, {**row, "throughput_tokens_per_s": "1039 tokens/s/GPU", "seq_len": 2048, "layers": 80,
                        "d_model": 8192, "heads": 64}):
        c = to_json(check_records([claim]))["claims"][0]
        assert c["status"] == "pass", [f["message"] for f in c["findings"] if f["severity"] != "ok"]
        assert c["quantities"]["achieved_flops_per_chip"]["source"] == "claimed"
        assert c["quantities"]["achieved_flops_per_chip"]["value"] == pytest.approx(421.3e12)


def test_a_rate_read_as_hardware_flops_beside_an_hfu_equal_to_the_mfu_says_nothing_was_recomputed():
    """llm-foundry's MPT-13B on 64 H100 without activation checkpointing: MFU and HFU both 39.86 %, "Model TFLOP"
    394.4 (0.3986 x 989.4 = 394.4). The stated HFU makes C015 read the rate as hardware FLOPs, which here equal
    the model FLOPs; its words said "(the recomputed forward pass counted)", which the row contradicts."""
    assert 0.3986 * 989.4 == pytest.approx(394.4, abs=0.05)
    c = to_json(check_records([{"id": "mpt-13b", "params": 12_853_954_560, "hardware": "H100 80GB",
                                "precision": "bf16", "chips": 64, "mfu": "39.86%", "hfu": "39.86%",
                                "achieved_flops_per_chip": "394.4 TFLOP/s", "activation_recompute": "none"}]))
    claim = c["claims"][0]
    c015 = [f["message"] for f in claim["findings"] if f["rule"] == "C015"]
    assert claim["status"] == "pass" and len(c015) == 1
    assert "recomputed forward pass counted" not in c015[0] and "nothing recomputed" in c015[0]


def test_a_throughput_mfu_gap_is_attention_without_an_architecture_and_a_slip_with_one():
    """torchtitan's Llama 3 8B on 64 A100 (docs/performance.md): 2,973 tokens/s per GPU, MFU 58.2 %. By 6N alone:
    6 x 8.03e9 x 2,973 = 1.432e14 FLOP/s, 45.9 % of 312: the 1.27x is the attention FLOPs torchtitan counts
    (12 x 32 layers x 4,096 x 8,192 per token: 55.2 % with them), so without the architecture it passes, and says
    why. llm-foundry's MPT-70B with its HFU 56.76 % in the MFU column and its architecture given: the throughput
    gives 42.6 % with attention counted, 1.33x below: HFU quoted as MFU, a warning (it passed as "goodput")."""
    tt = {"id": "torchtitan-8b", "params": "8.03B", "hardware": "A100 80GB", "precision": "bf16", "chips": 64,
          "mfu": "58.2%", "throughput_tokens_per_s": "2973 tokens/s/GPU"}
    c = to_json(check_records([tt]))["claims"][0]
    assert c["status"] == "pass"
    c005 = next(f for f in c["findings"] if f["rule"] == "C005")
    assert c005["severity"] == "ok" and "attention FLOPs" in c005["message"]
    foundry = {"id": "mpt-70b-hfu-as-mfu", "params": 64_862_437_376, "hardware": "H100 80GB", "precision": "bf16",
               "chips": 64, "mfu": "56.76%", "throughput_tokens_per_s": "1039 tokens/s/GPU", "seq_len": 2048,
               "layers": 80, "d_model": 8192, "heads": 64}
    c = to_json(check_records([foundry]))["claims"][0]
    c005 = next(f for f in c["findings"] if f["rule"] == "C005")
    assert c005["severity"] == "warning", c005["message"]


@pytest.mark.parametrize(("text", "tokens"), [("4K", 4096), ("128k tokens", 131_072), ("1.5K", 1536),
                                              ("4096", 4096), ("2,048", 2048)])
def test_a_sequence_length_in_k_counts_1024s(text, tokens):
    """Context lengths are powers of two: DeepSeek-V3's report trains on "4K" sequences of 4,096 tokens (Sec. 4.2),
    Llama 3.1's "128K" context is 131,072. "4K" was read as 4,000 (FLOPs per token 0.3 % low at that length)."""
    c = one({"id": "ctx", "params": "7B", "seq_len": text})
    assert c["quantities"]["seq_len"]["value"] == tokens
