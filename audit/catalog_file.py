"""Your own accelerators: ``--catalog FILE`` adds rows to the bundled catalog or overrides its figures.

A file is CSV (the columns of ``audit/data/accelerators.csv``, any subset with ``id``) or JSON (an array of
objects, or ``{"accelerators": [...]}``), each row validated against ``schemas/catalog.schema.json``. Beyond the
datasheet columns a row may give ``price_per_chip_hour`` (a negotiated rate, USD) and ``avg_power_w`` (a
measured average power, W); rules and ``estimate`` use them as that accelerator's own figures and say so.
Every problem is a :class:`CatalogFileError` naming the file, the row (its number and id) and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from audit.lazy import pandas as pd  # imported on first use: quick start-up

from audit.catalog import Catalog, load_catalog
from audit.resources import schema_path

#: Columns a catalog file may add beyond the bundled ones: an accelerator's own price and average power.
EXTRA_COLUMNS = ("price_per_chip_hour", "avg_power_w", "source_price", "source_power")

_NUMERIC = ("memory_gb", "tdp_w", "fp32_tflops", "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops",
            "price_per_chip_hour", "avg_power_w")
_PEAKS = ("fp32_tflops", "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops")


class CatalogFileError(ValueError):
    """A catalog file that cannot be used; the message names the file, the row and the field."""


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(schema_path("catalog.schema.json").read_text(encoding="utf-8"))
    return schema


def _rows(path: Path) -> list[dict[str, Any]]:
    """The file's rows as dicts (CSV cells that read as numbers become numbers; empty cells are left out)."""
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and set(data) == {"accelerators"}:
                data = data["accelerators"]
            if not isinstance(data, list):
                raise CatalogFileError(f"{path}: expected an array of accelerators or {{\"accelerators\": [...]}}")
            return data
        if path.suffix.lower() != ".csv":
            raise CatalogFileError(f"{path}: a catalog file is .csv or .json")
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as exc:
        raise CatalogFileError(f"{path}: cannot be read: {exc}") from None
    rows: list[dict[str, Any]] = []
    for record in frame.to_dict("records"):
        row: dict[str, Any] = {}
        for key, value in record.items():
            text = str(value).strip()
            if not text:
                continue
            if key in _NUMERIC:
                try:
                    row[key] = float(text.replace(",", ""))
                    continue
                except ValueError:
                    pass
            row[key] = text
        rows.append(row)
    return rows


def _where(path: Path, number: int, row: Any) -> str:
    ident = row.get("id") if isinstance(row, dict) else None
    return f"{path}: row {number}" + (f" (id {ident!r})" if isinstance(ident, str) else "")


