"""Configuration of an audit: tolerances, the utilization band and constants, each with its documented reason.

The defaults live in ``audit/data/thresholds.json`` (a data file, so that every figure carries its reason);
the command line overrides them. Nothing here computes: the engine, the rules and the explanations read it.
"""

from __future__ import annotations

import json
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
    band: tuple[float, float]
    bytes_per_param: float
    tokens_per_param_optimal: float
    reasons: dict[str, str] = field(default_factory=dict)
    #: FLOPs-per-token convention for architecture claims: auto (the most complete the fields allow), or one
    #: of :data:`audit.flops.CONVENTIONS`.
    convention: str = "auto"
    #: Halve the attention score/value FLOPs for causal masking (some codebases do; PaLM and Megatron do not).
    causal_halving: bool = False

    @classmethod
    def default(cls) -> "Config":
        """The documented defaults."""
        data = thresholds()
        tol = {code: (float(v["ok"]), float(v["warn"])) for code, v in data["relations"].items()}
        reasons = {code: v["why"] for code, v in data["relations"].items()}
        reasons["band"] = data["utilization_band"]["why"]
        reasons["bytes_per_param"] = data["bytes_per_param"]["why"]
        reasons["tokens_per_param_optimal"] = data["tokens_per_param_optimal"]["why"]
        return cls(
            tolerances=tol,
            band=(float(data["utilization_band"]["low"]), float(data["utilization_band"]["high"])),
            bytes_per_param=float(data["bytes_per_param"]["value"]),
            tokens_per_param_optimal=float(data["tokens_per_param_optimal"]["value"]),
            reasons=reasons,
        )

    def tolerance(self, code: str) -> tuple[float, float]:
        """The (ok, warning) factors of a relation rule; :data:`DEFAULT_TOLERANCE` for one not configured."""
        return self.tolerances.get(code, DEFAULT_TOLERANCE)
