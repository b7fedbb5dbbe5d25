"""The engine: which checks run, what they derive, how a claim's status follows from its findings.

Every expected value is hand arithmetic on the relations (C = 6·N·D; chip_hours = chips · 24 · days;
C = chip_hours · 3600 · peak · MFU; D = throughput · 86400 · days; achieved = MFU · peak) with datasheet peaks.
"""

from __future__ import annotations

import math
import re

import pytest

from audit.api import check, check_records, to_json
from audit.findings import exit_status
from audit.rules import RULES, relation_rules
from conftest import A100_BF16, DATA, H100_SXM_BF16, findings_of, one_finding


def audit_one(**claim) -> dict:
    doc = to_json(check_records([{"id": "c", **claim}]))
    return doc["claims"][0]


# ------------------------------------------------------------------------------------ applicability


def test_a_claim_with_only_params_gets_no_relation_check():
    claim = audit_one(params="7B")
    assert findings_of(claim, "C001") == []
    assert [f for f in claim["findings"] if f["rule"] in {r.code for r in relation_rules()}] == []
    # Nothing could be checked: unchecked, never a pass (issue 9), and said so with what would check it (V014).
    assert [f["rule"] for f in claim["findings"]] == ["V014"] and claim["status"] == "unchecked"
    assert "C001 (C = 6 · N · D) needs Compute and Tokens" in claim["findings"][0]["message"]
    assert "compute_flops" not in claim["quantities"]


def test_two_of_three_derives_the_third_and_does_not_check_it():
    claim = audit_one(params="7B", tokens="1T")
    assert findings_of(claim, "C001") == []
    # Unchecked, and V014 says that the derived compute (6 × 7e9 × 1e12 = 4.2e22), once stated, would be checked.
    assert claim["status"] == "unchecked"
    [note] = findings_of(claim, "V014")
    assert "C001 (C = 6 · N · D) would check Compute if stated (derived now)" in note["message"]
    c = claim["quantities"]["compute_flops"]
    assert c["value"] == pytest.approx(6 * 7e9 * 1e12, rel=1e-12)
    assert c["source"] == "derived" and c["rule"] == "C001"

    claim = audit_one(compute_flops="4.2e22", params="7B")
    assert findings_of(claim, "C001") == []
    assert claim["quantities"]["tokens"]["value"] == pytest.approx(4.2e22 / (6 * 7e9), rel=1e-12)

    claim = audit_one(chips=2048, wall_clock_days=21)
    assert findings_of(claim, "C002") == []
    assert claim["quantities"]["chip_hours"]["value"] == pytest.approx(2048 * 24 * 21, rel=1e-12)


def test_all_three_known_is_checked():
    claim = audit_one(params="7B", tokens="1T", compute_flops=6 * 7e9 * 1e12)
    c001 = one_finding(claim, "C001")
    assert c001["severity"] == "ok"
    assert c001["ratio"] == pytest.approx(1.0, rel=1e-12)


# ----------------------------------------------------------------------------- every check is recorded


# LLaMA-65B-shaped claim in which every figure is stated and consistent by construction (hand arithmetic):
N, D, CHIPS, DAYS = 65.2e9, 1.4e12, 2048, 21
C = 6 * N * D                                   # 5.4768e23 FLOP
CHIP_HOURS = CHIPS * 24 * DAYS                  # 1,032,192
MFU = C / (CHIP_HOURS * 3600 * A100_BF16)       # 0.4724
THROUGHPUT = D / (86400 * DAYS)                 # 771,605 tokens/s
ACHIEVED = MFU * A100_BF16                      # 147.4 TFLOP/s
FULL = {"params": N, "tokens": D, "compute_flops": C, "chips": CHIPS, "wall_clock_days": DAYS,
        "chip_hours": CHIP_HOURS, "hardware": "A100 80GB", "precision": "bf16", "mfu": MFU,
        "throughput_tokens_per_s": THROUGHPUT, "achieved_flops_per_chip": ACHIEVED,
        "peak_flops_per_chip": A100_BF16}


def test_every_check_that_ran_is_recorded_including_ok_ones():
    claim = audit_one(**FULL)
    assert claim["status"] == "pass"
    for code in ("C001", "C002", "C003", "C004", "C005", "C006", "U001", "U003", "M001"):
        f = one_finding(claim, code)
        assert f["severity"] == "ok", f
    for code in ("C001", "C002", "C003", "C004", "C005", "C006"):
        assert one_finding(claim, code)["ratio"] == pytest.approx(1.0, rel=1e-9), code
    # Only checks, nothing derived: every input quantity stays "claimed".
    for name in FULL:
        if name not in ("hardware", "precision"):
            assert claim["quantities"][name]["source"] == "claimed", name


