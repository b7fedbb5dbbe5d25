"""audit.notes: what free-text notes say about the dataset size's unit and a compute built as a sum of stages.

The texts are Epoch AI's own notes (notable_ai_models.csv, CC-BY), quoted as they are in the file."""

import math

import numpy as np
import pandas as pd
import pytest

from audit.notes import (OTHER, TOKENS, WORDS, assumed_utilization, assumed_utilizations, compute_sum, compute_sums,
                         geometric_mean, geometric_means, tokens_seen, unit_of, units_of)


@pytest.mark.parametrize("notes, size, unit", [
    # BERT-Large: 2,500M words is within 1.2x of 2.6499e9 (1.06x).
    ('"For the pre-training corpus we use the BooksCorpus (800M words) (Zhu et al., 2015) and English Wikipedia '
     '(2,500M words)"', 2.6499e9, WORDS),
    # ProteinBERT: 3.2e10 tokens against 3.76e10 (1.175x).
    ("Number of proteins: 106,000,000\nAverage protein length: 300 amino acids\n\nTotal unique tokens = "
     "106,000,000 × 300 = 31,800,000,000 ≈ 3.2e10 tokens", 3.75982e10, TOKENS),
    # BIDAF: the 879k examples overlap the 3k of the previous figure ("3k and 879k ... examples").
    ('compiled a massive Cloze-style comprehension dataset, consisting of 300k/4k/3k and 879k/65k/53k '
     '(train/dev/test) examples from CNN and DailyMail news articles', 879000, OTHER),
    # GPT-2: Epoch gives 8B words as 8e9 x 4/3 = 1.0667e10 tokens: the size is tokens.
    ("contains slightly over 8 million documents for a total of 40 GB of text ... 8B words", 1.0666667e10, TOKENS),
    # A tag at the start names the unit whatever the figures.
    ("[WORDS] \" On WMT En→Fr, the training set contains 36M sentence pairs.", 7.2e8, WORDS),
    ("[images] Table 1", 20000, OTHER),
    # BloombergGPT: 532B words is 1.07x of 569B but 708.9B tokens is 1.25x: both near, so not said.
    ("708.9 billion tokens. At 0.75 English words per token, that's 532B words", 5.69e11, ""),
    # No figure near the size: not said.
    ("The resulting aggregate corpus contains 174 GB of deduplicated text.", 4.64e10, ""),
    (None, 1e9, ""),
    ("1B tokens", float("nan"), ""),
])
def test_unit_of_reads_the_unit_of_the_figure_that_matches_the_size(notes, size, unit):
    assert unit_of(notes, size) == unit


def test_units_of_reads_a_column_once_per_distinct_pair():
    notes = pd.Series(["3.3B words", None, "3.3B words", "1.2M images"], dtype=object)
    sizes = np.array([3.3e9, 3.3e9, 1e12, 1.2e6])
    assert list(units_of(notes, sizes)) == [WORDS, "", "", OTHER]


@pytest.mark.parametrize("notes, compute, found", [
    # PaLI: ViT-e pre-training + PaLI training.
    ("I assume the stated TPUv4 training does not include the ViT pretraining ...\n\nTotal: 1.07e23 + 6.2e22 = "
     "1.69e23", 1.69e23, "1.07e23 + 6.2e22 = 1.69e23"),
    # AFM-on-device: five stages; 2.42 + 0.0722 + 1.84 + 0.164 + 0.0164 = 4.5126e23.
    ("In total: 2.42e23 + 7.22e21 + 1.84e23 + 1.64e22 + 1.64e21 = 4.51e23 FLOP", 4.5126e23,
     "2.42e23 + 7.22e21 + 1.84e23 + 1.64e22 + 1.64e21 = 4.51e23"),
    # A product is not a sum of stages.
    ("6 FLOP / parameter / token * 235000000 parameters * 512 tokens = 3.6962304e+20 FLOP", 3.6962304e20, ""),
    # A sum whose result is not the stated compute (1.69e23 against 3e23).
    ("Total: 1.07e23 + 6.2e22 = 1.69e23", 3e23, ""),
    # A sum that does not add up (1.07e23 + 6.2e22 = 1.69e23, not 2.5e23).
    ("Total: 1.07e23 + 6.2e22 = 2.5e23", 2.5e23, ""),
    # Written with x 10^: 3 x 10^22 + 1 x 10^22 = 4 x 10^22.
    ("pre-training 3 x 10^22 + fine-tuning 1 x 10^22 = 4 x 10^22", 4e22, ""),
    ("3 x 10^22 + 1 x 10^22 = 4 x 10^22", 4e22, "3 x 10^22 + 1 x 10^22 = 4 x 10^22"),
])
def test_compute_sum_finds_a_sum_of_stages_equal_to_the_compute(notes, compute, found):
    assert compute_sum(notes, compute) == found


