"""The accelerator catalog: peak FLOP/s by precision, memory and TDP, read from ``audit/data/accelerators.csv``.

Lookup is by exact match of a normalized name (lowercase, vendor words and punctuation removed) against the
names, ids and aliases in the data file. There is no substring matching and no fallback: ``H1000`` is not an
``H100``, and an unknown name yields ``None`` plus close matches *of the same family* for the finding that reports
it (a ``GTX 1070`` may suggest a ``GTX 1080 Ti``, never an ``H100``).

A cell naming several accelerators (``"NVIDIA A100,NVIDIA V100"``, Epoch AI's way of writing a mixed cluster) is a
*mix*: :meth:`Catalog.lookup_mix` splits it and resolves each part, and :func:`mix_peak` gives the peak a check may
use (the chip-count-weighted mean when the counts are known, as the EU AI Act GPAI guidance averages it; without
counts only a peak that every part shares).
"""

from __future__ import annotations

import csv
import difflib
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, Sequence

from audit.lazy import pandas as pd  # imported on first use: quick start-up

from audit.resources import data_path

#: Words dropped before matching: vendor and brand words people add or omit freely.
_VENDOR_WORDS = re.compile(
    r"\b(nvidia|amd|radeon|google|intel|aws|amazon|tesla|instinct|geforce|habana|huawei|cloud|the)\b")
_PARENS = re.compile(r"\([^)]*\)")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")

PRECISION_COLUMNS: dict[str, str] = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "bf16": "bf16_tflops",
    "fp16": "fp16_tflops",
    "fp8": "fp8_tflops",
}

#: A report that says only "16-bit" or "mixed precision" ran its matrix products in the part's 16-bit tensor format:
#: bf16 where the part has it (TPUs have nothing else), else fp16 (V100, T4, P100). Where a part has both, the
#: datasheets give them the same dense rate.
SIXTEEN_BIT = "16bit"


class _Peaks(dict):
    """Dense peaks by precision (TFLOP/s). Indexing with ``'16bit'`` gives the part's 16-bit tensor peak (bf16 where
    it has one, else fp16) without listing it: ``'16bit' in peaks`` stays False, and iteration shows the datasheet's
    columns only."""

    def __missing__(self, key: str) -> float:
        if key == SIXTEEN_BIT:
            for column in ("bf16", "fp16"):
                if column in self:
                    return self[column]
        raise KeyError(key)


#: Separators between the parts of a cell listing several accelerators (outside parentheses).
_MIX_SEPARATOR = re.compile(r"(?!(?<=\d),\d{3}(?!\d))[,;+&]|\band\b", re.I)  # not a thousands separator: 2,048

#: The leading letters of a normalized name: its product series (``h`` for H100/H800, ``gtx``, ``tpuv``, ``mi``).
_SERIES = re.compile(r"^[a-z]+")


#: Cloud TPU slice names (``v4-2048``, ``TPU v5p-8960``, ``v5litepod-16``, GPT-J's model card's "TPU v3-256 pod"):
#: the number counts TensorCores.
_TPU_SLICE = re.compile(r"^\s*(?:(?P<slices>[0-9]+)\s*[x×]\s*)?(?:google\s+)?(?:cloud\s+)?(?:tpu[\s_-]*)?"
                        r"(v\d+[a-z]*|v5litepod|v6e?)\s*-\s*(\d+)(?:\s+(?:tpu\s+)?(?:pods?|slices?))?\s*$", re.I)

#: A count of TPU TensorCores written as the hardware ("2048 TPU v3 cores": GShard, Lepikhin et al. 2020, Sec. 3),
#: read as the slice of that many cores.
_TPU_CORES = re.compile(r"^\s*([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)\s*(?:[x×]\s*)?(?:google\s+)?(?:cloud\s+)?"
                        r"tpu[\s_-]*(v\d+[a-z]*)\s+(?:tensor\s*)?cores?\s*$", re.I)

#: TensorCores per chip by TPU generation (Google Cloud TPU docs: v2-v4 and v5p have 2, v5e and v6e have 1).
TPU_CORES_PER_CHIP = {"v2": 2, "v3": 2, "v4": 2, "v5p": 2, "v5e": 1, "v5litepod": 1, "v6e": 1, "v6": 1}


def tpu_cores_per_chip(accel_id: str | None) -> int | None:
    """TensorCores per chip of a catalog TPU, by the generation its id names (``"tpu-v3"``: 2); None for any other
    part."""
    if not accel_id or not accel_id.startswith("tpu-"):
        return None
    return TPU_CORES_PER_CHIP.get(accel_id[len("tpu-"):].split("-")[0])


