"""Where the package's bundled files live: data, schemas and templates.

``schemas/`` and ``templates/`` sit at the top of the repository and are installed as ``audit.schemas`` and
``audit.templates`` (see ``pyproject.toml``). Running from a source checkout without an install, they are
found beside the package instead.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent


def _package_dir(package: str, checkout_dir: str) -> Path:
    try:
        path = Path(str(resources.files(package)))
        if path.is_dir():
            return path
    except ModuleNotFoundError:
        pass
    return _REPO / checkout_dir


def data_path(name: str) -> Path:
    """Path of a file in ``audit/data``."""
    return Path(__file__).resolve().parent / "data" / name


def schema_path(name: str) -> Path:
    """Path of a JSON schema in ``schemas/``."""
    return _package_dir("audit.schemas", "schemas") / name


def templates_dir() -> Path:
    """The folder holding the Jinja2 templates."""
    return _package_dir("audit.templates", "templates")
