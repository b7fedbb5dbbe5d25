"""Settings files: ``[tool.train-audit]`` in ``pyproject.toml``, or a ``train-audit.toml``, as ruff reads its own.

A setting is a long option of ``train-audit check`` (``fail-on``, ``tolerance``, ``band``, ``bytes-per-param``,
``select``, ``ignore``, ...; ``-`` or ``_`` alike), so every option of ``check`` (those added later included) can be
set in a file, and the command line overrides the file: the settings become click's ``default_map``.

The file is found by walking up from the current folder: in each folder a ``train-audit.toml`` wins over a
``pyproject.toml``, and a ``pyproject.toml`` counts only when it has a ``[tool.train-audit]`` table (ruff's rule).
``--config FILE`` names one; ``--isolated`` reads none. An unknown key, a value of the wrong type or a file that is
not TOML is an error naming the file and the key (exit 2), never a setting silently skipped.

TOML is read with the standard library (``tomllib``; ``tomli``, its backport, on Python 3.10).
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: The settings file of its own name, and the shared one; in one folder the first wins.
OWN_FILE = "train-audit.toml"
PYPROJECT = "pyproject.toml"
#: The table of ``pyproject.toml`` that holds the settings.
TABLE = "train-audit"
#: Options whose value is a path although their type is text ('-' for standard output): read from the settings
#: file's folder, as the click.Path options are (they were read from the current folder).
PATH_VALUED = frozenset({"output", "findings_path"})
#: Options of ``check`` that choose the settings themselves: not settings.
NOT_SETTINGS = frozenset({"config", "isolated", "help"})


class SettingsError(ValueError):
    """A settings file that cannot be used: the message names the file (and the key)."""


@dataclass(frozen=True)
class Settings:
    """The settings read from one file: ``values`` by key as written (``fail-on``, ``bytes_per_param``, ...)."""

    path: Path | None
    values: dict[str, Any] = field(default_factory=dict)


def find(start: Path | None = None) -> Path | None:
    """The settings file for ``start`` (default: the current folder): the nearest folder, walking up, with a
    ``train-audit.toml``, or a ``pyproject.toml`` that has a ``[tool.train-audit]`` table; None when there is none."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        own = folder / OWN_FILE
        if own.is_file():
            return own
        shared = folder / PYPROJECT
        if shared.is_file() and TABLE in _load(shared).get("tool", {}):
            return shared
    return None


def read(path: Path) -> Settings:
    """The settings in ``path``: the ``[tool.train-audit]`` table of a ``pyproject.toml``, the whole of any other
    TOML file (``train-audit.toml``)."""
    data = _load(path)
    if path.name != PYPROJECT:
        return Settings(path, data)
    tool = data.get("tool", {})
    if not isinstance(tool, dict) or TABLE not in tool:
        near = difflib.get_close_matches(TABLE, [str(k) for k in tool] if isinstance(tool, dict) else [], n=1)
        hint = f" ([tool.{near[0]}] is there: did you mean [tool.{TABLE}]?)" if near else ""
        raise SettingsError(f"{path}: no [tool.{TABLE}] table{hint}")
    table = tool[TABLE]
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: tool.{TABLE} must be a table of settings, e.g. [tool.{TABLE}]")
    return Settings(path, table)


def _load(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            data: dict[str, Any] = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: not UTF-8 ({exc.reason})") from None
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read the settings: {exc.strerror or exc}") from None
    return data


def _options(command: click.Command) -> dict[str, click.Option]:
    """The command's options by long name without dashes (``fail-on``), the names a setting may have."""
    out: dict[str, click.Option] = {}
    for param in command.params:
        if not isinstance(param, click.Option):
            continue
        for opt in (*param.opts, *param.secondary_opts):
            if opt.startswith("--"):
                name = opt[2:]
                if name not in NOT_SETTINGS and not (param.is_flag and param.secondary_opts
                                                     and opt in param.secondary_opts):
                    out[name] = param
    return out


def default_map(settings: Settings, command: click.Command, ctx: click.Context) -> dict[str, Any]:
    """The settings as click's ``default_map`` for ``command``: each key checked against the command's long
    options (an unknown key is an error with a did-you-mean) and each value converted as the option converts its
    own (an unusable value is an error naming the file and the key). A relative path in a path-valued setting
    is read from the settings file's folder, as ruff does."""
    options = _options(command)
    where = str(settings.path) if settings.path else "settings"
    out: dict[str, Any] = {}
    for key, value in settings.values.items():
        name = str(key).replace("_", "-")
        param = options.get(name)
        if param is None:
            near = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            if name == "tool":
                hint = f" (in {OWN_FILE} the settings are top-level keys, without a [tool.{TABLE}] table)"
            raise SettingsError(f"{where}: unknown setting {key!r}{hint}; the settings are the long options of "
                                f"`train-audit check`: {', '.join(sorted(options))}")
        assert param.name is not None
        if param.name in out:
            raise SettingsError(f"{where}: {key!r} is given twice (as '-' and '_' spellings)")
        value = _shape(where, str(key), name, value, param)
        if settings.path is not None and (isinstance(param.type, click.Path) or param.name in PATH_VALUED):
            value = _relative_to(settings.path.parent, value)
        try:
            converted = param.type_cast_value(ctx, value)
            if param.callback is not None and not param.is_eager:
                param.callback(ctx, param, converted)
        except click.BadParameter as exc:
            raise SettingsError(f"{where}: {key}: {exc.message}") from None
        out[param.name] = value
    return out


def _shape(where: str, key: str, name: str, value: Any, param: click.Option) -> Any:
    """A TOML value in the shape the option takes: a list for a repeatable option (a string is one item; the
    ``tolerance`` table ``{C001 = "1.3:2"}`` or ``{C001 = [1.3, 2]}`` becomes ``C001=1.3:2`` items), a boolean for a
    flag, a string or number otherwise (a list of words for ``fail-on``, joined by commas)."""
    if name == "tolerance" and isinstance(value, dict):
        items = []
        for code, spec in value.items():
            if isinstance(spec, list) and len(spec) == 2 and all(_is_number(x) for x in spec):
                spec = f"{spec[0]}:{spec[1]}"
            if not isinstance(spec, str):
                raise SettingsError(f'{where}: {key}.{code}: expected "OK:WARN" or [OK, WARN], e.g. {code} = "1.25:2"')
            items.append(f"{code}={spec}")
        value = items
    if param.multiple:
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                                  for v in value):
            raise SettingsError(f"{where}: {key}: expected a list of strings, e.g. {name} = [\"...\"]")
        return [str(v) for v in value]
    if param.is_flag:
        if not isinstance(value, bool):
            raise SettingsError(f"{where}: {key}: expected true or false, got {value!r}")
        return value
    if name == "fail-on" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SettingsError(f"{where}: {key}: expected a string or a number, got {_toml_type(value)}")
    return value


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _toml_type(value: Any) -> str:
    return {bool: "a boolean", list: "an array", dict: "a table"}.get(type(value), type(value).__name__)


def _relative_to(folder: Path, value: Any) -> Any:
    if isinstance(value, list):
        return [_relative_to(folder, v) for v in value]
    if isinstance(value, str) and value not in ("", "-") and not Path(value).is_absolute():
        return str(folder / value)
    return value


__all__ = ["Settings", "SettingsError", "find", "read", "default_map", "OWN_FILE", "PYPROJECT", "TABLE"]
