"""Column maps: a user's headers (with their units) onto the canonical fields, from a TOML or JSON file.

A column map (``--columns MAP``; ``schemas/columns.schema.json``) names, for each header of a spreadsheet (or each
parameter or metric of an MLflow run), the canonical field it gives and the unit of the bare numbers under it::

    [columns]
    "GPU days" = { field = "chip_hours", unit = "GPU-days" }
    "compute (ZFLOP)" = "compute_flops"        # the unit in the header's brackets applies, as for any header
    "Model" = "name"

A header is matched ignoring case, spaces and punctuation (``GPU days`` is ``gpu_days``). A mapped header wins over
the built-in aliases; every other header is read as without a map. ``keep`` lists descriptive columns kept as extra
fields without a warning. A *profile* is a map shipped with the package (``audit/data/profiles/NAME.toml``,
``--profile NAME``); one that names ``recognize`` headers is applied by itself to a file that has enough of them
(Epoch AI's database), and the run says so. A map that cannot be used is a :class:`LoadError` naming the map file
and the key.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from audit.quantities import BY_NAME, INPUT_QUANTITIES, TEXT_FIELDS, UNIT_HINT
from audit.reading.errors import LoadError
from audit.resources import data_path, schema_path
from audit.units import UnitError, unit_scale

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 reads TOML with tomli (a dependency there)
    import tomli as tomllib

__all__ = ["ColumnMap", "combine", "load_column_map", "profile", "profile_names", "recognize", "resolve_maps"]

#: Fields a map may name: every input quantity, every text field, and ``phases``.
MAP_FIELDS: tuple[str, ...] = (*INPUT_QUANTITIES, *TEXT_FIELDS, "phases")

#: ``--profile none``: read without any profile (none is recognised either).
NO_PROFILE = "none"


def header_key(header: str) -> str:
    """How headers are compared: lowercase letters and digits only (``GPU days`` == ``gpu_days``)."""
    return "".join(ch for ch in str(header).lower() if ch.isalnum())


@dataclass(frozen=True)
class ColumnMap:
    """A column map: header key -> (field, unit of bare numbers or None), plus columns kept without a warning.

    ``origin`` names the map in messages and notes (its file, or ``profile 'epoch'``)."""

    name: str
    origin: str
    columns: Mapping[str, tuple[str, str | None]]
    headers: Mapping[str, str] = field(default_factory=dict)  # header key -> the header as the map writes it
    keep: frozenset[str] = frozenset()
    recognize: tuple[str, ...] = ()
    recognize_min: int = 0
    description: str = ""

    def lookup(self, header: str) -> tuple[str, str | None] | None:
        """The field a header gives and the unit of its bare numbers (the map's, else the one in the header's
        brackets), or None when the map does not name the header."""
        hit = self.columns.get(header_key(header))
        if hit is None:
            return None
        fld, unit = hit
        if unit is None:
            m = UNIT_HINT.match(str(header))
            unit = m.group("unit") if m and m.group("base") else None
        return fld, unit

    def kept(self, header: str) -> bool:
        """Whether the map lists the header as a descriptive column (kept as an extra field, no warning)."""
        return header_key(header) in self.keep

    def matches(self, headers: Iterable[str]) -> bool:
        """Whether a file with these headers is one this profile recognises."""
        if not self.recognize:
            return False
        have = {header_key(h) for h in headers}
        return sum(header_key(h) in have for h in self.recognize) >= self.recognize_min


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(schema_path("columns.schema.json").read_text(encoding="utf-8"))
    return schema


def _key_path(path: Iterable[Any]) -> str:
    parts = [str(p) if isinstance(p, int) or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(p)) else json.dumps(p)
             for p in path]
    return ".".join(parts) or "(top level)"


def _unit_fits(unit: str, fld: str) -> str | None:
    """Why ``unit`` cannot be the unit of ``fld``, or None when it can."""
    q = BY_NAME.get(fld)
    if q is None:
        return f"{fld} is text: it takes no unit"
    try:
        scale = unit_scale(unit, q.kind)
    except (UnitError, ValueError) as exc:
        return f"{unit!r} is not a unit of {q.label.lower()} ({exc})"
    if not math.isfinite(scale) or scale <= 0:
        return f"{unit!r} is not a unit of {q.label.lower()}"
    return None


def column_map_from_data(data: Any, origin: str, validate: bool = True) -> ColumnMap:
    """A column map from parsed TOML/JSON data; :class:`LoadError` naming ``origin`` and the key when unusable.
    ``validate=False`` skips the JSON Schema (and importing jsonschema) for the maps shipped with the package, which
    ``tests/test_startup.py`` validates; the checks of fields, units and headers below still run."""
    if isinstance(data, dict) and isinstance(data.get("columns"), dict):  # the common slip first, with a hint
        for header, spec in data["columns"].items():
            fld = spec.get("field") if isinstance(spec, dict) else spec
            if isinstance(fld, str) and fld not in MAP_FIELDS:
                where = _key_path(["columns", header] + (["field"] if isinstance(spec, dict) else []))
                raise LoadError(origin, f"{where}: {fld!r} is not a field{_did_you_mean(fld, MAP_FIELDS)}; "
                                        f"fields are the names in README: Input")
    if validate:
        import jsonschema  # only for a user's map: a one-claim check starts without it

        validator = jsonschema.Draft202012Validator(_schema())
        error = jsonschema.exceptions.best_match(validator.iter_errors(data))
        if error is not None:
            raise LoadError(origin, f"{_key_path(error.absolute_path)}: {error.message}")
    columns: dict[str, tuple[str, str | None]] = {}
    headers: dict[str, str] = {}
    for header, spec in data.get("columns", {}).items():  # a map may only keep columns (no "columns")
        fld, unit = (spec["field"], spec.get("unit")) if isinstance(spec, dict) else (spec, None)
        key = header_key(header)
        if not key:
            raise LoadError(origin, f"{_key_path(['columns', header])}: a header needs a letter or digit")
        if key in headers:
            raise LoadError(origin, f"{_key_path(['columns', header])}: the same header as "
                                    f"{json.dumps(headers[key])} (case, spaces and punctuation are ignored); keep one")
        if unit is not None and (why := _unit_fits(unit, fld)) is not None:
            raise LoadError(origin, f"{_key_path(['columns', header, 'unit'])}: {why}")
        columns[key] = (fld, unit)
        headers[key] = header
    keep = frozenset(header_key(h) for h in data.get("keep", ()))
    both = [headers[k] for k in keep & set(columns)]
    if both:
        raise LoadError(origin, f"keep: {json.dumps(both[0])} is also mapped under columns; keep it in one place")
    recog = data.get("recognize") or {}
    return ColumnMap(name=str(data.get("name") or Path(origin).stem), origin=origin, columns=columns,
                     headers=headers, keep=keep, recognize=tuple(recog.get("headers", ())),
                     recognize_min=int(recog.get("min", 0)), description=str(data.get("description", "")))


def load_column_map(path: str | Path, validate: bool = True) -> ColumnMap:
    """Read a column map file (``.toml`` or ``.json``); :class:`LoadError` naming the file and the key
    (``validate``: see :func:`column_map_from_data`)."""
    origin = str(path)
    p = Path(path)
    suffix = p.suffix.lower()
    if p.is_dir():
        raise LoadError(origin, "is a folder, not a column map file")
    if suffix not in (".toml", ".json"):
        raise LoadError(origin, f"a column map is a .toml or .json file, not {suffix or '(no extension)'!r}")
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise LoadError(origin, "no such file (the column map)") from None
    except IsADirectoryError:
        raise LoadError(origin, "is a folder, not a column map file") from None
    except OSError as exc:
        raise LoadError(origin, f"cannot read the column map: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(origin, f"not UTF-8 text (byte {exc.start})") from None
    try:
        data = tomllib.loads(text) if suffix == ".toml" else json.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LoadError(origin, f"not valid TOML: {exc}") from None
    except json.JSONDecodeError as exc:
        raise LoadError(origin, f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    return column_map_from_data(data, origin, validate)


def _profiles_dir() -> Path:
    return data_path("profiles")


def profile_names() -> list[str]:
    """The built-in profiles (``audit/data/profiles/*.toml``), by name."""
    return sorted(p.stem for p in _profiles_dir().glob("*.toml"))


@lru_cache(maxsize=None)
def profile(name: str) -> ColumnMap:
    """A built-in profile by name (``epoch``); :class:`LoadError` naming ``--profile`` when there is none."""
    names = profile_names()
    if name not in names:
        raise LoadError("--profile", f"no built-in profile {name!r}{_did_you_mean(name, names)}; built-in: "
                                     f"{', '.join(names)} (or {NO_PROFILE})")
    cmap = load_column_map(_profiles_dir() / f"{name}.toml", validate=False)  # shipped: validated by the tests
    return ColumnMap(name=cmap.name, origin=f"profile {name!r}", columns=cmap.columns, headers=cmap.headers,
                     keep=cmap.keep, recognize=cmap.recognize, recognize_min=cmap.recognize_min,
                     description=cmap.description)


def recognize(headers: Iterable[str]) -> ColumnMap | None:
    """The built-in profile a file's headers identify (Epoch AI's database by its own headers), or None."""
    headers = list(headers)
    for name in profile_names():
        p = profile(name)
        if p.matches(headers):
            return p
    return None


def combine(base: ColumnMap | None, top: ColumnMap | None) -> ColumnMap | None:
    """``top`` laid over ``base`` (``--columns`` over ``--profile``): a header both map is read as ``top`` says."""
    if base is None or top is None:
        return top or base
    keep = (base.keep - set(top.columns)) | top.keep
    return ColumnMap(name=f"{base.name}+{top.name}", origin=f"{base.origin} with {top.origin}",
                     columns={**base.columns, **top.columns}, headers={**base.headers, **top.headers},
                     keep=frozenset(keep - set(top.columns)), description=top.description or base.description)


@dataclass(frozen=True)
class MapChoice:
    """How files are mapped: a profile (asked for, or recognised from each file's headers unless ``recognise`` is
    False) with an optional map laid over it (``--columns``)."""

    profile: ColumnMap | None = None
    columns: ColumnMap | None = None
    recognise: bool = True

    def for_headers(self, headers: Iterable[str]) -> tuple[ColumnMap | None, ColumnMap | None]:
        """The map for a file with these headers, and the profile recognised from them (None: none was)."""
        recognised = recognize(headers) if self.profile is None and self.recognise else None
        return combine(self.profile or recognised, self.columns), recognised


def resolve_maps(columns: str | Path | ColumnMap | None = None, profile_name: str | None = None) -> MapChoice:
    """The mapping asked for: ``columns`` (a map file or a :class:`ColumnMap`) laid over the ``profile_name``
    profile; without a profile, a built-in one is recognised from each file's headers (``'none'``: never)."""
    cmap = columns if isinstance(columns, ColumnMap) or columns is None else load_column_map(columns)
    if profile_name == NO_PROFILE:
        return MapChoice(None, cmap, recognise=False)
    return MapChoice(profile(profile_name) if profile_name else None, cmap)