@pytest.mark.parametrize("field, factor, rule", [
    ("compute_flops", 5, "C001"),  # C001 errs beyond 4x (6ND is an approximation: thresholds.json)
    ("chip_hours", 3, "C002"),
    ("mfu", 1 / 3, "C003"),
    ("tokens", 3, "C004"),
    ("achieved_flops_per_chip", 1 / 3, "C005"),
    ("peak_flops_per_chip", 2, "C006"),
])
def test_one_figure_off_is_flagged_by_its_relation(field, factor, rule):
    claim = audit_one(**{**FULL, field: FULL[field] * factor})
    assert claim["status"] == "fail"
    f = one_finding(claim, rule)
    assert f["severity"] == "error"
    assert f["ratio"] == pytest.approx(factor, rel=1e-9) or f["ratio"] == pytest.approx(1 / factor, rel=1e-9)


def test_sparse_peak_taken_for_dense_is_an_error():
    # H100 whitepaper Table 1: 1,978.9 TF bf16 is the 2:4-sparse figure; dense is 989.4.
    claim = audit_one(hardware="H100", precision="bf16", peak_flops_per_chip="1978.9 TFLOP/s")
    c006 = one_finding(claim, "C006")
    assert c006["severity"] == "error"
    assert c006["ratio"] == pytest.approx(1978.9e12 / H100_SXM_BF16, rel=1e-9)


def test_precision_selects_the_peak():
    # H100 whitepaper Table 1: FP8 tensor 1,978.9 TF dense on SXM5; A100 has no FP8 (datasheet).
    claim = audit_one(hardware="H100", precision="fp8", chips=1)
    assert claim["quantities"]["peak_flops_per_chip"]["value"] == pytest.approx(1978.9e12, rel=1e-12)
    claim = audit_one(hardware="A100", precision="fp8", chips=1)
    assert "peak_flops_per_chip" not in claim["quantities"]
    assert one_finding(claim, "H002")["severity"] == "warning"


# ------------------------------------------------------------------ a relation never checks what it derived


def _relation_checked_what_it_derived(result) -> list[tuple[str, str, str]]:
    """(claim id, rule, quantity) for every relation finding whose relation also derived one of its terms."""
    bad = []
    relation_codes = {r.code: r for r in relation_rules()}
    for _, f in result.findings.iterrows():
        rule = relation_codes.get(f["rule"])
        if rule is None:
            continue
        row = int(f["row"])
        for q in rule.relation.quantities:
            if q in result.how.columns and result.how.at[row, q] == rule.code:
                bad.append((result.claims.info.at[row, "id"], rule.code, q))
    return bad


def test_chained_derivations_are_not_rechecked():
    # N, D → C (C001); chips, chip_hours → days (C002); C, chip_hours, peak → MFU (C003).
    claim = audit_one(params="65.2B", tokens="1.4T", hardware="A100 80GB", chips=2048, chip_hours="1,022,362")
    q = claim["quantities"]
    assert q["compute_flops"]["rule"] == "C001"
    assert q["wall_clock_days"]["rule"] == "C002"
    # Written out to 12 significant digits (audit/rounding.py).
    assert q["wall_clock_days"]["value"] == pytest.approx(1_022_362 / (24 * 2048), rel=1e-11)
    assert q["mfu"]["rule"] == "C003"
    assert q["mfu"]["value"] == pytest.approx(6 * 65.2e9 * 1.4e12 / (1_022_362 * 3600 * A100_BF16), rel=1e-9)
    for code in ("C001", "C002", "C003"):
        assert findings_of(claim, code) == [], code
    # The derived MFU is still bounded by U001 (a different rule), and says it was derived.
    u001 = one_finding(claim, "U001")
    assert u001["severity"] == "ok"
    mfu = 6 * 65.2e9 * 1.4e12 / (1_022_362 * 3600 * A100_BF16)  # 5.4768e23 / 1.1483e24 = 0.47695
    assert u001["claimed"] == pytest.approx(mfu, rel=1e-9)
    # The message gives that MFU (three significant digits: 47.7 %) and names the rule that derived it.
    assert re.search(r"(?<![\d.])47\.7 % \(implied by C003\)", u001["message"]), u001["message"]


@pytest.mark.parametrize("paths", [(), (str(DATA / "published.json"), str(DATA / "doctored.json"),
                                         str(DATA / "runs.jsonl"), str(DATA / "runs_spreadsheet.csv"))])
