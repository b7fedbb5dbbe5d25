"""What a claim's free-text notes say, read narrowly: what the dataset size counts, and whether the compute is
a sum of several trainings.

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
"""

from __future__ import annotations

import math
import re
from typing import Callable

import numpy as np
from audit.lazy import pandas as pd  # imported on first use: quick start-up

from audit.columns import map_unique

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
            value *= 10.0 ** int(exponent)
        if m.group(4):
            value *= _MULTIPLIERS[m.group(4).lower()]
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


def model_kinds(domain: pd.Series, task: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(language, sequence) masks: a language model by its ``domain`` or ``task`` (Epoch AI's "Language" domain,
    or a task such as "Protein or nucleotide language model (pLM/nLM)"), and a sequence model, which is a language
    model or a protein or genome model of the Biology domain. Each distinct text is read once."""
    def has(series: pd.Series, word: str) -> np.ndarray:
        return map_unique(series, lambda t: isinstance(t, str) and word in t.lower()).to_numpy(dtype=bool)

    language = has(domain, "language") | has(task, "language model")
    return language, language | has(domain, "biology")


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
    return _per_distinct_pair(unit_of, notes, sizes)


_FIGURE = r"(\d+(?:\.\d+)?\s*(?:[eE]\s*[+-]?\d+|[x×*]\s*10\s*\^\s*[+-]?\d+))"
_SUM = re.compile(r"((?:" + _FIGURE + r"\s*\+\s*)+" + _FIGURE + r")\s*=\s*" + _FIGURE)
_FIGURE_PARTS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:[eE]\s*([+-]?\d+)|[x×*]\s*10\s*\^\s*([+-]?\d+))")
#: How close the terms' total and the stated compute must be to the result (5 %: figures rounded to 3 digits).
_SUM_MATCH = math.log(1.05)


def _figure(text: str) -> float:
    m = _FIGURE_PARTS.search(text)
    return float(m.group(1)) * 10.0 ** int(m.group(2) or m.group(3)) if m else float("nan")


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
        if len(terms) >= 2 and all(t > 0 for t in terms) and result > 0 \
                and abs(math.log(sum(terms) / result)) <= _SUM_MATCH and abs(math.log(result / compute)) <= _SUM_MATCH:
            return " ".join(m.group(0).split())
    return ""


def compute_sums(notes: pd.Series, compute: np.ndarray) -> np.ndarray:
    """:func:`compute_sum` for a column, once per distinct (notes, compute) pair."""
    return _per_distinct_pair(compute_sum, notes, compute)


def _per_distinct_pair(read: Callable[[object, float], str], notes: pd.Series, figures: np.ndarray) -> np.ndarray:
    """``read(notes, figure)`` for every row, called once per distinct pair among the rows with notes and a
    positive figure ("" for the others, which cost one vectorized test)."""
    out = np.full(len(notes), "", dtype=object)
    has = notes.notna().to_numpy() & np.isfinite(figures) & (figures > 0)
    if has.any():
        keys = pd.Series(list(zip(notes.to_numpy(dtype=object)[has], figures[has])), dtype=object)
        out[has] = map_unique(keys, lambda k: "" if k is None else read(k[0], k[1])).to_numpy(dtype=object)
    return out
