"""Multi-phase runs (audit/phases.py, rule C010): phases audited one by one, totals summed into the run."""

from __future__ import annotations

import pytest

from audit.api import check_records, to_json

# Chowdhery et al. 2022 (PaLM), App. B: 6144 TPU v4 chips for 1200 hours, then 3072 chips for 336 hours.
PALM = {"id": "palm", "params": "540.35B", "tokens": "780B", "hardware": "TPU v4",
        "phases": [{"chips": 6144, "wall_clock_days": "1200 hours"}, {"chips": 3072, "wall_clock_days": "336 hours"}]}


def one(record: dict) -> dict:
    return to_json(check_records([record]))["claims"][0]


def test_phase_chip_hours_are_summed_into_the_run():
    c = one(PALM)
    total = 6144 * 1200 + 3072 * 336  # 8,404,992
    assert c["quantities"]["chip_hours"]["value"] == pytest.approx(total)
    assert c["quantities"]["chip_hours"]["source"] == "derived"
    assert [p["id"] for p in c["phases"]] == ["palm/phase-1", "palm/phase-2"]
    assert c["phases"][0]["quantities"]["chip_hours"]["value"] == pytest.approx(6144 * 1200)
    assert c["phases"][1]["quantities"]["chip_hours"]["value"] == pytest.approx(3072 * 336)
    # End-to-end MFU from 6ND over the summed chip-hours at 275 TFLOP/s (Google Cloud TPU v4 docs).
    mfu = 6 * 540.35e9 * 780e9 / (total * 3600 * 275e12)
    assert c["quantities"]["mfu"]["value"] == pytest.approx(mfu)
    assert c["status"] == "pass"


def test_a_total_taken_from_one_phase_is_flagged():
    c = one({**PALM, "chip_hours": 6144 * 1200})
    f = [f for f in c["findings"] if f["rule"] == "C010"]
    assert len(f) == 1
    assert f[0]["ratio"] == pytest.approx(6144 * 1200 / (6144 * 1200 + 3072 * 336))  # 0.877
    assert f[0]["severity"] == "warning"
    assert "7,372,800 + 1,032,192" in f[0]["formula"]


def test_mixed_hardware_gives_the_run_an_effective_peak():
    # 1000 A100-hours at 312 TFLOP/s and 1000 H100-hours at 989.4 (datasheets): capacity-weighted mean peak.
    c = one({"id": "mixed", "params": "7B", "tokens": "100B",
             "phases": [{"hardware": "A100 80GB", "chip_hours": 1000}, {"hardware": "H100", "chip_hours": 1000}]})
    peak = (1000 * 312e12 + 1000 * 989.4e12) / 2000
    assert c["quantities"]["peak_flops_per_chip"]["value"] == pytest.approx(peak)
    assert c["quantities"]["chip_hours"]["value"] == pytest.approx(2000)


def test_a_bad_phase_makes_the_run_invalid_and_the_run_is_still_one_claim():
    doc = to_json(check_records([{**PALM, "phases": [{"chips": 1.5, "wall_clock_days": 10}]},
                                 {"id": "other", "params": "7B", "tokens": "1T"}]))
    assert [c["id"] for c in doc["claims"]] == ["palm", "other"]
    assert doc["claims"][0]["status"] == "invalid"
    assert doc["claims"][0]["phases"][0]["status"] == "invalid"
    assert doc["claims"][1]["status"] == "unchecked"  # 7B on 1T: nothing to check


def test_phases_that_are_not_a_list_of_objects_are_an_invalid_field():
    c = one({"id": "bad", "params": "7B", "phases": "not json"})
    assert c["status"] == "invalid"
    assert any(f["rule"] == "V001" and f["quantity"] == "phases" for f in c["findings"])


def test_a_phase_naming_its_own_accelerator_by_an_alias_replaces_the_runs():
    """A run on A100s whose first phase ran on H100s, given under another spelling of the field (``gpu_type``):
    the phase's accelerator replaces the one it would inherit, rather than reading as the field given twice."""
    run = {"id": "mixed", "params": "7B", "tokens": "1T", "hardware": "A100", "precision": "bf16",
           "phases": [{"gpu_type": "H100", "chips": 256, "wall_clock_days": 10, "tokens": "500B"},
                      {"chips": 512, "wall_clock_days": 5, "tokens": "500B"}]}
    c = one(run)
    assert c["status"] != "invalid"
    assert not any(f["rule"] == "V001" for p in c["phases"] for f in p["findings"])
    first, second = c["phases"]
    # Phase 1: 6 × 7e9 × 5e11 = 2.1e22 FLOP over 256 × 240 h = 61,440 H100-hours at 989.4 TFLOP/s dense BF16
    # (NVIDIA H100 SXM5 datasheet): 2.1e22 / (61,440 × 3600 × 989.4e12) = 9.6 %. Phase 2 inherits the A100
    # (312 TFLOP/s, NVIDIA A100 datasheet): 2.1e22 / (512 × 120 × 3600 × 312e12) = 30.4 %.
    assert first["quantities"]["mfu"]["value"] == pytest.approx(2.1e22 / (61_440 * 3600 * 989.4e12), rel=1e-3)
    assert second["quantities"]["mfu"]["value"] == pytest.approx(2.1e22 / (61_440 * 3600 * 312e12), rel=1e-3)