def test_no_relation_checks_a_value_it_derived(paths):
    result = check(list(paths))
    assert len(result.findings) > 0
    assert _relation_checked_what_it_derived(result) == []


# --------------------------------------------------------------------------------------------- status


def test_status_pass_when_nothing_is_worse_than_info():
    claim = audit_one(params="175B", tokens="300B", compute_flops="3640 PF-days")
    assert {f["severity"] for f in claim["findings"]} <= {"ok", "info"}
    assert claim["status"] == "pass"


def test_status_warn_on_a_warning():
    # 3 × 6ND: beyond the 2x ok factor, within the 4x warning factor (thresholds.json, C001). The figures
    # are stated to three digits ("1T" alone means 0.5-1.5T).
    claim = audit_one(params="7.00B", tokens="1.00T", compute_flops=3 * 6 * 7e9 * 1e12)
    assert one_finding(claim, "C001")["severity"] == "warning"
    assert claim["status"] == "warn"


def test_status_fail_on_an_error_even_with_warnings():
    claim = audit_one(params="7B", tokens="1T", compute_flops=10 * 6 * 7e9 * 1e12, hardware="H1000")
    assert one_finding(claim, "C001")["severity"] == "error"
    assert one_finding(claim, "H001")["severity"] == "warning"
    assert claim["status"] == "fail"


def test_status_invalid_beats_fail():
    claim = audit_one(params="7B", tokens="1T", compute_flops=10 * 6 * 7e9 * 1e12, chips=1.5)
    assert one_finding(claim, "C001")["severity"] == "error"
    assert one_finding(claim, "V001")["quantity"] == "chips"
    assert claim["status"] == "invalid"


def test_duplicate_id_is_a_warning_on_the_second_claim_only():
    doc = to_json(check_records([{"id": "same", "params": "7B"}, {"id": "same", "params": "13B"}]))
    first, second = doc["claims"]
    assert findings_of(first, "V002") == [] and first["status"] == "unchecked"  # 7B alone: nothing to check
    assert one_finding(second, "V002")["severity"] == "warning" and second["status"] == "warn"


@pytest.mark.parametrize("statuses, fail_on, code", [
    (["pass", "pass"], "fail", 0),
    (["pass", "warn"], "fail", 0),
    (["pass", "warn"], "warn", 1),
    (["pass", "fail"], "fail", 1),
    (["invalid"], "fail", 1),
    (["invalid"], "warn", 1),
    (["fail", "invalid"], "never", 0),
    ([], "warn", 0),
])
def test_exit_status(statuses, fail_on, code):
    assert exit_status(statuses, fail_on) == code


# --------------------------------------------------------------------------------------------- memory


@pytest.mark.parametrize("chips, severity", [(1, "warning"), (2, "info"), (8, "info"), (13, "info"), (14, "ok"),
                                             (2048, "ok")])
def test_memory_fit_boundary_for_70b_on_h100(chips, severity):
    # 16 B × 70e9 = 1.12e12 B; ⌈1.12e12 / 80e9⌉ = 14 H100-80GB at least for the full state. The 16-bit weights
    # alone, 2 B × 70e9 = 140 GB, fit on 2 (160 GB) but not on 1 (80 GB): only then a warning.
    claim = audit_one(params="70B", hardware="H100", chips=chips)
    m001 = one_finding(claim, "M001")
    assert m001["severity"] == severity
    assert m001["expected"] == math.ceil(16 * 70e9 / 80e9) == 14
    assert m001["claimed"] == chips


def test_memory_fit_warning_says_how_many_chips_are_needed():
    claim = audit_one(params="70B", hardware="H100", chips=8)
    m001 = one_finding(claim, "M001")
    # 16 B × 70e9 = 1.12e12 B = 1.12 TB; ⌈1.12e12 / 80e9⌉ = 14 chips of 80 GB; 8 claimed. Each number stands alone
    # (not a digit inside another figure such as "80" or "1,120").
    msg = m001["message"]
    assert re.search(r"(?<![\d.,])8 chips\b", msg), msg
    assert re.search(r"(?<![\d.,])1\.12 TB\b", msg), msg
    assert re.search(r"\bat least 14 × 80 GB\b", msg), msg
    assert m001["claimed"] == 8 and m001["expected"] == 14
    # 8 x 80 GB hold the 140 GB of weights: offloading or an 8-bit optimizer would do, so an info, not a warning.
    assert m001["severity"] == "info" and "hold the weights" in msg
    assert claim["status"] == "pass"
    assert claim["quantities"]["min_chips_memory"]["value"] == 14


