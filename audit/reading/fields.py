"""Which field each input column (or JSON key) is: canonical names, spellings in one row, and did-you-mean.

A table's columns are mapped once per file; a JSON file's keys are mapped row by row, so one row's spelling
(``n_params``) never changes how another row is read (``params``). Two spellings of one field in one row (or two
columns for one field in a table) are never silently renamed: for a field the audit uses, a JSON row naming it
twice with different values is invalid on that field and a table is refused naming both columns; for a field that
is only shown (``name``, ``source``), the first given is used, the other is kept as an extra field, and the run
says so. Every column that is not understood is reported once per file, with a did-you-mean to the canonical
names; a file in which no column at all is understood is unusable input.
"""

from __future__ import annotations

import difflib
import math
import re
from functools import lru_cache
from typing import Any, Sequence

import numpy as np
import pandas as pd

from audit.claims import RawTable
from audit.columns import map_unique
from audit.formatting import sig
from audit.quantities import BY_NAME, QUANTITIES, TEXT_ALIASES, TEXT_FIELDS, canonical_column_and_unit
from audit.reading.colmap import ColumnMap
from audit.reading.common import mangle, printable, printable_value
from audit.reading.errors import LoadError, NothingToRead
from audit.units import UnitError, per_device_rate, unit_scale

__all__ = ["DISPLAY_ONLY", "NOTE_FIELDS", "STRUCTURE_FIELDS", "below_group_headings", "canonical_columns",
           "did_you_mean", "field_of", "fields_named", "header_field"]

#: Fields a claim may hold that are not values: read as they are (``phases``: a multi-phase run).
STRUCTURE_FIELDS: tuple[str, ...] = ("phases",)

#: Fields that are only shown, never computed with: a second column for one of them is kept as an extra field.
DISPLAY_ONLY: frozenset[str] = frozenset({"name", "source"})

#: Free-text columns understood as what they say: kept as extra fields and shown, not reported as unread (but a
#: file with nothing else still states nothing to audit).
NOTE_FIELDS: frozenset[str] = frozenset({"notes", "note", "comment", "comments", "remarks", "description"})

#: Did-you-mean suggestions are worked out for this many unread columns per file (a file may have 100,000).
MAX_SUGGESTED = 200


def _key(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


@lru_cache(maxsize=65536)
def field_of(header: str) -> tuple[str | None, str | None]:
    """The field a column header names (canonical name, ``phases``, or None) and the unit it names, if any.

    A unit of accelerator time names the field whatever words precede it: Meta's model cards head their
    GPU-hours column "Training Time (GPU hours)", and "Compute (GPU hours)" is not FLOPs either."""
    if _key(header) in STRUCTURE_FIELDS:
        return _key(header), None
    canon, unit = canonical_column_and_unit(header)
    if canon in _TIME_OR_WORK and unit and not unit_fits(unit, canon) and accelerator_time(unit):
        return "chip_hours", unit
    if canon is not None and unit and (steered := _of_the_units_dimension(canon, unit)) is not None:
        return steered, unit
    if canon is None and unit is None and (suffixed := _SCALE_SUFFIX.match(str(header))):
        # "params_b", "tokens_t" (a tracking sheet's snake_case): a count's field with its multiplier after it.
        base = canonical_column_and_unit(suffixed.group("base"))[0]
        if base in BY_NAME and BY_NAME[base].kind == "count" and unit_fits(suffixed.group("unit"), base):
            return base, suffixed.group("unit")
    if canon is None and unit is None and (path := _DOTTED.fullmatch(str(header))):
        # A nested key of a run log ("time.gpu_hours", "metrics.mfu", joined by the JSON reader): its last key
        # names the field when the whole path does not ("hardware.count" does), unless a key before it says the
        # figure is not the training's ("eval.tokens").
        keys = [k.strip().lower() for k in str(header).split(".")]
        if not _NOT_TRAINING.intersection(keys[:-1]):
            leaf = field_of(path.group("leaf"))
            if leaf[0] is not None and leaf[0] not in STRUCTURE_FIELDS:
                return leaf
    if canon is None:
        found = _generic_field(header, unit)
        if found == (None, None) and "_" in str(header) and (spaced := _unsnaked(str(header))) != header:
            # A tracking sheet's snake_case spelling of a unit header ("tflops_per_gpu", "tokens_per_sec_per_gpu",
            # "gpu_days"): read as the header written with its separators ("tflops/gpu", "gpu days").
            found = field_of(spaced)
        if found == (None, None) and "_" in str(header):
            found = _unit_suffixed(str(header))
        return found
    return canon, unit


#: A path of keys joined by dots, each starting with a letter ("model.params", "hardware.count").
_DOTTED = re.compile(r"[A-Za-z_][\w -]*(?:\.[A-Za-z_][\w -]*)*\.(?P<leaf>[A-Za-z_][\w -]*)")
#: Keys of a run log under which a figure is not the training's own (evaluation, inference).
_NOT_TRAINING = frozenset({"eval", "evaluation", "val", "valid", "validation", "test", "testing", "inference",
                           "serving", "benchmark", "bench", "finetune", "finetuning", "sft", "rlhf", "dpo"})


def _unit_suffixed(header: str) -> tuple[str | None, str | None]:
    """A field's name with its unit after the last "_" ("mfu_pct", "wall_clock_hours", "wallclock_s",
    "train_time_h"), read as the header "mfu (pct)": only when the rest names a field and the unit fits it
    ("train_hours" names none: accelerator-hours or wall-clock, it stays unread)."""
    head, _, tail = header.strip("_").rpartition("_")
    if not head or not tail:
        return None, None
    canon, unit = field_of(f"{head} ({tail})")
    if canon is None or canon not in BY_NAME or unit is None:
        return None, None
    return (canon, unit) if unit_fits(unit, canon) or per_chip_header_unit(unit, canon) else (None, None)


def _unsnaked(header: str) -> str:
    """A snake_case header with its separators: "_per_" as "/", other underscores as spaces."""
    return re.sub(r"_+", " ", re.sub(r"_per_", "/", header.strip("_"))).strip()


#: A multiplier after a field's name, joined by "_", "-" or a space ("params_b", "tokens_T", "tokens billions").
_SCALE_SUFFIX = re.compile(r"^(?P<base>.*?[A-Za-z].*?)[\s_-]+(?P<unit>[kmbt]|bn|mn|tn|thousands?|millions?|billions?"
                           r"|trillions?)\s*$", re.IGNORECASE)


#: Fields whose header may name accelerator time instead ("Training Time (GPU hours)", "Compute (GPU hours)",
#: DeepSeek-V3's "Training Cost (in H800 GPU Hours)").
_TIME_OR_WORK = frozenset({"wall_clock_days", "compute_flops", "cost_usd"})

#: Words too general to name a field alone, which name one with the unit beside them ("Time (GPU hours)" in
#: Llama 2's Table 2, "Price ($/GPU-hour)"): the candidates, the first whose unit fits. Without a unit they stay
#: unread: a run log's "time" is a timestamp.
_GENERIC_BASES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("time", "duration", "runtime", "traintime", "timetotrain", "pretrainingtime",
                     "pretraintime", "trainingduration", "totaltime", "totaltrainingtime"),
                    ("chip_hours", "wall_clock_days")),
    **dict.fromkeys(("price", "rate", "pricing"), ("price_per_chip_hour",)),
    # DeepSeek-V3's Table 1 "Training Costs (in H800 GPU Hours)" and "(in USD)": a cost in accelerator time too.
    **dict.fromkeys(("cost", "totalcost", "trainingcost", "traincost", "costs", "totalcosts", "trainingcosts",
                     "traincosts"), ("cost_usd", "chip_hours")),
    **dict.fromkeys(("speed", "performance", "achieved", "sustained", "perf"),
                    ("throughput_tokens_per_s", "achieved_flops_per_chip")),
    **dict.fromkeys(("peak", "peakperformance", "peakthroughput"), ("peak_flops_per_chip",)),
}