def test_the_phases_of_a_mixture_of_experts_run_are_of_a_mixture_of_experts():
    """A run stated as a mixture of experts without its active count: its total only bounds the N of 6·N·D, in
    its phases too. DeepSeek-V3's figures (arXiv:2412.19437: 671B parameters, 37B active, 14.8T tokens in 2.664M
    H800 GPU-hours of pre-training, FP8) split into two phases: with N = 671B, 6 x 671e9 x 14.8e12 = 5.96e25 FLOP
    in 2.664e6 h x 3600 s at 1,978.9 TFLOP/s (the H800's dense FP8 peak, the H100's: NVIDIA H100 whitepaper
    Table 1) would be 314 % MFU, which the phases gave before they knew the architecture."""
    phases = [{"chips": 2048, "chip_hours": "2.664M", "tokens": "14.8T"},
              {"chips": 2048, "chip_hours": "0.124M", "tokens": "0.1T"}]
    run = {"id": "moe", "params": "671B", "architecture": "moe", "hardware": "H800", "precision": "fp8",
           "phases": phases}
    c = one(run)
    assert c["status"] == "pass"
    assert not [f for p in c["phases"] for f in p["findings"] if f["severity"] in ("warning", "error")]
    # With its active count the phases are checked: 6 x 37e9 x 14.8e12 / (2.664e6 x 3600 x 1978.9e12) = 17.3 %.
    c = one({**run, "active_params": "37B"})
    assert c["phases"][0]["quantities"]["mfu"]["value"] == pytest.approx(
        6 * 37e9 * 14.8e12 / (2.664e6 * 3600 * 1978.9e12), rel=1e-3)


def test_the_phases_of_an_adapter_fine_tune_hold_its_training_state():
    """A LoRA fine-tune of a 70B model (100M trainable parameters) on 4 H100 (80 GB each, NVIDIA datasheet) in two
    phases: each phase holds 2 B x 69.9B frozen + 16 B x 100M trained = 141.4 GB, which fits 2 chips, as the same
    run stated without phases does; not 16 B x 70B = 1.12 TB (14 chips)."""
    run = {"id": "lora", "params": "70B", "trainable_params": "100M", "finetune_method": "lora", "hardware": "H100",
           "precision": "bf16", "phases": [{"chips": 4, "wall_clock_days": 1}, {"chips": 4, "wall_clock_days": 1}]}
    c = one(run)
    for phase in c["phases"]:
        [m] = [f for f in phase["findings"] if f["rule"] == "M001"]
        assert m["severity"] == "ok"
        assert phase["quantities"]["training_state_bytes"]["value"] == pytest.approx(2 * 69.9e9 + 16 * 100e6)


def test_phase_totals_are_summed_with_compensation():
    """Three phases of 1e16, 1 and 1 GPU-hours: 1e16 + 2 exactly (a float holds it: doubles are 2 apart there).
    Added one at a time in plain floating point, each 1 is lost to rounding (1e16 + 1 is a tie, rounded to the
    even 1e16); the totals are summed as pandas sums a group (Kahan's compensation), which keeps them."""
    result = check_records([{"id": "r", "params": "7B", "hardware": "H100",
                             "phases": [{"chip_hours": 1e16}, {"chip_hours": 1}, {"chip_hours": 1}]}])
    assert result.q["chip_hours"][0] == 10_000_000_000_000_002.0


def test_a_run_total_against_its_phases_is_one_finding():
    """A run that states 80T tokens over phases of 0.2T and 7.8T (Nemotron-4 340B's ramp, with the total typed
    10x) and no compute: its compute is the phases' sum, 6 x 340e9 x 8e12 = 1.63e25. The slip was reported twice,
    by C010 (80T against the phases' 8T) and by C001 (80T against the compute that the phases' 8T gave), with an
    outlier note "without it, the other 0 stated figures agree". One error, C010's."""
    doc = to_json(check_records([{"id": "b", "params": "340B", "tokens": "80T",
                                  "phases": [{"tokens": "0.2T"}, {"tokens": "7.8T"}]}]))
    claim = doc["claims"][0]
    bad = [(f["rule"], f["severity"]) for f in claim["findings"] if f["severity"] in ("warning", "error")]
    assert bad == [("C010", "error")]
    assert claim["quantities"]["compute_flops"]["value"] == pytest.approx(6 * 340e9 * 8e12)
    assert not any("other 0" in f["message"] for f in claim["findings"])


