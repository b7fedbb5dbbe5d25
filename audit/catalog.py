"""The accelerator catalog: peak FLOP/s by precision, memory and TDP, read from ``audit/data/accelerators.csv``.

Lookup is by exact match of a normalized name (lowercase, vendor words and punctuation removed) against the
names, ids and aliases in the data file. There is no substring matching and no fallback: ``H1000`` is not an
``H100``, and an unknown name yields ``None`` plus close matches for the finding that reports it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from audit.resources import data_path

#: Words dropped before matching: vendor and brand words people add or omit freely.
_VENDOR_WORDS = re.compile(r"\b(nvidia|amd|radeon|google|intel|aws|amazon|tesla|instinct|geforce|habana|cloud|the)\b")
_PARENS = re.compile(r"\([^)]*\)")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")

PRECISION_COLUMNS: dict[str, str] = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "bf16": "bf16_tflops",
    "fp16": "fp16_tflops",
    "fp8": "fp8_tflops",
}


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

    def peak_flops(self, precision: str) -> float | None:
        """Dense peak FLOP/s for ``precision``, or None when the datasheet gives none."""
        value = self.peaks_tflops.get(precision)
        return None if value is None else value * 1e12


class Catalog:
    """The accelerator catalog with alias lookup."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame.reset_index(drop=True)
        self._index: dict[str, int] = {}
        for i, row in self.frame.iterrows():
            names = [row["id"], row["name"], *str(row.get("aliases") or "").split(";")]
            for raw in names:
                key = normalize_name(raw)
                if not key:
                    continue
                prior = self._index.get(key)
                if prior is not None and prior != i:
                    raise ValueError(
                        f"accelerators.csv: alias {raw!r} names both {self.frame.at[prior, 'id']} and {row['id']}"
                    )
                self._index[key] = int(i)
        self._rows = [self._make(row) for _, row in self.frame.iterrows()]

    @staticmethod
    def _make(row: pd.Series) -> Accelerator:
        def num(col: str) -> float:
            value = row.get(col)
            return float(value) if pd.notna(value) and str(value).strip() != "" else float("nan")

        peaks = {p: num(c) for p, c in PRECISION_COLUMNS.items() if not pd.isna(num(c))}
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
        )

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self):
        return iter(self._rows)

    def lookup(self, name: str) -> Accelerator | None:
        """The accelerator ``name`` refers to, or None when no name, id or alias matches exactly."""
        if name is None:
            return None
        for key in _lookup_keys(name):
            i = self._index.get(key)
            if i is not None:
                return self._rows[i]
        return None

    def close_matches(self, name: str, n: int = 3) -> list[str]:
        """Display names of the catalog entries closest to ``name`` (for an 'unknown accelerator' finding)."""
        key = normalize_name(name)
        keys = difflib.get_close_matches(key, list(self._index), n=n * 4, cutoff=0.5)
        seen: list[str] = []
        for k in keys:
            display = self._rows[self._index[k]].name
            if display not in seen:
                seen.append(display)
        return seen[:n]

    def by_id(self, accel_id: str) -> Accelerator:
        """The row with this id (KeyError if absent)."""
        by_id = self.__dict__.get("_by_id")
        if by_id is None:
            by_id = self.__dict__["_by_id"] = {row.id: row for row in self._rows}
        return by_id[accel_id]


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """The bundled catalog (read once per process)."""
    frame = pd.read_csv(data_path("accelerators.csv"), dtype=str, keep_default_na=False)
    return Catalog(frame)
