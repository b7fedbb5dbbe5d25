"""The reading package: the reader registry, and a unit named in a column header handed to the parser as a unit.

Expected values are written with hand arithmetic (1 hour = 1/24 day; 1 PF-day = 1e15 FLOP/s x 86,400 s).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.claims import RawTable
from audit.reading import LoadError, Reader, extensions, load, read_path, reader_for, readers, register
from audit.reading import registry
from audit.units import UnitError, is_bare_number, parse_series, parse_value, unit_scale

PF_DAY = 1e15 * 86400

# --------------------------------------------------------------------------------------------------------
# units: the header unit


def test_the_scale_of_a_unit_is_the_value_of_one_of_it():
    assert unit_scale("hours", "days") == pytest.approx(1 / 24)
    assert unit_scale("PF-days", "flop") == pytest.approx(PF_DAY)
    assert unit_scale("%", "fraction") == pytest.approx(0.01)
    with pytest.raises(UnitError):
        unit_scale("MFU", "fraction")


@pytest.mark.parametrize(("value", "bare"), [
    (180, True), (7.5, True), ("180", True), (" 1,200 ", True), ("3.5e3", True), ("-2", True),
    ("7 days", False), ("~180", False), ("3.14×10^23", False), (float("nan"), False), (True, False),
    (None, False), ("", False),
])
def test_bare_numbers(value, bare):
    assert is_bare_number(value) is bare


def test_bare_numbers_take_the_header_unit_and_cells_with_a_unit_keep_theirs():
    cells = pd.Series(["180", "7 days", 48, " 1,200 ", None, "~24"], dtype=object)
    values, errors = parse_series(cells, "days", unit="hours")
    # "~24" is not a bare number: it is read as written, in the field's own unit (days), as before.
    np.testing.assert_allclose(values, [180 / 24, 7, 48 / 24, 1200 / 24, np.nan, 24])
    assert errors.isna().all()
    assert parse_value("180", "days", unit="hours") == parse_value("180 hours", "days")


@pytest.mark.parametrize("column", [
    pd.Series([180.0, 3640.5, np.nan]),                     # float64: no Python loop
    pd.Series([180, 3640, 2]),                              # int64
    pd.Series([180, 3640.5, None], dtype=object),           # Python numbers (JSON)
    pd.Series(["180", "3640.5", None], dtype=object),       # text (CSV)
])
def test_every_column_type_scales_its_bare_numbers(column):
    values, errors = parse_series(column, "flop", unit="PF-days")
    expected = [float(v) * PF_DAY if v is not None and v == v else np.nan for v in column.tolist()]
    np.testing.assert_allclose(values, expected, rtol=1e-15)
    assert errors.isna().all()


def test_text_bare_numbers_read_exactly_as_with_the_unit_written():
    # The unit's power of ten joins the decimal exponent, as when the cell says "3.14 PF-days".
    cells = pd.Series(["3.14", "0.1", "46.2"] * 3, dtype=object)
    values, _ = parse_series(cells, "flop", unit="PF-days")
    assert list(values[:3]) == [parse_value(f"{c} PF-days", "flop") for c in ["3.14", "0.1", "46.2"]]
    values, _ = parse_series(pd.Series(["46.2"]), "fraction", unit="%")
    assert values[0] == parse_value("46.2%", "fraction")


def test_a_boolean_under_a_header_unit_is_still_an_error_and_a_1_still_a_number():
    cells = pd.Series([True, 1, "1", 2.0], dtype=object)
    values, errors = parse_series(cells, "days", unit="hours")
    np.testing.assert_allclose(values, [np.nan, 1 / 24, 1 / 24, 2 / 24])
    assert [e is None for e in errors] == [False, True, True, True]


def test_a_unit_that_is_not_one_of_the_kind_is_refused():
    with pytest.raises(UnitError):
        parse_series(pd.Series(["1"]), "days", unit="GPUs")


# --------------------------------------------------------------------------------------------------------
# reading: header units per file


def test_a_header_unit_covers_only_the_rows_of_its_own_file(tmp_path):
    hours = tmp_path / "hours.csv"
    hours.write_text("id,Training time (hours)\na,48\n", encoding="utf-8")
    days = tmp_path / "days.csv"
    days.write_text("id,training_days\nb,48\n", encoding="utf-8")
    units = tmp_path / "weeks.json"
    units.write_text(json.dumps([{"id": "c", "Training time (weeks)": 2}]), encoding="utf-8")
    claims = load([str(hours), str(days), str(units)])
    np.testing.assert_allclose(claims.values["wall_clock_days"], [2, 48, 14])
    assert list(claims.text["wall_clock_days"]) == ["48 hours", "48", "2 weeks"]


def test_parquet_numbers_take_the_header_unit(tmp_path):
    path = tmp_path / "runs.parquet"
    pd.DataFrame({"id": ["a", "b"], "Training time (hours)": [180.0, np.nan]}).to_parquet(path)
    claims = load([str(path)])
    assert claims.values["wall_clock_days"][0] == pytest.approx(7.5)
    assert list(claims.text["wall_clock_days"]) == ["180.0 hours", None]


# --------------------------------------------------------------------------------------------------------
# reading: the registry


def test_every_documented_extension_has_a_reader():
    assert extensions() == [".csv", ".json", ".jsonl", ".ndjson", ".parquet", ".pq", ".tsv", ".xlsm", ".xlsx"]
    assert reader_for(".CSV").name == "csv" and reader_for(".txt") is None
    assert {r.name for r in readers()} == {"csv", "tsv", "json", "jsonl", "parquet", "xlsx"}


def test_a_registered_format_is_read_by_extension(tmp_path, monkeypatch):
    # Registering touches module state: restore it whatever happens.
    monkeypatch.setattr(registry, "_BY_NAME", dict(registry._BY_NAME))
    monkeypatch.setattr(registry, "_BY_EXTENSION", dict(registry._BY_EXTENSION))

    def read_lines(path: Path, file: str, data: bytes | None) -> RawTable:
        names = path.read_text(encoding="utf-8").split()
        return RawTable(pd.DataFrame({"id": names, "_row": np.arange(1, len(names) + 1)}, dtype=object))

    register(Reader("ids", (".ids",), read_lines))
    path = tmp_path / "runs.ids"
    path.write_text("a b c\n", encoding="utf-8")
    assert list(read_path(str(path)).frame["id"]) == ["a", "b", "c"]
    assert list(load([str(path)]).info["id"]) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="already read by 'csv'"):
        register(Reader("other", (".csv",), read_lines))


def test_an_unknown_extension_names_the_file_and_the_known_ones(tmp_path):
    path = tmp_path / "runs.yaml"
    path.write_text("id: a\n", encoding="utf-8")
    with pytest.raises(LoadError) as err:
        read_path(str(path))
    assert str(err.value) == (f"{path}: unknown file type '.yaml'; use one of "
                              ".csv, .json, .jsonl, .ndjson, .parquet, .pq, .tsv, .xlsm, .xlsx")
