"""Where the package's bundled files live: data, schemas and templates.

``schemas/`` and ``templates/`` sit at the top of the repository and are installed inside the package as
``audit/schemas`` and ``audit/templates`` (see ``pyproject.toml``). An installed copy finds them beside its
modules; a source checkout (or an editable install) finds them at the top of the repository.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parent


def _bundled_dir(name: str) -> Path:
    installed = _PACKAGE / name
    return installed if installed.is_dir() else _REPO / name


def data_path(name: str) -> Path:
    """Path of a file in ``audit/data``."""
    return _PACKAGE / "data" / name


def schema_path(name: str) -> Path:
    """Path of a JSON schema in ``schemas/``."""
    return _bundled_dir("schemas") / name


def templates_dir() -> Path:
    """The folder holding the Jinja2 templates."""
    return _bundled_dir("templates")