#: Words before a FLOP/s unit that say which rate it is ("Peak TFLOP/s"; "TFLOPs/GPU" alone is the achieved one).
_RATE_WORDS: dict[str, str] = {"peak": "peak_flops_per_chip", "achieved": "achieved_flops_per_chip",
                               "sustained": "achieved_flops_per_chip", "model": "achieved_flops_per_chip",
                               "hardware": "achieved_hardware_flops_per_chip"}

#: Leading words of a header that say of what the figure is and change nothing of which field it is ("Total train
#: compute" in GPT-3's Table D.1, "Number of GPUs", "BF16 MFU").
#: Meta's cards head their emissions "Training Location-Based Greenhouse Gas Emissions": the location-based figure
#: is the run's (the market-based one, beside it, counts renewable purchases: it stays an extra field).
_LEADING_WORDS = re.compile(r"^\s*(?:(?:total|overall|reported|estimated|approx\.?|number\s+of|no\.\s*of|#|"
                            r"bf16|fp16|fp8|fp32|tf32|pre-?training|train(?:ing)?|location[- ]based)\s+)+",
                            re.IGNORECASE)

#: Trailing words of a carbon intensity's header that say of what it is: Luccioni et al.'s "Carbon intensity of grid
#: used", "Carbon intensity of the electricity".
_TRAILING_WORDS = re.compile(r"\s+(?:of|for)\s+(?:the\s+)?(?:local\s+)?(?:electricity|power|energy|grid)"
                             r"(?:\s+(?:grid|mix|supply))?(?:\s+used)?\s*$", re.IGNORECASE)


def _generic_field(header: str, unit: str | None) -> tuple[str | None, str | None]:
    """The field of a header no alias names (:func:`field_of`), read from its words and its unit: a general word
    with a unit that fits one field (:data:`_GENERIC_BASES`), an alias after words that change nothing
    (:data:`_LEADING_WORDS`), or a header that is a unit itself ("GPU-days", "TFLOPs/GPU", "Tokens/sec/GPU",
    "Peak TFLOP/s") when the unit is of one field only. (None, unit) when none says."""
    base = header if unit is None else header[:header.rfind("(" if "(" in header else "[")].strip()
    candidates = _GENERIC_BASES.get(_key(base), ())
    if unit and candidates:
        for canon in candidates:
            if canon == "chip_hours" and not accelerator_time(unit):
                continue
            if unit_fits(unit, canon) or per_chip_header_unit(unit, canon):
                return canon, unit
        return None, unit
    device = _DEVICE_WORD_FIRST.match(base)
    rest = canonical_column_and_unit(base[device.end():])[0] if device else None
    if rest in BY_NAME and BY_NAME[rest].kind == "power":
        # "GPU Power consumption" (LLaMA's Table 15: 400W): one accelerator's power, whatever the rest says.
        if unit is None or unit_fits(unit, "power_w_per_chip"):
            return "power_w_per_chip", unit
        return _of_the_units_dimension("power_w_per_chip", unit), unit
    stripped = _LEADING_WORDS.sub("", base, count=1)
    if (of_grid := _TRAILING_WORDS.sub("", stripped, count=1)) != stripped and \
            canonical_column_and_unit(of_grid)[0] == "grid_kgco2_per_kwh":
        stripped = of_grid
    if stripped and stripped != base:
        canon, _ = canonical_column_and_unit(stripped)
        if canon in _PER_CHIP and _WHOLE_WORDS.match(base):
            # "Total power consumption" is not one accelerator's: the cluster's power (or, in MWh, its energy).
            canon = _WHOLE_OF.get(canon)
            if canon is None:
                return None, unit
        if canon is not None and unit and (steered := _of_the_units_dimension(canon, unit)) is not None:
            return steered, unit
        # Only a unit that fits (or none): "Training compute cost (cloud)" beside "(2023 USD)" is another figure.
        if canon is not None and canon in BY_NAME and (
                unit is None or unit_fits(unit, canon) or per_chip_header_unit(unit, canon)):
            return canon, unit
        if canon is None and unit is None:
            return _unit_header(stripped)
        if canon is None:
            return _generic_field(f"{stripped} ({unit})", unit)
    if (counted := _counted_field(base)) is not None and (unit is None or unit_fits(unit, counted)):
        return counted, unit
    if unit is None:
        return _unit_header(header)
    return None, unit