def test_a_part_of_the_phases_bounds_the_total_from_below():
    """PaLM 540B (Chowdhery et al. 2022): 780B tokens; 6,144 TPU v4 for 1,200 hours at 238.3K tokens/s (Table 3),
    then 3,072 for 336 hours. The first phase alone gives 238,300 x 1,200 x 3,600 = 1.029T tokens: more than the
    run's 780B, which no check compared (only complete sums were), while the same figures written flat warn (C004).
    A steady-state rate over end-to-end hours overstates by the run's goodput (780 / 1,029 = 76 %), within C003's
    goodput allowance (1.5x): ok, saying so. A stated phase total twice the run's is beyond it."""
    assert 238_300 * 1200 * 3600 == pytest.approx(1.029e12, rel=1e-3)
    palm = {"id": "palm", "params": "540.35B", "tokens": "780B", "hardware": "TPU v4", "precision": "bf16",
            "phases": [{"chips": 6144, "wall_clock_days": "1200 hours", "throughput_tokens_per_s": "238.3K tokens/s"},
                       {"chips": 3072, "wall_clock_days": "336 hours"}]}
    claim = to_json(check_records([palm]))["claims"][0]
    [c010] = [f for f in claim["findings"] if f["rule"] == "C010" and f["quantity"] == "tokens"]
    assert claim["status"] == "pass" and c010["severity"] == "ok"
    assert c010["expected"] == pytest.approx(238_300 * 1200 * 3600) and "goodput" in c010["message"]
    doubled = {**palm, "tokens": "500B",
               "phases": [{"chips": 6144, "wall_clock_days": "1200 hours", "tokens": "1.0T"},
                          {"chips": 3072, "wall_clock_days": "336 hours"}]}
    claim = to_json(check_records([doubled]))["claims"][0]
    [c010] = [f for f in claim["findings"] if f["rule"] == "C010" and f["quantity"] == "tokens"]
    assert c010["severity"] == "warning" and "cannot be less than a part of it" in c010["message"]
    # The formula names the phase that gives no tokens as such, not as "nan": 1.0T + (not stated) = 1T.
    assert c010["formula"] == "tokens = Σ phases = 1T + (not stated) = 1T", c010["formula"]


def test_nothing_checked_on_a_run_says_its_phases_were_read_and_summed():
    """Llama 3.2 Vision 90B's model card: four stages of 885K, 885K, 3,072 and 2,048 H100 hours and no total:
    885,000 + 885,000 + 3,072 + 2,048 = 1,775,120. V014 said "nothing could be checked: the claim states
    Parameters", as if the phases had not been read."""
    run = {"id": "l32v", "params": "88.6B", "hardware": "H100",
           "phases": [{"chip_hours": "885K"}, {"chip_hours": "885K"}, {"chip_hours": 3072}, {"chip_hours": 2048}]}
    claim = to_json(check_records([run]))["claims"][0]
    assert claim["quantities"]["chip_hours"]["value"] == 885_000 + 885_000 + 3_072 + 2_048
    [v014] = [f for f in claim["findings"] if f["rule"] == "V014"]
    assert "its 4 phases are audited as claims of their own, whose sums give the run's Chip-hours 1,775,120 h" \
        in v014["message"], v014["message"]


def test_architecture_apart_is_said_once_of_a_run_not_of_each_phase():
    """DeepSeek-V3 (arXiv:2412.19437, Table 1; config.json: 61 layers, width 7,168, 256 routed experts of width
    2,048, top-8): architecture fields that count a different parameter total (shared experts and the dense first
    layers are not in the fields) are said by V016, once; the run's three stages inherit the fields and repeated
    it three more times (a reviewer's field test)."""
    run = {"id": "dsv3", "params": "671B", "active_params": "37B", "tokens": "14.8T", "hardware": "H800",
           "precision": "fp8", "chip_hours": "2.788M", "layers": 61, "d_model": 7168, "heads": 128, "experts": 256,
           "experts_per_token": 8, "ffn_dim": 2048, "seq_len": 4096, "vocab_size": 129280,
           "phases": [{"chip_hours": "2664K", "tokens": "14.8T"}, {"chip_hours": "119K"}, {"chip_hours": "5K"}]}
    claim = to_json(check_records([run]))["claims"][0]
    assert [f["claim_id"] for f in claim["findings"] if f["rule"] == "V016"] == ["dsv3"]
    assert not [f for phase in claim["phases"] for f in phase["findings"] if f["rule"] == "V016"]
