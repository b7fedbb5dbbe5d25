"""Read the values people write in training reports (``175B``, ``3640 PF-days``, ``46.2%``) as floats.

Every numeric quantity has a *kind* (see :mod:`audit.quantities`) and each kind has one canonical unit:

==============  =====================================================
kind            canonical unit
==============  =====================================================
``count``       plain number (parameters, tokens, accelerators)
``flop``        FLOP (a total amount of compute)
``days``        days of wall-clock time
``hours``       accelerator-hours (GPU-hours, TPU-hours, chip-hours)
``fraction``    fraction, 0..1 expected but not validated here
``tokens_rate`` tokens per second (whole cluster)
``flops_rate``  FLOP per second (per accelerator in the current schema)
``bytes``       bytes
==============  =====================================================

Design rules:

* Parsing is regex + table look-ups only: no ``eval``. Strings longer than :data:`MAX_TEXT_LEN` are refused
  before any regex runs, and no pattern nests unbounded repetitions, so a hostile cell cannot make a regex
  backtrack catastrophically.
* Range and validity (negative, zero, infinite, fraction > 1) are *not* checked here: the claims loader does
  that with the field's label, so ``1e400`` parses to ``inf`` and ``46.2`` as a fraction stays ``46.2``.
* A string that cannot be read raises :class:`UnitError`, whose message names the text, the reason and
  examples of what the field accepts.
* A unit named in a column header (``Training time (hours)``) is passed as ``unit=``: bare numbers in the
  column are in that unit (its scale is read once from ``1 <unit>``), cells that write a unit keep theirs.
* :func:`parse_series` reads each distinct cell once; with many distinct cells, those of the common shapes
  (``7B``, ``871,170 GPU-hours``, ``46.2%``, plain numbers) are read together with Arrow's compute functions
  (:func:`_parse_common`), to the same float and message as one by one (``tests/test_units_vectorized.py``).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import numbers
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pyarrow is imported where it is used: quick start-up
    import pyarrow as pa

__all__ = [
    "KINDS",
    "MAX_TEXT_LEN",
    "UnitError",
    "is_bare_number",
    "parse_series",
    "parse_value",
    "unit_scale",
]

#: All quantity kinds; every one but ``text`` is numeric and handled by :func:`parse_value`.
KINDS: tuple[str, ...] = ("count", "flop", "days", "hours", "fraction", "tokens_rate", "flops_rate", "bytes",
                          "power", "energy", "co2", "usd", "usd_rate", "intensity", "ratio", "text")

#: Longest string (after stripping surrounding whitespace) that is parsed. No real value comes near it; the
#: cap bounds regex work on adversarial input.
MAX_TEXT_LEN = 200


class UnitError(ValueError):
    """A value that cannot be read as the quantity's unit.

    ``str(e)`` is a short user-facing message naming the text and what was expected. The pieces are also
    available as attributes: ``text`` (the original cell, or None for a non-string), ``kind`` and ``reason``.
    """

    def __init__(self, message: str, *, text: str | None = None, kind: str | None = None,
                 reason: str | None = None) -> None:
        super().__init__(message)
        self.text = text
        self.kind = kind
        self.reason = reason


# --------------------------------------------------------------------------------------------------------
# Descriptions used in error messages.

_DESCRIPTION: dict[str, str] = {
    "count": "a count",
    "flop": "a total compute in FLOP",
    "days": "a wall-clock duration in days",
    "hours": "accelerator-hours",
    "fraction": "a fraction",
    "tokens_rate": "a throughput in tokens/s",
    "flops_rate": "a compute rate in FLOP/s",
    "bytes": "a size in bytes",
    "power": "a power in W",
    "energy": "an energy in MWh",
    "co2": "emissions in t CO2e",
    "usd": "an amount in US dollars",
    "usd_rate": "a price in USD per chip-hour",
    "intensity": "a carbon intensity in kg CO2e/kWh",
    "ratio": "a ratio",
}

_EXAMPLES: dict[str, str] = {
    "count": "175B, 1.4T tokens, 2,048 GPUs",
    "flop": "3.14e23, 314 ZFLOP, 3640 PF-days",
    "days": "21, 21 days, 3.5 months, 920 hours",
    "hours": "1,022,362, 2.788M GPU-hours, 30.84M H100-hours",
    "fraction": "0.462, 46.2%",
    "tokens_rate": "380 tokens/s, 1.2M tokens/sec",
    "flops_rate": "312e12, 989 TFLOP/s, 1.979 PFLOPS",
    "bytes": "80GB, 80 GiB, 1.1 TB",
    "power": "400, 400 W, 378.5 W per chip, 25 MW",
    "energy": "688, 688 MWh, 6.9 GWh, 3,300 kWh",
    "co2": "271.43, 271.43 tCO2e, 539 t CO2eq, 5,000 kg",
    "usd": "5576000, $5.576M, 5.576 million USD",
    "usd_rate": "2, $2/GPU-hour, 2 USD per GPU hour",
    "intensity": "0.429, 0.429 kg/kWh, 429 gCO2e/kWh",
    "ratio": "1.1",
}

# Short names for the "looks like ..." hint when a unit belongs to another kind.
_LOOKS_LIKE: dict[str, str] = {
    "count": "a count",
    "flop": "a total compute (FLOP)",
    "days": "a wall-clock duration",
    "hours": "accelerator-hours",
    "fraction": "a percentage",
    "tokens_rate": "a token throughput",
    "flops_rate": "a compute rate (FLOP/s)",
    "bytes": "a memory size",
    "power": "a power",
    "energy": "an energy",
    "co2": "emissions",
    "usd": "an amount of money",
    "usd_rate": "a price per chip-hour",
    "intensity": "a carbon intensity",
    "ratio": "a ratio",
}

# Order in which other kinds are tried for the hint. Count first: it accepts a bare multiplier (``175B``),
# which the hours and rate readers also accept but which reads first as a count. A duration before
# accelerator-hours, so ``21 days`` is named a duration; FLOP before hours, whose "any word" descriptor
# would otherwise claim ``PF-days``.
_HINT_ORDER: tuple[str, ...] = ("count", "flop", "days", "hours", "flops_rate", "tokens_rate", "fraction", "bytes")

# Strings that mean "missing". They mirror pandas.read_csv's default ``na_values`` so that the same table
# parses the same whether it arrives as CSV (where pandas already turned these into NaN) or as JSON/YAML.
# ("nan" stays missing here; the claims loader flags a literal NaN separately.)
_NA_STRINGS: frozenset[str] = frozenset({
    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
    "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
})
#: What spreadsheets write for "not known" beside pandas' strings (compared in lower case): dashes (the tool's
#: own reports print an em dash for a missing figure), question marks, "unknown", "TBD", "not reported".
PLACEHOLDERS: frozenset[str] = frozenset({
    *(t.lower() for t in _NA_STRINGS), "n.a.", "n.a", "n/k", "nil", "-", "--", "---", "\u2014", "\u2013", "?", "??",
    "???", "unknown", "unk", "tbd", "tba", "tbc", "not reported", "not stated", "not disclosed", "undisclosed",
    "not available", "unavailable", "not known", "missing",
})


def is_placeholder(text: object) -> bool:
    """Whether a cell's text only says that the figure is not known ("N/A", "unknown", "-", "TBD")."""
    return isinstance(text, str) and text.strip().lower() in PLACEHOLDERS