def normalize_name(name: str) -> str:
    """Normalize an accelerator name for matching: ``'NVIDIA A100-SXM4-80GB'`` -> ``'a100sxm480gb'``."""
    text = _PARENS.sub(" ", str(name).lower())
    text = _VENDOR_WORDS.sub(" ", text)
    return _NON_ALNUM.sub("", text)


def _lookup_keys(name: str) -> list[str]:
    """Keys to try for ``name``, most specific first: the words in parentheses kept, then dropped.

    ``'H100 (PCIe)'`` must find the PCIe card and ``'A100 (40GB)'`` the 40 GB one; dropping the parenthesized
    words first would match the bare ``H100`` / ``A100`` aliases, a different variant with another peak or
    memory. A parenthesized remark that names no variant (``'H100 (Hopper)'``) still falls back to ``h100``.
    """
    kept = _NON_ALNUM.sub("", _VENDOR_WORDS.sub(" ", str(name).lower().replace("(", " ").replace(")", " ")))
    dropped = normalize_name(name)
    return [kept, dropped] if kept != dropped else [dropped]


@dataclass(frozen=True)
class Accelerator:
    """One catalog row."""

    id: str
    name: str
    vendor: str
    unit: str
    memory_gb: float
    tdp_w: float
    peaks_tflops: dict[str, float]
    default_precision: str
    sparse_headline: bool
    source_compute: str
    source_memory: str
    source_tdp: str
    confidence: str
    notes: str
    family: str = ""

    def resolve_precision(self, precision: str | None) -> str | None:
        """The catalog column a precision refers to on this part: ``'16bit'`` is bf16 where the part has it, else
        fp16 (None when it has neither); any other precision is itself."""
        if precision == SIXTEEN_BIT:
            return "bf16" if "bf16" in self.peaks_tflops else "fp16" if "fp16" in self.peaks_tflops else None
        return precision

    def peak_flops(self, precision: str) -> float | None:
        """Dense peak FLOP/s for ``precision``, or None when the datasheet gives none."""
        value = self.peaks_tflops.get(self.resolve_precision(precision))
        return None if value is None else value * 1e12


