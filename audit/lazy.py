"""Modules imported on first use: ``from audit.lazy import pandas as pd`` lets a module name pandas in its code
(and, with ``from __future__ import annotations``, in its annotations) without importing it, so that commands that
never touch a DataFrame (``train-audit --help``, ``rules``, ``hardware``) start without pandas and pyarrow
(about 0.6 s on the benchmark machine)."""

from __future__ import annotations

import importlib
import types
from typing import Any


class LazyModule(types.ModuleType):
    """A stand-in for a module, importing it at the first attribute read (``pd.DataFrame``)."""

    def __getattr__(self, attr: str) -> Any:
        real = importlib.import_module(self.__name__)
        value = getattr(real, attr)
        return value

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}>"


#: pandas, imported when first used.
pandas = LazyModule("pandas")