class _Reject(Exception):
    """Internal: the unit text is not valid for a kind. ``specific`` reasons get no "looks like" hint."""

    def __init__(self, reason: str, specific: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.specific = specific


# A unit conversion: value_canonical = value * 10**exp10 * num / den. Powers of ten are kept apart and
# folded into the decimal exponent of the number's text, so ``65.2B`` is float("65.2e9"), exactly 65.2e9.
_Scale = tuple[int, int, int]
_ONE: _Scale = (0, 1, 1)

# --------------------------------------------------------------------------------------------------------
# Normalization of the text before the number is read.

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
# ``10²³`` -> ``10^23``; an explicit caret before superscripts (``10^²³``) is absorbed.
_SUPERSCRIPT_RE = re.compile(r"\^?([⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]+)")
# Unicode minus and hyphens/dashes that show up in pasted text (``PF‑days`` with a non-breaking hyphen).
_DASHES = str.maketrans({"\u2212": "-", "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-"})
_SPACES_RE = re.compile(r"\s+")

# Leading qualifiers: the value is still the number written ("~175B", "over 2 trillion tokens", "> 1T").
# Word qualifiers must not run into letters, so "overall" is not "over" + "all".
_QUALIFIER_RE = re.compile(
    r"(?:[~≈≃∼]|>=|<=|[><≥≤]"
    r"|(?:(?:slightly|a little|a bit|somewhat)\s+)?"  # "slightly more than one month" (UL2, Tay et al. 2022)
    r"(?:about|approx|approximately|around|roughly|circa|ca|nearly|almost|over|under|more than|less than"
    r"|fewer than|no more than|no less than|not more than|at least|at most|up to|upwards of|just over|just under"
    r"|within|below|above|exceeds|exceeded|exceeding|surpasses|surpassing|in excess of|est|estimated)\.?(?![a-z]))\s*",
    re.IGNORECASE,
)
# The qualifiers of a bound: the figure is a limit, not the value ("less than 3K GPU-weeks", "15T+ tokens").
_UPPER_WORDS = r"under|less than|fewer than|no more than|not more than|at most|up to|within|below|just under"
# Verbs too, as papers write them ("exceeds 180 TFLOPS": Baichuan 2, Sec. 2.6).
_LOWER_WORDS = (r"over|more than|no less than|at least|upwards of|above|exceeds|exceeded|exceeding|surpasses"
                r"|surpassing|in excess of|just over")
_PLUS_AFTER = r"^[^+]*[0-9.]\s*[A-Za-z%]*\+(?:\s|$)"  # "15T+ tokens", "15+ trillion", "40%+"
#: A "+" after the scale word or letter that follows a number ("T+ tokens"), as :data:`_PLUS_AFTER` finds it.
_SCALE_PLUS_RE = re.compile(r"^([A-Za-z]+)\+(?=\s|$)")
#: Words that may come before a bound's words and change nothing of its side ("slightly more than").
_SLIGHTLY = r"(?:(?:slightly|a little|a bit|somewhat)\s+)?"
_UPPER_BOUND_RE = re.compile(rf"^\s*(?:<=?|≤|{_SLIGHTLY}(?:{_UPPER_WORDS})(?![a-z]))", re.IGNORECASE)
_LOWER_BOUND_RE = re.compile(rf"^\s*(?:>=?|≥|{_SLIGHTLY}(?:{_LOWER_WORDS})(?![a-z]))|{_PLUS_AFTER}", re.IGNORECASE)
#: Either bound, in the syntax of Arrow's regular expressions (RE2: no lookahead), to find a column's cells that
#: write one without a Python call per cell (case-insensitive).
BOUND_RE2 = rf"^\s*(?:<|>|≤|≥|{_SLIGHTLY}(?:{_UPPER_WORDS}|{_LOWER_WORDS})\b)|{_PLUS_AFTER}"


def bound_of(text: object) -> str | None:
    """``"upper"`` or ``"lower"`` when a cell writes its figure as a bound ("less than 400K GPU-hours", "up to 16",
    "over 2T tokens", "15T+"), else None. The number written is still read as the value (:func:`parse_value`);
    this says that it is a limit."""
    if not isinstance(text, str):
        return None
    if _UPPER_BOUND_RE.match(text):
        return "upper"
    if _LOWER_BOUND_RE.match(text):
        return "lower"
    return None


_CURRENCY_RE = re.compile(r"[$€£¥]")

# The number: optional sign, digits with optional "," thousands separators (groups of exactly three), an
# optional fraction and an optional e-exponent. ASCII digits only ([0-9], not \d, which matches any script).
_NUM_RE = re.compile(
    r"(?P<sign>[+-]?)"
    r"(?:(?P<int>[1-9][0-9]{0,2}(?:,[0-9]{3})+(?![0-9,])|[0-9]+)(?:\.(?P<frac>[0-9]*))?|\.(?P<frac2>[0-9]+))"
    r"(?:[eE](?P<exp>[+-]?[0-9]+))?"
)
# "× 10^23", "x 10^23", "*10**23", "·10^23" after a mantissa.
_TIMES_TEN_RE = re.compile(r"\s*[×xX*·⋅∙]\s*10\s*(?:\^|\*\*)\s*(?P<exp>[+-]?[0-9]+)")
# "2.1 x 10e21" (SantaCoder's model card): 10e21 is 1e22, but the writer most likely meant × 10^21. Either reading
# may be wrong by 10x, so the cell is refused with both.
_TIMES_TEN_E_RE = re.compile(r"\s*[×xX*·⋅∙]\s*10\s*[eE]\s*(?P<exp>[+-]?[0-9]+)")
# "10^24", "2^30": an integer base raised to a power.
_POWER_RE = re.compile(r"\s*(?:\^|\*\*)\s*(?P<exp>[+-]?[0-9]+)")

# --------------------------------------------------------------------------------------------------------
# Unit tables.

# Count multipliers. "G" is refused for counts: it reads as giga but is also the G of GB or GPU, and
# reports say B/billion for counts. Case-insensitive for counts (``7b``, ``125m`` name model sizes).
_COUNT_SCALE: dict[str, int] = {
    "k": 3, "thousand": 3, "m": 6, "mn": 6, "million": 6, "b": 9, "bn": 9, "billion": 9,
    "t": 12, "tn": 12, "trillion": 12, "quadrillion": 15,
}
_COUNT_SCALE_RE = re.compile(
    r"(?P<s>quadrillion|trillion|billion|million|thousand|bn|mn|tn|[kmbtg])(?![a-z0-9])\s*-?\s*", re.IGNORECASE)
# A hyphen between a number and a multiplier word ("12-billion"): never before a letter ("7-B" is no figure).
_HYPHEN_WORD_SCALE_RE = re.compile(r"-(?=(?:quadrillion|trillion|billion|million|thousand)(?![a-z0-9]))",
                                   re.IGNORECASE)
# Word-only multipliers for the kinds whose letters are SI prefixes attached to the unit (FLOP, bytes).
_WORD_SCALE_RE = re.compile(r"(?P<s>quadrillion|trillion|billion|million|thousand)(?![a-z0-9])\s*", re.IGNORECASE)
# Accelerator-hours: "k"/"K", "M", "B"/"b", "T"/"t" and the words; "mn", "bn", "tn". A lowercase "m" alone could be
# minutes: it is refused (see _descriptor_problem), never read as a bare number.
_HOURS_SCALE_RE = re.compile(
    r"(?P<s>(?i:quadrillion|trillion|billion|million|thousand)|mn|bn|tn|[kKMBbTtG])(?![A-Za-z0-9])\s*-?\s*")

# SI prefixes (BIPM SI Brochure, 9th ed.; ronna/quetta added by the 27th CGPM, 2022). Matched
# case-insensitively for FLOP: "mFLOP" can only mean mega in a training report.
_SI_PREFIX: dict[str, int] = {
    "k": 3, "kilo": 3, "m": 6, "mega": 6, "g": 9, "giga": 9, "t": 12, "tera": 12, "p": 15, "peta": 15,
    "e": 18, "exa": 18, "z": 21, "zetta": 21, "y": 24, "yotta": 24, "r": 27, "ronna": 27, "q": 30, "quetta": 30,
}
_SI_PREFIX_PATTERN = r"quetta|ronna|yotta|zetta|exa|peta|tera|giga|mega|kilo|[kmgtpezyrq]"

_FLOP_RE = re.compile(rf"(?:(?P<p>{_SI_PREFIX_PATTERN})[\s\-]?)?flops?", re.IGNORECASE)
_PER_SECOND = r"\s*(?:/|per)\s*(?:s|secs?|seconds?)"
# A rate sustained for a time: "PF-days", "petaflop/s-days", "pfs-days", "PFLOP/s-day", "TFLOP/s-hours".
# One petaflop/s-day is 1e15 FLOP/s for 86,400 s = 8.64e19 FLOP (Amodei & Hernandez, "AI and Compute",
# OpenAI 2018; GPT-3's 3640 PF-days in Brown et al. 2020, Appendix D).
_RATE_TIME_RE = re.compile(
    rf"(?:(?P<p>{_SI_PREFIX_PATTERN})[\s\-]?)?(?P<f>flops?|f)(?:{_PER_SECOND}|s)?[\s\-]*"
    r"(?P<t>days?|hours?|hrs?)",
    re.IGNORECASE,
)
_BARE_PREFIX_RE = re.compile(rf"(?P<p>{_SI_PREFIX_PATTERN})(?P<f>[\s\-]?f)?", re.IGNORECASE)

_RATE_RE = re.compile(rf"(?:(?P<p>{_SI_PREFIX_PATTERN})[\s\-]?)?flops?(?:{_PER_SECOND})?", re.IGNORECASE)
_RATE_F_RE = re.compile(rf"(?P<p>{_SI_PREFIX_PATTERN})[\s\-]?f{_PER_SECOND}", re.IGNORECASE)
# Accelerator words: used to accept "per GPU" on per-chip rates and to refuse it on whole-cluster rates.
_DEVICE_WORDS = r"gpus?|chips?|devices?|accelerators?|tpus?|cores?|nodes?|workers?|replicas?|hosts?"
_PER_DEVICE_RE = re.compile(rf"(?:/|\bper\b)\s*(?:an?\s+)?(?:{_DEVICE_WORDS})\b", re.IGNORECASE)
_PER_CHIP_SUFFIX_RE = re.compile(r"\s*(?:/|per)\s*(?:an?\s+)?(?:gpus?|chips?|devices?|accelerators?|tpus?)$",
                                 re.IGNORECASE)


def per_device_rate(text: object) -> str | None:
    """A rate written per accelerator ("3,000 tokens/s/GPU", "3k tokens per second per GPU"): the text without
    its per-accelerator suffix (the rate of one accelerator), else None."""
    if not isinstance(text, str):
        return None
    m = _PER_CHIP_SUFFIX_RE.search(text.strip())
    return text.strip()[:m.start()] if m and m.start() > 0 else None


_TOKENS_RATE_RE = re.compile(
    r"(?:tokens?|toks?)\s*(?:/|per)\s*(?P<t>s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?)", re.IGNORECASE)
_PER_TIME_DEN: dict[str, int] = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
                                 "min": 60, "mins": 60, "minute": 60, "minutes": 60,
                                 "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
                                 "day": 86400, "days": 86400}

# Bytes: decimal SI prefixes (80 GB = 80e9 B) and IEC binary prefixes (80 GiB = 80 * 2**30 B; IEC 80000-13).
_BYTES_RE = re.compile(r"(?P<p>[kmgtpe])(?P<i>i?)b|b", re.IGNORECASE)
_BYTES_WORD_RE = re.compile(
    r"(?P<p>kilo|mega|giga|tera|peta|exa|kibi|mebi|gibi|tebi|pebi|exbi)?\s?bytes?", re.IGNORECASE)
_BITS_RE = re.compile(r"[KMGTPE]i?b|b|(?:[a-z]*)bits?", re.IGNORECASE)
_MEMORY_SUFFIX_RE = re.compile(r"\s+(?:of\s+)?(?:hbm[0-9a-z]*|gddr[0-9a-z]*|vram|dram|ram|memory)$",
                               re.IGNORECASE)
_BYTE_PREFIX_POWER: dict[str, int] = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_BYTE_WORD_PREFIX: dict[str, tuple[int, int]] = {  # name -> (decimal exponent, binary power of 1024)
    "kilo": (3, 0), "mega": (6, 0), "giga": (9, 0), "tera": (12, 0), "peta": (15, 0), "exa": (18, 0),
    "kibi": (0, 1), "mebi": (0, 2), "gibi": (0, 3), "tebi": (0, 4), "pebi": (0, 5), "exbi": (0, 6),
}

_PERCENT_RE = re.compile(r"%|percent|per\s?cent|pct", re.IGNORECASE)
#: A utilization's own name beside its figure, as papers write it ("12.8 % MFU", "MFU 40%", "56.5% FLOPS
#: utilization": LaMDA, Sec. 10; "40 % (MFU)"). The field says which utilization it is; a cell that names the
#: other one (an MFU field saying HFU) is refused by the reader (:mod:`audit.reading.normalize`).
_UTILIZATION_NAME = r"(?:mfu|hfu|(?:(?:model|hardware)\s+)?flops?\s+utili[sz]ation|utili[sz]ation)"
_UTILIZATION_AFTER_RE = re.compile(rf"\s*(?:\(\s*{_UTILIZATION_NAME}\s*\)|{_UTILIZATION_NAME})$", re.IGNORECASE)
_UTILIZATION_BEFORE_RE = re.compile(rf"{_UTILIZATION_NAME}\s*(?:of\b|[:=])?\s*", re.IGNORECASE)

# Durations. A month is 1/12 of a Julian year, and a year is the Julian year of 365.25 days (IAU), the
# usual convention for converting "3.5 months" of training. Each entry is (num, den) in days.
_DAYS_UNITS: dict[str, tuple[int, int]] = {}
for _names, _ratio in (
    (("d", "day", "days"), (1, 1)),
    (("w", "wk", "wks", "week", "weeks"), (7, 1)),
    (("mo", "mos", "month", "months"), (36525, 1200)),
    (("y", "yr", "yrs", "year", "years"), (36525, 100)),
    (("h", "hr", "hrs", "hour", "hours"), (1, 24)),
    (("min", "mins", "minute", "minutes"), (1, 1440)),
    (("s", "sec", "secs", "second", "seconds"), (1, 86400)),
):
    for _n in _names:
        _DAYS_UNITS[_n] = _ratio
_DAYS_QUALIFIERS = frozenset({"wall", "clock", "wallclock", "calendar", "training", "elapsed"})
#: A word that names an accelerator or a count of them before a unit of time ("GPU", "TPU", "chip", "node",
#: "A100", "v4", "MI250X"): what makes "days" accelerator time.
_DEVICE_LIKE_RE = re.compile(rf"{_DEVICE_WORDS}|npus?|ipus?|hpus?|[a-z]\d|\d[a-z]")

# Accelerator-time units, in hours. A GPU-year is 365.25 * 24 = 8766 GPU-hours (Julian year, as above).
_HOURS_UNITS: dict[str, tuple[int, int]] = {}
for _names, _ratio in (
    (("h", "hr", "hrs", "hour", "hours"), (1, 1)),
    (("d", "day", "days"), (24, 1)),
    (("wk", "wks", "week", "weeks"), (168, 1)),
    (("month", "months"), (36525 * 24, 1200)),
    (("y", "yr", "yrs", "year", "years"), (8766, 1)),
    (("min", "mins", "minute", "minutes"), (1, 60)),
):
    for _n in _names:
        _HOURS_UNITS[_n] = _ratio
del _names, _ratio, _n

# Words that may end a count ("70B parameters", "2,048 GPUs"). Words of text are not tokens.
_COUNT_UNITS = frozenset({
    "token", "tokens", "tok", "toks", "parameter", "parameters", "param", "params", "weights",
    "gpu", "gpus", "chip", "chips", "accelerator", "accelerators", "device", "devices", "tpu", "tpus",
})
# Accelerator-hours units that are not accelerator-hours; each maps to the reason shown to the user.
_NODE_REASON = ("node-hours are not accelerator-hours: a node holds several GPUs; "
                "multiply by the GPUs per node")