# ------------------------------------------------------------------------------------ mixture of experts


def test_moe_compute_uses_active_params():
    # DeepSeek-V3 technical report: 671B total, 37B activated per token, 14.8T tokens.
    claim = audit_one(params="671B", active_params="37B", tokens="14.8T")
    c = claim["quantities"]["compute_flops"]
    assert c["value"] == pytest.approx(6 * 37e9 * 14.8e12, rel=1e-12)
    assert c["value"] != pytest.approx(6 * 671e9 * 14.8e12, rel=0.5)


def test_moe_compute_claimed_with_total_params_is_flagged():
    claim = audit_one(params="671B", active_params="37B", tokens="14.8T", compute_flops=6 * 671e9 * 14.8e12)
    c001 = one_finding(claim, "C001")
    assert c001["severity"] == "error"
    assert c001["ratio"] == pytest.approx(671 / 37, rel=1e-9)


def test_moe_consistent_compute_passes_c001():
    claim = audit_one(params="671B", active_params="37B", tokens="14.8T", compute_flops="3.2856e24")
    assert one_finding(claim, "C001")["ratio"] == pytest.approx(3.2856e24 / (6 * 37e9 * 14.8e12), rel=1e-9)
    assert one_finding(claim, "C001")["severity"] == "ok"


def test_moe_memory_counts_all_parameters():
    # All 671B parameters hold training state: ⌈16 × 671e9 / 80e9⌉ = ⌈134.2⌉ = 135 H800-80GB.
    claim = audit_one(params="671B", active_params="37B", hardware="H800", chips=2048)
    assert one_finding(claim, "M001")["expected"] == math.ceil(16 * 671e9 / 80e9) == 135


# ------------------------------------------------------------------------------------------- rules list


def test_every_finding_rule_is_documented():
    result = check([str(DATA / "doctored.json"), str(DATA / "bad_fields.json")])
    for code in set(result.findings["rule"]):
        assert code in RULES
        assert RULES[code].doc(), code



def test_hfu_a_hair_below_a_derived_mfu_is_not_an_error():
    # AlexaTM 20B as Epoch AI has it: 2.04374016e23 FLOP on 128 A100 x 2,880 h gives MFU
    # 2.04374016e23 / (368,640 x 3600 x 312e12) = 49.359 %, and the stated HFU is 49.35 %: 0.02 % apart, the
    # difference of two FLOP counts rounded, not HFU below MFU. 40 % against 55 % (1.375x) is an error.
    close = audit_one(compute_flops=2.04374016e23, hardware="A100 80GB", chips=128, wall_clock_days=120,
                      hfu=0.4935)
    assert one_finding(close, "U002")["severity"] == "ok"
    far = audit_one(mfu=0.55, hfu=0.40, hardware="A100 80GB")
    assert one_finding(far, "U002")["severity"] == "error"


def test_a_throughput_per_gpu_is_multiplied_by_the_chips():
    # LLaMA-65B (Touvron et al. 2023, Sec. 2.4): "around 380 tokens/sec/GPU on 2048 A100 GPU ... 1.4T tokens
    # takes approximately 21 days": 380 x 2048 x 86,400 x 21 = 1.412e12 tokens, ratio 1.4e12 / 1.412e12 = 0.991.
    claim = audit_one(params="65.2B", tokens="1.4T", hardware="A100 80GB", chips=2048, wall_clock_days=21,
                      throughput_tokens_per_s=380, throughput_scope="per GPU")
    assert claim["quantities"]["throughput_tokens_per_s"]["value"] == pytest.approx(380 * 2048)
    c004 = one_finding(claim, "C004")
    assert c004["severity"] == "ok" and c004["ratio"] == pytest.approx(1.4e12 / (380 * 2048 * 86400 * 21))


@pytest.mark.parametrize("written", ["380 tokens/s/GPU", "380 tokens per second per GPU"])
def test_a_throughput_written_per_gpu_is_read_as_such(written):
    # The same LLaMA-65B figures with the scope in the unit: 380 x 2048 tokens/s for the cluster, as above.
    claim = audit_one(params="65.2B", tokens="1.4T", hardware="A100 80GB", chips=2048, wall_clock_days=21,
                      throughput_tokens_per_s=written)
    assert claim["status"] != "invalid"
    assert claim["quantities"]["throughput_tokens_per_s"]["value"] == pytest.approx(380 * 2048)
    assert one_finding(claim, "C004")["severity"] == "ok"
    # A scope that says the cluster contradicts the unit: the claim says which of the two.
    bad = audit_one(params="65.2B", chips=2048, throughput_tokens_per_s=written, throughput_scope="whole cluster")
    assert bad["status"] == "invalid"
    assert "written per accelerator but throughput_scope says otherwise" in one_finding(bad, "V001")["message"]