def test_compute_sums_of_a_column():
    notes = pd.Series(["1.07e23 + 6.2e22 = 1.69e23", None, "1.07e23 + 6.2e22 = 1.69e23"], dtype=object)
    assert list(compute_sums(notes, np.array([1.69e23, 1.69e23, np.nan]))) == ["1.07e23 + 6.2e22 = 1.69e23", "", ""]


@pytest.mark.parametrize("notes, compute, found", [
    # GShard (dense), Epoch's row: 235.5 TPU v3 core-years at 30 % against 6 x 2.3B x 1.2T tokens.
    ("Hardware estimate: 235.5 * 365.25 * 24 * 3600 * (1.23e14 / 2) * 0.3 = 1.371e23 Footnote 10 indicates 300k "
     "steps and 4M tokens/step -> 1.2T tokens Arithmetic estimate: 6 * 2.3B * 1.2T = 1.656e22 FLOPs Geometric mean: "
     "sqrt(1.371e23 * 1.656e22) = 4.765e22", 4.765e22, (1.371e23, 1.656e22)),
    # CNN Committee (MNIST): a long integer and its rounding both appear; sqrt(6.19e17 x 4.3757616e15) = 5.2e16.
    ("7*14*60*60*(2*1580000000000+2*1345000000000)*0.3=6.19e17 Counting estimate: 50000 examples, 800 epochs "
     "5209240*3*50000*800*7=4375761600000000=4.4e15 Geometric mean: sqrt(4.4e15*6.19e17)=5.2e16", 5.2e16,
     (6.19e17, 4.3757616e15)),
    # Written as x 10^: sqrt(4 x 10^22 x 1 x 10^22) = 2 x 10^22.
    ("hardware 4 x 10^22, counted 1 x 10^22, geometric mean 2 x 10^22", 2e22, (4e22, 1e22)),
    # Llama 3-70B: "between 0.38-0.41 MFU" reads as an interval, so nothing is read (deliberately narrow).
    ("6 * 15T tokens * 70B parameters = 6.3e24 ... between 0.38-0.41 MFU ... = 9.808e24 Geometric mean: "
     "sqrt(6.3e24 * 9.808e24) = 7.861e24", 7.861e24, None),
    # No geometric mean spoken of: two figures whose mean happens to be the compute are not read.
    ("hardware 4e22, counted 1e22", 2e22, None),
    # Figures whose geometric mean is 2.6 % off the compute (sqrt(5.1e22 x 1e23) = 7.14e22 against 7.35e22): no.
    ("5.1e22 FLOP ... 1e23 FLOP Geometric mean: 7.35e22", 7.35e22, None),
])
def test_geometric_mean_reads_two_estimates_back(notes, compute, found):
    assert geometric_mean(notes, compute) == found


def test_geometric_means_of_a_column():
    notes = pd.Series(["sqrt(4e22 * 1e22) = 2e22", None, "sqrt(4e22 * 1e22) = 2e22"], dtype=object)
    high, low = geometric_means(notes, np.array([2e22, 2e22, 3e22]))
    assert list(high[[0]]) == [4e22] and list(low[[0]]) == [1e22]
    assert np.isnan(high[1:]).all() and np.isnan(low[1:]).all()


