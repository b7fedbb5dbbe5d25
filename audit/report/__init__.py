"""Renderers: one module per output format, all reading the same records (:mod:`audit.records`).

Each format is a function ``render(result, options) -> str | bytes`` registered under its name with
:func:`register` (flake8's formatter registry, coverage.py's reporters): a new format is one module in this
package. The modules are found by listing the package and imported only when a format is asked for, so that
the command line starts without Jinja2 or pyarrow: :data:`FORMAT_MODULES` says which module holds which formats,
so that naming the formats (``--format``'s choices and help) imports none of them and rendering one imports its
module only (the HTML renderer alone, with Jinja2 and the charts, costs about 50 ms of start-up). A module it
does not list is imported to learn its formats, so a new format still works as one new module; a test checks the
table against what the modules register.
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

#: The formats each module of this package registers (helpers register none), so that the format names are
#: known without importing the renderers. ``tests/test_startup.py`` checks it against the registry.
FORMAT_MODULES: dict[str, tuple[str, ...]] = {
    "ci": ("concise", "github"),
    "html": ("html",),
    "json_out": ("json",),
    "markdown": ("markdown",),
    "sarif": ("sarif",),
    "svg": (),
    "sweep": (),
    "table": ("csv", "parquet"),
    "text": ("text",),
}


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


def _package_modules() -> list[str]:
    return sorted(module.name for module in pkgutil.iter_modules(__path__))


def names() -> list[str]:
    """Every output format's name, sorted, importing only the modules :data:`FORMAT_MODULES` does not list."""
    found: set[str] = set()
    for module in _package_modules():
        if module in FORMAT_MODULES:
            found.update(FORMAT_MODULES[module])
        else:  # a module the table does not know yet: it says its formats by registering them
            before = set(_REGISTRY)
            importlib.import_module(f"{__name__}.{module}")
            found.update(set(_REGISTRY) - before)
    return sorted(found | set(_REGISTRY))


def get(name: str) -> Renderer:
    """The renderer of format ``name``, importing the module that holds it (KeyError when there is none)."""
    if name not in _REGISTRY:
        for module, formats in FORMAT_MODULES.items():
            if name in formats:
                importlib.import_module(f"{__name__}.{module}")
                break
    if name not in _REGISTRY:  # not in the table: look through every module
        return renderers()[name]
    return _REGISTRY[name]


__all__ = ["FORMAT_MODULES", "Options", "Renderer", "register", "renderers", "names", "get"]