def test_a_figure_that_cancels_out_does_not_widen_the_precision_of_an_impossible_mfu():
    """A vendor's "3,000 tokens/s per GPU" for a 70B model on H100s: 6 x 70e9 x 3,000 = 1.26e15 FLOP/s per GPU,
    127 % of the dense BF16 peak (989.4 TFLOP/s, H100 whitepaper Table 1), whatever the tokens, which cancel from
    the MFU: chip-hours = D / (3,000 x 3600) and C = 6 x 70e9 x D. "3,000" (±500, 16.7 %) and "70B" (±0.5B) leave
    1.27 / 1.174 > 1: impossible. The tokens' "2T" (±25 %) was counted twice (once through C, once through the
    chip-hours) and made it "possible only if their rounding hides that much", a pass: stating one more figure
    must not turn an impossible claim into a possible one."""
    for tokens in ("2T", "2.000T", None):
        given = {"tokens": tokens} if tokens else {}
        claim = audit_one(params="70B", hardware="H100", chips=1024, precision="BF16",
                          throughput_tokens_per_s="3,000 tokens/s/GPU", **given)
        u001 = one_finding(claim, "U001")
        assert u001["severity"] == "error" and claim["status"] == "fail", (tokens, u001["message"])
        assert claim["quantities"]["mfu"]["value"] == pytest.approx(6 * 70e9 * 3000 / H100_SXM_BF16, rel=1e-3)


def test_a_cycle_through_a_throughput_per_gpu_is_not_a_check():
    """LLaMA-65B (Touvron et al. 2023, Table 15 and Sec. 2.4): 380 tokens/s/GPU, 1,022,362 GPU-hours, 1.4T tokens.
    The achieved FLOP/s per chip derived from the throughput per GPU (6N x 380) and the MFU derived from the
    compute and the chip-hours are one figure by two paths, so C005 (achieved = MFU x peak) checks nothing: it was
    shown as "agrees" (ratio 0.999x), a check of the claim against itself."""
    claim = audit_one(params="65.2B", tokens="1.4T", hardware="A100 80GB", chips=2048, chip_hours=1022362,
                      throughput_tokens_per_s="380 tokens/s/GPU")
    assert not [f for f in claim["findings"] if f["rule"] == "C005"]
    # What the figures do test, once: the tokens against the throughput and the time, 1.4e12 / (380 x 1,022,362
    # x 3600) = 1.001 (C004 through the cluster's throughput, or C021 through the chip-hours: one check).
    tokens = [f for f in claim["findings"] if f["rule"] in ("C004", "C021")]
    assert len(tokens) == 1 and tokens[0]["severity"] == "ok"
    assert "Throughput per chip" in tokens[0]["message"]  # the stated figure behind the cluster's throughput
    assert tokens[0]["ratio"] == pytest.approx(1.4e12 / (380 * 1022362 * 3600), rel=1e-6)


@pytest.mark.parametrize(("written", "text"), [("163 TFLOP/s", "163 TFLOP/s"), (163e12, "163000000000000.0")])
def test_a_figure_read_as_hardware_flops_keeps_the_text_it_was_written_as(written, text):
    """Megatron-LM's 1T model (Narayanan et al. 2021, Table 1): 163 TFLOP/s per GPU, 52 % of the A100's 312,
    counted with the recomputed forward pass; with its HFU stated the figure is read as hardware FLOP/s (C015).
    It moved without its text: a claimed figure with text null (the HTML report's "stated as" was empty)."""
    claim = audit_one(params="1T", hardware="A100", chips=3072, precision="fp16", achieved_flops_per_chip=written,
                      hfu="52%")
    moved = claim["quantities"]["achieved_hardware_flops_per_chip"]
    assert moved["source"] == "claimed" and moved["value"] == 163e12 and moved["text"] == text
    assert "achieved_flops_per_chip" not in claim["quantities"]