@pytest.mark.parametrize("notes, size, seen", [
    # Minerva (Epoch's row): the size is the 26B tokens the model saw, not the 38.5B of the dataset.
    ('"Our models were trained on a dataset of 38.5B tokens" + PaLM\n\nupd 38.5B tokens - sie of the dataset, the '
     'model saw 26B tokens in 399k steps (see Table 2)', 2.6e10, True),
    # Kimi K2: "pre-trained on 15.5T tokens".
    ('"Kimi K2 was pre-trained on 15.5T tokens"', 1.55e13, True),
    # PLATO-XL: "trained for a total of 150B tokens".
    ('"In PLATO-XL, each model was trained for a total of 150B tokens, with a batch size of 2M tokens."', 1.5e11, True),
    # Megatron-LM (1.2B): steps x sequences per batch x sequence length = 300,000 x 512 x 1,024 = 1.57e11.
    ("300,000 *512*1,024 = 1.57e11 tokens", 1.57e11, True),
    # MSA Transformer: alignments x sequences x length is the dataset's size, not tokens seen (no power of two).
    ("26 million * 1192 * 300 = 9.3T tokens", 9.3e12, False),
    # A dataset's size, however it is phrased.
    ('"Our models were trained on a dataset of 38.5B tokens"', 3.85e10, False),
    ("The dataset contains 1.4T tokens", 1.4e12, False),
    # The figure seen is not the size (26B seen, size 38.5B).
    ("the model saw 26B tokens", 3.85e10, False),
])
def test_tokens_seen_reads_a_size_that_is_the_tokens_a_training_processed(notes, size, seen):
    assert tokens_seen(notes, size) is seen


# ---------------------------------------------------------------------- a compute estimated from the hardware

@pytest.mark.parametrize("notes, compute, found", [
    # ALBERT-xxlarge, Epoch's row: 123e12 × 512 × 32 × 3600 × 0.33 = 2.3941e21, the stated 2.39e21.
    ("32 hours of training\n512 TPU V3s\n0.33 utilization rate\n\n123000000000000 FLOP / chip / sec * 512 TPUs * "
     "32 hours * 3600 sec / hour * 0.33 [assumed utilization] = 2.3940956e+21 FLOP", 2.39e21, 0.33),
    # HyenaDNA: (4 × 7 × 24 × 3600) × (8 × 3.12e14) × 0.3 = 1.8115e21, the stated 1.81e21 (parentheses read).
    ("8 Nvidia A100 (80GB) GPUs, ~4 weeks (4 * 7 * 24 * 3600) seconds * (8 * 3.12e14) FLOP/sec * 0.3 (utilization) "
     "= 1.81e21", 1.81e21, 0.3),
    # A utilization written as a percentage (GLM-130B's notes write "32.5%"): 3.12e14 × 768 × 60 × 86400 × 0.325
    # = 4.037e23.
    ("3.12e14 FLOP/s/GPU * 768 GPUs * 60 days * 86400 s/day * 32.5% utilization", 4.037e23, 0.325),
    # GLaM: 6ND (3.478e23) and a hardware estimate (3.636e23) that is the stated compute: its 0.3 is read.
    ("6 * 600B * 96.6B = 3.478e23\n2.75e14 * 139.67 * 365.25 * 24 * 3600 * 0.3 = 3.636e23 ... derive hardware "
     "utilization from the training time", 3.6363112434e23, 0.3),
    # The hardware product is not the stated compute (2.39e21 against 5e21): nothing is read.
    ("123000000000000 FLOP / chip / sec * 512 TPUs * 32 hours * 3600 sec / hour * 0.33 [assumed utilization]",
     5e21, math.nan),
    # No utilization spoken of: a factor below 1 is a share, not an assumption (0.5 × 6 × 1e9 × 1e12 = 3e21).
    ("0.5 * 6 * 1e9 * 1e12 = 3e21 (half the tokens were repeated)", 3e21, math.nan),
    # A divisor below 1 is no utilization: 9.32e9 / 16 × 1.28e6 × 110 × 3 = 2.46e17 (Big-Little Net's slip).
    ("9.32 GFLOP per image * 1.28M / 16 * 110 * 3 utilization unknown", 9.32e9 / 16 * 1.28e6 * 110 * 3, math.nan),
    # Two products that are the compute but assume different utilizations: no reading.
    ("1e15 * 1e6 * 0.3 = 3e20 utilization; or 2e15 * 1e6 * 0.15 = 3e20", 3e20, math.nan),
])
def test_assumed_utilization_reads_the_factor_a_hardware_estimate_assumes(notes, compute, found):
    got = assumed_utilization(notes, compute)
    assert (math.isnan(got) and math.isnan(found)) or got == pytest.approx(found, rel=1e-12)