class Catalog:
    """The accelerator catalog with alias lookup."""

    def __init__(self, frame: "pd.DataFrame | list[dict[str, Any]]", columns: Sequence[str] | None = None) -> None:
        """``frame``: the rows, as a DataFrame or as dicts of text (``columns``: their order), as read from
        accelerators.csv without pandas (so that ``train-audit hardware`` starts quickly)."""
        if isinstance(frame, list):
            records, self._frame = frame, None
            self._columns = list(columns) if columns is not None else list(dict.fromkeys(k for r in frame for k in r))
        else:
            self._frame = frame.reset_index(drop=True)
            records, self._columns = self._frame.to_dict("records"), [str(c) for c in self._frame.columns]
        self._records = records
        self._index: dict[str, int] = {}
        for i, row in enumerate(records):
            names = [row["id"], row["name"], *str(row.get("aliases") or "").split(";")]
            for raw in names:
                key = normalize_name(raw)
                if not key:
                    continue
                prior = self._index.get(key)
                if prior is not None and prior != i:
                    raise ValueError(
                        f"accelerators.csv: alias {raw!r} names both {records[prior]['id']} and {row['id']}"
                    )
                self._index[key] = int(i)
        self._rows = [self._make(row) for row in records]

    @property
    def columns(self) -> list[str]:
        """The catalog's column names (without building :attr:`frame`)."""
        return list(self._columns)

    @property
    def frame(self) -> "pd.DataFrame":
        """The catalog's rows as a DataFrame of text (built on first use)."""
        if self._frame is None:
            self._frame = pd.DataFrame(self._records, columns=self._columns).reset_index(drop=True)
        return self._frame

    @staticmethod
    def _make(row: Mapping[str, Any]) -> Accelerator:
        def num(col: str) -> float:
            value = row.get(col)
            present = value is not None and not (isinstance(value, float) and math.isnan(value))
            return float(value) if present and str(value).strip() != "" else float("nan")

        peaks = _Peaks({p: num(c) for p, c in PRECISION_COLUMNS.items() if not math.isnan(num(c))})
        return Accelerator(
            id=str(row["id"]),
            name=str(row["name"]),
            vendor=str(row.get("vendor") or ""),
            unit=str(row.get("unit") or ""),
            memory_gb=num("memory_gb"),
            tdp_w=num("tdp_w"),
            peaks_tflops=peaks,
            default_precision=str(row.get("default_precision") or "bf16"),
            sparse_headline=str(row.get("sparse_headline") or "").strip().lower() == "yes",
            source_compute=str(row.get("source_compute") or ""),
            source_memory=str(row.get("source_memory") or ""),
            source_tdp=str(row.get("source_tdp") or ""),
            confidence=str(row.get("confidence") or ""),
            notes=str(row.get("notes") or ""),
            family=str(row.get("family") or ""),
        )

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self):
        return iter(self._rows)

    def lookup(self, name: str) -> Accelerator | None:
        """The accelerator ``name`` refers to, or None when no name, id or alias matches it.

        A name matches when it is an alias (spacing, case and vendor words aside), or else when every word of it,
        marketing words aside ("Tensor Core GPU", "AI accelerator"), is a word of one catalog row's names and no
        other row's: ``"H100 80GB SXM5"`` (the alias is "H100 SXM5 80GB"), ``"NVIDIA B200-SXM-180GB"`` (MLPerf's
        name), ``"Blackwell B200"`` (the family's name). A word no row has (``"H100 NVL"`` where the catalog has
        no NVL) matches nothing: no variant is guessed."""
        if name is None:
            return None
        for key in _lookup_keys(name) + _lookup_keys(_plain(str(name))):
            i = self._index.get(key)
            if i is not None:
                return self._with_remarked_memory(name, self._rows[i])
        found = self._by_words(str(name))
        if found is None and (singular := _PLURAL.sub("", str(name))) != str(name):
            # "3072 NVIDIA H100s" (Databricks on DBRX), "A100s": a model number made plural. Tried only once the
            # name as written matched nothing, so a name ending in S ("L40S") is itself.
            return self.lookup(singular)
        return found

    def _with_remarked_memory(self, name: str, row: Accelerator) -> Accelerator | None:
        """``row``, found for ``name``, unless a remark in parentheses gives another memory size: then the variant
        of that size, or None. "H100 (94GB memory)" is the 94 GB NVL card, not the 80 GB SXM5 that "H100" alone
        reads as; "H100 (40GB)" names no H100 there is, and is not resolved (no variant is guessed)."""
        remarked = [float(m) for r in _PARENS.findall(str(name)) for m in _MEMORY_SIZE.findall(r)]
        if not remarked or any(math.isclose(m, row.memory_gb, rel_tol=0.01) for m in remarked):
            return row
        bare = _PARENS.sub(" ", str(name)).strip()
        sized = [found for m in remarked if (found := self.lookup(f"{bare} {m:g}GB")) is not None
                 and math.isclose(found.memory_gb, m, rel_tol=0.01)]
        return sized[0] if len(sized) == 1 else None

    def _by_words(self, name: str) -> Accelerator | None:
        """The one row whose names hold every word of ``name`` (:meth:`lookup`), else None."""
        if len(split_mix(name)) > 1 or "/" in name:
            return None  # a list of accelerators is not one name (resolve_mix)
        words = _words(_plain(name))
        if not words:
            return None
        vocab, aliases = self._vocabulary()
        # Every word of the name is the row's, and every word of one of the row's names is the name's: "GTX 1080"
        # is not the "GTX 1080 Ti" (its "Ti" is missing), "RTX 6000" neither the Quadro nor the Ada card.
        found = [i for i, v in enumerate(vocab) if words <= v and any(a <= words for a in aliases[i])]
        return self._rows[found[0]] if len(found) == 1 else None

    def _vocabulary(self) -> tuple[list[frozenset[str]], list[list[frozenset[str]]]]:
        """Per row, every word of its names and family (and each word joined to the next), and the words of each of
        its names: what :meth:`_by_words` matches a name against (made once)."""
        cached = self.__dict__.get("_vocab")
        if cached is None:
            names = [[r["id"], r["name"], *str(r.get("aliases") or "").split(";")] for r in self._records]
            cached = self.__dict__["_vocab"] = (
                [frozenset().union(*(_words(raw, pairs=True) for raw in (*row, rec.get("family") or "")))
                 for row, rec in zip(names, self._records)],
                [[w for w in map(_words, row) if w] for row in names])
        return cached

    def memory_variants(self, name: str | None) -> tuple[Accelerator, list[float]] | None:
        """When ``name`` gives no memory size and the catalog has variants of it with another memory: the row it
        reads as and the memory sizes (GB) of all the variants, sorted (``"A100"`` -> the SXM4 80GB row, [40, 80]);
        else None. A bare family name goes to the variant most used for training, the larger memory on a tie
        (ACCELERATORS.md): lenient for the memory check, and worth saying."""
        if name is None or _MEMORY_SIZE.search(str(name)):
            return None
        # Once per distinct name: M001's words ask for every claim.
        known = self.__dict__.setdefault("_memory_variants_of", {})
        if name not in known:
            known[name] = self._memory_variants(str(name))
        return known[name]

    def _memory_variants(self, name: str) -> tuple[Accelerator, list[float]] | None:
        hit = self.lookup(name)
        words = _words(_plain(str(name)))
        if hit is None or not words:
            return None
        sizes = sorted({row.memory_gb for row, v in zip(self._rows, self._vocabulary()[0])  # same unit: not a GCD
                        if words <= v and row.unit == hit.unit and row.memory_gb and math.isfinite(row.memory_gb)})
        return (hit, sizes) if len(sizes) > 1 and hit.memory_gb in sizes else None

    def close_matches(self, name: str, n: int = 3) -> list[str]:
        """Display names of the catalog entries closest to ``name`` *of the same family* (for an 'unknown
        accelerator' finding); empty when no catalog family shares its series.

        The family of an unknown name is that of the catalog names in the same product series, the letters its
        normalized form starts with (``h`` in ``H1000``: H100, H800, H200; ``gtx`` in ``GTX 1070``; ``mi`` in
        ``MI400``). ``GTX 1080 Ti`` never suggests an H100, and a name whose series no catalog row shares
        (``Graphcore IPU``, ``CPU``, a bare ``3090``) gets no suggestion.
        """
        within = self._names_within(name)
        if within:  # a sentence naming a known part ("on average 1024 A100 40GB GPUs in 128 p4d instances")
            return within[:n]
        key = normalize_name(name)
        series = _series(key)
        families = self._series_families().get(series, frozenset())
        if not families:
            # A misspelt series ("Guadi 2", "Trainum2") has no family: only a near spelling of a whole name.
            near = difflib.get_close_matches(key, list(self._index), n=n, cutoff=0.8)
            return list(dict.fromkeys(self._rows[self._index[k]].name for k in near))[:n]
        candidates = [k for k, i in self._index.items() if self._rows[i].family in families]
        # Names of the same series first (GTX 1070: the GTX cards), then the rest of the family (P40: P100, then
        # the Quadro P600).
        same_series = [k for k in candidates if _series(k) == series]
        keys = difflib.get_close_matches(key, same_series, n=n * 4, cutoff=0.5)
        keys += [k for k in difflib.get_close_matches(key, candidates, n=n * 4, cutoff=0.5) if k not in keys]
        seen: list[str] = []
        for k in keys:
            display = self._rows[self._index[k]].name
            if display not in seen:
                seen.append(display)
        return seen[:n]

    def _names_within(self, text: str) -> list[str]:
        """Display names of the catalog parts that a longer text (three words or more) names within it, the longest
        names first: Falcon2-11B's card writes its hardware as "on average 1024 A100 40GB GPUs in 128 p4d
        instances", which no name matches whole (and whose close matches by spelling were none)."""
        words = re.findall(r"[A-Za-z0-9][A-Za-z0-9.\-]*", str(text))
        if len(words) < 3:
            return []
        found: list[str] = []
        for size in (4, 3, 2, 1):
            for i in range(len(words) - size + 1):
                window = " ".join(words[i:i + size])
                if not any(c.isdigit() for c in window):  # a part's name has a model number ("A100", "v4")
                    continue
                hit = self.lookup(window)
                if hit is not None and hit.name not in found:
                    found.append(hit.name)
        return found

    def _series_families(self) -> dict[str, frozenset[str]]:
        """Product series (leading letters of a normalized name) -> the families of the rows named so."""
        cached = self.__dict__.get("_families_by_series")
        if cached is None:
            found: dict[str, set[str]] = {}
            for k, i in self._index.items():
                family = self._rows[i].family
                if family and _series(k):
                    found.setdefault(_series(k), set()).add(family)
            cached = self.__dict__["_families_by_series"] = {s: frozenset(f) for s, f in found.items()}
        return cached

    # ------------------------------------------------------------------------------------------ mixes

    def resolve_mix(self, text: str | None) -> list[tuple[str, Accelerator | None]] | None:
        """Each part of a cell listing several accelerators with its catalog row (None when unknown), in order;
        None when the text is not such a list (one name, known or not, or a name the catalog knows whole).

        ``"NVIDIA A100,NVIDIA V100"`` -> ``[("NVIDIA A100", <a100>), ("NVIDIA V100", <v100>)]``. Parts are
        separated by ``,`` ``;`` ``+`` ``&`` or the word ``and``, outside parentheses (a name such as
        ``B300 (Blackwell Ultra, HGX)`` is one part).
        """
        if text is None or self.lookup(text) is not None:
            return None
        parts = split_mix(text)
        if len(parts) < 2:
            counted = self.counted(text)
            if counted is not None:  # "256x A100": one accelerator, counted
                return [(text, counted[1])]
            # "Google TPU v3/TPU v4" (Chinchilla: trained on both): a slash separates names only when the whole is
            # no name and every part is one (ROCm's "MI250X / MI250" names one device, found whole above).
            slashed = [p.strip() for p in str(text).split("/") if p.strip()]
            found = [(part, self.lookup(part)) for part in slashed]
            if len(found) >= 2 and all(accel is not None for _, accel in found):
                return found
            return None
        return [(part, self._part(part)) for part in parts]

    def _part(self, part: str) -> Accelerator | None:
        """A part of a mix: a catalog name, or one with its count ("256x A100")."""
        hit = self.lookup(part)
        if hit is None:
            counted = self.counted(part)
            hit = counted[1] if counted is not None else None
        return hit

    def counted(self, text: str | None) -> tuple[float, Accelerator] | None:
        """The chips and the accelerator of a text that writes a count beside a catalog name: ``"256x A100"``,
        ``"256 × H100"``, ``"2,048 H100 GPUs"``, ``"A100 x 256"``, ``"H100 (512)"``; or a count of systems whose
        size is known (``audit/data/systems.csv``: ``"8x DGX A100"`` is 64 A100, ``"DGX H100 (768 nodes)"`` 6,144
        H100) or written (``"768 nodes of 8 H100"``). None when the text is a catalog name whole (``RTX 3090``),
        gives no count and name the catalog knows, or counts systems of a size it does not say (``"96 nodes of
        H100"``, ``"16x HGX H100"``: boards of 4 or 8)."""
        if text is None:
            return None
        joined = split_mix(str(text))  # "1024, 16 GB NVIDIA V100 GPUs": the count joined to what it counts
        text = joined[0] if len(joined) == 1 else text
        systems = _systems_counted(str(text))
        if systems is not None:  # "768 DGX H100 nodes", "DGX A100 (140 nodes)": systems of a known size
            count, name = systems
            hit = self.lookup(name)
            return (count, hit) if hit is not None else None
        whole = self.lookup(text) is not None  # "H100 (512)" is found whole: only its parenthesis counts
        for pattern in _COUNTED[2:] if whole else _COUNTED:
            m = pattern.match(str(text))
            if m and not _SYSTEM.search(m.group("name")):
                count = float(m.group("count").replace(",", ""))
                # The device word is the name's own when the name needs it ("64 second-generation TPUs").
                hit = self.lookup(m.group("name")) or self.lookup(str(text)[m.start("name"):].strip())
                if hit is not None and count >= 1 and count == int(count):
                    return count, hit
        return None

    def mix_counts(self, text: str | None) -> list[float] | None:
        """The chips of each part of a cell that lists accelerators with their counts (``"256x A100 + 256x
        H100"`` -> ``[256, 256]``), in the order of :meth:`resolve_mix`; None unless every part gives one."""
        resolved = self.resolve_mix(text)
        if not resolved:
            return None
        counts = [self.counted(part) for part, _ in resolved]
        if any(c is None for c in counts):
            return None
        return [c[0] for c in counts if c is not None]

    def tpu_slice(self, text: str | None) -> tuple[Accelerator, float] | None:
        """The TPU and its TensorCores of a Cloud TPU slice name (``"v4-2048"``, ``"TPU v3-256 pod"``; several slices:
        ``"32x v5e-256"``) or of a count of cores written as the hardware (``"2048 TPU v3 cores"``); None for any other
        text. The chips are the cores over :data:`TPU_CORES_PER_CHIP` of the generation."""
        if text is None:
            return None
        m = _TPU_SLICE.match(str(text))
        if m:
            gen = m.group(2).lower()
            hit = self.lookup(f"TPU {'v5e' if gen == 'v5litepod' else gen}")
            # Several slices of one size (MaxText's multislice, "32x v5e-256"; Marin 8B's "2x v5e-256"): their cores.
            slices = int(m.group("slices")) if m.group("slices") else 1
            return (hit, float(m.group(3)) * slices) if hit is not None and slices >= 1 else None
        m = _TPU_CORES.match(str(text))
        if m and (hit := self.lookup(f"TPU {m.group(2)}")) is not None:
            return hit, float(m.group(1).replace(",", ""))
        return None

    def lookup_mix(self, text: str | None) -> list[Accelerator] | None:
        """The accelerators of a cell that lists several, in order and without repeats; None when the text is not
        such a list (use :meth:`lookup`) or when one of its parts is unknown (:meth:`resolve_mix` says which).

        A list of one means the cell named the same accelerator several times (``"A100, NVIDIA A100"``).
        """
        resolved = self.resolve_mix(text)
        if resolved is None or any(accel is None for _, accel in resolved):
            return None
        unique: list[Accelerator] = []
        for _, accel in resolved:
            if accel is not None and all(accel.id != u.id for u in unique):
                unique.append(accel)
        return unique

    def by_id(self, accel_id: str) -> Accelerator:
        """The row with this id (KeyError if absent)."""
        by_id = self.__dict__.get("_by_id")
        if by_id is None:
            by_id = self.__dict__["_by_id"] = {row.id: row for row in self._rows}
        return by_id[accel_id]