def test_a_dataset_size_its_notes_call_tokens_seen_is_d_without_epochs():
    # Minerva (Epoch's row, rounded): 6 x 540B x 26B = 8.424e22; the fine-tune compute 2.14e23 is 2.54x that.
    claim = audit_one(params="540B", dataset_size=26e9, domain="Language", base_model="PaLM (540B)",
                      finetune_compute_flops=2.14e23, compute_flops=2.74e24,
                      dataset_notes="38.5B tokens - size of the dataset, the model saw 26B tokens in 399k steps")
    assert claim["quantities"]["tokens"]["value"] == pytest.approx(26e9)
    (c020,) = findings_of(claim, "C020")
    assert c020["expected"] == pytest.approx(6 * 540e9 * 26e9)
    assert c020["severity"] == "warning"
    # The same size with stated epochs is a dataset's size: D = 26B x 2 epochs.
    claim = audit_one(params="540B", dataset_size=26e9, epochs=2, domain="Language",
                      dataset_notes="the model saw 26B tokens")
    assert claim["quantities"]["tokens"]["value"] == pytest.approx(52e9)


def test_findings_hold_rule_codes_and_severities_as_categoricals():
    # Issue 12: findings stay numbers in columns. GPT-3 (175B, 300B tokens, 3.14e23 FLOP) gives C001 and more.
    import pandas as pd

    result = check_records([{"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": 3.14e23}])
    rule, severity = result.findings["rule"], result.findings["severity"]
    assert isinstance(rule.dtype, pd.CategoricalDtype) and isinstance(severity.dtype, pd.CategoricalDtype)
    assert list(rule.cat.categories) == sorted(RULES)  # every registered code, the same in every batch
    assert list(severity.cat.categories) == ["ok", "info", "warning", "error"]
    assert "C001" in set(rule.astype(str))


def test_a_peak_given_by_the_claims_own_mfu_bounds_nothing():
    """A mix of A100 and H100 without counts has no datasheet peak; with a stated MFU, C003 gives a peak of
    C / (3600 · chip_hours · MFU) = 6 x 7e9 x 1e12 / (3600 x 512 x 240 h x 0.3) = 316.5 TFLOP/s, and 'achieved <=
    peak' is then MFU <= 1, which U001 checks: U003 says nothing (it said 'within the peak 316.5 TFLOP/s')."""
    doc = to_json(check_records([{"id": "mix", "params": "7B", "tokens": "1T", "hardware": "A100, H100",
                                  "chips": 512, "wall_clock_days": 10, "mfu": 0.3}]))
    c = doc["claims"][0]
    assert c["quantities"]["peak_flops_per_chip"]["value"] == pytest.approx(6 * 7e9 * 1e12 / (3600 * 512 * 240 * 0.3))
    assert findings_of(c, "U003") == []
    # With a datasheet peak the same figures are checked: 42e21 / (122,880 h x 3600) = 94.9 TFLOP/s <= 312 (A100).
    doc = to_json(check_records([{"id": "a100", "params": "7B", "tokens": "1T", "hardware": "A100", "chips": 512,
                                  "wall_clock_days": 10, "mfu": 0.3}]))
    assert one_finding(doc["claims"][0], "U003")["severity"] == "ok"


def test_tpu_cores_written_as_the_hardware_give_the_chips_and_say_how():
    """GShard (Lepikhin et al. 2020, Sec. 3): "2048 TPU v3 cores" for 4 days, "22 TPU v3 core years". The cores are
    1,024 chips (two TensorCores each), and 1,024 x 96 h = 98,304 chip-hours = 196,608 core-hours = 22.4
    core-years: the paper's figures agree."""
    doc = to_json(check_records([{"id": "gshard", "params": "600B", "hardware": "2048 TPU v3 cores",
                                  "wall_clock_days": 4, "chip_hours": 98_304}]))
    claim = doc["claims"][0]
    assert claim["hardware"]["accelerator"] == "tpu-v3"
    chips = claim["quantities"]["chips"]
    assert chips["value"] == 2048 / 2
    assert chips["how"] == ("H003: chips = cores / cores_per_chip = 2,048 / 2 = 1,024 "
                            "(the TensorCores of '2048 TPU v3 cores')")
    assert [f["severity"] for f in claim["findings"] if f["rule"] == "C002"] == ["ok"]


def test_chips_counted_in_the_hardware_text_say_so_not_the_mix_formula():
    """Nemotron-4 340B's "768 DGX H100 nodes" are 768 x 8 = 6,144 GPUs (NVIDIA DGX H100 datasheet: 8 per system);
    the chips' derivation named H004's formula for a mix's mean peak."""
    doc = to_json(check_records([{"id": "n", "params": "340B", "hardware": "768 DGX H100 nodes",
                                  "wall_clock_days": 20}]))
    chips = doc["claims"][0]["quantities"]["chips"]
    assert chips["value"] == 768 * 8
    assert chips["how"] == "H004: the count in the hardware text '768 DGX H100 nodes' = 6,144"