def validate_rows(path: Path, rows: list[Any]) -> None:
    """Every row against the schema; the first problems are raised together, each with its row and field."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(_schema())
    problems: list[str] = []
    if not rows:
        problems.append(f"{path}: no accelerators")
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            problems.append(f"{_where(path, number, row)}: a row is an object of fields")
            continue
        for err in sorted(validator.iter_errors(row), key=lambda e: list(e.path)):
            if err.validator == "additionalProperties":
                extra = sorted(set(row) - set(_schema()["properties"]))
                field = ", ".join(repr(e) for e in extra)
                problems.append(f"{_where(path, number, row)}: field {field}: unknown (expected one of the "
                                f"columns of schemas/catalog.schema.json)")
                continue
            field = err.path[0] if err.path else (err.validator_value[0] if err.validator == "required" else "?")
            problems.append(f"{_where(path, number, row)}: field {field!r}: {err.message}")
    if problems:
        shown = problems[:10] + ([f"... and {len(problems) - 10} more"] if len(problems) > 10 else [])
        raise CatalogFileError("; ".join(shown))


def load_catalog_file(path: str | Path, base: Catalog | None = None) -> Catalog:
    """The bundled catalog (or ``base``) with the rows of ``path`` added or laid over it."""
    path = Path(path)
    if not path.is_file():
        raise CatalogFileError(f"{path}: no such file")
    rows = _rows(path)
    validate_rows(path, rows)
    base = base or load_catalog()
    frame = base.frame.copy()
    for col in EXTRA_COLUMNS:
        if col not in frame.columns:
            frame[col] = ""
    index = {str(i): n for n, i in enumerate(frame["id"])}
    for number, row in enumerate(rows, start=1):
        hit = base.lookup(row["id"]) or (base.lookup(row["name"]) if "name" in row else None)
        pos = index.get(row["id"], index.get(hit.id) if hit is not None else None)
        values = {k: ("" if v is None else (repr(v) if isinstance(v, float) else str(v))) for k, v in row.items()}
        if pos is not None:  # override the fields given (the id stays the bundled one)
            for key, value in values.items():
                if key != "id":
                    frame.at[pos, key] = value
            continue
        if "name" not in row:
            raise CatalogFileError(f"{_where(path, number, row)}: field 'name': required for an accelerator that is "
                                   f"not in the bundled catalog")
        if "memory_gb" not in row and not any(p in row for p in _PEAKS):
            raise CatalogFileError(f"{_where(path, number, row)}: field 'memory_gb' or a peak (bf16_tflops, ...): a "
                                   f"new accelerator needs at least one figure")
        new = {col: "" for col in frame.columns}
        new.update({"unit": "accelerator", "default_precision": "bf16", "sparse_headline": "no",
                    "confidence": "user catalog", "source_compute": f"{path} (your catalog)",
                    "source_memory": f"{path} (your catalog)", "source_tdp": f"{path} (your catalog)"})
        new.update(values)
        frame = pd.concat([frame, pd.DataFrame([new])], ignore_index=True)
        index[row["id"]] = len(frame) - 1
    try:
        return Catalog(frame.fillna(""))
    except ValueError as exc:  # an alias naming two accelerators
        raise CatalogFileError(f"{path}: field 'aliases': {exc}") from None


def extra_figure(catalog: Catalog, accelerator_id: str | None, column: str) -> tuple[float, str] | None:
    """An accelerator's own ``price_per_chip_hour`` or ``avg_power_w`` from a catalog file, with its source
    (None when the catalog gives none)."""
    if accelerator_id is None or column not in catalog.columns:  # .columns: the bundled catalog needs no pandas
        return None
    rows = catalog.frame.index[catalog.frame["id"] == accelerator_id]
    if len(rows) == 0:
        return None
    text = str(catalog.frame.at[rows[0], column]).strip()
    if not text:
        return None
    source_col = "source_price" if column == "price_per_chip_hour" else "source_power"
    source = str(catalog.frame.at[rows[0], source_col]).strip() if source_col in catalog.frame.columns else ""
    return float(text), source or "your catalog file"


#: Which catalog figure fills which quantity, and the stated quantities that need it.
_FILLS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("price_per_chip_hour", "price_per_chip_hour", ("cost_usd",)),
    ("power_w_per_chip", "avg_power_w", ("energy_mwh", "co2_tonnes", "cluster_power_w")),
)


def catalog_prefill(claims: Any, catalog: Catalog) -> dict[str, Any]:
    """Prefills (:class:`audit.state.Prefill`) of your catalog's price and average power for the claims that
    need them: a stated cost without a price, or a stated energy, emissions or cluster power without a power per
    chip. The note (each value's derivation) names the accelerator and the figure's source."""
    import numpy as np

    from audit.columns import map_unique
    from audit.state import Prefill

    if EXTRA_COLUMNS[0] not in catalog.frame.columns:
        return {}
    values = claims.values
    accel = map_unique(claims.info["hardware"], lambda t: None if t is None else getattr(catalog.lookup(t), "id",
                                                                                           None))
    out: dict[str, Any] = {}
    for name, column, needs in _FILLS:
        found = map_unique(accel, lambda aid, column=column: extra_figure(catalog, aid, column))
        figure = map_unique(accel, lambda aid, column=column: (extra_figure(catalog, aid, column)
                                                                or (np.nan,))[0]).to_numpy(dtype=float)
        need = np.zeros(len(values), dtype=bool)
        for q in needs:
            need |= values[q].notna().to_numpy()
        need &= values[name].isna().to_numpy() & ~np.isnan(figure)
        if need.any():
            sources = sorted({f[1] for f in found[need] if f is not None})
            out[name] = Prefill(np.where(need, figure, np.nan),
                                note=f"your catalog's {column} for the accelerator ({'; '.join(sources)})")
    return out