#: Kinds of quantity of a training's energy account: a unit of one of them under a header naming another (Table 15
#: of LLaMA heads its MWh "Total power consumption"; Luccioni et al. head theirs "Power consumption") is read as
#: the field of the unit's dimension.
_ENERGY_ACCOUNT = frozenset({"power", "energy", "co2", "intensity"})


def _of_the_units_dimension(canon: str, unit: str) -> str | None:
    """The field a header's unit names when it is of another dimension than the header's words, within the energy
    account ("Power consumption (MWh)": energy_mwh); None when the unit fits, or names no one field."""
    q = BY_NAME.get(canon)
    if q is None or q.kind not in _ENERGY_ACCOUNT or unit_fits(unit, canon):
        return None
    other = _field_of_unit(unit)
    return other if other is not None and BY_NAME[other].kind in _ENERGY_ACCOUNT else None


#: Fields of one accelerator, and what a header saying the whole ("Total power consumption") names instead: the
#: cluster's power; the others are not read from such a header.
_PER_CHIP = frozenset({"power_w_per_chip", "achieved_flops_per_chip", "achieved_hardware_flops_per_chip",
                       "peak_flops_per_chip"})
_WHOLE_OF: dict[str, str] = {"power_w_per_chip": "cluster_power_w"}
_WHOLE_WORDS = re.compile(r"^\s*(?:\S+\s+)*?(?:total|overall)\s+", re.IGNORECASE)

#: An accelerator's word before a header's words ("GPU Power consumption", "Chip power"): a figure of one of them.
_DEVICE_WORD_FIRST = re.compile(r"^\s*(?:per[- ]?)?(?:gpu|tpu|chip|accelerator|device)s?\s+", re.IGNORECASE)


#: A word after a field's name that says the figure counts it ("Token count" in Meta's Llama 4 model card,
#: "Chip count", "GPU number").
_COUNT_WORD = re.compile(r"^(?P<base>.*?[A-Za-z].*?)[\s_-]+(?:count|number|total)\s*$", re.IGNORECASE)


def _counted_field(header: str) -> str | None:
    """The count a header such as "Token count" names: the field of its first words, singular or plural, when it
    is a count ("Token(s)" → tokens, "Parameter(s)" → params); an accelerator's name counts the accelerators
    ("GPU count", "Chip count" → chips)."""
    m = _COUNT_WORD.match(header)
    if m is None:
        return None
    base = m.group("base").strip()
    for text in (base, base + "s"):
        canon, unit = canonical_column_and_unit(text)
        if unit is None and canon in BY_NAME and BY_NAME[canon].kind == "count":
            return canon
        if unit is None and canon == "hardware":
            return "chips"
    return None


def _unit_header(header: str) -> tuple[str | None, str | None]:
    """A header that is itself a unit ("GPU-days", "TFLOPs/GPU", "Tokens/sec/GPU"), optionally after a word that
    says which rate ("Peak TFLOP/s"): (field, the header as its unit) when the unit is specific to one field; a
    plain duration ("hours") or count names none."""
    if (written := _IN_UNIT.match(header)) is not None:  # "in H800 GPU Hours", "in USD": a unit, said so
        header = written.group("unit")
    words = header.split(None, 1)
    field_word = _RATE_WORDS.get(words[0].lower()) if len(words) == 2 else None
    text = words[1] if field_word else header
    lower = text.lower()
    # A unit names a field only with the word of what it counts: a multiplier alone ("k", "b") names nothing.
    if accelerator_time(text) and not field_word and _DEVICE_WORD.search(lower):
        return "chip_hours", text
    # "TFLOPs" alone may be a rate or a total (plural FLOPs): only a unit that is a rate and nothing else names one.
    if "flop" in lower and unit_fits(text, "achieved_flops_per_chip") and not unit_fits(text, "compute_flops"):
        return field_word or "achieved_flops_per_chip", text
    if not field_word and ("tok" in lower or _TOKENS_ABBREVIATED.fullmatch(text)) and (
            per_chip_header_unit(text, "throughput_tokens_per_s")
                                               or (unit_fits(text, "throughput_tokens_per_s") and "/" in text)):
        return "throughput_tokens_per_s", text
    if not field_word and (only := _field_of_unit(text)) is not None:
        return only, text
    return None, None


#: A header that is a unit after "in" (DeepSeek-V3's Table 1 names its rows "in H800 GPU Hours" and "in USD").
_IN_UNIT = re.compile(r"^\s*in\s+(?P<unit>\S.*?)\s*$", re.IGNORECASE)

#: Kinds of quantity whose units name one field each (an energy, emissions, a carbon intensity, an amount of
#: money): a header that is such a unit alone ("MWh", "tCO2eq", "USD") names its field.
_NAMING_KINDS = frozenset({"energy", "co2", "intensity", "usd", "usd_rate"})


def _field_of_unit(unit: str) -> str | None:
    """The one field a unit of :data:`_NAMING_KINDS` can be written in, or None. Dollars alone are an amount (a
    price says what per: "$/GPU-hour"). A multiplier alone ("k", "B") names nothing."""
    if unit_fits(unit, "params"):
        return None
    fits = [q.name for q in QUANTITIES if q.kind in _NAMING_KINDS and not q.derived_only and unit_fits(unit, q.name)]
    if set(fits) == {"cost_usd", "price_per_chip_hour"} and not re.search(r"/|\bper\b", unit, re.IGNORECASE):
        return "cost_usd"
    return fits[0] if len(fits) == 1 else None


#: A header that is tokens per second abbreviated, as benchmark tables write it: llm-foundry's "T/s/GPU", "TPS".
_TOKENS_ABBREVIATED = re.compile(r"(?:t\s*/\s*s(?:ec)?|tps)(?:\s*(?:/|per)\s*[a-z]+)?", re.IGNORECASE)


#: The word of an accelerator in a unit of accelerator time ("GPU-days", "TPU hours", "chip-weeks").
_DEVICE_WORD = re.compile(r"gpu|tpu|chip|accelerator|device|npu|ipu|hpu|node")


def unit_fits(unit: str, canon: str) -> bool:
    """Whether a header's unit is one the quantity can be written in (``hours`` for a duration, not ``MFU``)."""
    q = BY_NAME.get(canon)
    if q is None or q.kind == "text":
        return False
    try:
        return math.isfinite(unit_scale(unit, q.kind))
    except (UnitError, ValueError):
        return False