_BAD_HOUR_WORDS: dict[str, str] = {
    **{w: _NODE_REASON for w in ("node", "nodes", "server", "servers", "host", "hosts", "machine", "machines",
                                 "pod", "pods")},
    **{w: ("core-hours are not chip-hours: a TPU v2/v3 chip has two cores; convert to chip-hours")
       for w in ("core", "cores")},
    **{w: "CPU-hours are not accelerator-hours" for w in ("cpu", "cpus")},
    **{w: ("wall-clock hours are not accelerator-hours: multiply by the number of accelerators")
       for w in ("wall", "clock", "wallclock")},
}
_WORD_TOKEN_RE = re.compile(r"[A-Za-z0-9.]+")
#: Core-time of a named TPU generation: "TPUv3-core-days", "TPU v3 core-hours", "TPU-v4 core days".
_TPU_CORE_TIME_RE = re.compile(r"(?:google\s+)?(?:cloud\s+)?tpu[\s-]*(?P<gen>v\d+[a-z]*)[\s-]+(?:tensor[\s-]*)?cores?"
                               r"[\s-]+[a-z]+", re.IGNORECASE)
_SPLIT_RE = re.compile(r"[\s\-]+")

# Words that may not stand between a number and its unit as a description ("1M H100 GPU-hours" describes the
# hours; "2.788m GPU-hours", "5 min GPU-hours", "3 x 1024 GPUs" and "140 billion B tokens" hold a multiplier, a
# unit or a product, which a description would silently drop, leaving the bare number).
_NOT_DESCRIPTORS = frozenset({*_COUNT_SCALE, "g", *_HOURS_UNITS, *_DAYS_UNITS, "x", "times", "by"})
_PRODUCT_RE = re.compile(r"[x×*·⋅∙]|times|by", re.IGNORECASE)
_NUMERIC_TOKEN_RE = re.compile(r"[0-9.,]+")


#: Multipliers this does not read (plurals, other languages' and finance abbreviations, SI prefixes as words):
#: before a unit they are refused, never dropped as a description ("2.788 mln GPU-hours" is not 2.788 hours).
_UNREAD_MULTIPLIERS = frozenset({
    "thousands", "millions", "billions", "trillions", "quadrillions", "hundred", "hundreds", "dozen", "dozens",
    "lakh", "lakhs", "lac", "lacs", "crore", "crores", "cr", "mio", "mrd", "mld", "mln", "mlns", "bln", "mil",
    "mill", "mills", "bil", "bill", "bills", "tril", "trn", "mm", "kk", "kilo", "mega", "giga", "tera", "peta",
    "exa", "ki", "mi", "gi", "ti", "milliard", "milliards", "billiard", "billiards",
})
#: Short words that may stand right after the number as a description ("1M GPU hours", "2,048 AMD MI250X GPUs",
#: "1.4T text tokens"). Any other word of four letters or fewer there stands where a multiplier goes and is
#: refused: an abbreviation this does not know ("mln", "Mio", "e") must not be dropped, leaving the bare number.
_SHORT_DESCRIPTIONS = frozenset({
    "gpu", "gpus", "tpu", "tpus", "npu", "npus", "ipu", "ipus", "hpu", "hpus", "xpu", "xpus", "chip", "amd",
    "aws", "sxm", "pcie", "rtx", "gtx", "dgx", "hgx", "nvl", "text", "code", "web", "bpe", "data", "raw", "net",
    "used", "real", "new", "all", "of", "seen", "moe",
})


#: Small numbers written as words, as press releases and blog posts give durations and counts ("about five weeks",
#: "a month", "two thousand GPUs"): the word at the start of a cell, before a space.
_NUMBER_WORDS: dict[str, int] = {
    word: i for i, word in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                      "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                      "seventeen", "eighteen", "nineteen", "twenty"))} | {
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "a": 1, "an": 1}
#: "a"/"an" is one only before a unit of time or a multiplier ("a month", "an hour", "a million"; not "a few weeks").
_NUMBER_WORD_RE = re.compile(
    r"(" + "|".join(w for w in _NUMBER_WORDS if w not in ("a", "an")) + r")(?= [a-z])"
    r"|(an?)(?= (?:hour|day|week|fortnight|month|year|thousand|million|billion|trillion)s?\b)", re.IGNORECASE)


#: "half a day", "half an hour", "half a million": a half of one unit.
_HALF_OF_ONE_RE = re.compile(r"^half an? (?=[a-z])", re.IGNORECASE)
#: "two and a half weeks", "2 and a half days": a number and a half, before its unit.
_AND_A_HALF_RE = re.compile(r"^(?P<n>[0-9]+|[a-z]+) and a half (?=[a-z])", re.IGNORECASE)
#: "a day and a half", "one month and a half": one unit and a half, the half after it.
_UNIT_AND_A_HALF_RE = re.compile(r"^(?:an?|one) (?P<unit>[a-z]+) and a half$", re.IGNORECASE)


def _with_halves(s: str) -> str:
    """A cell's halves written in words, in digits: "half a day" is "0.5 day", "two and a half weeks" "2.5 weeks",
    "a day and a half" "1.5 day" (MPT-1.3B's model card: "about half a day" on 440 A100s). Any other text as it
    is: the reader refuses what it cannot read."""
    if (half := _HALF_OF_ONE_RE.match(s)) is not None:
        return f"0.5 {s[half.end():]}"
    if (half := _AND_A_HALF_RE.match(s)) is not None:
        n = half.group("n")
        whole = int(n) if n.isdigit() else _NUMBER_WORDS.get(n.lower())
        if whole is not None and n.lower() not in ("a", "an"):
            return f"{whole}.5 {s[half.end():]}"
    if (half := _UNIT_AND_A_HALF_RE.match(s)) is not None:
        return f"1.5 {half.group('unit')}"
    return s


def _descriptor_problem(tokens: list[str], unit_kind: str, *, after_number: bool = True) -> None:
    """Refuse words before the unit that are a multiplier, a unit, a number, a product or a rate (see
    _NOT_DESCRIPTORS and _UNREAD_MULTIPLIERS); ``after_number``: the first word stands right after the number (or
    its multiplier), where a multiplier goes, and a short word there must be a known description."""
    for i, tok in enumerate(tokens):
        low = tok.lower()
        if _PRODUCT_RE.fullmatch(tok) or (_NUMERIC_TOKEN_RE.fullmatch(tok) and i > 0
                                          and _PRODUCT_RE.fullmatch(tokens[i - 1])):
            raise _Reject("a product of figures ('3 x 1024') is not read; write the total", specific=True)
        if _NUMERIC_TOKEN_RE.fullmatch(tok):
            raise _Reject(f"a second number ({tok!r}) before the unit is not read; write one number", specific=True)
        if tok == "m" and unit_kind == "hours":
            raise _Reject("'m' is ambiguous here (million or minutes?); write M or million (2.788M GPU-hours), "
                          "or min", specific=True)
        if low in _NOT_DESCRIPTORS:
            what = "a multiplier" if low in _COUNT_SCALE or low == "g" else "a unit"
            raise _Reject(f"{tok!r} before the unit is {what} that cannot be read there; write one multiplier "
                          f"right after the number", specific=True)
        if low in _UNREAD_MULTIPLIERS:
            raise _Reject(f"{tok!r} before the unit is a multiplier that is not read; write k, M, B or T (or "
                          f"thousand, million, billion, trillion) right after the number", specific=True)
        if low in _NUMBER_WORDS and low not in ("a", "an") or low in ("point", "half", "quarter"):
            # "three point five days": the number in words goes on past the first word; read as 3 it would be
            # "point five"-days of accelerator time, 72 hours.
            raise _Reject(f"a number in words ({tok!r}) before the unit is not read; write it in digits",
                          specific=True)
        if low == "per":
            what = "accelerator-hours" if unit_kind == "hours" else "a count"
            raise _Reject(f"a rate ('... per ...') is not {what}; give the total", specific=True)
        if i == 0 and after_number and tok.isalpha() and len(tok) <= 4 and low not in _SHORT_DESCRIPTIONS:
            raise _Reject(f"{tok!r} right after the number is not a multiplier this reads (k, M, B, T, thousand, "
                          f"million, billion, trillion) nor a known description; write the number with one of "
                          f"those, or without the word", specific=True)


def _tokens(rest: str) -> list[str]:
    """Split unit text on spaces and hyphens: ``H100 GPU-hours`` -> ``['H100', 'GPU', 'hours']``."""
    return [t for t in _SPLIT_RE.split(rest) if t]


def _count_scale(rest: str, pattern: re.Pattern[str]) -> tuple[int, str]:
    """Strip a leading count multiplier (``B``, ``million``, or a word joined by a hyphen: ``12-billion``) and return
    (power of ten, remaining text)."""
    m = pattern.match(rest)
    if m is None and (word := _HYPHEN_WORD_SCALE_RE.match(rest)):  # "12-billion parameters" (DALL-E's abstract)
        m = pattern.match(rest[word.end():])
        rest = rest[word.end():]
    if not m:
        return 0, rest
    s = m.group("s")
    if s in ("g", "G"):
        raise _Reject("'G' is ambiguous for a count (giga? GB? GPU?); write B or billion", specific=True)
    return _COUNT_SCALE[s.lower()], rest[m.end():]


# --------------------------------------------------------------------------------------------------------
# Per-kind unit readers: text after the number -> scale, or _Reject.

#: An accelerator's model as a unit of count: "H100s", "A100", "MI300Xs", "B200s" (letters, three or four digits, a
#: letter, a plural "s"; not "e23", an exponent written apart).
_PLURAL_MODEL_RE = re.compile(r"(?!e)[a-z]{1,3}\d{3,4}[a-z]?s?")


#: The rest of a mixture-of-experts name after its expert count: "x7B" of "8x7B", "x3.8B" of "16x3.8B".
_EXPERTS_TIMES_SIZE_RE = re.compile(r"^\s*[x×]\s*[0-9]+(?:\.[0-9]+)?\s*[kmbt]\b", re.IGNORECASE)


#: Gigatokens, as TII writes its token counts ("~ 5,500 GT": Falcon Mamba 7B's model card; "gigatokens").
_GIGATOKENS_RE = re.compile(r"(?:GT|(?i:gtok(?:en)?s?|giga[\s-]?tok(?:en)?s?))(?=\s|$)")


def _unit_count(rest: str) -> _Scale:
    if (giga := _GIGATOKENS_RE.match(rest)) is not None:  # "5,500 GT (tokens)" reads as "5,500 B (tokens)"
        rest = "B" + rest[giga.end():]
    exp, rest = _count_scale(rest, _COUNT_SCALE_RE)
    toks = _tokens(rest)
    if not toks:
        return (exp, 1, 1)
    lowered = [t.lower() for t in toks]
    if "words" in lowered or "word" in lowered:
        raise _Reject("words are not tokens (a tokenizer gives roughly 1.3 tokens per English word); "
                      "give the token count", specific=True)
    if lowered[-1] in ("node", "nodes"):
        raise _Reject("a node holds several accelerators; give the accelerator count", specific=True)
    if lowered[-1] in ("core", "cores"):
        # "2048 TPU v3 cores" (GShard, Switch Transformer): TensorCores, two to a TPU v2-v4 chip.
        raise _Reject("cores are not chips: a TPU v2/v3/v4 chip has two TensorCores; give the chips, or the "
                      "hardware as a slice ('TPU v3-2048')", specific=True)
    if lowered[-1] in ("total", "active", "activated"):
        # "6.9B total", "1.3B active" (OLMoE): which count it is goes by the field, not by a word in the cell.
        raise _Reject(f"give the figure alone: the total parameters as params, the active ones as "
                      f"active_params (the word {toks[-1]!r} is not read)", specific=True)
    if _EXPERTS_TIMES_SIZE_RE.match(rest):
        # Mixtral's "8x7B" has 46.7B parameters, not 56B: the experts share the attention and embeddings.
        raise _Reject("experts × expert size is not a parameter count (Mixtral 8x7B has 46.7B); give the total "
                      "as params and the active count as active_params", specific=True)
    # Up to three descriptive words before the unit: "1.4T training tokens", "6,144 TPU v4 chips". An
    # accelerator's model in the plural is a unit too ("1,024 H100s", "64 MI300Xs"), as "GPUs" is.
    unit = lowered[-1] in _COUNT_UNITS or _PLURAL_MODEL_RE.fullmatch(lowered[-1])
    if unit and len(toks) == 2 and lowered[0] in ("x", "×"):
        return (exp, 1, 1)  # "8x A100", "8 × H100": eight of them, as a hardware cell's "256x A100" counts
    if unit and len(toks) <= 4 and all(_WORD_TOKEN_RE.fullmatch(t) for t in toks[:-1]):
        _descriptor_problem(toks[:-1], "count")
        return (exp, 1, 1)
    if toks and _PRODUCT_RE.fullmatch(toks[0]):
        _descriptor_problem(toks, "count")
    raise _Reject(f"unknown unit {rest.strip()!r}")