@pytest.mark.parametrize(("chips", "mfu", "tokens", "status"), [
    ("up to 112", "36.2-41.4%", "1T", "pass"),  # as INTELLECT-1 states it: the MFU is above its floor
    ("up to 112", "10%", 1e12, "warn"),  # below the floor that at most 112 GPUs set
    ("at least 112", "38.8%", 1e12, "warn"),  # at least 112 GPUs: the MFU is at most 14.9 %
    ("at least 112", "10%", 1e12, "pass"),
    ("up to 112", "38.8%", "over 1000000000000", "pass"),  # more tokens, fewer GPUs: both raise the MFU's floor
    ("112", "38.8%", 1e12, "warn"),  # no bound: an equality, 2.6x off
])
def test_a_figure_written_as_a_bound_makes_its_checks_inequalities(chips, mfu, tokens, status):
    """INTELLECT-1 (Jaghouar et al. 2024, arXiv:2412.01152: 10B parameters, 1T tokens, "36.2-41.4% model FLOPS
    utilization"; Prime Intellect: "up to 112 H100 GPUs", 42 days) was flagged: C003 compared 38.8 % with the
    MFU that exactly 112 GPUs for 42 days give. By hand: C = 6 x 10e9 x 1e12 = 6e22 FLOP; 112 x 42 x 86,400 s x
    989.4e12 FLOP/s = 4.021e23; 6e22 / 4.021e23 = 14.9 %. At most 112 GPUs make that a floor on the MFU; at least
    112 a ceiling. A figure derived from a bound is a bound (the GPU-hours here), turned by the relation's signs."""
    assert 6 * 10e9 * 1e12 / (112 * 42 * 86_400 * 989.4e12) == pytest.approx(0.1492, abs=5e-5)
    result = check_records([{"id": "intellect-1", "params": "10 billion", "tokens": tokens, "hardware": "H100",
                             "chips": chips, "wall_clock_days": 42, "mfu": mfu}])
    claim = to_json(result)["claims"][0]
    assert claim["status"] == status
    c003 = [f for f in claim["findings"] if f["rule"] == "C003"]
    assert len(c003) == 1 and c003[0]["expected"] == pytest.approx(0.1492, abs=5e-4)
    if status == "pass":
        assert "holds only as an inequality" in c003[0]["message"]


def test_a_figure_derived_from_bounds_is_shown_as_one_and_judged_on_its_side():
    """Snowflake Arctic (Snowflake blog, April 2024): 480B parameters, 17B active, 3.5T tokens, H100s, "less than
    3K GPU weeks", "less than $2 million". By hand: 3,000 x 168 h = 504,000 GPU-hours at most; C = 6 x 17e9 x
    3.5e12 = 3.57e23 FLOP; MFU = 3.57e23 / (504,000 x 3600 x 989.4e12) = 19.9 %, at least (fewer hours, more MFU);
    price = $2M / 504,000 h = $3.97 per GPU-hour, with both figures at most: bounded neither way. The MFU was shown
    as 19.9 % "within the plausible band", the price as "within what providers charge" (a helper's field test)."""
    assert 3.57e23 / (504_000 * 3600 * 989.4e12) == pytest.approx(0.1989, abs=5e-5)
    result = check_records([{"id": "arctic", "params": "480B", "active_params": "17B", "tokens": "3.5T",
                             "hardware": "H100", "precision": "bf16", "chip_hours": "less than 3K GPU weeks",
                             "cost_usd": "less than $2 million"}])
    claim = to_json(result)["claims"][0]
    q = claim["quantities"]
    assert (q["chip_hours"]["bound"], q["chip_hours"]["display"]) == ("at most", "≤ 504,000 h")
    assert (q["mfu"]["bound"], q["mfu"]["display"]) == ("at least", "≥ 19.9 %")
    assert q["price_per_chip_hour"]["bound"] == "either way"
    assert q["price_per_chip_hour"]["value"] == pytest.approx(2e6 / 504_000, rel=1e-3)
    assert "bound" not in q["compute_flops"]  # 6ND of stated figures: exact
    assert not [f for f in claim["findings"] if f["rule"] == "E007"]  # a price bounded neither way is not judged
    [u001] = [f for f in claim["findings"] if f["rule"] == "U001"]
    assert u001["severity"] == "ok" and "MFU at least 19.9 %" in u001["message"] and "not below" in u001["message"]
    assert claim["status"] == "pass"
    # At most 20 GPU-hours give an MFU of at least 3,570 %: impossible on the side the bound holds.
    few = to_json(check_records([{"id": "few", "params": "17B", "tokens": "3.5T", "hardware": "H100",
                                  "chip_hours": "less than 20 GPU-hours"}]))["claims"][0]
    assert [f["severity"] for f in few["findings"] if f["rule"] == "U001"] == ["error"]


