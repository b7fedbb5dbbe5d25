"""What a claim's free-text notes say, read narrowly: what the dataset size counts, whether the compute is a sum
of several trainings or the geometric mean of two estimates, whether it counts the forward pass alone, how many
chips its hardware estimate counts, and two slips in its arithmetic.

**Dataset size.**
A dataset size counts datapoints (Epoch AI's documentation of "Training dataset size"): tokens for a modern
language model, but words in many older ones, sentence pairs in translation, examples in question answering,
residues for a protein model, images for a vision model. Epoch's "Dataset size notes" usually say which, next to
the figure ("BooksCorpus (800M words) and English Wikipedia (2,500M words)", "= 3.2e10 tokens", "879k ...
examples"), sometimes as a tag ("[WORDS]", "[images]"). Only tokens enter C = 6·N·D; words are about 4/3 tokens
each; anything else is not tokens at all, whatever the domain.

The reading is deliberately narrow: a tag at the start of the notes, or a figure in the notes within a factor
1.5 of the stated size followed (within three words) by its unit, all such figures agreeing. Anything else is
"not said", and the claim keeps the default (a language model's datapoints are tokens).

**Compute as a sum of stages.** Epoch's "Training compute notes" sometimes build the compute as a sum of
separate trainings: "Total: 1.07e23 + 6.2e22 = 1.69e23" (PaLI: ViT-e pre-training plus PaLI training), "2.42e23 +
7.22e21 + 1.84e23 + 1.64e22 + 1.64e21 = 4.51e23" (AFM-on-device: the teacher, pruning, distillation, two more
stages). Such a compute covers trainings that the claim's parameters, tokens and hardware describe only one of,
so 6·N·D and the hardware bound it from below only. It is read only when the notes state a sum of at least two
plain figures that adds up, and its result is the stated compute (both within 5 %).

**Compute as a geometric mean of two estimates.** When Epoch AI has two estimates of one training's compute, one
from the hardware and time at an assumed utilization and one from counting operations (6·N·D, or FLOPs per
example), its notes state the geometric mean of the two as the compute ("Geometric mean: sqrt(1.371e23 *
1.656e22) = 4.765e22", GShard). The two estimates are read back: two figures in the notes whose geometric mean is
the stated compute (within 2 %), in notes that speak of a geometric mean or a square root and not of bounds or a
range (a geometric mean of a lower and an upper bound is an honest interval, not two estimates).

**A compute estimated from the hardware at an assumed utilization.** When a source states no compute, Epoch AI
estimates it from the chips, the time and the peak at an assumed utilization, and its notes write the product:
"123000000000000 FLOP / chip / sec * 512 TPUs * 32 hours * 3600 sec / hour * 0.33 [assumed utilization] =
2.3940956e+21" (ALBERT-xxlarge), "(4 * 7 * 24 * 3600) seconds * (8 * 3.12e14) FLOP/sec * 0.3 (utilization)"
(HyenaDNA). The assumed utilization is read back (:func:`assumed_utilization`): the one factor below 1 of a product
of the notes that is the stated compute (within 5 %), in notes that speak of utilization (or MFU, HFU), every such
product agreeing on it. Such a compute is no independent figure: where it disagrees with 6·N·D, the disagreement
says what utilization the run reached, not that a figure is wrong.

**A training compute counted as the forward pass alone.** Training costs about 6 FLOP per parameter per token:
2 for the forward pass (a multiply and an add per weight) and 4 for the backward pass (Kaplan et al. 2020, sec.
2.1). Notes sometimes state the training compute as 2 × N × D, the forward pass alone: "Total FLOP:
2*4127383*800000*20=1.3207626e+14" (NPLM, Brown corpus: N = 4,124,233), "2e8 FLOP/fp * 2.75e13 fp" (MSA
Transformer: 2e8 = 2 × its 100M parameters). The arithmetic of the notes is read (:func:`products`: the products
they write, each with its factors, parentheses, powers and the words after each figure), and such a product is
taken as the training compute only when it is the stated compute (within 5 %), one factor is 2 and another the
claim's parameters (within 5 %), or one factor is twice the parameters and counted in FLOP, and no other factor
could be what turns a forward count into a training count (3 for forward and backward, 4, 6, 1.2 for a weight
update, a utilization below 1); never in notes that say the model was not trained by back-propagation
(:func:`forward_only`).

**The chips a hardware estimate counts.** Where a claim states no accelerator count, a hardware estimate in its
compute notes often writes it: "31330000000000 FLOP / sec / GPU * 1 GPU * 12 hours * 3600 sec / hour * 0.3" (QRNN).
It is read (:func:`chip_count`) from a product that is the stated compute, or one of the two estimates whose
geometric mean is the compute, with exactly one whole figure followed by a word for accelerators ("1 GPU", "512
TPUs"), never GPU-hours, cores or GPUs per server. On Epoch's file the count so read equals the stated "Hardware
quantity" on all 20 rows that state both.

**Slips in the arithmetic.** Two slips that no relation among a claim's columns can see are read from the product
that is the stated compute: the passes over the data counted twice, as a count k and as presentations that are
k times the dataset (:func:`passes_counted_twice`: Zip CNN, "2*64660*3*23*167693" with 167,693 = 23 × 7,291),
and a count per example divided by the batch size (:func:`batch_size_divisor`: Big-Little Net, "9.32*10^9 (flops
per inference)*1.28×10^6(dataset size)/16 (batch size) * 110 epochs * 3").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np
from audit.lazy import pandas as pd  # imported on first use: quick start-up

from audit.columns import map_unique
from audit.quantities import noted

#: Units a dataset size is counted in, as read from its notes.
TOKENS, WORDS, OTHER = "tokens", "words", "other"

#: Tokens per English word with a BPE tokenizer: about 0.75 words per token (OpenAI, "What are tokens and how
#: to count them?", help.openai.com), i.e. 4/3 tokens per word.
TOKENS_PER_WORD: float = 4.0 / 3.0
#: How far that ratio varies between tokenizers and corpora (1.2-1.5 tokens per word), as a log half-width.
TOKENS_PER_WORD_SPREAD: float = math.log(1.5 / 1.2) / 2.0

#: Unit words, by what they count. Residues, amino acids and bases are a protein or genome model's tokens.
_UNITS: dict[str, str] = {
    "token": TOKENS, "residue": TOKENS, "amino acid": TOKENS, "base pair": TOKENS, "nucleotide": TOKENS,
    "word": WORDS,
    "image": OTHER, "picture": OTHER, "photo": OTHER, "example": OTHER, "sample": OTHER, "sentence": OTHER,
    "sentence pair": OTHER, "pair": OTHER, "document": OTHER, "question": OTHER, "sequence": OTHER,
    "protein": OTHER, "structure": OTHER, "frame": OTHER, "hour": OTHER, "utterance": OTHER, "clip": OTHER,
    "video": OTHER, "episode": OTHER, "game": OTHER, "step": OTHER, "character": OTHER, "byte": OTHER,
    "molecule": OTHER, "mask": OTHER, "transition": OTHER, "timestep": OTHER, "article": OTHER,
}

_MULTIPLIERS: dict[str, float] = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9,
                                   "bn": 1e9, "billion": 1e9, "t": 1e12, "tn": 1e12, "trillion": 1e12}


def _power_of_ten(exponent: str | int) -> float:
    """10 to a written exponent; infinity or 0 beyond what a float holds ("1e400" in a note is a typo or hostile
    text, never a reason to stop a batch), so that the figure is never near any stated one."""
    e = int(exponent)
    return math.inf if e > 308 else (0.0 if e < -323 else 10.0 ** e)


_UNIT_ALT = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
#: A figure, an optional multiplier, up to three other words, and a unit word.
_MENTION = re.compile(
    r"(?=(?<![\w.])(\d+(?:,\d{3})*(?:\.\d+)?)"                    # 2,500 / 3.3 / 106,000,000
    r"(?:\s*(?:e|E)([+-]?\d+)|\s*[x×*]\s*10\^?\s*([+-]?\d+))?"  # 3.2e10 / 3 x 10^9
    r"\s*(k|thousand|mn|million|m|bn|billion|b|tn|trillion|t)?\b"
    r"(?:[\s(/)\-]+[\w/()\-]+){0,3}?[\s(/)\-]+"                 # up to three words between ("(train/dev/test)")
    rf"({_UNIT_ALT})s?\b)",  # a lookahead: mentions may overlap ("3k and 879k ... examples")
    re.IGNORECASE,
)
_TAG = re.compile(r"^\s*\[(\w+)\]")
#: A figure in the notes names the size's unit when it is within this factor of the size: 1.2, narrower than the
#: 4/3 between words and tokens, because Epoch often converts words to tokens ("8B words" given as 10.7B).
_MATCH_FACTOR = 1.2


def _mentions(notes: str) -> list[tuple[float, str]]:
    """(value, unit kind) of every "<figure> <unit>" in ``notes``."""
    found = []
    for m in _MENTION.finditer(notes):
        try:
            value = float(m.group(1).replace(",", ""))
        except ValueError:
            continue
        exponent = m.group(2) or m.group(3)
        if exponent:
            value *= _power_of_ten(exponent)
        if m.group(4):
            value *= _MULTIPLIERS[m.group(4).lower()]
        if 0 < value < math.inf:
            found.append((value, _UNITS[m.group(5).lower()]))
    return found


def unit_of(notes: object, size: float) -> str:
    """What a dataset size of ``size`` counts, as ``notes`` say: :data:`TOKENS`, :data:`WORDS`, :data:`OTHER`,
    or ``""`` when they do not say (no notes, no figure near the size, or figures that disagree).

    >>> unit_of("BooksCorpus (800M words) and English Wikipedia (2,500M words)", 2.65e9)
    'words'
    >>> unit_of("Total unique tokens = 106,000,000 × 300 = 31,800,000,000 ≈ 3.2e10 tokens", 3.76e10)
    'tokens'
    >>> unit_of("consisting of 300k/4k/3k and 879k/65k/53k (train/dev/test) examples", 8.79e5)
    'other'
    """
    if not isinstance(notes, str) or not notes.strip() or not (size > 0):
        return ""
    tag = _TAG.match(notes)
    if tag and tag.group(1).lower().rstrip("s") in _UNITS:
        return _UNITS[tag.group(1).lower().rstrip("s")]
    kinds = set()
    for value, kind in _mentions(notes):
        if value <= 0:
            continue
        if abs(math.log(size / value)) <= math.log(_MATCH_FACTOR):
            kinds.add(kind)
        elif kind == WORDS and abs(math.log(size / (value * TOKENS_PER_WORD))) <= math.log(1.05):
            kinds.add(TOKENS)  # a word count converted to tokens at 4/3 (Epoch's practice: LaMDA's 1.56T words)
    if kinds == {WORDS} and any(kind == TOKENS and abs(math.log(size / value)) <= math.log(1.5)
                                for value, kind in _mentions(notes) if value > 0):
        return ""  # a token figure nearby too ("708.9B tokens, that's 532B words" for 569B): not said
    return kinds.pop() if len(kinds) == 1 else ""


#: Words before a token figure that make it the tokens a training processed, not the dataset's size: "the model
#: saw 26B tokens", "pre-trained on 15.5T tokens", "trained for a total of 150B tokens", "amounting to 576B total
#: tokens"; or after it: "150B tokens seen".
_SEEN_BEFORE = re.compile(r"(?:\b(?:saw|sees|seen|observed|processed)|\b(?:pre-?)?trained (?:on|for)|\bfor a total of"
                          r"|\bamounting to)\W+(?:\w+\W+){0,2}$", re.IGNORECASE)
_SEEN_AFTER = re.compile(r"^\W*(?:seen|processed|observed|in total|total)\b", re.IGNORECASE)
_SEEN_FIGURE = re.compile(
    r"(?<![\w.])(\d+(?:,\d{3})*(?:\.\d+)?)(?:\s*(?:e|E)([+-]?\d+))?\s*(k|thousand|mn|million|m|bn|billion|b|tn|trillion|t)?"
    r"\s+(?:total\s+)?tokens?\b", re.IGNORECASE)


#: How a D read as the tokens seen (:func:`tokens_seen`) is derived.
TOKENS_SEEN_HOW = noted("dataset_size: its notes count the tokens seen in training", "dataset_size", "dataset_notes")

#: How a dataset's tokens are derived from its size: the notes count tokens, or words (4/3 tokens each), or say
#: nothing of a language model's datapoints (tokens).
DATASET_TOKENS_HOW = noted("dataset_size: its notes count tokens", "dataset_size", "dataset_notes")
DATASET_WORDS_HOW = noted("dataset_size × 4/3: its notes count words, about 4/3 tokens each (OpenAI: 0.75 words per "
                          "token)", "dataset_size", "dataset_notes")
DATASET_DEFAULT_HOW = noted("dataset_size: a language model's datapoints are tokens", "dataset_size")


_FACTOR = r"\d+(?:,\d{3})*(?:\.\d+)?"
#: A product of at least three factors and its result: "300,000 * 512 * 1,024 = 1.57e11".
_PRODUCT = re.compile(rf"(?<![\w.])({_FACTOR}(?:\s*[x×*]\s*{_FACTOR}){{2,}})\s*=\s*(\d+(?:\.\d+)?(?:\s*[eE]\s*[+-]?\d+)?)")


def _steps_batch_sequence(notes: str, size: float) -> bool:
    """Whether ``notes`` compute ``size`` as steps × sequences per batch × tokens per sequence ("300,000 * 512 *
    1,024 = 1.57e11 tokens", Megatron-LM's row): a product of three or more factors equal to it, two of them
    powers of two of at least 128 (batch sizes and sequence lengths are; counts of documents and sequences per
    alignment, such as MSA Transformer's "26 million * 1192 * 300", are not)."""
    for m in _PRODUCT.finditer(notes):
        factors = [float(f.replace(",", "")) for f in re.split(r"\s*[x×*]\s*", m.group(1))]
        result = float(re.sub(r"\s", "", m.group(2)))
        product = math.prod(factors)
        powers = sum(1 for f in factors if f >= 128 and f == int(f) and int(f) & (int(f) - 1) == 0)
        if powers >= 2 and 0 < product < math.inf and 0 < result < math.inf \
                and abs(math.log(product / result)) <= _SUM_MATCH \
                and abs(math.log(size / result)) <= math.log(_MATCH_FACTOR):
            return True
    return False


def tokens_seen(notes: object, size: float) -> bool:
    """Whether ``notes`` call a dataset size of ``size`` the tokens a training processed ("the model saw 26B
    tokens", "pre-trained on 15.5T tokens", "150B tokens seen"), rather than the dataset's own size: a token
    figure within 1.2x of the size, with such words just before or after it, or a product of steps, batch and
    sequence length equal to it (:func:`_steps_batch_sequence`).

    >>> tokens_seen("38.5B tokens - size of the dataset, the model saw 26B tokens in 399k steps", 2.6e10)
    True
    >>> tokens_seen("Our models were trained on a dataset of 38.5B tokens", 3.85e10)
    False
    >>> tokens_seen("300,000 *512*1,024 = 1.57e11 tokens", 1.57e11)
    True
    """
    if not isinstance(notes, str) or not (size > 0):
        return False
    if _steps_batch_sequence(notes, size):
        return True
    for m in _SEEN_FIGURE.finditer(notes):
        value = float(m.group(1).replace(",", "")) * _power_of_ten(m.group(2) or 0)
        if m.group(3):
            value *= _MULTIPLIERS[m.group(3).lower()]
        if 0 < value < math.inf and abs(math.log(size / value)) <= math.log(_MATCH_FACTOR) and (
                _SEEN_BEFORE.search(notes[max(0, m.start() - 60):m.start()]) or _SEEN_AFTER.match(notes[m.end():])):
            return True
    return False


def tokens_seen_of(notes: pd.Series, sizes: np.ndarray) -> np.ndarray:
    """:func:`tokens_seen` for a column, once per distinct (notes, size) pair."""
    return per_distinct(tokens_seen, notes, sizes, empty=False).astype(bool)


def model_kinds(domain: pd.Series, task: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(language, sequence) masks: a language model by its ``domain`` or ``task`` (Epoch AI's "Language" domain,
    or a task such as "Protein or nucleotide language model (pLM/nLM)"), and a sequence model, which is a language
    model or a protein or genome model of the Biology domain. Each distinct text is read once."""
    def has(series: pd.Series, *words: str) -> list[np.ndarray]:
        """Per word, the rows whose text holds it: one pass over the column for all the words (a bit each)."""
        found = map_unique(series, lambda t: sum(1 << i for i, word in enumerate(words)
                                                 if isinstance(t, str) and word in t.lower())).to_numpy(dtype=np.int64)
        return [(found & (1 << i)) != 0 for i in range(len(words))]

    language_domain, biology = has(domain, "language", "biology")
    language = language_domain | has(task, "language model")[0]
    return language, language | biology


def dataset_units(domain: pd.Series, task: pd.Series, notes: pd.Series, sizes: np.ndarray,
                  kinds: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """What each claim's dataset size counts, as its notes say, for the claims whose model is a sequence model
    (:func:`model_kinds`); ``""`` for the others and where the notes do not say. A speech or vision model's
    text tokens are not what its encoder processes (Whisper's row: 9.3B transcript words), so its notes are not
    read for this. ``kinds``: :func:`model_kinds` of the same claims, when the caller has them."""
    _, sequence = kinds if kinds is not None else model_kinds(domain, task)
    return np.where(sequence, units_of(notes, sizes), "")


def units_of(notes: pd.Series, sizes: np.ndarray) -> np.ndarray:
    """:func:`unit_of` for a column, read once per distinct (notes, size) pair (notes are free text, rarely given
    in a large batch: the rows without notes cost one vectorized test)."""
    return per_distinct(unit_of, notes, sizes)


_FIGURE = r"(\d+(?:\.\d+)?\s*(?:[eE]\s*[+-]?\d+|[x×*]\s*10\s*\^\s*[+-]?\d+))"
_SUM = re.compile(r"((?:" + _FIGURE + r"\s*\+\s*)+" + _FIGURE + r")\s*=\s*" + _FIGURE)
_FIGURE_PARTS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:[eE]\s*([+-]?\d+)|[x×*]\s*10\s*\^\s*([+-]?\d+))")
#: How close the terms' total and the stated compute must be to the result (5 %: figures rounded to 3 digits).
_SUM_MATCH = math.log(1.05)


def _figure(text: str) -> float:
    m = _FIGURE_PARTS.search(text)
    return float(m.group(1)) * _power_of_ten(m.group(2) or m.group(3)) if m else float("nan")


def compute_sum(notes: object, compute: float) -> str:
    """The sum of stages in ``notes`` whose result is the stated ``compute`` ("1.07e23 + 6.2e22 = 1.69e23"), or
    ``""`` when the notes state none.

    >>> compute_sum("Total: 1.07e23 + 6.2e22 = 1.69e23", 1.69e23)
    '1.07e23 + 6.2e22 = 1.69e23'
    >>> compute_sum("6 * 6.3T * 2.73B = 1.03e23", 1.03e23)
    ''
    """
    if not isinstance(notes, str) or "+" not in notes or not (compute > 0):
        return ""
    for m in _SUM.finditer(notes):
        terms = [_figure(t) for t in re.findall(_FIGURE, m.group(1))]
        result = _figure(m.group(m.lastindex or 0))
        if len(terms) >= 2 and all(0 < t < math.inf for t in terms) and 0 < result < math.inf \
                and abs(math.log(sum(terms) / result)) <= _SUM_MATCH and abs(math.log(result / compute)) <= _SUM_MATCH:
            return " ".join(m.group(0).split())
    return ""


def compute_sums(notes: pd.Series, compute: np.ndarray) -> np.ndarray:
    """:func:`compute_sum` for a column, once per distinct (notes, compute) pair."""
    return per_distinct(compute_sum, notes, compute)


#: A figure as compute notes write it: with an exponent ("1.371e23", "2.6 x 10^15") or as a long integer
#: ("2633319360000000", "7,200,000,000"): short plain numbers are epochs, days and utilizations, not estimates.
_ESTIMATE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:[eE]\s*([+-]?\d+)|[x×*]\s*10\s*\^\s*([+-]?\d+))"
    r"|(?<![\w.,])(\d{1,3}(?:,\d{3}){2,}|\d{7,})(?![\d,]*\.\d)(?![\w])")
#: Words that make two figures the ends of an interval rather than two estimates of one figure.
_INTERVAL = re.compile(r"\b(?:lower|upper)[\s-]+bound|\bbetween\b|\b(?:low|high)[\s-]+case\b|\brange\b", re.IGNORECASE)
_GEOMETRIC = re.compile(r"geometric|sqrt|√", re.IGNORECASE)
#: How close the geometric mean of two figures must be to the stated compute (2 %: figures rounded to 2-3 digits).
_GEOMETRIC_MATCH = math.log(1.02)


def _estimates(notes: str) -> list[float]:
    """The distinct figures of ``notes`` written as estimates (:data:`_ESTIMATE`), in order."""
    found: list[float] = []
    for m in _ESTIMATE.finditer(notes):
        if m.group(4):
            value = float(m.group(4).replace(",", ""))
        else:
            value = float(m.group(1)) * _power_of_ten(m.group(2) or m.group(3))
        if 0 < value < math.inf and all(abs(math.log(value / v)) > 1e-9 for v in found):
            found.append(value)
    return found


def geometric_mean(notes: object, compute: float) -> tuple[float, float] | None:
    """The two estimates, larger first, whose geometric mean ``notes`` state as the ``compute``, or ``None``
    when they state none.

    >>> geometric_mean("Hardware estimate: ... = 1.371e23 ... Arithmetic estimate: 6 * 2.3B * 1.2T = 1.656e22 "
    ...                "FLOPs Geometric mean: sqrt(1.371e23 * 1.656e22) = 4.765e22", 4.765e22)
    (1.371e+23, 1.656e+22)
    >>> geometric_mean("Lower bound: 7.26e10 Upper bound: 1.02e13 Geometric mean: 8.59e11", 8.59e11) is None
    True
    """
    if not isinstance(notes, str) or not (compute > 0) or not _GEOMETRIC.search(notes) or _INTERVAL.search(notes):
        return None
    figures = [v for v in _estimates(notes)
               if abs(math.log(v / compute)) > _GEOMETRIC_MATCH and abs(math.log(v / compute)) < math.log(1e4)]
    best: tuple[float, float, float] | None = None
    for i, a in enumerate(figures):
        for b in figures[i + 1:]:
            off = abs(0.5 * math.log(a * b / compute ** 2))
            if off <= _GEOMETRIC_MATCH and (best is None or off < best[0]):
                best = (off, max(a, b), min(a, b))
    return None if best is None else (best[1], best[2])


def geometric_means(notes: pd.Series, compute: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`geometric_mean` for a column, once per distinct (notes, compute) pair: (larger, smaller)
    estimates, NaN where the notes state none."""
    pairs = per_distinct(geometric_mean, notes, compute, empty=None)
    high, low = np.full(len(pairs), np.nan), np.full(len(pairs), np.nan)
    found = np.flatnonzero(pd.notna(pairs))  # a loop over the claims whose notes state one, not over every claim
    if len(found):
        high[found], low[found] = np.array(pairs[found].tolist(), dtype=float).T
    return high, low


# ------------------------------------------------------------------------------ the arithmetic of the notes

#: Multipliers written after a figure in notes' arithmetic: "100M", "11B", "30K", "256m", "13 billion".
_ARITHMETIC_MULTIPLIERS: dict[str, float] = {
    "k": 1e3, "K": 1e3, "thousand": 1e3, "m": 1e6, "M": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "B": 1e9,
    "bn": 1e9, "billion": 1e9, "T": 1e12, "trillion": 1e12}

#: One token of notes' arithmetic: a figure (thousands separators, exponent, percent, multiplier), a word (units
#: such as "FLOP/parameter/token", "GPUs", "epochs"), an operator ("x" and "×" multiply), a break that ends an
#: expression (=, ≈, ~, :, ;, a comma, a line end, an arrow) or anything else (dropped). A figure followed by a
#: letter that is no multiplier ("2nd", "3D") is a word; "2x" is 2 and a multiplication sign.
_ARITHMETIC_TOKEN = re.compile(
    r"(?P<num>(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    r"(?P<exp>\s*[eE]\s*[+-]?\d+)?"
    r"(?P<pct>\s*%)?"
    r"(?:(?P<mul>k|K|M|B|T|bn|mn|b|m)(?![A-Za-z])|\s+(?P<mulw>thousand|million|billion|trillion)\b)?"
    r"(?P<letter>[A-WYZa-wyz])?"
    r"|(?P<word>[A-Za-z_\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f][\w'\u2019\-]*(?:/[A-Za-z_][\w'\u2019\-]*)*)"
    r"|(?P<op>[*\u00d7\u00b7^/+\-()])"
    r"|(?P<brk>->|[=\u2248~:;\n,\u2192\u221a])"
    r"|\S")
#: Words before a parenthesis that make it a function's argument, not a factor: "sqrt(a * b)" is no product.
_FUNCTIONS = frozenset({"sqrt", "log", "ln", "exp", "min", "max", "mean", "avg", "average"})


@dataclass(frozen=True)
class Factor:
    """One factor of a product in notes: its value, its text as written ("2.75e13", "(…)" for a parenthesis),
    and the words after it ("FLOP/fp", "training examples"); a divisor is kept as its reciprocal ("/16")."""

    value: float
    text: str
    unit: str = ""


@dataclass(frozen=True)
class Product:
    """A product that notes write, with its factors and its value."""

    factors: tuple[Factor, ...]
    value: float

    @property
    def text(self) -> str:
        """The product with its factors as written: "2 × 4127383 × 800000 × 20"."""
        text = self.factors[0].text if self.factors else ""
        for f in self.factors[1:]:
            text += f" / {f.text[1:]}" if f.text.startswith("/") else f" × {f.text}"
        return text


def _arithmetic_tokens(notes: str) -> list[tuple[str, str, float]]:
    """(kind, text, value) of every token of ``notes`` (:data:`_ARITHMETIC_TOKEN`): ``num``, ``op``, ``word``
    or ``brk``. An operator that is not followed by a figure or a parenthesis joins words ("forward + backward
    pass", "FLOP / GPU / sec"); a function's parenthesis ("sqrt(") breaks."""
    raw: list[tuple[str, str, float]] = []
    for m in _ARITHMETIC_TOKEN.finditer(notes):
        if m.group("num") is not None:
            if m.group("letter"):
                raw.append(("word", m.group(0), math.nan))
                continue
            value = float(m.group("num").replace(",", ""))
            if m.group("exp"):
                value *= _power_of_ten(re.sub(r"[\seE]", "", m.group("exp")))
            if m.group("pct"):
                value /= 100.0
            multiplier = m.group("mul") or m.group("mulw")
            if multiplier:
                value *= _ARITHMETIC_MULTIPLIERS[multiplier]
            raw.append(("num", " ".join(m.group(0).split()), value))
        elif m.group("word") is not None:
            word = m.group("word")
            raw.append(("op", "*", math.nan) if word in ("x", "X") else ("word", word, math.nan))
        elif m.group("op") is not None:
            op = m.group("op")
            raw.append(("op", "*" if op in "\u00d7\u00b7" else op, math.nan))
        elif m.group("brk") is not None:
            raw.append(("brk", m.group("brk"), math.nan))
    # A parenthesis of words alone is an annotation of the figure before it, not a factor: "9.32e9 (flops per
    # inference) * 1.28e6 (dataset size) / 16 (batch size)" is one product of three factors with their units.
    i = 0
    while i < len(raw):
        if raw[i][:2] == ("op", "("):
            j = i + 1
            while j < len(raw) and raw[j][0] == "word":
                j += 1
            if j > i + 1 and j < len(raw) and raw[j][:2] == ("op", ")"):
                raw[i] = ("word", "(", math.nan)
                raw[j] = ("word", ")", math.nan)
                i = j
        i += 1
    tokens: list[tuple[str, str, float]] = []
    for i, (kind, text, value) in enumerate(raw):
        after = raw[i + 1] if i + 1 < len(raw) else ("brk", "", math.nan)
        if kind == "op" and text in "*/+-^" and not (after[0] == "num" or after[1] == "("):
            tokens.append(("word", text, value))
        elif kind == "word" and text.lower() in _FUNCTIONS and after[1] == "(":
            tokens.append(("brk", text, value))
        else:
            tokens.append((kind, text, value))
    return tokens


class _ArithmeticReader:
    """Reads expressions from tokens as far as they go (a figure, a parenthesis, products, sums, powers; words
    in between are skipped and kept as the units of the figure before them), recording every product."""

    #: Parentheses nested deeper than this are not read (notes nest two or three; hostile text may nest 10,000).
    MAX_DEPTH = 16

    def __init__(self, tokens: list[tuple[str, str, float]]) -> None:
        self.tokens = tokens
        self.i = 0
        self.depth = 0
        self.found: list[Product] = []

    def _next(self) -> tuple[str, str, float] | None:
        """The next token that is not a word (without taking it), skipping words."""
        while self.i < len(self.tokens) and self.tokens[self.i][0] == "word":
            self.i += 1
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _words(self) -> str:
        words = []
        while self.i < len(self.tokens) and self.tokens[self.i][0] == "word":
            words.append(self.tokens[self.i][1])
            self.i += 1
        return " ".join(words)

    def _is(self, *ops: str) -> bool:
        token = self._next()
        return token is not None and token[0] == "op" and token[1] in ops

    def expression(self) -> float | None:
        """A sum of products, or None when nothing here reads as one."""
        total = self.product()
        if total is None:
            return None
        while self._is("+", "-"):
            mark, recorded = self.i, len(self.found)
            sign = 1.0 if self.tokens[self.i][1] == "+" else -1.0
            self.i += 1
            term = self.product()
            if term is None:
                self.i, self.found[recorded:] = mark, []
                break
            total += sign * term
        return total

    def product(self) -> float | None:
        first = self.power()
        if first is None:
            return None
        factors = [first]
        while self._is("*", "/"):
            mark, recorded = self.i, len(self.found)
            divide = self.tokens[self.i][1] == "/"
            self.i += 1
            factor = self.power()
            if factor is None or (divide and factor.value == 0):
                self.i, self.found[recorded:] = mark, []
                break
            factors.append(Factor(1.0 / factor.value, "/" + factor.text, factor.unit) if divide else factor)
        value = math.prod(f.value for f in factors)
        self.found.append(Product(tuple(factors), value))
        return value

    def power(self) -> Factor | None:
        base = self.atom()
        if base is None or not self._is("^"):
            return base
        mark, recorded = self.i, len(self.found)
        self.i += 1
        exponent = self.atom()
        if exponent is None or not abs(exponent.value) <= 308:
            self.i, self.found[recorded:] = mark, []
            return base
        try:
            value = base.value ** exponent.value
        except (OverflowError, ZeroDivisionError):
            self.i, self.found[recorded:] = mark, []
            return base
        return Factor(value, f"{base.text}^{exponent.text}", exponent.unit)

    def atom(self) -> Factor | None:
        token = self._next()
        if token is None:
            return None
        mark, recorded = self.i, len(self.found)
        if token[0] == "num":
            self.i += 1
            return Factor(token[2], token[1], self._words())
        if token[0] == "op" and token[1] == "(" and self.depth < self.MAX_DEPTH:
            self.i += 1
            self.depth += 1
            inner = self.expression()
            self.depth -= 1
            if inner is not None and self._is(")"):
                self.i += 1
                return Factor(inner, "(…)", self._words())
        self.i, self.found[recorded:] = mark, []
        return None


def products(notes: object) -> list[Product]:
    """Every product that ``notes`` write, with its factors, in order (products inside parentheses included).

    >>> [p.text for p in products("Total FLOP: 2*4127383*800000*20=1.3207626e+14")]
    ['2 × 4127383 × 800000 × 20', '1.3207626e+14']
    >>> [(f.value, f.unit) for f in products("2e8 FLOP/fp * 2.75e13 fp")[0].factors]
    [(200000000.0, 'FLOP/fp'), (27500000000000.0, 'fp')]
    """
    if not isinstance(notes, str):
        return []
    tokens = _arithmetic_tokens(notes)
    found: list[Product] = []
    i = 0
    while i < len(tokens):
        kind, text, _ = tokens[i]
        if kind != "num" and text != "(":
            i += 1
            continue
        reader = _ArithmeticReader(tokens)
        reader.i = i
        if reader.expression() is None or reader.i <= i:
            i += 1
            continue
        found.extend(reader.found)
        i = reader.i
    return [p for p in found if all(math.isfinite(f.value) for f in p.factors) and math.isfinite(p.value)]


#: Words in notes that name the utilization a hardware estimate assumes ("0.3 [assumed utilization]", "assumed
#: 0.33 util rate", "if MFU is around 0.32").
_UTILIZATION_WORDS = re.compile(r"utili[sz]|\bMFU\b|\bHFU\b", re.IGNORECASE)
#: How close a product of the notes must be to the stated compute to be its estimate (5 %, as for the other
#: products the notes are read for: Epoch's notes round their results).
_ESTIMATE_MATCH = math.log(1.05)


def _estimates_of(notes: str, targets: Sequence[float], factors: int = 3) -> Iterator[Product]:
    """The products of ``notes`` of at least ``factors`` factors whose value is one of ``targets`` (the stated
    compute, or an estimate of it) within 5 % (:data:`_ESTIMATE_MATCH`)."""
    for p in products(notes):
        if len(p.factors) >= factors and p.value > 0 and \
                any(abs(math.log(p.value / t)) <= _ESTIMATE_MATCH for t in targets):
            yield p


def assumed_utilization(notes: object, compute: float) -> float:
    """The utilization that ``notes`` assume to estimate the stated ``compute`` from the hardware and time, or NaN
    when they state no such estimate: the one factor below 1 (written as a figure, not a divisor) of a product of
    at least three factors whose value is the compute within 5 %, in notes that speak of utilization, MFU or HFU;
    when several products fit, they must agree on it.

    >>> assumed_utilization("123000000000000 FLOP / chip / sec * 512 TPUs * 32 hours * 3600 sec / hour * 0.33 "
    ...                     "[assumed utilization] = 2.3940956e+21", 2.39e21)
    0.33
    >>> assumed_utilization("6 * 600B * 96.6B = 3.478e23", 3.478e23)
    nan
    """
    if not isinstance(notes, str) or not (compute > 0) or not _UTILIZATION_WORDS.search(notes):
        return math.nan
    found: set[float] = set()
    for product in _estimates_of(notes, (compute,)):
        below_one = [f.value for f in product.factors if 0.0 < f.value < 1.0 and not f.text.startswith("/")]
        if len(below_one) == 1:
            found.add(below_one[0])
    return found.pop() if len(found) == 1 else math.nan


def assumed_utilizations(notes: pd.Series, compute: np.ndarray) -> np.ndarray:
    """:func:`assumed_utilization` for a column, once per distinct (notes, compute) pair (NaN where none)."""
    return per_distinct(assumed_utilization, notes, compute, empty=math.nan).astype(float)


#: Notes that say the model learned without back-propagation (Hebbian rules, self-organization, update rules
#: of their own): no backward pass to count, so a compute of 2 × N × D is no slip.
_NO_BACKWARD = re.compile(
    r"\bno (?:real )?backward|\bno back-?prop|\bwithout (?:a )?back(?:ward|-?prop)"
    r"|\b(?:did not|didn't|does not|doesn't|do not|don't) use back-?prop|\binstead of gradient descent"
    r"|\bnot (?:trained )?(?:with|by|using) (?:gradient descent|back-?prop)", re.IGNORECASE)
#: How close a factor must be to the claim's parameters to be N (5 %: Epoch's notes round, or count the
#: operations of a layer that holds nearly all of them, as NPLM's 4,127,383 for 4,124,233 parameters).
_PARAMS_MATCH = math.log(1.05)
#: How close a single factor must be to twice the parameters to be 2·N (2 %: "2e8 FLOP/fp" for 100M).
_TWICE_PARAMS_MATCH = math.log(1.02)
#: Factors by which people turn a forward count into a training count: 2 (backward equal to forward), 3
#: (backward twice the forward), 4, 6 (a count of multiply-adds). Besides these, any factor below 1
#: (a utilization, a share, a division) and any non-whole factor up to 6 (3.5, 1.2 for a weight update) may do so.
_TRAINING_FACTORS = frozenset({2.0, 3.0, 4.0, 6.0})


@dataclass(frozen=True)
class ForwardOnly:
    """A training compute that notes count as the forward pass alone: ``product`` (as written) is 2 × N × D, or
    F × D for a count F of FLOP per forward pass that the notes give as such (``forward``)."""

    #: The product as written in the notes: "2 × 4127383 × 800000 × 20".
    product: str
    #: N, as the notes write it (4127383), and D, the product of the other factors (800000 × 20 = 1.6e7). With
    #: ``forward``: F / 2, the parameters that F is two FLOP of each.
    params: float
    data: float
    #: F, FLOP per example of one forward pass, as the notes call it ("188 GFLOP per forward pass"); None: 2·N.
    forward: float | None = None

    @property
    def compute(self) -> float:
        """The product's value, 2 · N · D (F · D)."""
        return 2.0 * self.params * self.data

    @property
    def training(self) -> float:
        """6 · N · D from the same figures (3 · F · D): the forward and the backward pass."""
        return 6.0 * self.params * self.data


#: A count of FLOP that the notes call a forward pass's: "188 GFLOP per forward pass", "965.3e9 FLOPs per forward
#: pass", "forward pass FLOPs: 8.07e6". Multiply-accumulates (MACs) are left out: two FLOP each, another slip.
_FORWARD_COUNT = re.compile(
    r"(?P<a>\d+(?:\.\d+)?(?:\s*[eE]\s*[+-]?\d+)?)\s*(?P<pa>[kKMGTP]?)(?:FLOP|flop|Flop)s?\b[^.\n]{0,25}?\bforward\b"
    r"|\bforward[- ]pass(?:es)?\s*(?:FLOPs?|flop)?\s*(?:of|is|=|:)?\s*(?P<b>\d+(?:\.\d+)?(?:\s*[eE]\s*[+-]?\d+)?)"
    r"\s*(?P<pb>[kKMGTP]?)", re.IGNORECASE)
_COUNT_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}
#: How close a factor must be to such a count to be it (1 %: the same figure, written another way).
_FORWARD_MATCH = math.log(1.01)


def _forward_counts(notes: str) -> list[float]:
    """Every FLOP count that ``notes`` call a forward pass's (:data:`_FORWARD_COUNT`)."""
    out = []
    for m in _FORWARD_COUNT.finditer(notes):
        figure, prefix = (m.group("a"), m.group("pa")) if m.group("a") else (m.group("b"), m.group("pb"))
        try:
            out.append(float(figure.replace(" ", "")) * _COUNT_PREFIX[prefix.lower()])
        except (ValueError, KeyError):
            continue
    return [v for v in out if v > 0]


def _may_count_training(value: float) -> bool:
    """Whether a factor may be what turns a forward count into a training count (:data:`_TRAINING_FACTORS`)."""
    return value < 1.0 or value in _TRAINING_FACTORS or (value <= 6.0 and value != int(value))


def forward_only(notes: object, compute: float, params: float) -> ForwardOnly | None:
    """The product of ``notes`` that states the training ``compute`` as 2 × N × D (N = ``params``), or None.

    The product must equal the compute (within 5 %) and hold a 2 and a factor within 5 % of N (or one factor
    within 2 % of 2·N counted in FLOP, "2e8 FLOP/fp"); every other factor must be one that cannot turn a forward
    count into a training count (:data:`_TRAINING_FACTORS`: "2*N*3*D" counts both passes); the notes must not
    say that the model learned without back-propagation.

    >>> forward_only("Total FLOP: 2*4127383*800000*20=1.3207626e+14", 1.3207626e14, 4124233)
    ForwardOnly(product='2 × 4127383 × 800000 × 20', params=4127383.0, data=16000000.0, forward=None)
    >>> forward_only("2*206910*3*15000000=18621900000000=1.86e13", 1.86219e13, 206910) is None
    True
    """
    if not isinstance(notes, str) or not (compute > 0) or not (params > 0) or _NO_BACKWARD.search(notes):
        return None
    for p in _estimates_of(notes, (compute,), factors=2):
        values = [f.value for f in p.factors]
        n = [k for k, v in enumerate(values) if v > 0 and abs(math.log(v / params)) <= _PARAMS_MATCH]
        two = [k for k, v in enumerate(values) if v == 2.0]
        found: tuple[int, ...] = ()
        if two and [k for k in n if k != two[0]]:
            found = (two[0], next(k for k in n if k != two[0]))
        else:
            twice = [k for k, v in enumerate(values)
                     if v > 0 and abs(math.log(v / (2.0 * params))) <= _TWICE_PARAMS_MATCH
                     and "flop" in p.factors[k].unit.lower()]
            if twice:
                found = (twice[0],)
        forward = None
        if not found:
            # A count of FLOP per example that the notes call a forward pass's (InternImage: "188 GFLOP per
            # forward pass", then "188e9 FLOP/image * (427M images * 30 epochs) + (…) * 3 (…backward pass) =
            # 2.408e21", where the 3 multiplies the fine-tune's term alone).
            counts = _forward_counts(notes)
            per_pass = [k for k, v in enumerate(values)
                        if v > 0 and any(abs(math.log(v / c)) <= _FORWARD_MATCH for c in counts)]
            if per_pass:
                found, forward = (per_pass[0],), values[per_pass[0]]
        if not found:
            continue
        others = [v for k, v in enumerate(values) if k not in found]
        if any(_may_count_training(v) for v in others):
            continue
        n_value = values[found[1]] if len(found) == 2 else values[found[0]] / 2.0
        return ForwardOnly(product=p.text, params=n_value, data=math.prod(others), forward=forward)
    return None


def forward_onlys(notes: pd.Series, compute: np.ndarray, params: np.ndarray) -> np.ndarray:
    """:func:`forward_only` for a column, once per distinct (notes, compute, parameters): a :class:`ForwardOnly`
    or None per claim."""
    return per_distinct(forward_only, notes, compute, params, empty=None, positive=2)


def per_distinct(read: Callable[..., object], notes: pd.Series, *figures: np.ndarray, empty: object = "",
                 positive: int = 1) -> np.ndarray:
    """``read(notes, *figures)`` for every row, called once per distinct (notes, figures) among the rows with notes
    whose first ``positive`` figures are positive (``empty`` for the others, which cost one vectorized test); the
    other figures are passed as they are (NaN included)."""
    out = np.full(len(notes), empty, dtype=object)
    has = notes.notna().to_numpy(copy=True)  # written below (pandas's Copy-on-Write lends read-only arrays)
    for figure in figures[:positive]:
        has &= np.isfinite(figure) & (figure > 0)
    if has.any():
        keys = pd.Series(list(zip(notes.to_numpy(dtype=object)[has], *(f[has] for f in figures))), dtype=object)
        out[has] = map_unique(keys, lambda k: empty if k is None else read(*k)).to_numpy(dtype=object)
    return out


# ------------------------------------------------------------------ the chips a hardware estimate counts

#: Words after a figure that make it a count of accelerators ("1 GPU", "512 TPUs", "8192 chips", "384 A100 GPUs",
#: "64 TPUv3 chips"): a count, not GPU-hours, GPU-days, cores (a TPU chip holds two), GPUs per server ("8 GPU/server",
#: "8 GPUs per node": the run's count is that times the nodes).
_CHIP_COUNT_UNIT = re.compile(
    r"^(?:(?:[A-Z][\w-]*\d[\w-]*|NVIDIA|Nvidia|Tesla|Google|Cloud)\s+){0,2}"
    r"(?:GPUs?|TPUs?|chips?|accelerators?|devices?|IPUs?|NPUs?)(?![\w/-])(?!\s*(?:/|per\b|each\b))"
    r"(?!\s*(?:-|\*)?\s*(?:hours?|h|days?|months?|weeks?|seconds?|secs?|s|hrs?|cores?)\b)", re.IGNORECASE)
#: How a chip count read from the compute notes is marked (the ``how`` of a derived ``chips``): V008 reports it.
CHIPS_FROM_NOTES_HOW = noted("chips: the count in the compute notes' hardware estimate", "compute_notes")

#: How an active parameter count read from the parameter notes is marked (the ``how`` of a derived
#: ``active_params``): V012 reports it.
ACTIVE_FROM_NOTES_HOW = noted("active_params: the count of active parameters in the parameter notes", "params_notes")

#: One figure with its scale, not part of a range ("10B-30B", "10-30B") and not followed by another figure.
_ACTIVE_NUM = r"(?<![\d.\-–])(?P<n>\d+(?:\.\d+)?)\s*(?P<s>billion|million|trillion|[BMT])\b(?!\s*[-–/]\s*\d)"
#: "37B activated", "17 billion active parameters", "21B parameters activated", "52 billion activation parameters".
_ACTIVE_AFTER = re.compile(
    _ACTIVE_NUM + r"\s*(?:parameters?\s+|params?\s+)?(?:are\s+)?(?:active|activated|activation)\b", re.IGNORECASE)
#: "active parameters - 47B", "activated params: 21B".
_ACTIVE_BEFORE = re.compile(
    r"\b(?:active|activated)\s+(?:parameters?|params?)\s*(?:[-–:=]|of|is|are)?\s*" + _ACTIVE_NUM, re.IGNORECASE)


def active_params_of(text: object) -> float | None:
    """The active parameters per token that parameter notes state for a mixture-of-experts model, or None: one
    figure with its scale beside "active", "activated" or "activation" (DeepSeek-V3's row: "671B total parameters
    with 37B activated for each token"), every such figure agreeing; a range ("active parameters around 10B-30B")
    is no figure."""
    if not isinstance(text, str) or "activ" not in text.lower():
        return None
    from audit.units import parse_value  # here: audit.units imports pandas, which start-up must not

    found: set[float] = set()
    for pattern in (_ACTIVE_AFTER, _ACTIVE_BEFORE):
        for m in pattern.finditer(text):
            if re.search(r"\d\s*[-–]\s*$|\bto\s*$", text[max(0, m.start("n") - 4):m.start("n")]):
                continue  # the end of a range ("10 to 30B")
            found.add(parse_value(f"{m.group('n')} {m.group('s')}", "count"))  # "37 B", "17 billion"
    return found.pop() if len(found) == 1 else None


@dataclass(frozen=True)
class ChipCount:
    """The accelerators that a hardware estimate in compute notes counts: ``chips`` in ``product`` (as written)."""

    chips: float
    #: The factor as written, with its words ("1 GPU"), and the product it is a factor of.
    factor: str
    product: str


def chip_count(notes: object, compute: float, estimates: tuple[float, ...] = ()) -> ChipCount | None:
    """The number of accelerators that a hardware estimate in ``notes`` counts, or None.

    The estimate is a product of at least three factors whose value is the stated ``compute`` or one of the
    ``estimates`` (the two whose geometric mean the notes state as the compute), within 5 %; exactly one of its
    factors is a whole number followed by a word for accelerators ("1 GPU", "512 TPUs", "8192 chips"), not
    accelerator-hours, cores or GPUs per server; every such product of the notes agrees on the count.

    >>> chip_count("31330000000000 FLOP / sec / GPU [fp16 assumed] * 1 GPU * 12 hours * 3600 sec / hour * 0.3 "
    ...            "[assumed utilization] = 4.060368e+17 FLOP", 6.8866472e17, (1.16802e18, 4.060368e17)).chips
    1.0
    >>> chip_count("123000000000000 FLOP / chip / sec * 512 TPUs * 32 hours * 3600 sec / hour * 0.33", 2.394e21).factor
    '512 TPUs'
    >>> chip_count("1456000 GPU-hours * 3600 * 989e12 * 0.4", 2.07e24) is None
    True
    """
    if not isinstance(notes, str) or not (compute > 0):
        return None
    targets = [compute] + [e for e in estimates if e > 0 and math.isfinite(e)]
    found: list[ChipCount] = []
    for p in _estimates_of(notes, targets):
        counts = [f for f in p.factors if not f.text.startswith("/") and f.value >= 1 and f.value == int(f.value)
                  and _CHIP_COUNT_UNIT.match(f.unit.strip())]
        if len(counts) == 1:
            found.append(ChipCount(counts[0].value, f"{counts[0].text} {counts[0].unit.strip()}", p.text))
    return found[0] if found and all(c.chips == found[0].chips for c in found) else None


def chip_counts(notes: pd.Series, compute: np.ndarray, high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """:func:`chip_count` for a column, once per distinct (notes, compute, estimates): a :class:`ChipCount` or
    None per claim (``high`` and ``low``: the geometric mean's two estimates, NaN where none)."""
    return per_distinct(lambda text, c, h, low_: chip_count(text, c, (h, low_)), notes, compute, high, low,
                        empty=None)


# ------------------------------------------------------------------ slips in the arithmetic of compute notes

@dataclass(frozen=True)
class NotesSlip:
    """A slip in the product that compute notes write for the stated compute: ``factor`` (as written) should not
    be in ``product`` (as written); without the slip the compute is the product times ``correction``."""

    product: str
    factor: str
    correction: float


#: Factors that count FLOPs (2 per multiply-add, 3 for forward and backward, 4, 6): never read as passes.
_FLOP_FACTORS = frozenset({2.0, 3.0, 4.0, 6.0})
#: How close a factor's quotient must be to the stated dataset size, or a factor to the stated epochs (2 %).
_DATA_MATCH = math.log(1.02)


def passes_counted_twice(notes: object, compute: float, dataset: float, epochs: float = math.nan
                         ) -> NotesSlip | None:
    """The product of ``notes`` that states the ``compute`` with the passes over the data counted twice, or None.

    The product (within 5 % of the compute) holds a factor k (a whole number from 2 to 10,000, not a FLOP
    factor 2, 3, 4 or 6 unless it is the stated ``epochs``; equal to the stated epochs when they are stated) and
    another factor that is k times the stated ``dataset`` size (within 2 %): the presentations, which already
    count the k passes. Without the slip the compute is the product divided by k.

    >>> passes_counted_twice("2*64660*3*23*167693=1496338054440", 1496338054440.0, 7291).factor
    '23'
    >>> passes_counted_twice("2*64660*3*23*7291=65e9", 6.5e10, 7291) is None
    True
    """
    if not isinstance(notes, str) or not (compute > 0) or not (dataset > 0):
        return None
    for p in _estimates_of(notes, (compute,)):
        plain = [f for f in p.factors if not f.text.startswith("/") and f.value > 0]
        for k in plain:
            is_epochs = epochs > 0 and abs(math.log(k.value / epochs)) <= _DATA_MATCH
            if not (2 <= k.value <= 10_000 and k.value == int(k.value)) or (epochs > 0 and not is_epochs) \
                    or (k.value in _FLOP_FACTORS and not is_epochs):
                continue
            for a in plain:
                if a is not k and abs(math.log(a.value / (k.value * dataset))) <= _DATA_MATCH:
                    return NotesSlip(p.text, k.text, 1.0 / k.value)
    return None


#: Words that make a factor a count per example ("9.32e9 (flops per inference)", "FLOP per image").
_PER_EXAMPLE = re.compile(r"\bper\s+(?:image|example|sample|inference|input|datapoint|data point|sequence|token|"
                          r"forward pass|instance|observation|pattern|frame|utterance)\b", re.IGNORECASE)
#: Words that make a factor a count per batch or step: dividing the data by the batch size is then right.
_PER_BATCH = re.compile(r"\bper\s+(?:batch|mini-?batch|step|iteration|update)\b", re.IGNORECASE)


def batch_size_divisor(notes: object, compute: float) -> NotesSlip | None:
    """The product of ``notes`` that states the ``compute`` as a count per example divided by the batch size, or
    None.

    The product (within 5 % of the compute) holds a factor counted per example ("(flops per inference)", "FLOP
    per image"), a divisor that the notes call the batch size ("/ 16 (batch size)"), and no factor counted per
    batch or step (FLOPs per batch times the batches, the dataset divided by the batch size, is right). Without
    the slip the compute is the product times the batch size.

    >>> batch_size_divisor("9.32*10^9 (flops per inference)*1.28×10^6(dataset size)/16 (batch size) * 110 epochs "
    ...                    "* 3 (to account for backpropagation)= 2.46048e+17 FLOPs", 2.46048e17).correction
    16.0
    >>> batch_size_divisor("4.1e12 FLOP per batch * 1.28e6 images / 256 (batch size) * 90 epochs", 1.85e18) is None
    True
    """
    if not isinstance(notes, str) or not (compute > 0) or "batch" not in notes.lower():
        return None
    for p in _estimates_of(notes, (compute,)):
        if any(_PER_BATCH.search(f.unit) for f in p.factors) or not any(_PER_EXAMPLE.search(f.unit) for f in p.factors):
            continue
        batch = [f for f in p.factors if f.text.startswith("/") and "batch" in f.unit.lower()
                 and f.value > 0 and 1.0 / f.value >= 2 and round(1.0 / f.value) == 1.0 / f.value]
        if len(batch) == 1:
            return NotesSlip(p.text, batch[0].text, 1.0 / batch[0].value)
    return None


@dataclass(frozen=True)
class ExamplesCounted:
    """The examples a compute estimate of the notes counts: ``product`` (as written) is 3 × F × E, for F the FLOP of
    a forward pass per example (as the notes call it) and E the examples, a product of whole counts (steps, batch
    size, images, epochs)."""

    product: str
    forward: float
    examples: float


def examples_counted(notes: object, compute: float) -> ExamplesCounted | None:
    """The product of ``notes`` that estimates the training ``compute`` (within 5 %, or one of the two estimates
    whose geometric mean the notes state as the compute) as 3 × (FLOP of a forward pass per example) × the
    examples, or None.

    The forward count is a factor the notes call a forward pass's ("965.3e9 FLOPs per forward pass",
    :func:`_forward_counts`); exactly one other factor is 3 (the backward pass, twice the forward); every other
    factor is a whole count of at least 1, and their product is the examples the estimate counts.

    >>> examples_counted("965.3e9 FLOPs per forward pass ... 4096 * 5e6 * 965.3e9 * 3 = 5.93e22", 5.93e22).examples
    20480000000.0
    >>> examples_counted("965.3e9 FLOPs per forward pass ... 4096 * 5e6 * 965.3e9 * 0.5 = 9.9e21", 9.9e21) is None
    True
    """
    if not isinstance(notes, str) or not (compute > 0):
        return None
    counts = _forward_counts(notes)
    if not counts:
        return None
    targets = (compute, *(geometric_mean(notes, compute) or ()))
    for p in _estimates_of(notes, targets, factors=3):
        values = [f.value for f in p.factors]
        per_pass = [k for k, v in enumerate(values)
                    if v > 1 and any(abs(math.log(v / c)) <= _FORWARD_MATCH for c in counts)]
        if not per_pass:
            continue
        others = [v for k, v in enumerate(values) if k != per_pass[0]]
        if others.count(3.0) != 1:
            continue
        others.remove(3.0)
        if not others or any(v < 1 or v != int(v) for v in others):
            continue
        return ExamplesCounted(p.text, values[per_pass[0]], math.prod(others))
    return None


# ------------------------------------------------------------------ a training time counted in accelerator-time

#: Words after a figure that count it in accelerator-time, with the hours each unit is: "GPU hours", "GPU-days",
#: "TPU-days", "V100-hours", "chip-hours", "TPU core-hours", "92 GPU years". A run's wall-clock time is hours; a
#: count of accelerator-hours is that times the accelerators.
_CHIP_TIME_UNIT = re.compile(
    r"(?<![\w-])(?:GPU|TPU(?:\s?v\d[a-z]*)?|IPU|NPU|chip|accelerator|card|device|core|TPU[\s-]core|GPU[\s-]core"
    r"|[AHVP]\d{2,3})s?[\s-]*(?P<unit>hours?|hrs?|days?|years?)\b", re.IGNORECASE)
_CHIP_TIME_HOURS = {"h": 1.0, "d": 24.0, "y": 365.0 * 24.0}
#: One figure, with a scale word or letter: "2248", "320,256", "~84", "1.5e5", "150k", "30.84M".
_TIME_FIGURE = r"\d+(?:,\d{3})*(?:\.\d+)?(?:e[+-]?\d+)?(?:\s*(?:k|K|M|thousand|million)\b)?"
#: The figures that end the text before such a unit: one, or a list ("1106, 1576 and 2248 GPU hours"), remarks in
#: brackets left out ("1576 (+42%) and 2248 (+103%) GPU hours").
_TIME_FIGURES_BEFORE = re.compile(
    rf"(?:{_TIME_FIGURE})(?:\s*(?:,|\band\b|\bor\b|&)\s*~?\s*(?:{_TIME_FIGURE}))*\s*$", re.IGNORECASE)
#: How close a figure in accelerator-time must be to the stated training time (2 %: Epoch's rows copy the figure).
_TIME_MATCH = math.log(1.02)


@dataclass(frozen=True)
class ChipTime:
    """A figure of the notes counted in accelerator-time (``text``: the figure and its unit, as written) that is the
    stated training time: ``hours`` accelerator-hours."""

    text: str
    hours: float


def _time_figure(text: str) -> float:
    text = text.strip().replace(",", "")
    scale = 1.0
    for word, factor in (("thousand", 1e3), ("million", 1e6), ("k", 1e3), ("K", 1e3), ("M", 1e6)):
        if text.endswith(word):
            text, scale = text[: -len(word)].strip(), factor
            break
    return float(text) * scale


def chip_time(notes: object, hours: float) -> ChipTime | None:
    """The figure of ``notes`` (a training time's notes) counted in accelerator-time ("2248 GPU hours", "~84
    GPU-days", "19 GPU years") that is the stated training time of ``hours`` (within 2 %), or None: a training
    time so stated is accelerator-hours, not the run's wall-clock time.

    A figure counts in accelerator-time when the words right after it, or after the list it ends, are a word for
    accelerators (GPU, TPU, chip, core, V100, ...) and a unit of time ("GPU-hours", "TPU-days", "GPU years");
    remarks in brackets between the figures and the unit are left out. Days are 24 hours, years 365 days.

    >>> chip_time("the training times were 1106, 1576 (+42%) and 2248 (+103%) GPU hours.", 2248.0).text
    '2248 GPU hours'
    >>> chip_time("~84 GPU-days * 24 hours/day", 2016.0).hours
    2016.0
    >>> chip_time("625.5 hours = 320256 /512; 320256 GPU hours", 625.5) is None
    True
    """
    if not isinstance(notes, str) or not (hours > 0):
        return None
    for m in _CHIP_TIME_UNIT.finditer(notes):
        before = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", notes[max(0, m.start() - 160):m.start()])
        figures = _TIME_FIGURES_BEFORE.search(before)
        if figures is None:
            continue
        if re.search(r"[\w.]$", before[:figures.start()]):
            continue  # the end of a longer token ("v3", "1e5"): no figure of its own
        per_unit = _CHIP_TIME_HOURS[m.group("unit")[0].lower()]
        for figure in re.finditer(_TIME_FIGURE, figures.group(0), re.IGNORECASE):
            value = _time_figure(figure.group(0)) * per_unit
            if value > 0 and abs(math.log(value / hours)) <= _TIME_MATCH:
                return ChipTime(f"{figure.group(0).strip()} {m.group(0).strip()}", value)
    return None


def chip_times(notes: pd.Series, hours: np.ndarray) -> np.ndarray:
    """:func:`chip_time` for a column, once per distinct (notes, hours): a :class:`ChipTime` or None per claim."""
    return per_distinct(chip_time, notes, hours, empty=None)