def _unit_flop(rest: str) -> _Scale:
    if not rest:
        return _ONE
    exp = 0
    m = _WORD_SCALE_RE.match(rest)
    if m:
        exp, rest = _COUNT_SCALE[m.group("s").lower()], rest[m.end():]
        if not rest:
            return (exp, 1, 1)
    m = _FLOP_RE.fullmatch(rest)
    if m:
        p = m.group("p")
        return (exp + (_SI_PREFIX[p.lower()] if p else 0), 1, 1)
    m = _RATE_TIME_RE.fullmatch(rest)
    if m and (m.group("p") or m.group("f").lower() != "f"):
        p = m.group("p")
        t = m.group("t").lower()
        seconds = 86400 if t.startswith("d") else 3600
        return (exp + (_SI_PREFIX[p.lower()] if p else 0), seconds, 1)
    m = _BARE_PREFIX_RE.fullmatch(rest)
    if m:
        what = rest.strip()
        if m.group("f"):
            raise _Reject(f"{what!r} is ambiguous (FLOP or FLOP/s?); write e.g. PFLOP or PF-days", specific=True)
        raise _Reject(f"a bare {what!r} is not a unit of compute; write e.g. {what}FLOP or PF-days",
                      specific=True)
    raise _Reject(f"unknown unit {rest!r}")


def _unit_flops_rate(rest: str) -> _Scale:
    if not rest:
        return _ONE
    # The flops_rate fields are per accelerator (achieved/peak FLOP/s per chip), so "per GPU" is accepted.
    m = _PER_CHIP_SUFFIX_RE.search(rest)
    if m:
        rest = rest[:m.start()]
        if not rest:
            return _ONE
    exp = 0
    m = _WORD_SCALE_RE.match(rest)
    if m:
        exp, rest = _COUNT_SCALE[m.group("s").lower()], rest[m.end():]
        if not rest:
            return (exp, 1, 1)
    # "TFLOPS", "TFLOP/s", "TFLOPs/s", and "150 TFLOPs" (plural FLOPs read as a rate in a rate field).
    m = _RATE_RE.fullmatch(rest) or _RATE_F_RE.fullmatch(rest)
    if m:
        p = m.group("p")
        return (exp + (_SI_PREFIX[p.lower()] if p else 0), 1, 1)
    raise _Reject(f"unknown unit {rest!r}")


#: Tokens per second as benchmark tables abbreviate them: "T/s" (llm-foundry's header "T/s/GPU"; a T alone before
#: "/s" in a token throughput is tokens, not tera: a trillion tokens a second is no training run's rate) and "tps".
_TOKENS_T_RE = re.compile(r"(?:^|(?<=\s))t(?=\s*/\s*(?:s|secs?|seconds?)$)", re.IGNORECASE)
_TOKENS_TPS_RE = re.compile(r"(?:^|(?<=\s))tps$", re.IGNORECASE)


def _unit_tokens_rate(rest: str) -> _Scale:
    rest = _TOKENS_TPS_RE.sub("tokens/s", _TOKENS_T_RE.sub("tokens", rest))
    exp, rest = _count_scale(rest, _COUNT_SCALE_RE)
    if not rest:
        return (exp, 1, 1)
    m = _TOKENS_RATE_RE.fullmatch(rest)
    if m:
        return (exp, 1, _PER_TIME_DEN[m.group("t").lower()])
    m = _PER_DEVICE_RE.search(rest)
    if m:
        word = m.group(0).lstrip("/").strip().lower().removeprefix("per").strip()
        if re.fullmatch(r"(?:an?\s+)?(?:nodes?|workers?|replicas?|hosts?)", word):
            # A node's, worker's or replica's rate: how many accelerators each holds is not in the claim.
            raise _Reject(f"this is a rate per {word.split()[-1].rstrip('s')}, which holds several accelerators; "
                          f"give the whole cluster's tokens/s, or one accelerator's (tokens/s/GPU)", specific=True)
        raise _Reject("this is a per-accelerator rate; the field is whole-cluster throughput, "
                      "so multiply by the number of chips", specific=True)
    raise _Reject(f"unknown unit {rest!r}")


def _unit_bytes(rest: str) -> _Scale:
    if not rest:
        return _ONE
    m = _MEMORY_SUFFIX_RE.search(rest)
    if m and m.start() > 0:
        rest = rest[:m.start()]
    m = _BYTES_RE.fullmatch(rest)
    # "Gb", "Mib", "b" are bits by convention (lowercase b); memory is given in bytes.
    if m and rest[-1] == "b" and (not m.group("p") or m.group("p").isupper()):
        raise _Reject("a lowercase 'b' means bits; memory is given in bytes (GB, GiB)", specific=True)
    if m:
        p = m.group("p")
        if not p:
            return _ONE
        power = _BYTE_PREFIX_POWER[p.lower()]
        if m.group("i"):
            return (0, 1024 ** power, 1)
        return (3 * power, 1, 1)
    m = _BYTES_WORD_RE.fullmatch(rest)
    if m:
        p = m.group("p")
        if not p:
            return _ONE
        dec, binary = _BYTE_WORD_PREFIX[p.lower()]
        return (dec, 1024 ** binary, 1)
    if _BITS_RE.fullmatch(rest):
        raise _Reject("bits are not bytes; give memory in bytes (GB, GiB)", specific=True)
    raise _Reject(f"unknown unit {rest!r}")


def _unit_fraction(rest: str) -> _Scale:
    rest = _UTILIZATION_AFTER_RE.sub("", rest).strip()  # "% MFU", "% (MFU)"
    if not rest:
        return _ONE
    if _PERCENT_RE.fullmatch(rest):
        return (-2, 1, 1)
    raise _Reject(f"unknown unit {rest!r}")


def _unit_days(rest: str) -> _Scale:
    toks = _tokens(rest)
    if not toks:
        return _ONE
    lowered = [t.lower() for t in toks]
    if lowered[-1] == "m":
        raise _Reject("'m' is ambiguous (months or minutes?); write months or min", specific=True)
    if lowered[-1] in _DAYS_UNITS:
        desc = lowered[:-1]
        if all(d in _DAYS_QUALIFIERS for d in desc):
            return (0, *_DAYS_UNITS[lowered[-1]])
        _descriptor_problem(toks[:-1], "days", after_number=False)
        # Accelerator time names a device ("GPU days", "A100-days", "TPU v4 days"); other words before the unit
        # ("3 point five days", "3 foo days") are no unit the reader knows, not accelerator time.
        if len(desc) <= 3 and all(_WORD_TOKEN_RE.fullmatch(t) for t in toks[:-1]) \
                and any(_DEVICE_LIKE_RE.search(d) for d in desc):
            raise _Reject(f"{rest.strip()!r} is accelerator time, not a wall-clock duration; "
                          "give the training duration in days", specific=True)
    raise _Reject(f"unknown unit {rest.strip()!r}")


def _unit_hours(rest: str) -> _Scale:
    exp, rest = _count_scale(rest, _HOURS_SCALE_RE)
    toks = _tokens(rest)
    if not toks:
        return (exp, 1, 1)
    lowered = [t.lower() for t in toks]
    m = _RATE_TIME_RE.fullmatch(rest.strip())
    if m and (m.group("p") or m.group("f").lower() != "f"):
        raise _Reject(f"{rest.strip()!r} is an amount of compute (FLOP), not accelerator-hours", specific=True)
    cores = _TPU_CORE_TIME_RE.fullmatch(rest.strip())
    if cores is not None and lowered[-1] in _HOURS_UNITS:
        # "2.5k TPUv3-core-days" (ViT, Dosovitskiy et al. 2021, Table 2): TensorCore-time of a named TPU, whose
        # chip has a known number of cores; a chip-hour is that many core-hours.
        from audit.catalog import TPU_CORES_PER_CHIP

        per_chip = TPU_CORES_PER_CHIP.get(cores.group("gen").lower())
        if per_chip:
            num, den = _HOURS_UNITS[lowered[-1]]
            return (exp, num, den * per_chip)
    for t in lowered:
        if t in _BAD_HOUR_WORDS:
            raise _Reject(_BAD_HOUR_WORDS[t], specific=True)
    # Any accelerator name may qualify the hours: GPU-hours, TPU-hours, chip-hours, A100-hours, H100 GPU hours.
    if lowered[-1] in _HOURS_UNITS and len(toks) <= 4 and all(_WORD_TOKEN_RE.fullmatch(t) for t in toks[:-1]):
        _descriptor_problem(toks[:-1], "hours")
        num, den = _HOURS_UNITS[lowered[-1]]
        return (exp, num, den)
    if toks[0] == "m" or _PRODUCT_RE.fullmatch(toks[0]):
        _descriptor_problem(toks, "hours")
    raise _Reject(f"unknown unit {rest.strip()!r}")


# Energy, power, emissions and money (issue 13). Canonical units: W, MWh, t CO2e, USD, USD per chip-hour,
# kg CO2e per kWh (= t CO2e per MWh).
_MONEY_KINDS = frozenset({"usd", "usd_rate"})
_DOLLAR_RE = re.compile(r"^(?:US\s?\$|\$|USD\s+(?=[0-9.]))", re.IGNORECASE)
_POWER_PREFIX: dict[str, int] = {"": 0, "k": 3, "kilo": 3, "m": 6, "mega": 6, "g": 9, "giga": 9}
_WATT_RE = re.compile(r"(?P<p>[kKMG]|kilo|mega|giga)?(?:W|watts?)", re.IGNORECASE)
_ENERGY_RE = re.compile(r"(?P<p>[kKMGT]|kilo|mega|giga|tera)?(?:Wh|watt[\s-]?hours?)", re.IGNORECASE)
_JOULE_RE = re.compile(r"(?P<p>[kMGTPE])?J|(?P<w>kilo|mega|giga|tera|peta|exa)?joules?", re.IGNORECASE)
_CO2_SUFFIX = r"(?i:\s*(?:of\s+)?(?:CO2|CO₂)(?:[\s-]?(?:e|eq|equivalent))?)?"
_CO2_RE = re.compile(rf"(?P<u>g|kg|t|kt|Mt|(?i:tonnes?|tons?|metric\s+tons?|kilograms?|grams?|lbs?|pounds?))"
                     rf"{_CO2_SUFFIX}")