#: Words of marketing around a part's name ("NVIDIA H100 Tensor Core GPU", "Intel Gaudi2 AI accelerator").
_FILLER = re.compile(r"\b(?:tensor\s*cores?|(?:ai\s+)?accelerators?|gpus?|processors?|cards?|pods?)\b")
#: A memory size in a name ("80GB", "40 GB", "H100-80G", "32GiB", "H100 (94GB memory)"): its number in GB.
_MEMORY_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:gb|gib|g)\b", re.IGNORECASE)
#: A memory size written with "G" for GB ("H100-80G") or apart from its number ("16 GB"): one word, as the
#: catalog's names write it ("80gb", "16gb").
_GIGABYTES = re.compile(r"(?<=\d)(?:\s?g|\s+gi?b)\b")


#: The "s" that makes a model number or a processor's name plural ("H100s", "A100s", "second-generation TPUs").
_PLURAL = re.compile(r"(?<=\d)s\b|(?<=[a-z]pu)s\b", re.IGNORECASE)


def _plain(name: str) -> str:
    """A name without marketing words, its memory written in GB as one word (``"H100-80G"`` -> ``"h100-80gb"``,
    ``"16 GB NVIDIA V100"`` -> ``"16gb nvidia v100"``)."""
    return _GIGABYTES.sub("gb", _FILLER.sub(" ", name.lower()))


