"""JSON text as every output writes it, with the standard library only (the ``rules`` and ``hardware`` commands
use it without importing the renderers, pandas or pyarrow)."""

from __future__ import annotations

import json
from typing import Any


def dumps(data: Any) -> str:
    """Deterministic JSON text (sorted nowhere it would reorder claims; NaN never written)."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