#: Currencies other than the US dollar, as a header names them ("Cost (EUR)").
_OTHER_CURRENCY_RE = re.compile(r"^\s*(?:€|£|¥|₩|₹|(?:eur|euros?|gbp|cny|rmb|yuan|jpy|yen|krw|inr|chf|cad|aud)\b)",
                                re.IGNORECASE)


def refused_header_unit(unit: str, canon: str) -> str | None:
    """Why the bare numbers under a header's unit cannot be read as the column's quantity, when the unit says they
    are something else ("Cost (EUR)": euros; "chips (nodes)": nodes); None when the unit fits, or is not a unit
    at all ("Compute (estimated)": a description, not used and said so)."""
    q = BY_NAME.get(canon)
    if q is None or q.kind == "text" or unit_fits(unit, canon) or per_chip_header_unit(unit, canon):
        return None
    if q.kind in ("usd", "usd_rate") and _OTHER_CURRENCY_RE.match(unit):
        return f"{unit} is not US dollars; convert the amounts to USD"
    if q.kind in _ENERGY_ACCOUNT:  # "Energy (kW)": a power, not an energy; read in MWh it would be a wrong figure
        other = [o.label.lower() for o in QUANTITIES if o.kind in _ENERGY_ACCOUNT and o.kind != q.kind
                 and not o.derived_only and unit_fits(unit, o.name)]
        if other:
            return f"a unit of {' or '.join(other)}; give the column the field its unit is of"
    try:
        unit_scale(unit, q.kind)
    except UnitError as exc:
        reason = exc.reason or ""
        if reason and not reason.startswith("unknown unit") and "is not a unit" not in reason:
            return reason
    except ValueError:
        return None
    if _RATE_UNIT_RE.search(unit):
        # A rate of something else ("Throughput (S/s)": llm-foundry's samples per second, beside its "(T/s)"):
        # its numbers are not the quantity's, in any unit. A word that is no unit ("Compute (estimated)") is a
        # description, and the numbers are read in the quantity's own unit.
        return f"a rate of something the tool does not read as {q.label.lower()}; give the unit it is in"
    return None


#: A unit that is a rate: something per unit of time ("S/s", "img/sec", "samples per second").
_RATE_UNIT_RE = re.compile(r"/\s*(?:s|sec|second|min|minute|h|hr|hour|day)s?\b|\bper\s+(?:second|minute|hour|day)\b",
                           re.IGNORECASE)


def per_chip_header_unit(unit: str, canon: str) -> bool:
    """Whether a throughput column's header names one accelerator's rate ("Throughput (tokens/s/GPU)"): its bare
    numbers are read as cells written so ("7535 tokens/s/GPU"), times the chips."""
    if canon != "throughput_tokens_per_s":
        return False
    one = per_device_rate(f"1 {unit}")  # "1 tokens/s" for "1 tokens/s/GPU"
    return one is not None and unit_fits(one[1:].strip(), canon)


def accelerator_time(unit: str) -> bool:
    """Whether a unit is accelerator time (``GPU hours``, ``TPU-days``), not a plain duration (``hours``)."""
    return unit_fits(unit, "chip_hours") and not unit_fits(unit, "wall_clock_days")


@lru_cache(maxsize=1)
def _spellings() -> dict[str, str]:
    """Every canonical name and alias, in snake case, to its canonical field."""
    out: dict[str, str] = {}
    for q in QUANTITIES:
        if not q.derived_only:
            for name in (q.name, *q.aliases):
                out.setdefault(_snake(name), q.name)
    for name in TEXT_FIELDS:
        for alias in (name, *TEXT_ALIASES.get(name, ())):
            out.setdefault(_snake(alias), name)
    for name in STRUCTURE_FIELDS:
        out.setdefault(name, name)
    return out