def _words(text: str, pairs: bool = False) -> frozenset[str]:
    """The words of a name for :meth:`Catalog.lookup`, without vendor words (``"H100 80GB SXM5"`` -> h100, 80gb,
    sxm5); ``pairs``: also each word joined to the next (the catalog's "Gaudi 2" is the name's "Gaudi2")."""
    words = re.findall(r"[a-z0-9]+", _VENDOR_WORDS.sub(" ", str(text).lower()))
    if pairs:
        words += [a + b for a, b in zip(words, words[1:])]
    return frozenset(words)


def _series(key: str) -> str:
    """The product series of a normalized name: its leading letters (``'gtx'`` for ``'gtx1080ti'``)."""
    m = _SERIES.match(key)
    return m.group(0) if m else ""


#: A count written beside an accelerator's name: before it ("256x A100", "256 × A100", "2,048 H100 GPUs", "8 V100")
#: or after it ("A100 x 256", "A100 ×256", "H100 (512)", "H100 (512 GPUs)").
_COUNT = r"(?P<count>\d{1,3}(?:,\d{3})+|\d+)"
_DEVICES = r"(?:\s+(?:GPUs?|TPUs?|chips?|accelerators?|devices?))?"
_COUNTED = (
    re.compile(rf"^\s*{_COUNT}\s*(?:[x×*]\s*|\s+)(?P<name>.*?[A-Za-z].*?){_DEVICES}\s*$", re.IGNORECASE),
    re.compile(rf"^\s*(?P<name>.*?[A-Za-z].*?)\s*[x×*]\s*{_COUNT}{_DEVICES}\s*$", re.IGNORECASE),
    re.compile(rf"^\s*(?P<name>.*?[A-Za-z].*?)\s*\(\s*{_COUNT}{_DEVICES}\s*\)\s*$", re.IGNORECASE),
)