#: Pounds: 1 lb = 0.45359237 kg exactly (international yard and pound, 1959), 4.5359237e-4 t (Strubell et al. 2019,
#: Table 3, give CO2eq in lbs).
_POUND: tuple[int, int, int] = (-11, 45359237, 1)
_CO2_SCALE: dict[str, tuple[int, int, int]] = {"g": (-6, 1, 1), "gram": (-6, 1, 1), "grams": (-6, 1, 1),
                                                "kg": (-3, 1, 1), "kilogram": (-3, 1, 1), "kilograms": (-3, 1, 1),
                                                "kt": (3, 1, 1), "Mt": (6, 1, 1), "lb": _POUND, "lbs": _POUND,
                                                "pound": _POUND, "pounds": _POUND}
_USD_WORDS_RE = re.compile(r"(?:\(?\d{4}\)?\s*)?(?:USD|US\s*dollars?|dollars?)(?:\s*\(?\d{4}\)?)?", re.IGNORECASE)
_PER_CHIP_HOUR_RE = re.compile(
    r"(?:/|\bper\b)\s*(?:an?\s+)?(?:[A-Za-z0-9.]+[\s-]+){0,3}(?:[A-Za-z0-9.-]+\s*/\s*)?(?:hours?|hrs?|h)",
    re.IGNORECASE)  # "$2/A100-40GB/hr" (MosaicML's MPT-7B post): per accelerator, per hour
_SYSTEM_HOUR_RE = re.compile(r"\b(?:nodes?|servers?|hosts?|machines?|instances?|vms?|pods?|boxes|box|systems?)\b",
                             re.IGNORECASE)
_INTENSITY_RE = re.compile(
    rf"(?P<m>g|kg|t){_CO2_SUFFIX}\s*(?:/|\bper\b)\s*(?P<e>kWh|MWh)", re.IGNORECASE)


def _unit_power(rest: str) -> _Scale:
    if not rest:
        return _ONE
    m = _PER_CHIP_SUFFIX_RE.search(rest)  # "378.5 W per chip": power_w_per_chip is per accelerator
    if m:
        rest = rest[:m.start()].strip()
    m = _WATT_RE.fullmatch(rest)
    if m:
        return (_POWER_PREFIX[(m.group("p") or "").lower()], 1, 1)
    raise _Reject(f"unknown unit {rest!r}")


def _unit_energy(rest: str) -> _Scale:
    if not rest:
        return _ONE
    m = _ENERGY_RE.fullmatch(rest)
    if m:
        p = (m.group("p") or "").lower()
        return ({"": -6, "k": -3, "kilo": -3, "m": 0, "mega": 0, "g": 3, "giga": 3, "t": 6, "tera": 6}[p], 1, 1)
    m = _JOULE_RE.fullmatch(rest)
    if m:  # 1 MWh = 3.6e9 J
        p = (m.group("p") or m.group("w") or "").lower()
        exp = {"": 0, "k": 3, "kilo": 3, "m": 6, "mega": 6, "g": 9, "giga": 9, "t": 12, "tera": 12, "p": 15,
               "peta": 15, "e": 18, "exa": 18}[p]
        return (exp - 9, 10, 36)
    raise _Reject(f"unknown unit {rest!r}")


def _unit_co2(rest: str) -> _Scale:
    if not rest:
        return _ONE
    m = _CO2_RE.fullmatch(rest.strip())
    if m:
        unit = m.group("u")
        return _CO2_SCALE.get(unit if unit in ("Mt", "kt") else unit.lower(), _ONE)
    raise _Reject(f"unknown unit {rest!r}")


def _unit_usd(rest: str) -> _Scale:
    exp = 0
    m = _COUNT_SCALE_RE.match(rest)
    if m:  # "$5.6M", "$5.6m", "5.576 million": money has no minutes, so a lowercase m is a million
        if m.group("s").lower() == "g":
            raise _Reject("'G' is not a multiplier for money; write B or billion", specific=True)
        exp, rest = _COUNT_SCALE[m.group("s").lower()], rest[m.end():]
    rest = rest.strip()
    if not rest or _USD_WORDS_RE.fullmatch(rest):
        return (exp, 1, 1)
    raise _Reject(f"unknown unit {rest!r}")


def _unit_usd_rate(rest: str) -> _Scale:
    rest = rest.strip()
    if not rest:
        return _ONE
    m = _PER_CHIP_HOUR_RE.search(rest)
    if m and m.end() == len(rest):
        if _SYSTEM_HOUR_RE.search(m.group(0)):
            # A cloud instance's or a node's price ("$98.32/node-hour", p5.48xlarge's "$98.32 per instance
            # hour") is for all its accelerators at once: read as one chip's, it overstates the price 8x.
            raise _Reject("a price per node, server or instance hour covers all its accelerators; divide by the "
                          "accelerators it holds (8 in a DGX H100 or a p5.48xlarge) and give USD per chip-hour",
                          specific=True)
        rest = rest[:m.start()].strip()
    if not rest or _USD_WORDS_RE.fullmatch(rest):
        return _ONE
    raise _Reject(f"unknown unit {rest!r}")


def _unit_intensity(rest: str) -> _Scale:
    if not rest:
        return _ONE
    m = _INTENSITY_RE.fullmatch(rest.strip())
    if m:
        mass = {"g": -3, "kg": 0, "t": 3}[m.group("m").lower()]
        energy = {"kwh": 0, "mwh": 3}[m.group("e").lower()]
        return (mass - energy, 1, 1)
    raise _Reject(f"unknown unit {rest!r}")


def _unit_ratio(rest: str) -> _Scale:
    if not rest:
        return _ONE
    raise _Reject(f"unknown unit {rest!r}")


_UNIT_READERS: dict[str, Callable[[str], _Scale]] = {
    "count": _unit_count,
    "flop": _unit_flop,
    "days": _unit_days,
    "hours": _unit_hours,
    "fraction": _unit_fraction,
    "tokens_rate": _unit_tokens_rate,
    "flops_rate": _unit_flops_rate,
    "bytes": _unit_bytes,
    "power": _unit_power,
    "energy": _unit_energy,
    "co2": _unit_co2,
    "usd": _unit_usd,
    "usd_rate": _unit_usd_rate,
    "intensity": _unit_intensity,
    "ratio": _unit_ratio,
}


# --------------------------------------------------------------------------------------------------------
# Public parsing API.

def _check_kind(kind: str) -> None:
    if kind == "text":
        raise ValueError("kind 'text' is not numeric; units.parse_value/parse_series only read numeric kinds")
    if kind not in _UNIT_READERS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(k for k in KINDS if k != 'text')}")


def _shown(text: str) -> str:
    """The cell as quoted in a message; long cells are cut so a message stays one short line."""
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _error(text: str, kind: str, reason: str) -> UnitError:
    message = f"cannot read {_shown(text)} as {_DESCRIPTION[kind]}: {reason} (expected e.g. {_EXAMPLES[kind]})"
    return UnitError(message, text=text, kind=kind, reason=reason)


def _hint(rest: str, kind: str) -> str:
    """' (looks like a duration)' when the unit belongs to another kind, else ''."""
    for other in _HINT_ORDER:
        if other == kind:
            continue
        try:
            _UNIT_READERS[other](rest)
        except _Reject:
            continue
        return f"; it looks like {_LOOKS_LIKE[other]}"
    return ""


class _Number(NamedTuple):
    """A number as written in a cell, before a unit is applied: the parts of the decimal (kept as text so a
    unit's power of ten folds into the exponent), a power (``2^30``) and the unit text that follows."""

    sign: str
    digits: str
    frac: str | None
    exp10: int
    base_power: int | None
    rest: str


def _without_qualifiers(s: str) -> str:
    """The text without its leading qualifiers ("~", "about", "less than")."""
    for _ in range(4):
        m = _QUALIFIER_RE.match(s)
        if not m or m.end() == 0:
            break
        s = s[m.end():]
    return s


def _read_number(raw: str, kind: str) -> _Number | None:
    """The number at the start of a cell and the unit text after it; None when the cell means "missing"."""
    text = raw.strip()
    if not text or text.lower() in PLACEHOLDERS:
        return None
    if len(text) > MAX_TEXT_LEN:
        raise _error(raw, kind, f"too long ({len(text)} characters; at most {MAX_TEXT_LEN})")
    s = _SPACES_RE.sub(" ", text).translate(_DASHES)
    s = _SUPERSCRIPT_RE.sub(lambda m: "^" + m.group(1).translate(_SUPERSCRIPTS), s)
    # Qualifiers at the front ("~", "about", "over", "up to", "> ") and a trailing "+" ("15T+") only say
    # the value is approximate or a bound; the number written is the value (a bound is said: V011). They may
    # stand before a dollar sign ("under $2 million") or after it ("$~2M").
    s = _without_qualifiers(s)
    if kind == "fraction" and (named := _UTILIZATION_BEFORE_RE.match(s)):  # "MFU 40%", "MFU of about 40 %"
        s = _without_qualifiers(s[named.end():])
    if kind in _MONEY_KINDS:  # "$5.6M", "US$ 2", "USD 5.576 million": US dollars only
        s = _without_qualifiers(_DOLLAR_RE.sub("", s, count=1).strip())
    if _CURRENCY_RE.search(s):
        raise _error(raw, kind, "only US dollars are read here (convert the amount to USD)" if kind in _MONEY_KINDS
                     else "a currency amount is not a quantity here")
    if s.endswith("+"):
        s = s[:-1].rstrip()
    s = _with_halves(s)  # "half a day", "two and a half weeks", "a day and a half" (model cards)
    if (word := _NUMBER_WORD_RE.match(s)) is not None:  # "about five weeks" (press reports), "two months"
        s = f"{_NUMBER_WORDS[word.group(0).lower()]}{s[word.end():]}"

    m = _NUM_RE.match(s)
    if not m or (m.group("int") is None and m.group("frac2") is None):
        if any(c.isdigit() for c in s):  # "Stage 1 pretraining: 147K H100 hours Stage 2 ...": words first
            stages = " (the stages of a run: give them as phases)" if len(re.findall(r"\d+", s)) >= 3 else ""
            raise _error(raw, kind, f"the cell does not start with its figure; write the figure first{stages}")
        raise _error(raw, kind, "no number found")
    sign = m.group("sign")
    int_part = m.group("int")
    frac = m.group("frac") if int_part is not None else m.group("frac2")
    exp10 = int(m.group("exp") or 0)
    pos = m.end()
    base_power: int | None = None

    ambiguous = _TIMES_TEN_E_RE.match(s, pos)
    if ambiguous:
        mantissa = s[m.start():pos].strip()
        power = int(ambiguous.group("exp"))
        raise _error(raw, kind, f"{ambiguous.group(0).strip()!r} is ambiguous: as written 10e{power} is "
                                f"1e{power + 1}, but it usually means × 10^{power}; write {mantissa}e{power} or "
                                f"{mantissa}e{power + 1}")
    t = _TIMES_TEN_RE.match(s, pos)
    if t:  # 3.14 × 10^23
        exp10 += int(t.group("exp"))
        pos = t.end()
    elif int_part is not None and "," not in int_part and frac is None and m.group("exp") is None:
        p = _POWER_RE.match(s, pos)
        if p:  # 10^24, 2^30
            if int_part.lstrip("0") == "10":
                int_part = "1"  # 10^24 is 1e24
                exp10 += int(p.group("exp"))
            else:
                base_power = int(p.group("exp"))
            pos = p.end()

    rest = s[pos:].strip()
    if rest.startswith("+"):  # "15+ trillion tokens"
        rest = rest[1:].lstrip()
    rest = _SCALE_PLUS_RE.sub(r"\1", rest)  # "15T+ tokens": the "+" of a bound after the scale (V011 says so)
    if rest.startswith(",") and rest[1:2].isdigit():
        # "0,479" and "1,5": a decimal comma (a thousands separator stands after a leading 1-9 and before groups
        # of exactly three digits); read as 479 or 15 it would be a silent misreading.
        digits = re.match(r",([0-9]+)", rest)
        point = f"{sign}{int_part or ''}.{digits.group(1) if digits else ''}"
        raise _error(raw, kind, f"malformed number: a decimal comma? write a decimal point ({point}); commas stand "
                                f"only between groups of thousands (1,024)")
    if rest and rest[0] in "0123456789.,^*":
        raise _error(raw, kind, "malformed number")
    return _Number(sign, (int_part or "0").replace(",", ""), frac, exp10, base_power, rest)