def test_assumed_utilizations_of_a_column():
    notes = pd.Series(["1e15 FLOP/s * 1e6 s * 0.3 [assumed utilization]", None, "1e15 * 1e6 * 0.3 utilization"],
                      dtype=object)
    found = assumed_utilizations(notes, np.array([3e20, 3e20, 9e20]))  # the last: 3e20 is not the compute 9e20
    assert found[0] == pytest.approx(0.3) and np.isnan(found[1:]).all()


@pytest.mark.parametrize(("text", "active"), [
    ("MoE language model with 671B total parameters with 37B activated for each token", 37e9),  # DeepSeek-V3
    ("21B active params, 236B total", 21e9),                                                   # DeepSeek-V2.5
    ("active parameters - 47B", 47e9),                                                         # ERNIE-4.5-VL
    ("Llama 4 Scout, is a general purpose model with 17 billion active parameters, 16 experts", 17e9),
    ("active parameters around 10B-30B", None),          # a range: no figure
    ("10 to 30B active parameters", None),
    ("a 540-billion parameter, densely activated, Transformer language model", None),  # PaLM: dense
    ("37B activated here, 38B activated there", None),   # two figures that disagree
])
def test_active_parameters_in_parameter_notes(text, active):
    from audit.notes import active_params_of

    assert active_params_of(text) == active


def test_the_examples_in_the_notes_module_docstrings_hold():
    """The readings' docstrings show worked notes (NPLM's 2 × N × D, ViT-G/14's examples): they run as written."""
    import doctest

    import audit.notes

    assert doctest.testmod(audit.notes).failed == 0


@pytest.mark.parametrize("notes, hours, text", [
    # Epoch's rows that copied a count of accelerator-time into the training time (wall-clock hours):
    ('"the training times were 1106, 1576 (+42%) and 2248 (+103%) GPU hours."', 1576.0, "1576 GPU hours"),
    ("~84 GPU-days * 24 hours/day", 2016.0, "84 GPU-days"),
    ("This entire project consumed 92 GPU years", 92 * 8760.0, "92 GPU years"),
    ("about 150k A100-hours", 150_000.0, "150k A100-hours"),
    ("14820 TPU core-hours", 14820.0, "14820 TPU core-hours"),
    # ...and rows whose notes divide the accelerator-time by the accelerators, as they should:
    ("625.5 hours = 320256 /512; 320256 GPU hours", 625.5, None),                       # StarCoder
    ("14820 TPU core-hours / 1024 TPU cores = 347.3 hours", 347.3, None),              # ALIGN
    ("Trained on 30.84M GPU hours ... 1927.5 / 0.9 = 2142 hours", 2142.0, None),       # Llama 3.1 405B
    ("around 23000 TPU-days ... 23000 / 3750 = 6.13 days, or 147.2 hours", 147.2, None),  # AlphaCode
    ("trained for 10 days on 8 GPUs", 240.0, None),                                    # no accelerator-time
    ("2248 hours on 8 GPUs", 2248.0, None),
])
def test_chip_time_reads_a_training_time_counted_in_accelerator_time(notes, hours, text):
    from audit.notes import chip_time

    found = chip_time(notes, hours)
    assert (found.text if found is not None else None) == text