#: Words that make a name a system of several accelerators ("8x DGX A100" is 64 GPUs, "GB200 NVL72" a rack of 72):
#: a count beside it counts systems, not chips, and is not read.
_SYSTEM = re.compile(r"\b(?:dgx|hgx|nodes?|servers?|hosts?|pods?|superpods?|boards?|systems?|racks?|trays?|nvl\d+"
                     r"|clusters?)\b", re.IGNORECASE)


#: A count of systems (servers, nodes, DGX boxes): before the name ("768 DGX H100 nodes", "8x DGX A100"), in
#: parentheses after it ("DGX H100 (768 nodes)"), or of a size written in ("768 nodes of 8 H100", "96 nodes x 8
#: A100 GPUs", "768 nodes with 8x H100 each").
_NODE_WORDS = r"(?:nodes?|servers?|systems?|machines?|hosts?|boxes|racks?)"
_SYSTEMS_BEFORE = re.compile(rf"^\s*{_COUNT}\s*(?:[x×*]\s*|\s+)(?P<name>.*?[A-Za-z].*?)(?:\s+{_NODE_WORDS})?\s*$",
                             re.IGNORECASE)
_SYSTEMS_AFTER = re.compile(rf"^\s*(?P<name>.*?[A-Za-z].*?)\s*\(\s*{_COUNT}\s+{_NODE_WORDS}\s*\)\s*$", re.IGNORECASE)
_SYSTEMS_SIZED = re.compile(
    rf"^\s*{_COUNT}\s+{_NODE_WORDS}\s*(?:of|with|[x×*])\s*(?P<per>\d+)\s*(?:[x×*]\s*)?(?P<name>.*?[A-Za-z].*?)"
    r"(?:\s+(?:GPUs?|TPUs?|chips?|accelerators?))?(?:\s+each)?\s*$", re.IGNORECASE)


