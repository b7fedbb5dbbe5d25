"""Regulatory compute thresholds (issue 13, rule R001): the lines are rows of a data file with sources; the
worked examples of the EU GPAI guidelines' Annex A are the first tests."""

from __future__ import annotations

import pytest

from audit.api import check_records
from audit.reference import ESTIMATE_MARGIN, position, thresholds


def r001(record: dict) -> list[dict]:
    f = check_records([record]).findings
    return f[f["rule"] == "R001"].to_dict("records")


def test_the_lines_are_data_with_sources():
    by_id = {t.id: t for t in thresholds()}
    assert by_id["eu-ai-act-systemic"].flop == 1e25  # Regulation (EU) 2024/1689, Art. 51(2): "greater than 10^25"
    # Commission guidelines on general-purpose AI models, C(2025) 5045 final (18 July 2025), Sec. 2.1, para. 17
    assert by_id["eu-gpai-indicative"].flop == 1e23
    # California Bus. & Prof. Code Sec. 22757.11(i) (SB 53); N.Y. Gen. Bus. Law Sec. 1420 (RAISE Act); EO 14110
    # Sec. 4.2(b)(i): each "greater than" (or "more than") 10^26 integer or floating-point operations
    assert {by_id[k].flop for k in ("us-ca-sb53", "us-ny-raise", "us-eo-14110")} == {1e26}
    assert by_id["us-ca-sb53"].provision.startswith("Bus. & Prof. Code Sec. 22757.11(i)")
    assert by_id["us-eo-14110"].provision == "Sec. 4.2(b)(i)"
    assert not by_id["us-eo-14110"].in_force  # revoked 20 January 2025 by EO 14148, Sec. 2(ggg); still cited
    assert all(t.source for t in thresholds())


def test_annex_a_first_example_is_below_the_indicative_criterion():
    # Annex A.3, para. 137 (Model A): 6 x 3.8e9 x 3.3e12 = 7.524e22 FLOP (printed 7.5e22, also the rounded figure);
    # with the 30 % margin: 7.524e22 x 1.3 = 9.7812e22 <= 1e23, so no line is reached.
    assert 6 * 3.8e9 * 3.3e12 == pytest.approx(7.524e22)
    assert position(7.524e22, 7.524e22, 1e23) == "below"
    assert r001({"id": "a1", "params": 3.8e9, "tokens": 3.3e12}) == []


def test_annex_a_second_example_is_above_the_indicative_criterion():
    # Annex A.3, para. 144 (Model H): 370,000 H100-hours x 3600 s x 989e12 FLOP/s x 0.5 (the utilisation of
    # Model B, para. 138) = 6.58674e23 FLOP. The guidelines print 6.5e23 (here and in the list of para. 135): the
    # figure was truncated, not rounded (rounded to two digits it is 6.6e23). Either way 0.7 x 6.5e23 > 1e23.
    c = 370_000 * 3600 * 989e12 * 0.5
    assert c == pytest.approx(6.58674e23)
    [f] = r001({"id": "a2", "hardware": "H100 SXM", "chip_hours": 370_000, "peak_flops_per_chip": "989 TFLOP/s",
                "mfu": 0.5})
    assert f["severity"] == "info" and f["expected"] == 1e23
    assert f["claimed"] == pytest.approx(c)
    assert f["detail"] == "above"


@pytest.mark.parametrize("model, params, tokens, printed, side", [
    # Annex A.3 (paras. 135, 139-143), architecture method C = 6 x P x D, against the 1e23 line with the 30 % margin:
    ("C, para. 139", 0.6e9, 36e12, 1.3e23, "straddles"),  # 1.296e23 (rounded to 1.3e23); 0.7 x 1.296e23 = 9.07e22
    ("D, para. 140", 1.54e9, 18e12, 1.6e23, "above"),  # 1.6632e23, printed 1.663e23 and 1.6e23 (truncated)
    ("E, para. 141", 1.7e9, 36e12, 3.7e23, "above"),  # 3.672e23, printed 3.7e23 (rounded)
    ("F, para. 142", 2.5e9, 12e12, 1.8e23, "above"),  # 1.8e23 exactly; 0.7 x 1.8e23 = 1.26e23
    ("G, para. 143", 2.6e9, 61e9 * 164, 1.5e23, "above"),  # 61e9 x 164 = 1.0004e13 tokens: 1.5606e23, printed 1.5e23
])
def test_annex_a_architecture_examples_against_the_indicative_criterion(model, params, tokens, printed, side):
    c = 6 * params * tokens
    assert c == pytest.approx(printed, rel=0.05)  # the printed figure, rounded or truncated, is within 5 %
    [f] = r001({"id": model, "params": params, "tokens": tokens})
    assert f["expected"] == 1e23 and f["claimed"] == pytest.approx(c)
    assert f["detail"].split("|")[0] == side


def test_a_claim_within_the_margin_straddles_the_line_with_the_figures_on_each_side():
    # 8e24 FLOP against 1e25: 8e24 x 1.3 = 1.04e25 > 1e25, so with the margin it lies on both sides.
    result = check_records([{"id": "near", "compute_flops": 8e24}])
    f = result.findings[result.findings["rule"] == "R001"]
    assert set(f["expected"]) == {1e23, 1e25}
    [near] = f[f["expected"] == 1e25].to_dict("records")
    assert near["detail"] == "straddles"
    from audit.rules import RULES  # the words, as every report shows them
    text = RULES["R001"].message(result, near)
    assert "straddles the 1e25 FLOP line" in text and "5.6e24 (below)" in text and "1.04e25 (above)" in text


def test_the_claims_own_figures_can_straddle_a_line():
    # Stated 9e25 FLOP, but 6ND = 6 x 1e12 x 20e12 = 1.2e26: the figures themselves sit on both sides of 1e26.
    result = check_records([{"id": "two-figures", "compute_flops": 9e25, "params": 1e12, "tokens": 20e12}])
    f = result.findings[(result.findings["rule"] == "R001") & (result.findings["expected"] == 1e26)]
    assert list(f["detail"].str.split("|").str[0]) == ["straddles"]


def test_margin_is_the_guidelines_thirty_percent():
    # Annex A.2, para. 123: an estimate "accurate within an overall error margin of 30% of the reported estimate".
    assert ESTIMATE_MARGIN == 0.30
    assert position(1.43e23, 1.43e23, 1e23) == "above"  # 0.7 x 1.43e23 = 1.001e23
    assert position(1.42e23, 1.42e23, 1e23) == "straddles"


def test_a_phase_is_not_placed_against_a_line_only_the_whole_run_is():
    # PaLM 540B (bundled corpus) trains in two phases (6,144 chips for 1,200 h, then 3,072 for 336 h); the EU
    # guidelines (Annex A) sum the phases, so the lines are drawn for the run, not for each phase.
    from audit.api import check, to_json

    palm = next(c for c in to_json(check())["claims"] if c["id"] == "palm-540b")
    assert [f["rule"] for f in palm["findings"] if f["rule"] == "R001"]
    assert palm["phases"] and not [f for p in palm["phases"] for f in p["findings"] if f["rule"] == "R001"]
