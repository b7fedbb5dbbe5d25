"""audit.notes: what free-text notes say about the dataset size's unit and a compute built as a sum of stages.

The texts are Epoch AI's own notes (notable_ai_models.csv, CC-BY), quoted as they are in the file."""

import numpy as np
import pandas as pd
import pytest

from audit.notes import OTHER, TOKENS, WORDS, compute_sum, compute_sums, unit_of, units_of


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