@lru_cache(maxsize=1)
def _system_sizes() -> tuple[tuple[re.Pattern[str], int], ...]:
    """The systems of a known number of accelerators (``audit/data/systems.csv``, each with its datasheet)."""
    with open(data_path("systems.csv"), newline="", encoding="utf-8") as fh:
        return tuple((re.compile(row["pattern"], re.IGNORECASE), int(row["accelerators"]))
                     for row in csv.DictReader(fh))


@lru_cache(maxsize=4096)
def _systems_counted(text: str) -> tuple[float, str] | None:
    """(accelerators, the name to look up) of a text that counts systems of a known or written size, else None."""
    m = _SYSTEMS_SIZED.match(text)
    if m:
        count, per = float(m.group("count").replace(",", "")), int(m.group("per"))
        return (count * per, m.group("name")) if count >= 1 and per >= 1 else None
    for pattern in (_SYSTEMS_AFTER, _SYSTEMS_BEFORE):
        m = pattern.match(text)
        if m is None:
            continue
        name = m.group("name")
        sizes = [size for known, size in _system_sizes() if known.search(name)]
        count = float(m.group("count").replace(",", ""))
        if len(sizes) == 1 and count >= 1:
            return count * sizes[0], name
    return None


#: A count written right before a word for systems ("96 nodes", "(140 servers)"), not the digits ending a name
#: ("H100 nodes" counts no 100 nodes).
_NODE_COUNT = re.compile(rf"(?<![\w.]){_COUNT}\s+{_NODE_WORDS}\b", re.IGNORECASE)

#: Systems of a size the text does not give, counted around an accelerator's name: "96 H100 nodes", "4x A100
#: servers", "96 nodes of H100".
_SYSTEMS_UNSIZED = (
    re.compile(rf"^\s*{_COUNT}\s*(?:[x×*]\s*|\s+)(?P<name>.*?[A-Za-z].*?)\s+(?P<word>{_NODE_WORDS})\s*$",
               re.IGNORECASE),
    re.compile(rf"^\s*{_COUNT}\s+(?P<word>{_NODE_WORDS})\s+(?:of|with)\s+(?P<name>.*?[A-Za-z].*?)\s*$", re.IGNORECASE),
)


def unsized_systems(text: object) -> tuple[str, str] | None:
    """(the accelerator's name, the count as written) of a text that counts systems of a size it does not give
    around the name ("96 H100 nodes": ("H100", "96 nodes")), so that the accelerator is read and the count is not
    read as chips; None for any other text, and for systems of a known or written size (:func:`_systems_counted`:
    "96 DGX H100 nodes" is 768 H100)."""
    if not isinstance(text, str) or _systems_counted(text) is not None:
        return None
    for pattern in _SYSTEMS_UNSIZED:
        m = pattern.match(text)
        if m is not None and not _SYSTEM.search(m.group("name")):
            return m.group("name"), f"{m.group('count')} {m.group('word')}"
    return None


