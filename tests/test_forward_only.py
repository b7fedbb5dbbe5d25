"""V007 and :func:`audit.notes.forward_only`: a training compute that the notes count as the forward pass alone.

The notes are Epoch AI's own (notable_ai_models.csv, CC-BY), quoted as they are in the file; every expected figure is
worked out by hand in the comment next to it, from the notes' figures and the 6 FLOP per parameter per token of
training (2 forward, 4 backward: Kaplan et al. 2020, sec. 2.1)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.api import check_records
from audit.notes import forward_only, forward_onlys, products

EPOCH_MODELS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "epoch" / "notable_ai_models.csv"

# ------------------------------------------------------------------------------------- the notes' arithmetic


@pytest.mark.parametrize("notes, factors, units, value", [
    # NPLM (Brown): 2 × 4,127,383 = 8,254,766; × 800,000 = 6.6038128e12; × 20 = 1.32076256e14.
    ("Total FLOP: 2*4127383*800000*20=1.3207626e+14", [2, 4127383, 800000, 20], ["", "", "", ""], 1.32076256e14),
    # NetTalk (transcription): the 3 in words' parentheses is a factor; 18629 × 2 × 3 = 111,774; × 55 = 6,147,570;
    # × 1024 = 6,295,111,680; × 4.5 = 28,328,002,560, Epoch's stated compute.
    ("18629 params * 2 FLOP/param * (3 for forward + backward pass) * 55 epochs * 1024 words/epoch * 4.5 letters/word",
     [18629, 2, 3, 55, 1024, 4.5], ["params", "FLOP/param", "", "epochs", "words/epoch", "letters/word"], 28328002560),
    # ALIGN: 123e12 × (1 chip / 2 cores = 0.5) × 14820 × 86400 × 0.33 = 6.15e13 × 14820 = 9.1143e17;
    # × 86400 = 7.8747552e22; × 0.33 = 2.598669216e22 (the notes: 2.599e22).
    ("123*10^12 TFLOPS/chip * (1 chip / 2 cores) * 14820 TPU core-days * 86400 s/day * 33% utilization = 2.599*10^22",
     [123, 1e12, 0.5, 14820, 86400, 0.33], ["", "TFLOPS/chip", "", "TPU core-days", "s/day", "utilization"],
     2.598669216e22),
    # "x" multiplies, "100M" is 1e8: 2 × 1e8 × 2.75e13 = 5.5e21.
    ("2 x 100M x 2.75e13 tokens", [2, 1e8, 2.75e13], ["", "", "tokens"], 5.5e21),
    # Seq2Seq LSTM: a sum in parentheses is one factor, 348e6 + 304e6 = 6.52e8; 3.84e8 × 2 × 6.52e8 × 7.5 × 3 =
    # 1.126656e19, the notes' figure.
    ("384E+6 parameters * 2 FLOP/parameter * (348E+6 + 304E+6 points per epoch) * 7.5 epochs * 3 FLOP/point",
     [3.84e8, 2, 6.52e8, 7.5, 3], ["parameters", "FLOP/parameter", "", "epochs", "FLOP/point"], 1.126656e19),
])
def test_products_reads_the_factors_the_notes_write(notes, factors, units, value):
    longest = max(products(notes), key=lambda p: len(p.factors))
    assert [f.value for f in longest.factors] == pytest.approx(factors, rel=1e-12)
    assert [f.unit for f in longest.factors] == units
    assert longest.value == pytest.approx(value, rel=1e-12)


def test_a_function_is_not_a_factor_and_words_between_operators_are_words():
    # "2 * sqrt(4 * 9)": the 2 stands alone (a function's argument is no factor: no product is 2 × 36 = 72);
    # the parenthesis is read on its own. "forward + backward" adds nothing.
    assert [(p.text, p.value) for p in products("2 * sqrt(4 * 9)")] == [("2", 2), ("4 × 9", 36), ("(…)", 36)]
    assert [p.text for p in products("forward + backward pass, FLOP / GPU / sec")] == []


@pytest.mark.parametrize("notes", [
    "2 * 7B * 1e999 = 1e-999",             # beyond what a float holds: no figure near any stated one
    "(" * 10_000 + "2*3" + ")" * 10_000,    # nesting far beyond the notes' two or three levels
    "(" * 10_000,
    "2 * 3 + " * 20_000,
    "2^" * 5_000 + "2",
    "2 * 3 / 0 = 6",
])
def test_hostile_arithmetic_is_read_without_an_error(notes):
    for p in products(notes):
        assert np.isfinite(p.value) and all(np.isfinite(f.value) for f in p.factors)


# ------------------------------------------------------------------------------------- forward_only


@pytest.mark.parametrize("notes, compute, params, n, d, training", [
    # NPLM (Brown), Epoch's row: N = 4,127,383 (the operation count, 0.08 % from the 4,124,233 parameters),
    # D = 800,000 × 20 = 1.6e7; 6 × 4,127,383 × 1.6e7 = 3.96228768e14.
    ("Forward FLOP: 16383*(1+5*30+100)+100*(1+5*30)+5*30=4127383\nAdjusting for backward pass with 1:1 ratio, as "
     "the by far largest layer (embedding) doesn't require gradients w.r.t. inputs.\nTotal FLOP: "
     "2*4127383*800000*20=1.3207626e+14", 1.3207626e14, 4124233, 4127383, 1.6e7, 3.96228768e14),
    # NPLM (AP News): D = 13,994,528 × 5 = 69,972,640; 6 × 11,910,864 = 71,465,184; × 69,972,640 = 5.00061e15.
    ("Forward FLOP: 17964*(1+6*100+60)+60*(1+6*100)+6*100=11910864\nAdjusting for backward pass with 1:1 ratio, as "
     "the by far largest layer (embedding) doesn't require gradients w.r.t. inputs.\nTotal FLOP: "
     "2*11910864*13994528*5=1.6668692e+15", 1.6668692e15, 11904264, 11910864, 69972640, 5.000607e15),
    # GNN: D = 5000 × 207 × 26 = 26,910,000; 6 × 30 × 26,910,000 = 4.8438e9.
    ("2*30 parameters *5000 epochs *207 training examples*26 nodes per example=1614600000", 1614600000, 30, 30,
     26910000, 4.8438e9),
    # MSA Transformer: one factor of 2e8 FLOP is 2 × 100M; D = 2.75e13; 6 × 1e8 × 2.75e13 = 1.65e22.
    ("Calculation = 4e8 FLOP/bp * 4.5e5 bp + 2e8 FLOP/fp * 2.75e13 fp\n\n450k * 512 * 100 * 1192 * 100M * 6 = "
     "1.65e22", 5.49e21, 1e8, 1e8, 2.75e13, 1.65e22),
])
def test_forward_only_reads_a_compute_counted_as_two_n_d(notes, compute, params, n, d, training):
    reading = forward_only(notes, compute, params)
    assert reading is not None
    assert reading.params == pytest.approx(n, rel=1e-12)
    assert reading.data == pytest.approx(d, rel=1e-12)
    assert reading.training == pytest.approx(training, rel=1e-5)


@pytest.mark.parametrize("notes, compute, params", [
    # RECONTRA: the 3 counts the backward pass (2 × N × 3 = 6 N per token).
    (" 2*112000*3*11.5*5000*100=3864000000000=3.9e12", 3864000000000, 112000),
    # LCNP NORB: the same, with no words at all.
    ("2*16818176*3*24300 *1000=2452090060800000", 2452090060800000, 16818176),
    # Feedforward NN: 3.5 for forward and backward.
    ("So 2*7082000 params*3.5*140 epochs * 50k training images = 3.5e14", 3.5e14, 7082000),
    # NetTalk: the 3 is in a parenthesis of words.
    ("18629 params * 2 FLOP/param * (3 for forward + backward pass) * 55 epochs * 1024 words/epoch * 4.5 "
     "letters/word", 28328002560, 18629),
    # HyperCLOVA: "3 backward pass" (and 82e9 is not the row's 204B).
    ("82e9 connections * 2 FLOP/connection * 300e9 tokens * 3 backward pass = 1.476e23 FLOP", 1.476e23, 82e9),
    # ASE+ACE: no back-propagation, said so.
    ('324 * 2 * 500000 = 324000000 = 3.24e8. The calculation assumes "compute per forward pass" = "number of '
     'parameters" = "compute per backward pass". Their model only has a single layer and is trained with simple '
     "update rules instead of gradient descent.", 324000000, 324),
    # Neocognitron: 1.2 for the weight update, and "no real backward pass".
    ("We multiply by 2 to account for multadds in the forward pass. There is no real backward pass, weights are only "
     "updated sparsely. Estimating 20% additional weight update compute compared to the forward pass:\n"
     "2*1,140,576.0*1.2*100=273738240", 273738240, 1140576),
    # ResNeXt-101 32x48d: 2 FLOP per multiply-add, tripled; no factor is N.
    ("Compute = 2 * 3 * mult-adds * dataset size = 2 * 3 * 153e9 * 9525e6 = 8.74e21 FLOP", 8.74395e21, 829e6),
    # UnifiedQA: the forward pass of the input tokens is one term of a geometric mean, not the compute.
    ("((2 * 11B * 512 * 8) + (6 * 11B * 100 * 8)) * 100k = 1.43e19\nsqrt(1.91e19*1.43e19) = 1.65e19", 1.65e19, 11e9),
    # AFM-on-device: the teacher's forward pass is one stage of a sum.
    ("FLOPs here are equal to (6 * 6.3T * 2.73B) + (2 * 6.3T * 6.4B) = 1.84e23.\nIn total: 2.42e23 + 7.22e21 + "
     "1.84e23 + 1.64e22 + 1.64e21 = 4.51e23 FLOP", 4.5126e23, 2.73e9),
    # Codex: twice GPT-3 12B's compute, no parameters in the product.
    ("2 * 425 * 8.64e19 = 7.344e22", 7.344e22, 12e9),
    # A forward count that the notes then triple: the stated compute is not 2ND.
    ("Forward: 2 * 7B * 1T = 1.4e22; with the backward pass, 3x: 4.2e22", 4.2e22, 7e9),
    # A utilization below 1 makes it a hardware estimate, whatever else.
    ("2 * 7B * 1T * 0.5", 7e21, 7e9),
    # Nothing to read.
    (None, 1e22, 7e9), ("2 * 7B * 1T", float("nan"), 7e9), ("2 * 7B * 1T", 1.4e22, float("nan")),
])
def test_forward_only_leaves_every_other_product_alone(notes, compute, params):
    assert forward_only(notes, compute, params) is None


#: InternImage, Epoch's row (its "Training compute notes", shortened between the two quoted sentences).
_INTERNIMAGE = ("Table 2 says InternImage-H uses 188 GFLOP per forward pass at 224 resolution, and 1478 GFLOP at 640\n"
                "...\nTotal training FLOPs:\n188e9 FLOP/image * (427M images * 30 epochs) + (1.281M images * 20 epochs)"
                " * 3 (additional FLOPs for backward pass) = 2.408e21")


def test_forward_only_reads_a_count_the_notes_call_a_forward_pass():
    """InternImage: the 3 for the backward pass multiplies the fine-tune's term alone, so the stated 2.408e21 is
    188e9 FLOP per forward pass × (427e6 × 30 = 1.281e10) images, one forward pass each (188e9 × 1.281e10 =
    2.40828e21); training with the backward pass is 3 × that = 7.22484e21."""
    reading = forward_only(_INTERNIMAGE, 2.408e21, 1.08e9)
    assert reading is not None
    assert reading.forward == 188e9
    assert reading.data == pytest.approx(427e6 * 30, rel=1e-12)
    assert reading.compute == pytest.approx(2.40828e21, rel=1e-12)
    assert reading.training == pytest.approx(7.22484e21, rel=1e-12)


@pytest.mark.parametrize("notes, compute", [
    # ViT-G/14, Epoch's row: the forward count tripled in the product itself (4096 × 5e6 × 965.3e9 × 3 = 5.93e22).
    ("Alternatively, Table 2 indicates 965.3e9 FLOPs per forward pass on a 224^2 image. Table 4 indicates 5 million "
     "steps at a (normalized) batch size of 4096, and total flops including backward pass would be 3x the FLOPs "
     "from forward passes alone, so we get:\n4096 * 5e6 * 965.3e9 * 3 = 5.93e22", 5.93e22),
    # A count per example that the notes do not call a forward pass's.
    ("188e9 FLOP/image * (427M images * 30 epochs) = 2.408e21", 2.408e21),
    # A forward count in multiply-accumulates (two FLOP each): another slip, not read here.
    ("7.6 GMAC per forward pass. 7.6e9 * 1.2e9 images = 9.12e18", 9.12e18),
])
def test_a_forward_count_counted_with_its_backward_pass_is_left_alone(notes, compute):
    assert forward_only(notes, compute, 1e9) is None


def test_forward_onlys_reads_a_column_once_per_distinct_triple():
    notes = pd.Series(["2 * 7B * 1T", None, "2 * 7B * 1T", "2 * 7B * 1T"], dtype=object)
    found = forward_onlys(notes, np.array([1.4e22, 1.4e22, 1.4e22, 1.4e22]), np.array([7e9, 7e9, np.nan, 7e9]))
    assert found[0] is not None and found[0].data == 1e12 and found[3] == found[0]
    assert found[1] is None and found[2] is None


# ------------------------------------------------------------------------------------- the rule


def _v007(claims: list[dict]) -> pd.DataFrame:
    result = check_records(claims)
    f = result.findings
    return f[f["rule"] == "V007"], result


def test_the_rule_compares_the_stated_compute_with_six_n_d_from_the_same_figures():
    # NPLM (Brown): 6 × 4,127,383 × 1.6e7 = 3.96228768e14 against 1.3207626e14.
    found, result = _v007([{"id": "nplm-brown", "params": 4124233, "compute_flops": 1.3207626e14,
                            "compute_notes": "Total FLOP: 2*4127383*800000*20=1.3207626e+14"}])
    assert list(found["severity"]) == ["warning"]
    assert float(found["expected"].iloc[0]) == pytest.approx(3.96228768e14, rel=1e-9)
    from audit.rules import RULES
    row = found.iloc[0]
    message, formula = RULES["V007"].message(result, row), RULES["V007"].formula_text(result, row)
    assert "2 × 4127383 × 800000 × 20" in message and "3.96e14 FLOP" in message and "3x the stated" in message
    assert "6 × 4.127M × 16M = 3.962e14" in formula
    assert result.status[0] == "warn"


def test_a_mixture_of_experts_may_count_its_active_parameters():
    # 2 × 37B × 14.8T = 1.0952e24; 6 × 37e9 × 14.8e12 = 3.2856e24. The total 671B is no factor.
    found, _ = _v007([{"id": "moe", "params": "671B", "active_params": "37B", "compute_flops": 1.0952e24,
                       "compute_notes": "2 * 37B active parameters * 14.8T tokens = 1.0952e24"}])
    assert float(found["expected"].iloc[0]) == pytest.approx(3.2856e24, rel=1e-9)


def test_hostile_notes_never_stop_the_batch():
    claims = [{"id": f"h{i}", "params": "7B", "compute_flops": 1.4e22, "compute_notes": text}
              for i, text in enumerate(["1e999 * 2 = 5", "(" * 5000, "2 * 7B * 1e-999", "sqrt(1e999 * 1e22) = 1e22"])]
    claims.append({"id": "real", "params": "7B", "compute_flops": 1.4e22, "compute_notes": "2 * 7B * 1T = 1.4e22"})
    found, result = _v007(claims)
    assert list(found["row"]) == [4]
    assert len(result.status) == 5


def test_claims_without_compute_notes_are_not_read():
    found, _ = _v007([{"id": "plain", "params": "7B", "tokens": "1T", "compute_flops": 1.4e22}])
    assert found.empty


@pytest.mark.skipif(not EPOCH_MODELS.exists(), reason=f"Epoch AI's model database is not at {EPOCH_MODELS}")
def test_on_epochs_file_exactly_the_rows_judged_by_hand_are_read():
    # The survey of every row of the file (rows whose compute notes write a product with a 2 and the parameters,
    # each read by hand): MSA Transformer, GNN, NPLM (Brown) and NPLM (AP News) state their training compute as
    # 2 × N × D; ASE+ACE (row 918) does too, for a model trained without gradient descent, and is not read.
    # InternImage (row 295) states it as 188 GFLOP per forward pass × 1.281e10 images (the survey of the rows whose
    # notes call a FLOP count a forward pass's: it alone leaves the backward pass out).
    models = pd.read_csv(EPOCH_MODELS)
    found = forward_onlys(models["Training compute notes"],
                          pd.to_numeric(models["Training compute (FLOP)"], errors="coerce").to_numpy(dtype=float),
                          pd.to_numeric(models["Parameters"], errors="coerce").to_numpy(dtype=float))
    assert [int(i) + 2 for i in np.flatnonzero(pd.notna(found))] == [295, 439, 833, 858, 859]
