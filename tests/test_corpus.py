"""Published training runs pass, doctored copies of them fail, and the bundled corpus audits clean.

Expected ratios are the papers' own numbers divided by the relation written out here:
GPT-3 (Brown et al. 2020, Table D.1): 3,640 PF-days for 175B parameters on 300B tokens;
LLaMA-65B (Touvron et al. 2023, Table 15 and Sec. 2.4): 1,022,362 GPU-hours on 2,048 A100-80GB in about 21 days.
"""

from __future__ import annotations

from collections import Counter

import pytest

from audit.api import check, to_json
from conftest import DATA, PF_DAY, claim_by_id, findings_of, one_finding

GPT3_RATIO = 3640 * PF_DAY / (6 * 175e9 * 300e9)          # 3.1450e23 / 3.15e23 = 0.9984
LLAMA65_RATIO = 1_022_362 / (2048 * 24 * 21)                # 1,022,362 / 1,032,192 = 0.9905


@pytest.fixture(scope="module")
def published() -> dict:
    return to_json(check([str(DATA / "published.json")]))


@pytest.fixture(scope="module")
def doctored() -> dict:
    return to_json(check([str(DATA / "doctored.json")]))


# ------------------------------------------------------------------------------------- consistent runs pass


def test_gpt3_as_published_passes(published):
    claim = claim_by_id(published, "gpt3-175b")
    assert claim["status"] == "pass"
    c001 = one_finding(claim, "C001")
    assert c001["severity"] == "ok"
    assert c001["quantity"] == "compute_flops"
    assert c001["claimed"] == pytest.approx(3640 * PF_DAY, rel=1e-12)
    assert c001["expected"] == pytest.approx(6 * 175e9 * 300e9, rel=1e-12)
    assert c001["ratio"] == pytest.approx(GPT3_RATIO, rel=1e-9)
    assert claim["quantities"]["compute_flops"]["text"] == "3640 PF-days"


def test_llama65b_as_published_passes(published):
    claim = claim_by_id(published, "llama-65b")
    assert claim["status"] == "pass"
    c002 = one_finding(claim, "C002")
    assert c002["severity"] == "ok"
    assert c002["quantity"] == "chip_hours"
    assert c002["claimed"] == 1_022_362
    assert c002["expected"] == pytest.approx(2048 * 24 * 21, rel=1e-12)
    assert c002["ratio"] == pytest.approx(LLAMA65_RATIO, rel=1e-9)
    # No finding worse than ok on a consistent published run.
    assert [f for f in claim["findings"] if f["severity"] not in ("ok", "info")] == []
    # The A100's catalog peak is the datasheet's 312 TF, and the implied end-to-end MFU is
    # 6·N·D / (GPU-hours · 3600 · peak) = 5.4768e23 / (1,022,362 × 3600 × 312e12) = 47.7 %.
    q = claim["quantities"]
    assert q["peak_flops_per_chip"]["value"] == 312e12
    assert q["mfu"]["source"] == "derived"
    assert q["mfu"]["value"] == pytest.approx(6 * 65.2e9 * 1.4e12 / (1_022_362 * 3600 * 312e12), rel=1e-9)


def test_single_object_file_is_the_same_gpt3_claim():
    doc = to_json(check([str(DATA / "gpt3_175b.json")]))
    assert [c["id"] for c in doc["claims"]] == ["gpt3-175b"]
    assert one_finding(doc["claims"][0], "C001")["ratio"] == pytest.approx(GPT3_RATIO, rel=1e-9)


# ----------------------------------------------------------------------------------- doctored copies fail


def test_compute_1000x_off_fails(doctored):
    claim = claim_by_id(doctored, "gpt3-compute-x1000")
    assert claim["status"] == "fail"
    c001 = one_finding(claim, "C001")
    assert c001["severity"] == "error"
    assert c001["ratio"] == pytest.approx(1000 * GPT3_RATIO, rel=1e-9)
    assert c001["ratio"] == pytest.approx(1000, rel=0.01)


def test_gpu_days_written_as_gpu_hours_fails(doctored):
    claim = claim_by_id(doctored, "llama-65b-gpu-days-as-hours")
    assert claim["status"] == "fail"
    c002 = one_finding(claim, "C002")
    assert c002["severity"] == "error"
    assert c002["claimed"] == pytest.approx(1_022_362 / 24, rel=1e-12)
    assert c002["ratio"] == pytest.approx(LLAMA65_RATIO / 24, rel=1e-9)
    assert c002["ratio"] == pytest.approx(1 / 24, rel=0.02)