def uncounted_systems(text: object) -> str | None:
    """The count of systems a hardware text writes when it does not give their size ("H100 (96 nodes)": how many
    H100 a node holds is not said), so that no chips are read from it: the count as written ("96 nodes"); None when
    the text writes none or its systems' size is known (:func:`_systems_counted`: "DGX H100 (768 nodes)")."""
    if not isinstance(text, str):
        return None
    if (unsized := unsized_systems(text)) is not None:
        return unsized[1]
    m = _NODE_COUNT.search(text)
    return m.group(0) if m is not None and _systems_counted(text) is None else None


def split_mix(text: str) -> list[str]:
    """The parts of a cell that may list several accelerators, split outside parentheses, in order.

    Separators are ``,`` ``;`` ``+`` ``&`` and the word ``and``; ``/`` is not one (``MI250X / MI250`` is ROCm's
    name of one device).

    ``"Google TPU v3, Google TPU v4"`` -> ``["Google TPU v3", "Google TPU v4"]``; a single name gives itself.
    """
    text = str(text)
    # The text with everything inside parentheses blanked out, so that only separators outside them are found.
    masked, depth = [], 0
    for ch in text:
        depth += ch == "("
        masked.append(ch if depth == 0 else "_")
        depth = max(0, depth - (ch == ")"))
    parts, start = [], 0
    for m in _MIX_SEPARATOR.finditer("".join(masked)):
        parts.append(text[start:m.start()])
        start = m.end()
    parts.append(text[start:])
    parts = [p.strip() for p in parts if p.strip()]
    if len(parts) > 1 and _BARE_COUNT.fullmatch(parts[0]):
        # "1024, 16 GB NVIDIA V100 GPUs" (DALL-E, Ramesh et al. 2021, Sec. 2.5): a count, then what it counts.
        parts[:2] = [f"{parts[0]} {parts[1]}"]
    return parts


#: A part of a list that is a count alone ("1024" of "1024, 16 GB NVIDIA V100 GPUs").
_BARE_COUNT = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+")


def mix_peak(accelerators: list[Accelerator], precision: str | None = None,
             counts: list[float] | None = None) -> float | None:
    """The peak FLOP/s per chip a check may use for a mix, or None when it cannot be known.

    Each part's dense peak is taken at ``precision`` (its own usual precision when None). With ``counts`` (chips
    of each part, same order) the peak is the count-weighted mean, the way the EU AI Act GPAI guidance averages
    a mixed cluster; without them only a peak every part shares is usable (``A100 40GB, A100 80GB``); parts with
    different peaks give None: the mix's peak cannot be checked. A part without a peak at that precision gives None.
    """
    if not accelerators:
        return None
    peaks = [a.peak_flops(precision or a.default_precision) for a in accelerators]
    if any(p is None for p in peaks):
        return None
    if counts is not None:
        if len(counts) != len(peaks) or any(not (c > 0) for c in counts):
            return None
        return sum(c * p for c, p in zip(counts, peaks)) / sum(counts)
    first = peaks[0]
    return first if all(abs(p - first) <= 1e-9 * first for p in peaks) else None


def mix_memory_gb(accelerators: list[Accelerator], counts: list[float] | None = None) -> float | None:
    """Memory per chip for a mix: the count-weighted mean with counts, else the value every part shares, else None."""
    if not accelerators:
        return None
    mems = [a.memory_gb for a in accelerators]
    if any(m != m for m in mems):  # NaN: a part with no memory figure
        return None
    if counts is not None:
        if len(counts) != len(mems) or any(not (c > 0) for c in counts):
            return None
        return sum(c * m for c, m in zip(counts, mems)) / sum(counts)
    return mems[0] if all(m == mems[0] for m in mems) else None


@lru_cache(maxsize=1)
def catalog_revision() -> str:
    """The date (ISO 8601) the bundled catalog was last revised, from ``audit/data/catalog_revision.json``; a test
    keeps it with the hash of ``accelerators.csv``, so the catalog cannot change without a new date."""
    with open(data_path("catalog_revision.json"), encoding="utf-8") as fh:
        return str(json.load(fh)["revised"])


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """The bundled catalog (read once per process)."""
    # The csv module, not pandas: every cell as text, empty cells as "" (read_csv with dtype=str,
    # keep_default_na=False reads the same).
    with open(data_path("accelerators.csv"), newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows = [{k: ("" if v is None else v) for k, v in row.items()} for row in reader]
        columns = list(reader.fieldnames or [])
    return Catalog(rows, columns)