def _snake(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


#: Words that name a duration: a header with one of them is accelerator-hours or wall-clock time, which only the
#: user can say (``train_hours``), so both are suggested and neither is guessed. Each suggestion is a header that
#: reads in the unit the word names ("wall_clock_hours", "gpu_days"): renamed so, the figures keep their unit (a
#: column of hours renamed "wall_clock_days" would be read as days).
_HOURS_SUGGESTED = ("chip_hours", "wall_clock_hours")
_DAYS_SUGGESTED = ("wall_clock_days", "gpu_days")
_TIME_WORDS = {"hours": _HOURS_SUGGESTED, "hour": _HOURS_SUGGESTED, "hrs": _HOURS_SUGGESTED, "hr": _HOURS_SUGGESTED,
               "days": _DAYS_SUGGESTED, "day": _DAYS_SUGGESTED,
               "time": ("wall_clock_days", "chip_hours"), "duration": ("wall_clock_days", "chip_hours")}


@lru_cache(maxsize=4096)
def _suggestions(header: str) -> tuple[str, ...]:
    spellings = _spellings()
    snake = _snake(header)
    words = snake.split("_")
    found: list[str] = []
    for w in words:
        for name in _TIME_WORDS.get(w, ()):
            found.append(name)
    for match in difflib.get_close_matches(snake, list(spellings), n=6, cutoff=0.75):
        found.append(spellings[match])
    for w in words:  # a word of the header that is itself a field's name ("tokens_seen" -> tokens)
        if w in spellings and len(w) > 2:
            found.append(spellings[w])
    return tuple(dict.fromkeys(found))


def did_you_mean(header: str, exclude: frozenset[str] | set[str] = frozenset()) -> str | None:
    """Canonical fields an unknown header may stand for (``'chip_hours or wall_clock_days'``), or None.

    Fields already read from the same file are not suggested."""
    # A suggestion is left out when the field it reads as was read already ("wall_clock_hours" is wall_clock_days).
    names = [n for n in _suggestions(str(header)) if n not in exclude and (field_of(n)[0] or n) not in exclude][:3]
    return " or ".join(names) if names else None


def _printable_frame(table: RawTable) -> tuple[pd.DataFrame, list[tuple[int, str, str]]]:
    """The frame and problems with every string made printable (cells, nested values and headers)."""
    frame = table.frame
    columns = mangle([printable(str(c)) for c in frame.columns])
    out = {}
    for name, (_, col) in zip(columns, frame.items()):
        if col.dtype != object:
            out[name] = col
        elif pd.api.types.infer_dtype(col, skipna=True) in ("floating", "mixed-integer-float"):
            # Floats (and ints): no string in them. Each cell as it is, a missing one None, as map_unique makes them
            # (it keeps the values of such a column apart by type and sign); factorizing them cost most of the
            # reading of in-memory records (the phase records: a float column each figure).
            values = col.to_numpy(dtype=object, copy=True)
            values[pd.isna(values)] = None
            out[name] = pd.Series(values, index=col.index, dtype=object)
        else:
            out[name] = map_unique(col, printable_value)
    fixed = pd.DataFrame(out, index=frame.index) if out else pd.DataFrame(index=frame.index)
    problems = [(pos, printable(fld), printable(msg)) for pos, fld, msg in table.problems]
    return fixed, problems


def _in_different_units(headers: list[str], canon: str, columns: ColumnMap | None) -> bool:
    """Whether columns that give one numeric field each name a unit of it in their header, all different (one
    figure written twice, as a paper's table gives a compute in PF-days and in FLOP)."""
    q = BY_NAME.get(canon)
    if q is None or columns is not None and any(columns.lookup(h) is not None for h in headers):
        return False
    units = [field_of(h)[1] for h in headers]
    if not all(u and unit_fits(u, canon) for u in units):
        return False
    scales = [unit_scale(u, q.kind) for u in units if u]
    return len({round(math.log10(x), 6) for x in scales}) == len(scales)


#: Two renderings of one figure by a table may round apart beyond their digits (3.64e3 PF-days is 3.145e23 FLOP,
#: printed 3.14e23): 1 % more than the precision of their figures; a slip is a factor of 1,000 or more.
_UNITS_AGREE = math.log(1.01)


def _disagreeing_units(cols: list[pd.Series], headers: list[str], canon: str, present: np.ndarray
                       ) -> list[tuple[int, str, str]]:
    """(row, field, message) of each row whose columns in different units (:func:`_in_different_units`) give
    figures that differ by more than the precision they are written to (read with each header's unit)."""
    from audit.significance import log_half_widths
    from audit.units import parse_series

    q = BY_NAME[canon]
    values, widths = [], []
    for col, header in zip(cols, headers):
        texts = col.astype(object).where(col.notna(), None)
        read, _ = parse_series(texts.map(lambda v: v if v is None else str(v)), q.kind, field_of(header)[1])
        values.append(np.asarray(read, dtype=float))
        widths.append(log_half_widths(texts.map(lambda v: v if v is None else str(v))))
    out = []
    first = values[0]
    for j in range(1, len(values)):
        both = present[:, 0] & present[:, j] & np.isfinite(first) & np.isfinite(values[j]) & (first > 0) & \
            (values[j] > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            off = np.abs(np.log(first / values[j]))
        bad = np.flatnonzero(both & (off > widths[0] + widths[j] + _UNITS_AGREE))
        for r in bad.tolist():  # rows that disagree: few, each said
            out.append((r, canon, f"{canon} is given twice with different values: {headers[0]!r} "
                                  f"({_short(cols[0].iat[r])}, {sig(first[r])} {q.unit}) and {headers[j]!r} "
                                  f"({_short(cols[j].iat[r])}, {sig(values[j][r])} {q.unit}); keep the right one"))
    return out


def _same(values: list[Any]) -> bool:
    first = values[0]
    return all(type(v) is type(first) and v == first for v in values[1:])


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def header_field(header: str, columns: ColumnMap | None = None) -> str | None:
    """The field a header gives: the column map's when it names the header, else the built-in aliases' (None: an
    extra field)."""
    mapped = columns.lookup(header) if columns is not None else None
    return mapped[0] if mapped is not None else field_of(header)[0]


def _counts_under_hardware(frame: pd.DataFrame, headers: list[str], groups: dict[str, list[int]],
                           columns: ColumnMap | None) -> list[str]:
    """A column the headers map to the hardware ("GPU", beside "GPU type" in many tracking sheets) whose cells are
    all whole numbers counts the accelerators: moved to ``chips`` in ``groups`` when no other column gives them and
    a column map does not say otherwise, and said. An accelerator is never named by a number alone."""
    said: list[str] = []
    for i in list(groups.get("hardware", [])):
        if "chips" in groups or (columns is not None and columns.lookup(headers[i]) is not None):
            break
        cells = frame.iloc[:, i]
        given = cells[cells.notna()]
        if not len(given) or not map_unique(given, _whole_count).to_numpy(dtype=bool).all():
            continue
        groups["hardware"].remove(i)
        if not groups["hardware"]:
            del groups["hardware"]
        groups["chips"] = [i]
        said.append(f"column {headers[i]!r} holds whole numbers only: read as the accelerator count (chips), "
                    f"not the accelerator's name")
    return said


def _energies_under_power(frame: pd.DataFrame, headers: list[str], groups: dict[str, list[int]],
                          columns: ColumnMap | None) -> list[str]:
    """A column the headers map to a power whose cells all write an energy ("356 MWh" under LLaMA's "Total power
    consumption", "1,287 MWh" under Luccioni et al.'s "Power consumption"; none reads as a power) is the energy:
    moved to ``energy_mwh`` when no other column gives it and neither its header nor a column map names a unit,
    and said. Each distinct text is read once."""
    from audit.units import parse_series

    said: list[str] = []
    for canon in ("power_w_per_chip", "cluster_power_w"):
        for i in list(groups.get(canon, [])):
            if "energy_mwh" in groups or field_of(headers[i])[1] or (
                    columns is not None and columns.lookup(headers[i]) is not None):
                continue
            cells = frame.iloc[:, i]
            texts = pd.Series(pd.unique(cells[cells.notna()].astype(str)), dtype=object)
            if not len(texts):
                continue
            energy, _ = parse_series(texts, "energy")
            power, _ = parse_series(texts, "power")
            if not (np.isfinite(np.asarray(energy, dtype=float)).all()
                    and np.isnan(np.asarray(power, dtype=float)).all()):
                continue
            groups[canon].remove(i)
            if not groups[canon]:
                del groups[canon]
            groups["energy_mwh"] = [i]
            said.append(f"column {headers[i]!r} holds energies ({texts.iat[0]!r}), not a power: read as the "
                        f"energy (energy_mwh)")
    return said


def _described_beside_plain(headers: list[str], groups: dict[str, list[int]], extra: list[int],
                            columns: ColumnMap | None) -> list[str]:
    """Of two or more columns for one field, those whose brackets describe the figure instead of giving a unit
    ("CO2eq emissions (IT only)" beside "CO2 emissions", "Compute (estimated)" beside "Compute") are another figure
    of the field: kept as extra fields, and said, when exactly one column gives the field plainly (no bracket, or a
    unit of it). Otherwise the columns are refused as two for one field (:func:`canonical_columns`)."""
    said: list[str] = []
    for canon, positions in list(groups.items()):
        q = BY_NAME.get(canon)
        if q is None or len(positions) < 2 or (columns is not None and any(
                columns.lookup(headers[i]) is not None for i in positions)):
            continue
        described = [i for i in positions if (unit := field_of(headers[i])[1]) and not unit_fits(unit, canon)
                     and not per_chip_header_unit(unit, canon) and refused_header_unit(unit, canon) is None]
        plain = [i for i in positions if i not in described]
        if len(plain) != 1 or not described:
            continue
        groups[canon] = plain
        extra.extend(described)
        extra.sort()
        listed = " and ".join(repr(headers[i]) for i in described)
        said.append(f"{listed} {'is kept as an extra field' if len(described) == 1 else 'are kept as extra fields'}: "
                    f"{headers[plain[0]]!r} gives {canon}, and the words in brackets say another figure")
    return said


def _whole_count(value: Any) -> bool:
    """A cell that writes a positive whole number and nothing else ("8", 8, "1,024")."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value) and value >= 1 and float(value).is_integer()
    return isinstance(value, str) and re.fullmatch(r"\s*[1-9][0-9]{0,2}(?:,?[0-9]{3})*\s*", value) is not None


def canonical_columns(table: RawTable, file: str = "<input>", *, per_row: bool = False,
                      require_known: bool = False, columns: ColumnMap | None = None) -> RawTable:
    """Name each known column by its canonical field; keep every other column under its own header.

    ``per_row``: keys are mapped row by row (JSON, in-memory records): rows may spell a field differently, and a
    row giving one field under two spellings with different values is invalid on that field. Otherwise (tables)
    two columns for a field the audit uses refuse the file (:class:`LoadError` naming both).
    ``require_known``: a file in which no column is understood is unusable input (:class:`LoadError`).
    ``columns``: a column map (:mod:`audit.reading.colmap`): a header it names gives the field (and the unit of
    bare numbers) it says, before the built-in aliases; a header it lists under ``keep`` is an extra field that is
    not reported as unread.
    The result's ``sources`` say which header each row's cell was read from; ``unread`` lists the columns not
    understood, with a did-you-mean.
    """
    if not table.text_checked:
        frame, problems = _printable_frame(table)
    else:
        frame, problems = table.frame, list(table.problems)
    notes = list(table.notes)
    n = len(frame)
    headers = [str(c) for c in frame.columns]
    groups: dict[str, list[int]] = {}
    extra: list[int] = []
    header_units: dict[str, str | None] = dict(table.header_units)
    for i, header in enumerate(headers):
        mapped = columns.lookup(header) if columns is not None else None
        if mapped is not None:
            header_units[header] = mapped[1]
        canon = header_field(header, columns)
        if canon is None:
            extra.append(i)
        else:
            groups.setdefault(canon, []).append(i)
    if not per_row and "chip_hours" in groups and "wall_clock_days" not in groups:
        # "train_hours" beside "gpu_hours": the accelerator-hours have their column, so these hours are wall-clock.
        candidates = [i for i in extra if _wall_clock_hours_word(headers[i])]
        for i in candidates if len(candidates) == 1 else []:  # two such columns: a choice only the user can make
            extra.remove(i)
            groups["wall_clock_days"] = [i]
            header_units[headers[i]] = "hours"
            gpu = headers[groups["chip_hours"][0]]
            notes.append((file, f"{headers[i]!r} is read as the wall-clock hours: {gpu!r} gives the "
                                f"accelerator-hours"))
    for canon, positions in groups.items():  # the canonical spelling first, then the file's order
        positions.sort(key=lambda i: (headers[i] != canon, i))
    if not per_row:
        notes.extend((file, said) for said in _described_beside_plain(headers, groups, extra, columns))
    notes.extend((file, said) for said in _header_unit_notes(headers, groups, columns))
    if not per_row:
        notes.extend((file, said) for said in _counts_under_hardware(frame, headers, groups, columns))
        notes.extend((file, said) for said in _energies_under_power(frame, headers, groups, columns))

    if not per_row:
        notes.extend((file, said) for said in _refuse_repeated_headers(file, headers, extra, columns))
    whole_rows = {pos for pos, fld, _ in problems if not fld}
    if require_known and not groups and len(whole_rows) < n:
        raise NothingToRead(file, _nothing_understood(headers, per_row))
    if require_known and groups and len(whole_rows) < n and not any(
            g in BY_NAME or g in ("hardware", "phases") for g in groups):
        # Only an id, a name or text: every claim would be "unchecked" and a CI run green on a file never read.
        raise NothingToRead(file, _nothing_to_check(headers, sorted(groups), per_row))

    take: list[int] = []
    names: list[str] = []
    merged: dict[str, Any] = {}
    sources: dict[str, pd.Categorical] = {}
    for canon, positions in groups.items():
        if len(positions) == 1:
            take.append(positions[0])
            names.append(canon)
            sources[canon] = pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), [headers[positions[0]]])
            continue
        shown = [headers[i] for i in positions]
        in_units = not per_row and _in_different_units(shown, canon, columns)
        if not per_row and canon not in DISPLAY_ONLY and not in_units:
            listed = " and ".join(repr(h) for h in shown)
            raise LoadError(file, f"columns {listed} both give {canon} ({_label(canon)}); keep one "
                                  f"(which one is meant cannot be guessed)")
        cols = [frame.iloc[:, i] for i in positions]
        present = np.column_stack([c.notna().to_numpy(dtype=bool) for c in cols])
        count = present.sum(axis=1)
        chosen = np.where(count > 0, present.argmax(axis=1), 0)
        arrays = [c.to_numpy(dtype=object) for c in cols]
        value = np.full(n, None, dtype=object)
        for j, arr in enumerate(arrays):
            at = chosen == j
            value[at] = arr[at]
        merged[canon] = value
        sources[canon] = pd.Categorical.from_codes(chosen.astype(np.int16), shown)
        if canon in DISPLAY_ONLY:
            for j, arr in enumerate(arrays):  # each other spelling kept where it was not the one used
                rest = np.where(chosen == j, None, arr)
                if pd.notna(rest).any():
                    merged[shown[j]] = rest
            listed = " and ".join(repr(h) for h in shown)
            notes.append((file, f"{listed} both give {canon}: the first given in a row is used, the other is kept "
                                f"as an extra field"))
            continue
        if in_units:
            # One figure in two units (GPT-3's Table D.1: "Total train compute (PF-days)" and "(flops)"): the first
            # given is used, and a row whose columns disagree beyond the precision of their figures is invalid on it.
            listed = " and ".join(repr(h) for h in shown)
            notes.append((file, f"{listed} both give {canon} in different units: the first given in a row is "
                                f"used, and each row's figures must agree"))
            problems.extend(_disagreeing_units(cols, shown, canon, present))
            continue
        for r in np.flatnonzero(count >= 2):  # a row naming the field twice: rare, looked at one by one
            given = [(shown[j], arrays[j][r]) for j in range(len(arrays)) if present[r, j]]
            if not _same([v for _, v in given]):
                said = ", ".join(f"{h!r} ({_short(v)})" for h, v in given)
                problems.append((int(r), canon, f"{canon} is given {len(given)} times with different values, as "
                                                 f"{said}; keep one"))
    for i in extra:
        take.append(i)
        names.append(headers[i])
    # A column taken as it is keeps its Arrow text under its new name (a frame made printable is all new arrays).
    arrow_text = {name: table.arrow_text[headers[i]] for i, name in zip(take, names)
                  if table.text_checked and headers[i] in table.arrow_text}
    # Every column where it was (the usual table): the frame as it is under the new names, not a copy of it.
    out = frame.copy(deep=False) if take == list(range(len(headers))) else frame.iloc[:, take]
    out.columns = names
    if merged:
        out = pd.concat([out, pd.DataFrame(merged, index=frame.index)], axis=1)

    # A problem reported under a key (a key given twice, a schema error) is a problem of the field it names.
    problems = [(pos, field_of(fld)[0] or fld if fld else fld, msg) for pos, fld, msg in problems]
    read = set(groups)
    unread = list(table.unread)
    kept = [headers[i] for i in extra if columns is not None and columns.kept(headers[i])]
    if kept:
        shown = ", ".join(repr(h) for h in kept[:5]) + (f" and {len(kept) - 5} more" if len(kept) > 5 else "")
        notes.append((file, f"{len(kept)} descriptive column{'s' if len(kept) != 1 else ''} of the column map "
                            f"({columns.origin}) kept as extra fields, not audited: {shown}"))
    kept_set = set(kept)
    for k, i in enumerate(i for i in extra if _key(headers[i]) not in NOTE_FIELDS and headers[i] not in kept_set):
        hint = did_you_mean(headers[i], read) if k < MAX_SUGGESTED else None
        unread.append((file, headers[i], hint))
    return RawTable(out, problems, rows=table.rows, files=table.files, sources=sources, unread=unread, notes=notes,
                    header_units=header_units, arrow_text=arrow_text, cut=table.cut)


#: Words of a header that say hours of a training run and nothing of accelerators ("train_hours", "run_hours").
_RUN_HOURS_WORDS = frozenset({"train", "training", "pretrain", "pretraining", "run", "total", "elapsed", "wall",
                              "clock", "wallclock", "time", "duration"})


def _wall_clock_hours_word(header: str) -> bool:
    """Whether a header is hours of a run in words that name no accelerator ("train_hours", "Training hours"):
    accelerator-hours or wall-clock, which the file's own accelerator-hours column then settles."""
    words = _snake(header).split("_")
    return len(words) >= 2 and words[-1] in ("hours", "hrs", "hr") and set(words[:-1]) <= _RUN_HOURS_WORDS


def _refuse_repeated_headers(file: str, headers: list[str], extra: list[int], columns: ColumnMap | None) -> list[str]:
    """A header written twice ("params,params"; the readers name the second "params.1", as pandas does) for a field
    the audit uses is two columns for one field: which one is meant cannot be guessed, so the file is refused. Any
    other header written twice is kept under the readers' names, which the file does not have: said (notes)."""
    named = set(headers)
    kept: dict[str, list[str]] = {}
    for i in extra:
        m = re.fullmatch(r"(?P<base>.+)\.(?P<k>[1-9][0-9]*)", headers[i])
        if not m or m.group("base") not in named:
            continue
        canon = header_field(m.group("base"), columns)
        if canon is not None and canon not in DISPLAY_ONLY:
            raise LoadError(file, f"the column {m.group('base')!r} is given {int(m.group('k')) + 1} times "
                                  f"({canon}: {_label(canon)}); keep one (which one is meant cannot be guessed)")
        kept.setdefault(m.group("base"), []).append(headers[i])
    return [f"the column {base!r} is given {len(names) + 1} times: "
            f"{'the second is' if len(names) == 1 else 'the others are'} kept as {', '.join(repr(n) for n in names)}"
            for base, names in kept.items()]


def _header_unit_notes(headers: list[str], groups: dict[str, list[int]], columns: ColumnMap | None) -> list[str]:
    """What the units in the headers' brackets did, where it is not the obvious: a unit of accelerator time that
    made the column chip-hours, and a unit the column's quantity cannot be written in (not used: its bare numbers
    are read in the quantity's own unit)."""
    out = []
    for canon, positions in groups.items():
        q = BY_NAME.get(canon)
        for i in positions:
            header = headers[i]
            if q is None or (columns is not None and columns.lookup(header) is not None):
                continue
            base, _ = canonical_column_and_unit(header)
            unit = field_of(header)[1]
            if not unit:
                continue
            refused = refused_header_unit(unit, canon)
            if base is None:  # no alias: its unit decided (:func:`_generic_field`)
                scale = unit_scale(unit, q.kind) if unit_fits(unit, canon) else None
                times = f" (× {sig(scale)} into {q.unit})" if scale not in (None, 1.0) and q.unit else ""
                out.append(f"{header!r} is read as {canon} ({q.label.lower()}) by its unit {unit!r}{times}")
            elif base != canon:
                what = "accelerator time" if accelerator_time(unit) else f"a unit of {q.label.lower()}"
                out.append(f"{header!r} is read as {canon}, not {base}: {unit!r} is {what}")
            elif refused:
                out.append(f"{header!r}: {unit!r} is not a unit of {q.label.lower()} ({refused}): the column's bare "
                           f"numbers are not read")
            elif not unit_fits(unit, canon) and not per_chip_header_unit(unit, canon):
                shown = f"in {q.unit}" if q.unit else "as numbers"
                out.append(f"{header!r}: {unit!r} is not a unit of {q.label.lower()}, so it is not used; the "
                           f"column's bare numbers are read {shown}")
    return out


def _label(canon: str) -> str:
    q = BY_NAME.get(canon)
    return q.label.lower() if q else canon


def _nothing_to_check(headers: list[str], understood: list[str], per_row: bool) -> str:
    what = "keys" if per_row else "columns"
    rest = [h for h in headers if header_field(h) is None]
    shown = []
    for h in rest[:5]:
        hint = did_you_mean(h)
        shown.append(f"{h} (did you mean {hint}?)" if hint else h)
    more = f" and {len(rest) - 5:,} more" if len(rest) > 5 else ""
    unread = f"; not understood: {', '.join(shown)}{more}" if shown else ""
    return (f"none of its {what} gives a figure to check: only {', '.join(understood)} understood{unread}; figures "
            f"are such as params, tokens, compute_flops, hardware, chips, wall_clock_days, chip_hours, mfu "
            f"(README: Input)")


def _nothing_understood(headers: list[str], per_row: bool) -> str:
    if not headers:
        return "no fields: nothing is stated, so nothing can be audited"
    what = "keys" if per_row else "columns"
    shown = []
    for h in headers[:5]:
        hint = did_you_mean(h)
        shown.append(f"{h} (did you mean {hint}?)" if hint else h)
    more = f" and {len(headers) - 5:,} more" if len(headers) > 5 else ""
    return (f"none of its {what} is understood ({', '.join(shown)}{more}); known fields are such as id, params, "
            f"tokens, compute_flops, hardware, chips, wall_clock_days, chip_hours, mfu (README: Input)")


#: How many cells of a row the title test reads (a header names its fields among its first columns, and a header
#: of 100,000 columns need not be read whole: that took seconds).
TITLE_CELLS = 200


def names_fields(cells: Sequence[Any], wanted: int) -> bool:
    """Whether a row's first :data:`TITLE_CELLS` cells name at least ``wanted`` known fields: the test that tells a
    table's header from a title or remark above it (CSV and spreadsheets)."""
    return fields_named(cells, wanted) >= wanted


def fields_named(cells: Sequence[Any], most: int = TITLE_CELLS) -> int:
    """How many of a row's first :data:`TITLE_CELLS` cells name a known field (counting stops at ``most``)."""
    found = 0
    for cell in cells[:TITLE_CELLS]:
        if isinstance(cell, str) and cell.strip() and field_of(cell.strip())[0] is not None:
            found += 1
            if found >= most:
                break
    return found


def below_group_headings(rows: Sequence[Sequence[Any]], header: int) -> int:
    """The header of a table whose columns are grouped under headings in the row above it (a spreadsheet's merged
    cells, "Model | Cluster | Efficiency", exported as a row of its own): from the row taken for the header, each
    next row that names more fields (at least two) is the header instead, the rows above it not read. ``rows``: the
    first rows, the last of them not a candidate (a header has a row below it)."""
    named = fields_named(rows[header]) if header < len(rows) else 0
    while header + 2 < len(rows):
        below = fields_named(rows[header + 1])
        if below < 2 or below <= named:
            break
        header, named = header + 1, below
    return header


def drop_empty_unnamed(frame: pd.DataFrame, file: str = "<input>") -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """Drop columns without a header and without a value (trailing commas); name the others by position, except a
    first one that names the rows (:func:`_names_rows`): read as ``name``, and said (the notes returned)."""
    renames: dict[Any, str] = {}
    drop: list[Any] = []
    notes: list[tuple[str, str]] = []
    for i, col in enumerate(frame.columns):
        if isinstance(col, str) and col.startswith("Unnamed: "):
            if frame[col].isna().all():
                drop.append(col)
            elif i == 0 and (first := _names_rows(frame, col)) is not None:
                renames[col] = "name"
                notes.append((file, f"the first column has no header and a different text in each row ({first!r}, "
                                    f"...): read as the rows' names"))
            else:
                renames[col] = f"column {i + 1}"
    if drop:
        frame = frame.drop(columns=drop)
    return (frame.rename(columns=renames) if renames else frame), notes


#: A cell that is a figure, not a name ("12", "1,024", "3.5%", "-").
_FIGURE_CELL = r"^\s*[-+~<>≈]?\s*[$]?[0-9.,]+\s*%?\s*$|^\s*[-–—]?\s*$"


def _names_rows(frame: pd.DataFrame, col: Any) -> str | None:
    """The first cell of a column without a header that names the rows, as a model card's or paper's table prints
    its model names in a first column with no header ("Llama 2 7B", "OPT-175B"): every cell given is a text and
    no figure, no two alike, and no other column gives the name. None when it does not."""
    given = frame[col][frame[col].notna()]
    if not len(given) or pd.api.types.infer_dtype(given, skipna=True) != "string" or given.duplicated().any():
        return None
    if given.str.contains(_FIGURE_CELL, regex=True).any():
        return None
    if any(field_of(str(c))[0] == "name" for c in frame.columns if c != col):
        return None
    return str(given.iat[0])
