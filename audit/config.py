"""Configuration of an audit: tolerances, the utilization band and constants, each with its documented reason.

The defaults live in ``audit/data/thresholds.json`` (a data file, so that every figure carries its reason);
the command line overrides them. Nothing here computes: the engine, the rules and the explanations read it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from audit.resources import data_path

#: Tolerance of a relation rule that ``thresholds.json`` does not list (ok within 1.25x, warning within 2x).
DEFAULT_TOLERANCE: tuple[float, float] = (1.25, 2.0)


@lru_cache(maxsize=1)
def thresholds() -> dict[str, Any]:
    """The documented defaults as stored (``audit/data/thresholds.json``)."""
    data: dict[str, Any] = json.loads(data_path("thresholds.json").read_text(encoding="utf-8"))
    return data


@dataclass
class Config:
    """Tolerances and constants of one audit (defaults in ``audit/data/thresholds.json``, each with its reason)."""

    tolerances: dict[str, tuple[float, float]]
    #: The plausible band of a utilization (outside it: info) and, above it, the ceiling beyond which a
    #: utilization is a warning (above 100 %: an error).
    band: tuple[float, float]
    bytes_per_param: float
    tokens_per_param_optimal: float
    reasons: dict[str, str] = field(default_factory=dict)
    #: Training-state bytes per frozen parameter of an adapter fine-tune (LoRA): the weights alone.
    frozen_bytes_per_param: float = 2.0
    #: The same for QLoRA, whose frozen weights are stored in 4 bits.
    frozen_bytes_per_param_qlora: float = 0.5
    #: Bytes of 16-bit weights per parameter: the least a trained model's memory must hold.
    weight_bytes_per_param: float = 2.0
    #: FLOPs-per-token convention for architecture claims: auto (the most complete the fields allow), or one
    #: of :data:`audit.flops.CONVENTIONS`.
    convention: str = "auto"
    #: Halve the attention score/value FLOPs for causal masking (some codebases do; PaLM and Megatron do not).
    causal_halving: bool = False
    #: Utilization above which a value is a warning (measured matmul ceilings).
    ceiling: float = 0.8
    #: Utilization below which a value is a warning (figures that describe different things).
    floor: float = 0.01
    #: Wider (ok, warning) factors on the goodput side of a relation: a stated steady-state MFU above the
    #: end-to-end one (C003, C016).
    goodput: dict[str, tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Refuse a configuration no audit could mean (the command line refuses the same values as usage
        errors; a Config built in code gets a ValueError naming the field, never a check silently dropped)."""
        for name in ("bytes_per_param", "tokens_per_param_optimal", "frozen_bytes_per_param",
                     "frozen_bytes_per_param_qlora", "weight_bytes_per_param"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"Config.{name} must be a positive finite number, not {value!r}")
        low, high = self.band
        if not (math.isfinite(low) and math.isfinite(high) and 0 <= low < high):
            raise ValueError(f"Config.band must be two finite fractions with low < high, not {self.band!r}")
        for code, pair in {**self.tolerances, **self.goodput}.items():
            ok, warn = pair
            if not (math.isfinite(ok) and math.isfinite(warn) and 1 <= ok <= warn):
                raise ValueError(f"Config tolerance of {code} must be factors 1 <= ok <= warning, not {pair!r}")

    @classmethod
    def default(cls) -> "Config":
        """The documented defaults."""
        data = thresholds()
        tol = {code: (float(v["ok"]), float(v["warn"])) for code, v in data["relations"].items()}
        reasons = {code: v["why"] for code, v in data["relations"].items()}
        goodput = {code: (float(v["goodput_ok"]), float(v["goodput_warn"])) for code, v in data["relations"].items()
                   if "goodput_ok" in v}
        reasons.update({f"{code}-goodput": v["goodput_why"] for code, v in data["relations"].items()
                        if "goodput_why" in v})
        reasons["band"] = data["utilization_band"]["why"]
        reasons["floor"] = data["utilization_band"]["floor_why"]
        reasons["bytes_per_param"] = data["bytes_per_param"]["why"]
        reasons["tokens_per_param_optimal"] = data["tokens_per_param_optimal"]["why"]
        reasons["frozen_bytes_per_param"] = data["frozen_bytes_per_param"]["why"]
        reasons["weight_bytes_per_param"] = data["weight_bytes_per_param"]["why"]
        return cls(
            tolerances=tol,
            band=(float(data["utilization_band"]["low"]), float(data["utilization_band"]["high"])),
            ceiling=float(data["utilization_band"]["ceiling"]),
            floor=float(data["utilization_band"]["floor"]),
            goodput=goodput,
            bytes_per_param=float(data["bytes_per_param"]["value"]),
            tokens_per_param_optimal=float(data["tokens_per_param_optimal"]["value"]),
            reasons=reasons,
            frozen_bytes_per_param=float(data["frozen_bytes_per_param"]["value"]),
            frozen_bytes_per_param_qlora=float(data["frozen_bytes_per_param"]["qlora"]),
            weight_bytes_per_param=float(data["weight_bytes_per_param"]["value"]),
        )

    def tolerance(self, code: str) -> tuple[float, float]:
        """The (ok, warning) factors of a relation rule; :data:`DEFAULT_TOLERANCE` for one not configured."""
        return self.tolerances.get(code, DEFAULT_TOLERANCE)