def _unit_scale(rest: str, raw: str, kind: str) -> _Scale:
    """The scale of the unit text after a number, or a UnitError naming the cell."""
    try:
        return _UNIT_READERS[kind](rest)
    except _Reject as r:
        if _ABBREVIATION_END_RE.search(rest):
            # An abbreviation's dot, or a sentence's, after the unit ("1.5K GPU hrs.", phi-1.5's table; "8 days.")
            # is punctuation: the unit without it, or the first refusal.
            try:
                return _UNIT_READERS[kind](rest.rstrip()[:-1])
            except _Reject:
                pass
        reason = r.reason if r.specific else r.reason + _hint(rest, kind)
        if not r.specific and (remark := _REMARK_RE.search(rest)):
            try:  # a unit in parentheses ("1.4T (tokens)", "40 (GPUs)") is that unit
                return _UNIT_READERS[kind](
                    f"{rest[:remark.start()]} {remark.group(0)[1:-1]} {rest[remark.end():]}".strip())
            except _Reject as again:
                if again.specific:  # the unit is read, and refused for a reason of its own ("8 (nodes)")
                    raise _error(raw, kind, again.reason) from None
            reason = _remark_reason(remark.group(0), rest, kind)
        raise _error(raw, kind, reason) from None


#: A unit text that ends in a dot after a letter: an abbreviation ("hrs.") or the end of a sentence.
_ABBREVIATION_END_RE = re.compile(r"[A-Za-z]\.\s*$")

#: A remark in parentheses after a figure ("30 days (phase 1)", "17B (Activated) 109B (Total)").
_REMARK_RE = re.compile(r"\([^()]*\)")


def _remark_reason(remark: str, rest: str, kind: str) -> str:
    """Why a cell with a remark in parentheses is not read, and what to write instead."""
    if kind == "count" and re.search(r"activ", rest, re.IGNORECASE):
        return "two figures with remarks; give the total as params and the active parameters as active_params"
    return f"a remark in parentheses is not read ({remark!r}); give the figure alone, the remark in a notes field"


def _value(number: _Number, scale: _Scale, raw: str, kind: str) -> float:
    """The number in the canonical unit: the unit's power of ten joins the decimal exponent, so ``65.2B`` is
    float("65.2e9"), exactly 65.2e9, then the unit's ratio applies."""
    unit_exp, num, den = scale
    sign, digits, frac = number.sign, number.digits, number.frac
    if number.base_power is not None:
        try:
            value = float(sign + digits) ** number.base_power * float(f"1e{unit_exp}")
        except OverflowError:
            value = math.inf if sign != "-" or number.base_power % 2 == 0 else -math.inf
        except ZeroDivisionError:
            raise _error(raw, kind, "zero raised to a negative power") from None
    else:
        mantissa = f"{sign}{digits}.{frac}" if frac else f"{sign}{digits}"
        # Python's float() reads any exponent: 1e400 -> inf, 1e-400 -> 0.0 (validity is checked elsewhere).
        value = float(f"{mantissa}e{number.exp10 + unit_exp}")
    if num != 1 or den != 1:
        value = value * num / den
    return value


#: A figure written as a range: two numbers joined by a dash or "to", the unit (or scale) after the second
#: ("41-42%", "41 to 42 %", "1.2-1.5T tokens") or after each ("1.2T-1.5T tokens", "500M to 1.5B"). An exponent's
#: sign ("1e-5") is no range: the first number's unit may not be a bare "e".
_RANGE_RE = re.compile(
    r"^\s*(?P<a>[0-9][0-9,]*(?:\.[0-9]+)?|\.[0-9]+)(?P<ua>\s*(?![eE](?![a-zA-Z]))[A-Za-z%]+)?"
    r"\s*(?:-|\u2013|\u2014|\bto\b)\s*(?P<b>(?:[0-9][0-9,]*(?:\.[0-9]+)?|\.[0-9]+)(?:\s*[A-Za-z%].*)?)$")
#: Cells that may write a range, in RE2 syntax (a superset: "1e-5" too), to find them without a Python call per cell.
RANGE_RE2 = r"[0-9]\s*[A-Za-z%]*\s*(?:-|\x{2013}|\x{2014}|to\s)\s*(?:US\s?)?\$?\s*[0-9.]"


def strip_qualifiers(text: str) -> str:
    """A cell's text without the qualifiers before its number ("about", "~", "up to"): what its figure reads."""
    return _without_qualifiers(text.strip().translate(_DASHES))


#: A range of dollar amounts, each end with its sign or the first only ("$289 - $981", "$289-981", "US$ 1-2M").
_DOLLAR_RANGE_RE = re.compile(r"^\s*(?:US\s?)?\$\s*[0-9.][^$]*?(?:-|\u2013|\u2014|\bto\b)\s*(?:(?:US\s?)?\$\s*)?[0-9.]",
                              re.IGNORECASE)
_DOLLAR_SIGN_RE = re.compile(r"(?:US\s?)?\$\s*(?=[0-9.])", re.IGNORECASE)


def range_of(text: object) -> tuple[str, str] | None:
    """The two ends of a figure written as a range, each as a text with the range's unit ("41-42%" -> ("41%",
    "42%"); "1.2-1.5T tokens" -> ("1.2T tokens", "1.5T tokens")), or None. Whether the ends make a range (the
    first below the second, both readable) is for :func:`parse_value` to find."""
    if not isinstance(text, str):
        return None
    text = text.translate(_DASHES)
    if "-" not in text and "to" not in text and "\u2014" not in text:  # most cells: no regex
        return None
    if "$" in text and _DOLLAR_RANGE_RE.match(text):  # "$289 - $981" (Strubell et al. 2019, Table 3): US dollars
        text = _DOLLAR_SIGN_RE.sub("", text).strip() + " USD"
    m = _RANGE_RE.match(text)
    if m is None:
        return None
    b = m.group("b").strip()
    if m.group("ua"):
        return m.group("a") + m.group("ua"), b
    n = _NUM_RE.match(b)
    return (m.group("a") + b[n.end():]) if n else m.group("a"), b


def _parse_range(raw: str, kind: str) -> float | None:
    """The middle of a figure written as a range ("41-42%": 41.5 %), or None when the cell writes no range: its
    precision is the half-range (:func:`audit.significance.relative_half_width`), and V011 says how it was read."""
    ends = range_of(_without_qualifiers(raw.strip()))  # "about 41-42%"
    if ends is None:
        return None
    try:
        low, high = (_parse_text(end, kind) for end in ends)
    except UnitError:
        return None
    if not (0 < low < high < math.inf):
        return None
    return (low + high) / 2.0


#: One part of a duration written in several units ("2d 16h", "1 day 6 hours", "3 weeks and 2 days"): a number and
#: a unit of :data:`_DAYS_UNITS` ("m" is not one: months or minutes?).
_DURATION_PART = r"([0-9]+(?:\.[0-9]+)?)\s*(w|wks?|weeks?|d|days?|h|hrs?|hours?|mins?|minutes?|s|secs?|seconds?)"
_COMPOUND_DURATION_RE = re.compile(rf"^\s*{_DURATION_PART}(?:\s*,?\s*(?:and\s+)?{_DURATION_PART})+\s*$",
                                   re.IGNORECASE)
_DURATION_PART_RE = re.compile(_DURATION_PART, re.IGNORECASE)


#: :data:`_COMPOUND_DURATION_RE` as a pattern for Arrow's regular expressions (RE2; case-insensitive there).
COMPOUND_DURATION_RE2 = _COMPOUND_DURATION_RE.pattern


def compound_duration_unit(raw: object) -> tuple[float, float] | None:
    """(the duration in days, its smallest unit in days) of a wall-clock written in several units (a run log's
    "2d 16h": 2.667 days, in hours), or None. Each unit once, larger before smaller, as such durations are written;
    anything else is not read here. Its precision is half the smallest unit (:mod:`audit.significance`)."""
    if not isinstance(raw, str) or not _COMPOUND_DURATION_RE.match(raw):
        return None
    parts = [(float(n), _DAYS_UNITS[u.lower()]) for n, u in _DURATION_PART_RE.findall(raw)]
    sizes = [num / den for _, (num, den) in parts]
    if any(later >= earlier for earlier, later in zip(sizes, sizes[1:])):
        return None
    return sum(n * num / den for n, (num, den) in parts), sizes[-1]


def _parse_text(raw: str, kind: str) -> float:
    """One text cell as a float in the canonical unit of ``kind``."""
    if kind == "days" and (compound := compound_duration_unit(raw)) is not None:
        return compound[0]
    middle = _parse_range(raw, kind)
    if middle is not None:
        return middle
    number = _read_number(raw, kind)
    if number is None:
        return math.nan
    return _value(number, _unit_scale(number.rest, raw, kind), raw, kind)


def _parse_bare(raw: str, kind: str, header: _Scale) -> float:
    """A bare number written as text, under a column header naming a unit whose scale is ``header``: the header's
    unit stands where the cell writes none, as if it followed the number."""
    number = _read_number(raw, kind)
    if number is None:
        return math.nan
    scale = _unit_scale(number.rest, raw, kind) if number.rest else header  # a unit in the cell wins
    return _value(number, scale, raw, kind)