@pytest.mark.parametrize(("mfu", "recompute", "status"), [
    ("50.7%", "full", "warn"),  # 50.7 / 38.0 = 1.334: r = 4/3, an HFU in the MFU column
    ("50.7%", None, "pass"),  # no recomputation stated: goodput of 75 %, accepted
    ("55.1%", "full", "pass"),  # 1.45x: not r (3 % of it), goodput
    ("38%", "full", "pass"),  # agrees
])
def test_an_mfu_at_the_stated_recompute_factor_above_the_implied_one_is_an_hfu(mfu, recompute, status):
    """A team's run sheet (field test, session 24): 760M parameters, 76B tokens (6 x 0.76e9 x 76e9 = 3.4656e20
    FLOP), 812 A100-hours, full activation recomputation and "MFU" 50.7 %, which was the HFU. By hand the MFU is
    3.4656e20 / (3600 x 812 x 312e12) = 38.0 %, and 50.7 / 38.0 = 1.334, the 4/3 of full recomputation. The
    goodput allowance (a stated steady-state MFU up to 1.5x the end-to-end one) passed it; with recomputation
    stated and the ratio at r, it is a warning whose cause is the recomputation."""
    assert 6 * 0.76e9 * 76e9 / (3600 * 812 * 312e12) == pytest.approx(0.3800, abs=5e-4)
    row = {"id": "dense-0.76b", "params": 0.76e9, "tokens": 76e9, "compute_flops": 3.4656e20,
           "hardware": "A100 80GB", "precision": "bf16", "chips": 8, "chip_hours": 812, "mfu": mfu}
    if recompute:
        row["activation_recompute"] = recompute
    claim = to_json(check_records([row]))["claims"][0]
    assert claim["status"] == status
    c003 = next(f for f in claim["findings"] if f["rule"] == "C003")
    if status == "warn":
        assert c003["severity"] == "warning" and "an HFU quoted as MFU" in c003["message"]
        assert "recompute" in [e["cause"] for e in c003["explanations"]]
    else:
        assert c003["severity"] == "ok"


def test_an_mfu_above_100_percent_as_written_is_a_warning_even_within_the_rounding():
    """A helper's staged run: 30B parameters on "1T" tokens, 6 x 30e9 x 1e12 = 1.8e23 FLOP, in 144,370 A100-hours:
    1.8e23 / (144,370 x 3600 x 312e12) = 111 % MFU. "1T" is anything from 0.5T to 1.5T, so 100 % is within its
    rounding and U001 said ok, and the claim passed, with 111 % in its table. Only the rounding could save it: a
    warning, as U003 says of a rate above the peak by less than the precision."""
    assert 1.8e23 / (144_370 * 3600 * 312e12) == pytest.approx(1.11, abs=5e-3)
    claim = to_json(check_records([{"id": "mpt", "params": "30B", "tokens": "1T", "hardware": "A100",
                                    "precision": "bf16", "chip_hours": "144,370"}]))["claims"][0]
    [u001] = [f for f in claim["findings"] if f["rule"] == "U001"]
    assert u001["severity"] == "warning" and "by less than the precision" in u001["message"], u001
    assert claim["status"] == "warn"


def test_a_lower_bound_below_the_band_is_not_called_outside_it():
    """Llama 3.1 8B (model card): 1.46M H100-80GB GPU hours, 8B parameters, "15T+" tokens. By hand: 6 x 8e9 x 15e12
    / (1.46e6 x 3600 x 989.4e12) = 13.8 %, at least (more tokens, more MFU): the MFU may be anywhere above, so it is
    not outside the 15-65 % band. U001 said "MFU at least 13.8 % ... is outside the usual band 15-65 %"."""
    assert 6 * 8e9 * 15e12 / (1.46e6 * 3600 * 989.4e12) == pytest.approx(0.1385, abs=5e-4)
    claim = to_json(check_records([{"id": "llama-3.1-8b", "params": "8B", "tokens": "15T+", "hardware": "H100-80GB",
                                    "chip_hours": "1.46M"}]))["claims"][0]
    [u001] = [f for f in claim["findings"] if f["rule"] == "U001"]
    assert "at least 13.8 %" in u001["message"]
    assert "outside" not in u001["message"] and "may be within" in u001["message"], u001["message"]