def test_mfu_above_100_percent_fails(doctored):
    claim = claim_by_id(doctored, "llama-65b-mfu-146")
    assert claim["status"] == "fail"
    assert claim["quantities"]["mfu"]["value"] == pytest.approx(1.46, rel=1e-12)
    assert claim["quantities"]["mfu"]["text"] == "146%"
    u001 = one_finding(claim, "U001")
    assert u001["severity"] == "error"
    assert u001["claimed"] == pytest.approx(1.46, rel=1e-12)
    assert "100" in u001["message"]


def test_mfu_written_with_a_percent_sign_is_not_called_a_percentage_typo(doctored):
    u001 = one_finding(claim_by_id(doctored, "llama-65b-mfu-146"), "U001")
    assert "0.0146" not in u001["message"]


def test_doctored_claims_all_fail_and_nothing_else_in_the_file_passes(doctored):
    assert doctored["summary"]["status"] == {"pass": 0, "warn": 0, "fail": 3, "invalid": 0}


# --------------------------------------------------------------------------------------- bundled corpus


@pytest.fixture(scope="module")
def corpus() -> dict:
    return to_json(check())


def test_bundled_corpus_has_at_least_25_sourced_claims(corpus):
    claims = corpus["claims"]
    assert len(claims) >= 25
    for c in claims:
        assert c["source"] and len(c["source"].strip()) > 10, f"{c['id']} has no source"
        assert c["input"]["file"] == "corpus.csv (bundled)"
    ids = [c["id"] for c in claims]
    assert len(set(ids)) == len(ids), "corpus ids must be unique"


def test_no_published_run_in_the_corpus_fails_or_is_invalid(corpus):
    bad = {c["id"]: [f"{f['rule']} {f['message']}" for f in c["findings"] if f["severity"] == "error"]
           for c in corpus["claims"] if c["status"] in ("fail", "invalid")}
    assert bad == {}


def test_corpus_status_counts_add_up(corpus):
    counted = Counter(c["status"] for c in corpus["claims"])
    summary = corpus["summary"]
    assert summary["claims"] == len(corpus["claims"])
    assert summary["status"] == {s: counted.get(s, 0) for s in ("pass", "warn", "fail", "invalid")}
    assert sum(summary["status"].values()) == len(corpus["claims"])
    # Published runs are mostly consistent: most pass outright.
    assert counted["pass"] > len(corpus["claims"]) / 2
    findings = Counter(f["severity"] for c in corpus["claims"] for f in c["findings"])
    assert summary["findings"] == {s: findings.get(s, 0) for s in ("ok", "info", "warning", "error")}


def test_corpus_gpt3_row_matches_the_paper(corpus):
    claim = claim_by_id(corpus, "gpt3-175b")
    assert claim["quantities"]["compute_flops"]["value"] == pytest.approx(3640 * PF_DAY, rel=1e-12)
    c001 = one_finding(claim, "C001")
    assert c001["severity"] == "ok"
    assert c001["ratio"] == pytest.approx(GPT3_RATIO, rel=1e-9)


def test_corpus_llama65b_row_matches_the_paper(corpus):
    claim = claim_by_id(corpus, "llama-65b")
    assert claim["status"] == "pass"
    assert one_finding(claim, "C002")["ratio"] == pytest.approx(LLAMA65_RATIO, rel=1e-9)
    # Sec 2.4: about 380 tokens/s/GPU on 2,048 GPUs for 21 days is 380 × 2048 × 86400 × 21 tokens.
    c004 = one_finding(claim, "C004")
    assert c004["severity"] == "ok"
    assert c004["expected"] == pytest.approx(380 * 2048 * 86400 * 21, rel=1e-9)


def test_corpus_palm_chip_hours_are_the_appendix_b_sum(corpus):
    # PaLM App. B: 6,144 TPU v4 chips for 1,200 hours, then 3,072 chips for 336 hours.
    q = claim_by_id(corpus, "palm-540b")["quantities"]
    assert q["chip_hours"]["value"] == 6144 * 1200 + 3072 * 336
    assert q["wall_clock_days"]["value"] == pytest.approx((1200 + 336) / 24, rel=1e-12)
    assert q["peak_flops_per_chip"]["value"] == 275e12   # Cloud TPU v4 docs


def test_corpus_moe_row_uses_active_parameters(corpus):
    # DeepSeek-V3 report: 671B total, 37B activated per token, 14.8T tokens.
    claim = claim_by_id(corpus, "deepseek-v3")
    q = claim["quantities"]
    assert q["params"]["value"] == 671e9 and q["active_params"]["value"] == 37e9
    assert q["compute_flops"]["source"] == "derived"
    assert q["compute_flops"]["value"] == pytest.approx(6 * 37e9 * 14.8e12, rel=1e-9)
    assert findings_of(claim, "C001") == []  # derived by C001, so C001 does not check it