#: Text that is only a number (sign, digits with thousands separators, decimals, exponent): the cells a unit
#: named in a column header applies to. Cells with anything else ("~180", "3.14×10^23") are read as written.
_BARE_NUMBER_RE = re.compile(r"^\s*[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def is_bare_number(value: object) -> bool:
    """Whether a cell is a number without a unit of its own, which a unit named in its column header applies
    to: a number (not a boolean, not NaN), or text that is only a number (``180``, `` 1,200 ``, ``3.5e3``)."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, str):
        return _BARE_NUMBER_RE.match(value) is not None
    if isinstance(value, numbers.Real):
        return bool(value == value)  # NaN is missing, not a number
    if isinstance(value, decimal.Decimal):
        return not value.is_nan()
    return False


@lru_cache(maxsize=256)
def _header_scale(unit: str, kind: str) -> _Scale:
    """The scale of a unit named alone (a column header's ``hours``): the unit of ``1 <unit>`` read as ``kind``,
    with a power of ten written in it (``×10^3 hours``) folded in. Computed once per unit and kind."""
    if kind == "fraction" and _UTILIZATION_AFTER_RE.fullmatch(f" {unit.strip()}"):
        # A cell may name its utilization beside the figure ("40 % MFU"); a header's "(MFU)" names no unit.
        raise _error(unit, kind, f"{unit!r} is not a unit")
    first: UnitError | None = None
    for text in _header_unit_texts(unit, kind):
        try:
            number = _read_number(text, kind)
            if (number is None or number.sign or number.digits != "1" or number.frac
                    or number.base_power is not None):
                raise _error(text, kind, f"{unit!r} is not a unit")
            exp, num, den = _unit_scale(number.rest, text, kind)
        except UnitError as exc:
            first = first or exc
            continue
        return (exp + number.exp10, num, den)
    assert first is not None
    raise first


#: Multipliers a spreadsheet's header names alone ("GPU hours (thousands)"), in the singular a cell reads.
_HEADER_MULTIPLIERS = {"thousands": "thousand", "millions": "million", "billions": "billion",
                       "trillions": "trillion"}
_HEADER_MONEY_RE = re.compile(r"(?:US\s?\$|\$|USD)\s*,?\s*(?P<s>[kmbt]|thousands?|millions?|billions?)?|"
                              r"(?P<p>[kmbt]|thousands?|millions?|billions?)\s*(?:of\s+)?(?:USD|US\s?\$|\$|dollars)",
                              re.IGNORECASE)
#: A price's header unit that starts with its currency ("$/GPU-hour", "USD per GPU-hour"): "$1/GPU-hour" as a cell.
_HEADER_PRICE_RE = re.compile(r"(?:US\s?\$|\$|USD)\s*(?P<rest>(?:/|per\b).*)", re.IGNORECASE)


def _header_unit_texts(unit: str, kind: str) -> list[str]:
    """How ``1`` under a header's unit is written as a cell: ``1 hours``; for money ``$K`` and ``kUSD`` as
    ``$1K``; a plural multiplier (``thousands``) as ``1 thousand``."""
    u = unit.strip()
    texts = [f"1 {u}"]
    if u.lower() in _HEADER_MULTIPLIERS:
        texts.append(f"1 {_HEADER_MULTIPLIERS[u.lower()]}")
    if kind in _MONEY_KINDS:
        m = _HEADER_MONEY_RE.fullmatch(u)
        if m:
            suffix = m.group("s") or m.group("p") or ""
            suffix = _HEADER_MULTIPLIERS.get(suffix.lower(), suffix)
            texts.append(f"$1{suffix.upper() if len(suffix) == 1 else ' ' + suffix}")
        m = _HEADER_PRICE_RE.fullmatch(u)
        if m:
            texts.append(f"$1{m.group('rest')}")
    return texts


def unit_scale(unit: str, kind: str) -> float:
    """What a bare number written under ``unit`` (``hours``, ``PF-days``) is multiplied by to be in the canonical
    unit of ``kind``: the value of ``1 <unit>``. Raises :class:`UnitError` when ``unit`` is not a unit of
    ``kind``.

    >>> unit_scale("hours", "days") == 1 / 24
    True
    """
    _check_kind(kind)
    return _scaled(1.0, _header_scale(unit, kind))


def _scaled(values: Any, scale: _Scale) -> Any:
    """Numbers (a float or a float64 array) times a unit's scale. With no power of ten in the unit this is the
    arithmetic :func:`_value` does on the same number followed by the unit, so the result is the same float."""
    exp, num, den = scale
    with np.errstate(over="ignore", invalid="ignore"):
        if exp > 0:
            values = values * float(f"1e{exp}")
        elif exp < 0:
            values = values / float(f"1e{-exp}")  # 1e2 is exact, 1e-2 is not
        if num != 1 or den != 1:
            values = values * num / den
    return values


def parse_value(value: object, kind: str, unit: str | None = None) -> float:
    """Parse one cell (str, int, float, bool, None) into a float in the canonical unit of `kind`.

    None / '' / whitespace -> nan (missing); so are the strings pandas.read_csv treats as missing by default
    ("NaN", "N/A", "null", ...). bool -> UnitError (a boolean is not a number). Numbers pass through as
    float (nan/inf pass through; validity is checked elsewhere). ``kind`` must be a numeric kind of
    :data:`KINDS`; ``"text"`` or an unknown kind raises a plain ValueError (a programming error).

    ``unit``: a unit the cell's column header names (``hours`` under ``Training time (hours)``). A bare number
    (see :func:`is_bare_number`) is then in that unit; a cell that writes its own unit is read as written. A
    ``unit`` that is not a unit of ``kind`` raises :class:`UnitError`.

    >>> parse_value("3640 PF-days", "flop") == 3640 * 1e15 * 86400
    True
    >>> parse_value("180", "days", unit="hours"), parse_value("7 days", "days", unit="hours")
    (7.5, 7.0)
    """
    _check_kind(kind)
    return _parse_one(value, kind, None if unit is None else _header_scale(unit, kind))


def _parse_one(value: object, kind: str, header: _Scale | None) -> float:
    """:func:`parse_value` with the header unit's scale already computed (None: no header unit)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return math.nan
    if isinstance(value, (bool, np.bool_)):
        raise UnitError(f"cannot read {value!r} as {_DESCRIPTION[kind]}: a boolean is not a number",
                        kind=kind, reason="a boolean is not a number")
    if isinstance(value, str):
        if header is not None and _BARE_NUMBER_RE.match(value) is not None:
            return _parse_bare(value, kind, header)
        return _parse_text(value, kind)
    if isinstance(value, numbers.Real):
        try:
            number = float(value)
        except OverflowError:  # an int beyond the float range
            number = math.inf if value > 0 else -math.inf
        return number if header is None else _scaled(number, header)
    if isinstance(value, decimal.Decimal):  # Parquet/Arrow decimal columns (databases export these)
        if value.is_nan():
            return math.nan
        number = float(value)  # beyond the float range -> inf, reported by the loader as not finite
        return number if header is None else _scaled(number, header)
    what = _type_words(value)
    raise UnitError(f"cannot read {what} as {_DESCRIPTION[kind]}: not a number or text",
                    kind=kind, reason=f"unsupported type {type(value).__name__}")


def _type_words(value: object) -> str:
    """What a non-scalar cell is, in words (``a list``, ``a date/time``) for an error message."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "binary data"
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time, np.datetime64)):
        return "a date/time"
    if isinstance(value, (_dt.timedelta, np.timedelta64)):
        return "a duration"
    return f"a {type(value).__name__}"


def _parse_or_message(value: object, kind: str, header: _Scale | None) -> tuple[float, str | None]:
    try:
        return _parse_one(value, kind, header), None
    except UnitError as e:
        return math.nan, str(e)


#: A number with nothing around it, as a CSV cell usually holds: ``2048``, ``-0.5``, ``3.14e23``, ``5.``.
_PLAIN_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: Characters outside every plain number; one search over the joined cells rules a column in or out.
_NOT_PLAIN_RE = re.compile(r"[^0-9eE+\-.]")


def _plain_numbers(uniq: list) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct cells that are plain decimal numbers, converted in one numpy cast.

    Returns (mask over ``uniq``, float values of the masked cells), or None when no cell qualifies. numpy's
    string-to-float cast rounds correctly, like ``float()``, so the values are the ones :func:`parse_value`
    gives; every other cell (units, thousands separators, ``nan``, whitespace) takes the full parser. Used for
    fewer than :data:`COMMON_FROM` distinct cells (more are read by :func:`_parse_common`).
    """
    if not uniq:
        return None
    strs = [u for u in uniq if type(u) is str]  # noqa: E721 - exact str, as CSV cells are
    if not strs:
        return None
    if len(strs) == len(uniq) and not _NOT_PLAIN_RE.search("+".join(strs)):
        # Only digits, signs, dots and e: most likely all plain numbers (a clean numeric CSV column).
        lengths = np.fromiter(map(len, strs), dtype=np.int64, count=len(strs))
        if lengths.max(initial=0) <= MAX_TEXT_LEN:
            try:
                with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                    values = np.array(strs, dtype=str).astype(np.float64)
            except ValueError:  # a cell like "1e" or "+-": find the good ones one by one
                pass
            else:
                return np.ones(len(uniq), dtype=bool), values
    mask = np.fromiter((type(u) is str and len(u) <= MAX_TEXT_LEN and _PLAIN_NUMBER_RE.fullmatch(u) is not None
                        for u in uniq), dtype=bool, count=len(uniq))
    if not mask.any():
        return None
    picked = [u for u, m in zip(uniq, mask) if m]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return mask, np.array(picked, dtype=str).astype(np.float64)


#: Fewest distinct cells read by :func:`_parse_common` (below it, the per-cell parser costs less than starting
#: Arrow's compute functions). Tests set it to 0 to read every case both ways.
COMMON_FROM = 64

#: The shapes most cells take, for :func:`_parse_common`: a decimal number (optional sign, thousands groups of
#: three, decimals, an exponent) then unit text of ASCII letters, digits, ``%``, ``/`` and ``-`` in words separated
#: by single spaces (``7B``, ``1.4T tokens``, ``871,170 GPU-hours``, ``46.2%``, ``21 days``). It is RE2 syntax
#: (Arrow's engine), which has no lookahead: :data:`_NUM_RE`'s ``(?![0-9,])`` after thousands groups holds anyway,
#: as only ``.``, ``e``, a space, a letter, ``%`` or the end may follow the number here. No whitespace around the
#: cell, no character that :func:`_read_number` rewrites (dashes, superscripts, currency signs, ``^``, ``*``,
#: ``×``, ``+`` after the sign) and no qualifier (it would start with a letter or a symbol).
_COMMON_PATTERN = (r"^(?P<sign>[+-]?)(?P<int>[1-9][0-9]{0,2}(?:,[0-9]{3})+|[0-9]*)(?:\.(?P<frac>[0-9]*))?"
                   r"(?:[eE](?P<esign>[+-]?)(?P<exp>[0-9]+))?"
                   r"(?P<rest>(?: ?[A-Za-z%][A-Za-z0-9%/-]*(?: [A-Za-z0-9%/-]+)*)?)$")
#: Unit text that could also be read as the number's exponent (``5e5-h``: the pattern may leave ``e5-h`` as the
#: unit where :data:`_NUM_RE` takes ``e5``): such cells take the per-cell parser.
_EXPONENT_LIKE_PATTERN = r"^[eE][+-]?[0-9]"
#: A plain decimal number, :data:`_PLAIN_NUMBER_RE` in RE2 syntax: Arrow's cast reads it as ``float()`` does.
_PLAIN_PATTERN = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
#: Distinct cells per call of :func:`_parse_common`: at most 200 MB of text (:data:`MAX_TEXT_LEN` characters each).
_COMMON_CHUNK = 1_000_000
#: Longest exponent read here (digits); a longer one takes the per-cell parser (Python's int has no limit).
_COMMON_EXP_DIGITS = 6


@lru_cache(maxsize=4096)
def _common_scale(rest: str, kind: str, header: _Scale | None) -> _Scale | None:
    """The scale of the unit text after a number (``" GPU-hours"``), as :func:`_parse_one` applies it: under a
    header unit a bare number (no unit text) takes the header's scale. None when the kind's reader refuses the
    text: the cell then takes the per-cell parser, which words the message (with its hint)."""
    rest = rest.strip()
    if not rest and header is not None:
        return header
    try:
        return _UNIT_READERS[kind](rest)
    except _Reject:
        return None


def _parse_common(uniq: np.ndarray, kind: str, header: _Scale | None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct cells of :data:`_COMMON_PATTERN`'s shapes, read together: which were read (a mask over ``uniq``)
    and their values.

    The cells are split by Arrow's regular-expression engine, each distinct unit text is read once by the kind's
    reader, and the value is made as :func:`_value` makes it, as the decimal text
    ``{sign}{digits}[.{frac}]e{exponent + the unit's power of ten}`` cast to float (Arrow's cast rounds
    correctly, like ``float()``) then times the unit's ratio, so every value is the float :func:`parse_value`
    gives, to the bit. Cells that are not text, not ASCII, longer than :data:`MAX_TEXT_LEN`, of another shape or
    with a unit the reader refuses are left to the per-cell parser (mask False).
    """
    import pyarrow as pa

    n = len(uniq)
    done = np.zeros(n, dtype=bool)
    values = np.full(n, np.nan)
    is_str = np.fromiter(map(type, uniq), dtype=object, count=n) == str
    at = np.flatnonzero(is_str)
    if len(at) == 0:
        return done, values
    strs = uniq[at].tolist()
    ascii_ = np.fromiter(map(str.isascii, strs), dtype=bool, count=len(strs))
    short = np.fromiter(map(len, strs), dtype=np.int64, count=len(strs)) <= MAX_TEXT_LEN
    keep = ascii_ & short
    if not keep.all():
        at = at[keep]
        strs = uniq[at].tolist()
    if not strs:
        return done, values
    return _parse_cells(pa.array(strs, type=pa.string()), at, n, kind, header)


def _parse_common_arrow(cells: "pa.Array", kind: str, header: _Scale | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_parse_common` of distinct cells that are all text, given as an Arrow string array (no nulls): the
    same cells are read, with the same values, without making Python strings of them or converting them back."""
    import pyarrow.compute as pc

    n = len(cells)
    # Code points, as len() counts them; ASCII as str.isascii says (the cells came from Python strings).
    keep = np.asarray(pc.string_is_ascii(cells)) & (np.asarray(pc.utf8_length(cells)) <= MAX_TEXT_LEN)
    at = np.flatnonzero(keep)
    if len(at) == 0:
        return np.zeros(n, dtype=bool), np.full(n, np.nan)
    if len(at) < n:
        cells = cells.filter(keep)
    return _parse_cells(cells, at, n, kind, header)


def _parse_cells(cells: "pa.Array", at: np.ndarray, n: int, kind: str, header: _Scale | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The reading of :func:`_parse_common` of the ASCII cells not too long (``cells``, the distinct cells
    ``at``, of ``n``), as a mask over the ``n`` and their values."""
    import pyarrow as pa
    import pyarrow.compute as pc

    done = np.zeros(n, dtype=bool)
    values = np.full(n, np.nan)
    # Plain numbers (most cells of a numeric column written as text) are cast as written, when a bare number's
    # unit has no power of ten to fold into the exponent: one match without captures, one cast.
    bare = _common_scale("", kind, header)
    if bare is not None and bare[0] == 0:
        plain = np.asarray(pc.match_substring_regex(cells, _PLAIN_PATTERN))
        if plain.any():
            number = np.asarray(pc.cast(cells.filter(pa.array(plain)), pa.float64()))
            with np.errstate(over="ignore", invalid="ignore"):
                number = number * float(bare[1]) / float(bare[2])
            done[at[plain]] = True
            values[at[plain]] = number
            if plain.all():
                return done, values
            at = at[~plain]
            cells = cells.filter(pa.array(~plain))
    parts = pc.extract_regex(cells, _COMMON_PATTERN)
    matched = np.asarray(parts.is_valid())
    if not matched.any():
        return done, values
    at = at[matched]
    parts = parts.filter(pa.array(matched))
    field = {name: parts.field(name) for name in ("sign", "int", "frac", "esign", "exp", "rest")}
    int_len = np.asarray(pc.utf8_length(field["int"]))
    frac_len = np.asarray(pc.utf8_length(field["frac"]))
    exp_len = np.asarray(pc.utf8_length(field["exp"]))
    ambiguous = np.asarray(pc.match_substring_regex(field["rest"], _EXPONENT_LIKE_PATTERN)) & (exp_len == 0)
    ok = ((int_len > 0) | (frac_len > 0)) & (exp_len <= _COMMON_EXP_DIGITS) & ~ambiguous
    # Each distinct unit text is read once.
    encoded = pc.dictionary_encode(field["rest"])
    scales = [_common_scale(r, kind, header) for r in encoded.dictionary.to_pylist()]  # a few distinct units
    codes = np.asarray(encoded.indices)
    ok &= np.array([s is not None for s in scales], dtype=bool)[codes]
    if not ok.any():
        return done, values
    unit_exp = np.array([s[0] if s else 0 for s in scales], dtype=np.int64)[codes[ok]]
    unit_num = np.array([float(s[1]) if s else 1.0 for s in scales])[codes[ok]]
    unit_den = np.array([float(s[2]) if s else 1.0 for s in scales])[codes[ok]]
    pick = {name: arr.filter(pa.array(ok)) for name, arr in field.items()}
    exp = np.asarray(pc.cast(pc.if_else(pc.equal(pick["exp"], ""), "0", pick["exp"]), pa.int64()))
    exp = np.where(np.asarray(pc.equal(pick["esign"], "-")), -exp, exp) + unit_exp
    # _read_number: digits are the integer part without separators, "0" when only a fraction is written; the
    # mantissa has a point only when the fraction has digits ("5." is "5").
    digits = pc.if_else(pc.equal(pick["int"], ""), "0", pc.replace_substring(pick["int"], ",", ""))
    point = pc.if_else(pc.equal(pick["frac"], ""), "", pc.binary_join_element_wise(".", pick["frac"], ""))
    text = pc.binary_join_element_wise(pick["sign"], digits, point, "e", pc.cast(pa.array(exp), pa.string()), "")
    number = np.asarray(pc.cast(text, pa.float64()))
    with np.errstate(over="ignore", invalid="ignore"):
        # x * 1 / 1 is x for every float, so the ratio applies to all (as _value applies it to those with one).
        number = number * unit_num / unit_den
    rows = at[ok]
    done[rows] = True
    values[rows] = number
    return done, values


def parse_distinct(cells: "pa.Array", kind: str, unit: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`parse_series` of a column's distinct cells, all text, as an Arrow string array with no nulls (a
    dictionary of the column's cells): each cell's value and error message (None when read), as float64 and object
    arrays one longer than ``cells``, whose last slot (NaN, None) is a missing cell's; ``unit`` as in
    :func:`parse_series`. Index them by the rows' codes, -1 for a missing cell."""
    _check_kind(kind)
    header = None if unit is None else _header_scale(unit, kind)
    return _parse_distinct(None, kind, header, cells)


def _parse_distinct(uniq: list | None, kind: str, header: _Scale | None, cells: "pa.Array | None" = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct cell (``uniq``, or when it is None ``cells``: the same, all text, as an Arrow string array)
    read: values and error messages, with a last slot (NaN, None) for a missing cell."""
    m = len(uniq) if uniq is not None else len(cells)
    parsed_u = np.empty(m + 1, dtype="float64")
    errors_u = np.empty(m + 1, dtype=object)
    errors_u[:] = None
    if m >= COMMON_FROM:  # many distinct cells: the common shapes together, the others one by one below
        as_objects = np.fromiter(uniq, dtype=object, count=m) if uniq is not None else None
        done = np.zeros(m, dtype=bool)
        for start in range(0, m, _COMMON_CHUNK):  # an Arrow string array holds at most 2 GiB of text
            part = slice(start, start + _COMMON_CHUNK)
            done[part], parsed_u[:-1][part] = (
                _parse_common(as_objects[part], kind, header) if as_objects is not None
                else _parse_common_arrow(cells.slice(start, _COMMON_CHUNK), kind, header))
    else:
        if uniq is None:
            uniq = cells.to_pylist()
        # Under a header unit with a power of ten (PF-days, %), plain numbers take the full parser, which folds the
        # power into the decimal exponent as it does for "3.14 PF-days"; a float product could differ in the last
        # bit.
        plain = _plain_numbers(uniq) if header is None or header[0] == 0 else None
        if plain is not None:
            done, numbers_ = plain
            parsed_u[:-1][done] = numbers_ if header is None else _scaled(numbers_, header)
        else:
            done = np.zeros(m, dtype=bool)
    rest = np.flatnonzero(~done)
    # The rest one by one (as Python strings: only these are made so when the cells came in Arrow).
    others = [uniq[k] for k in rest] if uniq is not None else cells.take(rest).to_pylist()
    for k, value in zip(rest.tolist(), others):
        parsed_u[k], errors_u[k] = _parse_or_message(value, kind, header)
    parsed_u[-1] = np.nan  # code -1 (missing) indexes the last slot
    errors_u[-1] = None
    return parsed_u, errors_u


def parse_series(values: pd.Series, kind: str, unit: str | None = None) -> tuple[np.ndarray, pd.Series]:
    """Vectorized :func:`parse_value` over a column.

    Returns ``(float64 array, Series of error message str or None, same index)``. Numeric dtypes pass
    straight through with no Python loop. For object/string/categorical dtype each DISTINCT value is parsed
    once (``pd.factorize``) and the results are mapped back by code, never a per-row loop over the whole
    column. Missing -> nan with error None; a cell that fails -> nan with its message.

    ``unit``: a unit the column's header names, as in :func:`parse_value`: bare numbers are multiplied by its
    scale (computed once), cells that write their own unit are read as written.
    """
    _check_kind(kind)
    header = None if unit is None else _header_scale(unit, kind)
    if not isinstance(values, pd.Series):
        values = pd.Series(values)
    n = len(values)
    index = values.index
    dtype = values.dtype

    if pd.api.types.is_bool_dtype(dtype):
        missing = values.isna().to_numpy(dtype=bool)
        message = f"cannot read a boolean as {_DESCRIPTION[kind]}: a boolean is not a number"
        errors = np.where(missing, None, message).astype(object)
        return np.full(n, np.nan), pd.Series(errors, index=index, dtype=object, name=values.name)
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        out = values.to_numpy(dtype="float64", na_value=np.nan)
        if header is not None:
            out = _scaled(out, header)
        return out, pd.Series(np.empty(n, dtype=object), index=index, dtype=object, name=values.name)  # None

    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        missing = values.isna().to_numpy(dtype=bool)
        what = "a date/time" if pd.api.types.is_datetime64_any_dtype(dtype) else "a duration"
        message = f"cannot read {what} as {_DESCRIPTION[kind]}: not a number or text"
        errors = np.where(missing, None, message).astype(object)
        return np.full(n, np.nan), pd.Series(errors, index=index, dtype=object, name=values.name)

    none = pd.Series(np.empty(n, dtype=object), index=index, dtype=object, name=values.name)  # np.empty: None
    inferred = pd.api.types.infer_dtype(values, skipna=True) if dtype == object else ""
    if inferred in ("integer", "floating", "mixed-integer-float"):
        # Python numbers in an object column (JSON input): one C-level conversion. An int beyond the float
        # range makes numpy refuse the whole column; the per-value path below turns it into inf.
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                out = values.to_numpy(dtype="float64", na_value=np.nan)
        except (OverflowError, TypeError, ValueError):
            pass
        else:
            return (out if header is None else _scaled(out, header)), none
    if inferred == "empty":
        return np.full(n, np.nan), none

    try:
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
    except TypeError:  # unhashable cells (lists, dicts): rare, so parse row by row
        pairs = [_parse_or_message(v, kind, header) for v in values.tolist()]
        out = np.array([p[0] for p in pairs], dtype="float64")
        return out, pd.Series([p[1] for p in pairs], index=index, dtype=object, name=values.name)

    uniq = list(uniques)
    parsed_u, errors_u = _parse_distinct(uniq, kind, header)
    out = parsed_u[codes]
    errors = errors_u[codes]

    # factorize hashes True == 1 and False == 0 into one group, so a boolean may hide behind a number (or
    # the reverse). Only columns that can hold booleans (a C-level type scan says so) and only their 0/1
    # groups need a look at the rows' types, which keeps this off the hot path.
    if dtype == object and inferred in ("boolean", "mixed", "mixed-integer"):
        arr = values.to_numpy(dtype=object)
        for k, u in enumerate(uniq):
            if isinstance(u, str) or not isinstance(u, (numbers.Number, np.bool_)) or u not in (0, 1):
                continue
            rows = np.flatnonzero(codes == k)
            is_bool = np.fromiter((isinstance(x, (bool, np.bool_)) for x in arr[rows]), dtype=bool,
                                  count=len(rows))
            if is_bool.any():
                bool_msg = f"cannot read a boolean as {_DESCRIPTION[kind]}: a boolean is not a number"
                out[rows[is_bool]] = np.nan
                errors[rows[is_bool]] = bool_msg
            if not is_bool.all():
                out[rows[~is_bool]] = float(u) if header is None else _scaled(float(u), header)
                errors[rows[~is_bool]] = None
    return out, pd.Series(errors, index=index, dtype=object, name=values.name)
