"""Renderers: one module per output format, all reading the same records (:mod:`audit.records`).

Each format is a function ``render(result, options) -> str | bytes`` registered under its name with
:func:`register` (flake8's formatter registry, coverage.py's reporters): a new format is one module in this
package. The modules are found by listing the package and imported only when a format is asked for, so that
the command line starts without Jinja2 or pyarrow.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from audit.result import AuditResult


@dataclass(frozen=True)
class Options:
    """What a renderer may be asked for: a title (HTML, Markdown), passing checks too (``verbose``), and a
    ``style(text, colour)`` function for terminal colour (identity when colour is off)."""

    title: str = "train-audit report"
    verbose: bool = False
    style: Callable[[str, str], str] | None = None
    #: The command that made the report (shown at the top of the HTML report), or None.
    command: str | None = None


RenderFunction = Callable[["AuditResult", Options], "str | bytes"]


@dataclass(frozen=True)
class Renderer:
    """A registered output format."""

    name: str
    render: RenderFunction
    #: Bytes that must not go to a terminal (Parquet).
    binary: bool = False
    description: str = ""


_REGISTRY: dict[str, Renderer] = {}
_DISCOVERED: list[bool] = []  # set once every module of the package has been imported


def register(name: str, *, binary: bool = False, description: str = "") -> Callable[[RenderFunction],
                                                                                   RenderFunction]:
    """Register ``render(result, options)`` as the output format ``name``."""
    def decorate(func: RenderFunction) -> RenderFunction:
        _REGISTRY[name] = Renderer(name=name, render=func, binary=binary, description=description)
        return func
    return decorate


def renderers() -> dict[str, Renderer]:
    """Every output format by name (imports the format modules of this package on first use)."""
    if not _DISCOVERED:
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")
        _DISCOVERED.append(True)
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Renderer:
    """The renderer of format ``name`` (KeyError when there is none)."""
    return renderers()[name]


__all__ = ["Options", "Renderer", "register", "renderers", "get"]
