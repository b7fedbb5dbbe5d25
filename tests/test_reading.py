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
from audit.reading import (LoadError, Reader, did_you_mean, extensions, load, read_path, reader_for, readers,
                           register)
from audit.reading import registry
from audit.units import UnitError, is_bare_number, parse_series, parse_value, unit_scale

PF_DAY = 1e15 * 86400
DATA_DIR = Path(__file__).resolve().parent / "data"

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
        # A column named "_row" is the user's own: where each row came from is given apart (rows=).
        return RawTable(pd.DataFrame({"id": names, "params": ["7B"] * len(names), "_row": ["x"] * len(names)},
                                     dtype=object),
                        rows=np.arange(10, 10 + len(names)))

    register(Reader("ids", (".ids",), read_lines))
    path = tmp_path / "runs.ids"
    path.write_text("a b c\n", encoding="utf-8")
    assert list(read_path(str(path)).frame["id"]) == ["a", "b", "c"]
    claims = load([str(path)])
    assert list(claims.info["id"]) == ["a", "b", "c"]
    assert list(claims.info["row"]) == [10, 11, 12] and list(claims.extras["_row"]) == ["x", "x", "x"]
    with pytest.raises(ValueError, match="already read by 'csv'"):
        register(Reader("other", (".csv",), read_lines))


def test_an_unknown_extension_names_the_file_and_the_known_ones(tmp_path):
    path = tmp_path / "runs.yaml"
    path.write_text("id: a\n", encoding="utf-8")
    with pytest.raises(LoadError) as err:
        read_path(str(path))
    assert str(err.value) == (f"{path}: unknown file type '.yaml'; use one of "
                              ".csv, .json, .jsonl, .ndjson, .parquet, .pq, .tsv, .xlsm, .xlsx")


# --------------------------------------------------------------------------------------------------------
# reading: which column is which field, and what was not read (issues 9 and 10)


def test_columns_not_understood_are_listed_once_per_file_with_a_did_you_mean(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("run_id,model_size,num_gpus,gpu_type,train_hours,n_toks,reported_mfu\n"
                 "r1,7B,8,H100,120,140B,40%\nr2,7B,8,H100,120,140B,40%\n", encoding="utf-8")
    b = tmp_path / "b.json"
    b.write_text(json.dumps([{"id": "j1", "paramz": "7B", "tokens": "1T"},
                             {"id": "j2", "paramz": "7B", "notes": "x", "xyz": 1}]))
    claims = load([str(a), str(b)])
    assert claims.unread_columns == [
        (str(a), "train_hours", "chip_hours or wall_clock_hours"),  # ambiguous: both suggested, neither guessed
        (str(a), "n_toks", "tokens"),
        (str(b), "paramz", "params"),
        (str(b), "xyz", None),  # free-text notes are understood as notes: kept, not reported
    ]
    assert list(claims.extras.columns) == ["train_hours", "n_toks", "notes", "paramz", "xyz"]  # kept, shown
    assert claims.values["chips"].tolist()[:2] == [8, 8]


def test_the_tokens_a_run_log_calls_seen_or_processed_are_its_training_tokens(tmp_path):
    """Issue 9's own example header: 'tokens_seen' (and 'tokens_processed') are the tokens a training processed,
    D of 6·N·D, not a column to leave unread."""
    path = tmp_path / "runs.csv"
    path.write_text("run_id,model_size,tokens_seen\nr1,7B,140B\n", encoding="utf-8")
    claims = load([str(path)])
    assert claims.unread_columns == []
    assert claims.values["tokens"].tolist() == [140e9]
    other = tmp_path / "other.csv"
    other.write_text("id,params,tokens_processed\nr2,1B,20B\n", encoding="utf-8")
    assert load([str(other)]).values["tokens"].tolist() == [20e9]


def test_a_file_where_only_an_id_is_understood_is_unusable(tmp_path):
    """A misspelt key beside an id ("paramz") left every claim "unchecked": exit 0, a green CI on a file whose
    figures were never read. Nothing to check is unusable input, with the did-you-mean."""
    path = tmp_path / "ids.json"
    path.write_text(json.dumps([{"id": "j1", "paramz": "7B"}, {"id": "j2", "paramz": "8B"}]))
    with pytest.raises(LoadError, match=r"none of its keys gives a figure to check.*paramz \(did you mean params\?\)"):
        load([str(path)])


def test_did_you_mean_leaves_out_fields_already_read():
    # Each suggestion reads in the header's own unit: renamed "wall_clock_days", a column of hours was read as days
    # (field test, session 23: every run 24x too long).
    assert did_you_mean("train_hours") == "chip_hours or wall_clock_hours"
    assert did_you_mean("train_hours", {"chip_hours"}) == "wall_clock_hours"
    assert did_you_mean("train_hours", {"wall_clock_days"}) == "chip_hours"
    assert did_you_mean("n_param") == "params"
    assert did_you_mean("Organization") is None


def test_a_file_where_no_column_is_understood_is_unusable(tmp_path):
    path = tmp_path / "abc.csv"
    path.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    with pytest.raises(LoadError, match="none of its columns is understood \\(a, b, c\\)"):
        load([str(path)])


def test_a_message_about_a_value_names_the_users_header(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("id,model_size,Training time (hours)\nr1,5 apples,-3\n", encoding="utf-8")
    claims = load([str(path)])
    messages = dict(zip(claims.invalid["field"], claims.invalid["message"]))
    assert messages["params"].endswith("(from 'model_size')")
    assert messages["wall_clock_days"] == "Wall-clock cannot be negative (from 'Training time (hours)')"


def test_keys_are_mapped_row_by_row_and_a_header_unit_follows_its_key(tmp_path):
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([{"id": "a", "Training time (hours)": 48}, {"id": "b", "training_days": 2},
                                {"id": "c", "n_params": "7B"}, {"id": "d", "params": "70B"}]))
    claims = load([str(path)])
    np.testing.assert_allclose(claims.values["wall_clock_days"][:2], [2, 2])
    assert claims.values["params"].tolist()[2:] == [7e9, 70e9]
    assert list(claims.text["wall_clock_days"][:2]) == ["48 hours", "2"]
    assert claims.unread_columns == []


def test_two_citation_columns_keep_the_second_as_an_extra_field_and_say_so(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("id,params,Link,Reference\na,7B,https://x.org,Paper A\nb,7B,,Paper B\n", encoding="utf-8")
    claims = load([str(path)])
    assert list(claims.info["source"]) == ["https://x.org", "Paper B"]
    assert list(claims.extras["Reference"]) == ["Paper A", None]
    assert claims.notes == [(str(path), "'Link' and 'Reference' both give source: the first given in a row is used, "
                                        "the other is kept as an extra field")]


@pytest.fixture
def workbook(tmp_path) -> Path:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.title = "Runs"
    book.active.append(["id", "params"])
    book.active.append(["first", "7B"])
    other = book.create_sheet("More")
    other.append(["id", "params"])
    other.append(["second", "70B"])
    path = tmp_path / "runs.xlsx"
    book.save(path)
    return path


def test_the_sheet_read_is_named_and_sheet_reads_another(workbook, cli_run):
    claims = load([str(workbook)])
    assert list(claims.info["id"]) == ["first"]
    assert claims.notes == [(str(workbook), "read sheet 'Runs' (1 of 2: Runs, More; the first; --sheet all reads "
                                            "every sheet, --sheet NAME another)")]
    for sheet in ("More", "2"):
        assert list(load([str(workbook)], sheet=sheet).info["id"]) == ["second"]
    with pytest.raises(LoadError, match="no sheet 'Nope'; its sheets are 'Runs', 'More'"):
        load([str(workbook)], sheet="Nope")
    res = cli_run("check", str(workbook), "--sheet", "More", "--format", "json")
    assert [c["id"] for c in res.json()["claims"]] == ["second"]
    assert f"train-audit: note: {workbook}: read sheet 'More' (2 of 2: Runs, More; --sheet More)" in res.stderr
    res = cli_run("check", str(DATA_DIR / "doctored.json"), "--sheet", "More")
    assert res.exit_code == 2 and "--sheet: applies to spreadsheets" in res.stderr


def test_a_hidden_first_sheet_is_passed_over_and_an_empty_one_names_the_others(workbook, tmp_path):
    """A workbook whose first sheet is hidden (a lookup table) is read from the first sheet shown, as whoever opens
    it sees it (it was read, and refused as "none of its columns is understood"); a sheet read with no claims says
    which other sheets there are, and how to read one."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.load_workbook(workbook)
    book["Runs"].sheet_state = "hidden"
    hidden = tmp_path / "hidden.xlsx"
    book.save(hidden)
    claims = load([str(hidden)])
    assert list(claims.info["id"]) == ["second"]
    assert claims.notes == [(str(hidden), "read sheet 'More' (2 of 2: Runs, More; hidden: Runs; the first shown; "
                                          "--sheet all reads every sheet, --sheet NAME another)")]
    assert list(load([str(hidden)], sheet="Runs").info["id"]) == ["first"]  # named, it is read
    book = openpyxl.load_workbook(workbook)
    book["Runs"].delete_rows(2)
    empty = tmp_path / "empty.xlsx"
    book.save(empty)
    with pytest.raises(LoadError, match=r"but no rows \(its other sheets: 'More'; --sheet NAME reads one, --sheet all "
                                        r"every one\)"):
        load([str(empty)])


def test_a_title_above_a_sheets_table_is_passed_over_and_said(tmp_path, cli_run):
    """A report's sheet opens with a title and a blank row above its table: the header is the first row naming
    fields (row 3), the rows keep their numbers in the sheet, and a note names what was passed over. Before, the
    title was read as the only header and the file refused (exit 2, 'none of its columns is understood')."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["Training runs Q3 2026 (internal)"])
    book.active.append([])
    book.active.append(["run_id", "model_size", "num_gpus", "gpu_type", "tokens", "compute_flops"])
    book.active.append(["r1", "7B", 1024, "H100", "2T", 8.4e22])  # 6 × 7e9 × 2e12 = 8.4e22
    path = tmp_path / "runs.xlsx"
    book.save(path)
    claims = load([str(path)])
    assert list(claims.info["id"]) == ["r1"] and list(claims.info["row"]) == [4]
    assert claims.values["params"].tolist() == [7e9] and claims.values["chips"].tolist() == [1024]
    assert claims.notes == [(str(path), "read the header from row 3 of the sheet, the first naming fields; the row "
                                        "above it (1: 'Training runs Q3 2026 (internal)') is not read")]
    res = cli_run("check", str(path))
    assert res.exit_code == 0 and "read the header from row 3" in res.stderr


@pytest.mark.parametrize("sep", [",", ";"])
def test_a_title_above_a_csv_table_is_passed_over_and_said(tmp_path, cli_run, sep):
    """An export that opens with a comment line and a quoted title above the header: the header is the first record
    naming fields (line 3), the claims keep their record numbers (the header is record 3), and the CI formats point
    at their physical lines (r2 on line 6, after a blank line). A ';' table is found under a title without one."""
    text = ('# exported 2026-11-30\n"Run summary, all clusters"\n'
            "run_id,model_size,num_gpus,gpu_type,tokens,compute_flops\n"
            "r1,7B,1024,H100,2T,8.4e22\n\n"  # 6 × 7e9 × 2e12 = 8.4e22
            "r2,7B,1024,H100,2T,8.4e25\n").replace(",", sep).replace('"Run summary; all clusters"',
                                                                    '"Run summary, all clusters"')
    path = tmp_path / "runs.csv"
    path.write_text(text)
    claims = load([str(path)])
    assert list(claims.info["id"]) == ["r1", "r2"] and list(claims.info["row"]) == [4, 5]
    assert claims.values["compute_flops"].tolist() == [8.4e22, 8.4e25]
    assert claims.notes == [(str(path), "read the header from line 3, the first naming fields; the lines above it "
                                        "(1: '# exported 2026-11-30'; 2: 'Run summary, all clusters') are not read")]
    res = cli_run("check", str(path), "--format", "concise")
    assert res.exit_code == 1
    assert f"{path}:6: C001 error" in res.stdout and f"{path}:4: R001 info" in res.stdout


def test_a_csv_whose_first_line_names_no_field_and_no_later_line_does_is_refused(tmp_path, cli_run):
    """No title to pass over: headers 'a,b,c' are still a file with no column understood (exit 2)."""
    path = tmp_path / "runs.csv"
    path.write_text("a,b,c\n1,2,3\n")
    res = cli_run("check", str(path))
    assert res.exit_code == 2 and "none of its columns is understood" in res.stderr


def test_a_sheet_whose_first_row_names_a_field_keeps_it_as_the_header(tmp_path):
    """A first row naming one field is the header, even when a later row would name more."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["id", "params", "remark"])
    book.active.append(["r1", "7B", "tokens"])
    book.active.append(["chips", "70B", "tokens"])  # cells that name two fields: a row of data all the same
    path = tmp_path / "runs.xlsx"
    book.save(path)
    claims = load([str(path)])
    assert list(claims.info["id"]) == ["r1", "chips"] and claims.notes == []


def test_every_module_of_the_reading_package_is_imported_so_a_format_module_registers_itself():
    """Adding an input format is one module: the package imports every module of its folder, so a module that
    calls register() needs no import line anywhere else (each bundled format is found that way)."""
    import pkgutil
    import sys

    import audit.reading as reading

    names = {m.name for m in pkgutil.iter_modules(reading.__path__)}
    assert {"csvfile", "jsonfile", "parquetfile", "xlsxfile"} <= names
    assert all(f"audit.reading.{n}" in sys.modules for n in names)
    assert {"csv", "json", "jsonl", "parquet", "xlsx"} <= {r.name for r in reading.readers()}


@pytest.mark.parametrize("placeholder", ["N/A", "na", "-", "--", "\u2014", "unknown", "Unknown", "TBD", "?", "none",
                                         "n.a.", "not reported", "#N/A"])
def test_a_placeholder_for_an_unknown_figure_is_not_stated_not_invalid(tmp_path, placeholder):
    """Spreadsheets write "-", "unknown" or "TBD" where a figure is not known; the tool's own reports print an em
    dash for one. Such a cell states nothing: the claim is audited on its other figures, not made invalid."""
    from audit.api import check, to_json

    path = tmp_path / "runs.csv"
    path.write_text("id,params,tokens,compute_flops,hardware,chips,mfu\n"
                    f"r,7B,2T,\"{placeholder}\",\"{placeholder}\",1024,\"{placeholder}\"\n", encoding="utf-8")
    claim = to_json(check([str(path)]))["claims"][0]
    assert claim["status"] != "invalid", [f["message"] for f in claim["findings"] if f["severity"] != "ok"]
    assert "compute_flops" not in claim["quantities"] or claim["quantities"]["compute_flops"]["source"] != "claimed"
    assert not [f for f in claim["findings"] if f["rule"] == "H001"]  # no "unknown accelerator 'N/A'"
    # ... and not dropped without a word: each placeholder cell is named (V003, an info: "TBD" in a chips column
    # is something a reviewer should see).
    said = {f["quantity"]: f["message"] for f in claim["findings"] if f["rule"] == "V003"}
    assert set(said) == {"compute_flops", "hardware", "mfu"}, said
    assert all(repr(placeholder.strip()) in m and "placeholder" in m for m in said.values()), said


def test_a_semicolon_file_says_a_comma_between_thousands_may_be_a_decimal_comma(tmp_path):
    """In a ';'-separated export (a European spreadsheet), '7,000' may be 7.000: it is read as 7000, as before,
    but no longer without a word; the note names each column, how many such cells and the first. A ','-separated
    file's '1,024' is thousands, and says nothing."""
    path = tmp_path / "eu.csv"
    path.write_text("id;params;tokens;chips\nrun-a;7,000;2T;8\n\nrun-b;7B;2T;1,024\n")
    claims = load([str(path)])
    assert claims.values["params"].tolist()[0] == 7000 and claims.values["chips"].tolist()[1] == 1024
    assert claims.notes == [(str(path), "figures with a comma between groups of three digits are read as thousands "
                                        "('params': 1, such as '7,000' (row 2), 'chips': 1, such as '1,024' (row 3)); "
                                        "in a file separated by ';', as spreadsheets in many European locales write "
                                        "it, the comma may be a decimal point: check those figures")]
    plain = tmp_path / "en.csv"
    plain.write_text('id,params,tokens,chips\nrun-b,7B,2T,"1,024"\n')
    assert load([str(plain)]).notes == []




def test_a_semicolon_file_says_a_dot_before_three_digits_may_separate_thousands(tmp_path):
    """The mirror of the comma: in a European export, GPT-3's 10,000 V100s (Patterson et al. 2021, Table 4) are
    written '10.000', which reads as 10 chips where nothing shows the file's locale; said, as the comma is. A file
    that writes a decimal point elsewhere ('0.213') keeps the dot a decimal point."""
    path = tmp_path / "eu.csv"
    path.write_text("id;params;tokens;chips;mfu\ngpt3;175B;300B;10.000;0.213\n", encoding="utf-8")
    claims = load([str(path)])
    assert claims.values["chips"].tolist() == [10]
    assert claims.notes == [(str(path), "figures with a dot before three digits are read as decimals ('chips': 1, "
                                        "such as '10.000' (row 2)); in a file separated by ';', as spreadsheets in "
                                        "many European locales write it, the dot may separate thousands: check "
                                        "those figures")]


def test_a_semicolon_file_with_decimal_commas_is_read_in_its_locale(tmp_path):
    """A ';'-separated export whose figures write decimal commas that cannot be thousands ('0,213', '4,8') and no
    decimal point is read in that locale: the comma is the decimal point and the dot separates thousands. GPT-3
    (Brown et al. 2020; Patterson et al. 2021, Table 4): 175B parameters, 300B tokens, 10,000 V100s for 14.8 days,
    21.3 % MFU (Narayanan et al. 2021); the title row above is passed over and the rows keep their lines."""
    path = tmp_path / "eu.csv"
    path.write_bytes("\ufeffRuns;;;;;\r\nid;Params (B);Tokens (B);GPUs;Days;MFU (%)\r\n"
                     "gpt3;175;300;10.000;14,8;21,3\r\nsmall;1,3;26;1.024;0,5;\r\n".encode("utf-8"))
    claims = load([str(path)])
    np.testing.assert_allclose(claims.values["params"], [175e9, 1.3e9])
    np.testing.assert_allclose(claims.values["chips"], [10_000, 1_024])
    np.testing.assert_allclose(claims.values["wall_clock_days"], [14.8, 0.5])
    np.testing.assert_allclose(claims.values["mfu"], [0.213, np.nan])
    assert claims.invalid.empty
    assert claims.info["row"].tolist() == [3, 4]
    said = [m for _, m in claims.notes if "decimal commas" in m]
    assert len(said) == 1 and "'14,8' in 'Days', row 3" in said[0] and "'GPUs': '10.000' as '10000'" in said[0]


def test_a_semicolon_file_mixing_decimal_commas_and_points_refuses_the_commas(tmp_path):
    """Where a ';' file writes both a decimal point ('1.4T') and a decimal comma ('0,45'), no locale is certain:
    the comma is refused cell by cell, saying what to write, and the points read as written."""
    path = tmp_path / "mixed.csv"
    path.write_text("id;params;tokens;mfu\na;7B;1.4T;0,45\n", encoding="utf-8")
    claims = load([str(path)])
    assert claims.values["tokens"].tolist() == [1.4e12]
    assert "decimal comma" in claims.invalid.loc[claims.invalid["field"] == "mfu", "message"].iat[0]


def test_a_utilization_cell_naming_the_other_utilization_is_refused(tmp_path):
    """A cell may name its utilization ("12.8 % MFU"); one that names the other ("52 % HFU" under mfu) would check the
    wrong figure (HFU exceeds MFU by the recomputation, 4/3 for full recomputation), so it is refused, naming the
    field it belongs to, and the claim's other cells are read."""
    path = tmp_path / "u.csv"
    path.write_text("id,mfu,hfu\nright,12.8 % MFU,\nswapped,52 % HFU,\nother,,MFU 39%\n", encoding="utf-8")
    claims = load([str(path)])
    np.testing.assert_allclose(claims.values["mfu"], [0.128, np.nan, np.nan])
    assert claims.values["hfu"].isna().all()
    bad = {(int(r), f): m for r, f, m in claims.invalid[["row", "field", "message"]].itertuples(index=False)}
    assert set(bad) == {(1, "mfu"), (2, "hfu")}
    assert "'52 % HFU' names the HFU" in bad[1, "mfu"] and "give it as hfu" in bad[1, "mfu"]
    assert "'MFU 39%' names the MFU" in bad[2, "hfu"] and "give it as mfu" in bad[2, "hfu"]


def test_an_excel_percentage_is_the_percentage_the_sheet_shows(tmp_path):
    """Excel stores a cell shown as "35%" (number format 0%) as 0.35. Under a header that says "%" ("MFU %") the
    stored number read as a bare figure would be 0.35 %, a false alarm on an honest row (a helper's batch audit:
    C003 and C005 errors); the cell is read as the percentage it shows, whatever the header, and a plain 35 under
    the same header is still 35 %."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["id", "MFU %", "hfu"])
    sheet.append(["shown", 0.35, 0.4649])
    sheet.cell(row=2, column=2).number_format = "0%"
    sheet.cell(row=2, column=3).number_format = "0.0%"
    sheet.append(["plain", 35, 0.4649])
    path = tmp_path / "runs.xlsx"
    book.save(path)
    claims = load([str(path)])
    np.testing.assert_allclose(claims.values["mfu"], [0.35, 0.35])
    np.testing.assert_allclose(claims.values["hfu"], [0.4649, 0.4649])
    assert claims.invalid.empty


def test_a_hardware_header_over_whole_numbers_is_the_accelerator_count(tmp_path):
    """Tracking sheets write "GPU" for the count beside "GPU type" (a helper's batch audit: the file was refused,
    "columns 'GPU' and 'GPU type' both give hardware"; alone, 8 was an unknown accelerator '8'). A column the headers
    map to the hardware whose cells are all whole numbers counts the accelerators, and it is said; names stay
    names."""
    both = tmp_path / "both.csv"
    both.write_text("Run,GPU,GPU type,Days\na,8,H100,1\nb,1024,A100,2\n", encoding="utf-8")
    claims = load([str(both)])
    np.testing.assert_allclose(claims.values["chips"], [8, 1024])
    assert claims.info["hardware"].tolist() == ["H100", "A100"]
    assert any("'GPU' holds whole numbers only: read as the accelerator count" in message
               for _, message in claims.notes)
    names = tmp_path / "names.csv"
    names.write_text("Run,GPU,Days\na,H100,1\nb,8,2\n", encoding="utf-8")  # a name among them: hardware
    assert load([str(names)]).info["hardware"].tolist() == ["H100", "8"]


def test_a_count_header_with_its_multiplier_after_it_is_read_in_that_multiplier(tmp_path):
    """Snake-case tracking sheets write the multiplier after the field ("params_b", "tokens_t"): 7 under params_b
    is 7e9 parameters and 1.4 under tokens_t 1.4e12 tokens (a helper's batch audit: both columns were unread, and the
    did-you-mean "params" would have read 7 as 7 parameters); a cell's own unit still wins ("350M")."""
    path = tmp_path / "runs.csv"
    path.write_text("run_id,params_b,tokens_t\na,7,1.4\nb,350M,0.3\n", encoding="utf-8")
    claims = load([str(path)])
    np.testing.assert_allclose(claims.values["params"], [7e9, 350e6])
    np.testing.assert_allclose(claims.values["tokens"], [1.4e12, 0.3e12])
    assert not claims.unread_columns


@pytest.mark.parametrize("suffix", [".json", ".csv", ".parquet"])
def test_a_count_written_with_the_word_of_what_its_field_counts_is_read(tmp_path, suffix):
    """Papers write "90 epochs" and "1.28M images" (Goyal et al. 2017, ResNet-50 on ImageNet); both were refused as
    unknown units, and the claim invalid (field test, session 23). "256M sequences" in a dataset size stays refused:
    sequences are not the tokens a language model's dataset size counts (AudioLM)."""
    rows = [{"id": "r50", "params": "25.6M", "dataset_size": "1.28M images", "epochs": "90 epochs"},
            {"id": "p", "params": "7B", "epochs": "2 passes", "dataset_size": "256M sequences"}]
    path = tmp_path / f"runs{suffix}"
    frame = pd.DataFrame(rows)
    if suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    elif suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    claims = load([str(path)])
    assert claims.values["epochs"].tolist() == [90.0, 2.0]
    assert claims.values["dataset_size"].tolist()[0] == 1.28e6
    assert claims.text_of("epochs").tolist() == ["90 epochs", "2 passes"]  # shown as written
    assert claims.invalid["field"].tolist() == ["dataset_size"]  # "256M sequences"


def test_integer_ids_with_a_null_among_them_stay_integers(tmp_path):
    """A Parquet column of integer ids with a null reaches pandas as floats: its ids 1 and 3 were named "1.0" and
    "3.0"; they are 1 and 3, and the claim without one is named by its file and row."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "ids.parquet"
    pq.write_table(pa.table({"id": pa.array([1, None, 3], pa.int64()), "params": ["7B"] * 3}), path)
    assert list(load([str(path)]).info["id"]) == ["1", "ids.parquet#2", "3"]
    # Cell by cell, so that a claim is named the same alone as in any batch: 3.0 is 3 beside 1.5 too.
    halves = tmp_path / "halves.parquet"
    pq.write_table(pa.table({"id": [1.5, None, 3.0], "params": ["7B"] * 3}), halves)
    assert list(load([str(halves)]).info["id"]) == ["1.5", "halves.parquet#2", "3"]


# A team's run sheet: LLaMA-65B as published (Touvron et al. 2023, Sec. 2.4 and Table 15): 65.2B parameters, 1.4T
# tokens, 2,048 A100 80GB for about 21 days, 1,022,362 GPU-hours.
_GROUPED = ["Run,,Model,Data,Cluster,,",
            "ID,Owner,Params (B),Tokens (T),Hardware,GPUs,GPU hours",
            'llama-65b,anna,65.2,1.4,A100 80GB,"2,048","1,022,362"']


@pytest.mark.parametrize("title", [False, True])
def test_a_row_of_group_headings_above_the_header_is_passed_over(tmp_path, title):
    """Merged cells over groups of columns ("Model", "Cluster") export as a row of their own above the header; it
    names a field or two ("Run", "Model") but the row below names more: that row is the header, the headings are
    not read, and the note says so (the whole file was refused: 'only name understood')."""
    path = tmp_path / "grouped.csv"
    path.write_text("\n".join((["Pretraining runs Q3,,,,,,"] if title else []) + _GROUPED) + "\n", encoding="utf-8")
    claims = load([str(path)])
    assert claims.info["id"].tolist() == ["llama-65b"]
    assert claims.values.loc[0, ["params", "tokens", "chips", "chip_hours"]].tolist() == [65.2e9, 1.4e12, 2048,
                                                                                         1_022_362]
    assert claims.info["row"].tolist() == [4 if title else 3]  # its line in the file
    said = [m for _, m in claims.notes if m.startswith("read the header")]
    assert said and f"line {3 if title else 2}, below a row of group headings" in said[0] and "'Cluster'" in said[0]


def test_a_row_of_group_headings_in_a_workbook_is_passed_over(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Pretraining runs Q3"])
    sheet.append(["Run", None, "Model", "Data", "Cluster", None, None])
    sheet.append(["ID", "Owner", "Params (B)", "Tokens (T)", "Hardware", "GPUs", "GPU hours"])
    sheet.append(["llama-65b", "anna", 65.2, 1.4, "A100 80GB", 2048, 1_022_362])
    path = tmp_path / "grouped.xlsx"
    book.save(path)
    claims = load([str(path)])
    assert claims.values.loc[0, ["params", "tokens", "chips", "chip_hours"]].tolist() == [65.2e9, 1.4e12, 2048,
                                                                                         1_022_362]
    assert claims.info["row"].tolist() == [4]
    assert any("row 3 of the sheet, below a row of group headings" in m for _, m in claims.notes)


def test_a_blank_row_above_the_header_keeps_the_rows_on_their_lines(tmp_path):
    """A title, then a spreadsheet's blank row exported as separators alone (',,,'), then the header: each row
    keeps the number of its line (the claim on line 4 was said to be on line 3)."""
    path = tmp_path / "runs.csv"
    path.write_text("Pretraining runs Q3,,,\n,,,\nid,params,tokens,compute_flops\nllama-65b,65.2B,1.4T,5.5e23\n",
                    encoding="utf-8")
    claims = load([str(path)])
    assert claims.info["row"].tolist() == [4]


def test_a_run_log_with_nested_objects_is_read_by_its_keys(tmp_path):
    """A run log nests its figures ({"hardware": {"type": ..., "count": ...}}): each nested key is read as the
    header its path spells ("hardware.count" is the chips) or, when the path names no field, by its last key
    ("time.gpu_hours", "metrics.mfu"); a figure under an evaluation's key ("eval.tokens") is not the training's and
    stays unread, named. Every key was refused before ("hardware must be text")."""
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"run_id": "llama-65b", "model": {"name": "LLaMA-65B", "params": "65.2B"},
                                "data": {"tokens": "1.4T"}, "hardware": {"type": "A100 80GB", "count": 2048},
                                "time": {"days": 21, "gpu_hours": 1022362}, "eval": {"tokens": 5e6},
                                "metrics": {"loss": 1.6}}) + "\n", encoding="utf-8")
    claims = load([str(path)])
    assert claims.invalid.empty
    assert claims.info.loc[0, ["id", "name", "hardware"]].tolist() == ["llama-65b", "LLaMA-65B", "A100 80GB"]
    assert claims.values.loc[0, ["params", "tokens", "chips", "wall_clock_days", "chip_hours"]].tolist() == [
        65.2e9, 1.4e12, 2048, 21, 1_022_362]
    assert sorted(u[1] for u in claims.unread_columns) == ["eval.tokens", "metrics.loss"]


def test_a_first_column_without_a_header_naming_the_rows_gives_their_names(tmp_path):
    """Llama 2's model card prints its CO2 table with the model names under no header (Markdown tables do): "Llama 2
    7B" 184,320 GPU hours, 400 W, 31.22 tCO2eq; "13B" 368,640; "70B" 1,720,320; "Total" 3,311,616, 539.00. The
    names became 'column 1', unread with a warning, and the rows showed as file#row only."""
    from audit.api import check, to_json

    path = tmp_path / "card.csv"
    path.write_text(",Time (GPU hours),Power Consumption (W),Carbon Emitted(tCO2eq)\n"
                    "Llama 2 7B,184320,400,31.22\nLlama 2 13B,368640,400,62.44\nLlama 2 70B,1720320,400,291.42\n"
                    "Total,3311616,,539.00\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    assert [c["name"] for c in report["claims"]] == ["Llama 2 7B", "Llama 2 13B", "Llama 2 70B", "Total"]
    assert not report["summary"]["input"]["unread_columns"]
    notes = [n["message"] for n in report["summary"]["input"]["notes"]]
    assert any("no header" in n and "'Llama 2 7B'" in n for n in notes), notes
    # 184,320 h x 400 W = 73.73 MWh (the card's own figures)
    assert report["claims"][0]["quantities"]["energy_mwh"]["value"] == pytest.approx(184320 * 400 / 1e6)


@pytest.mark.parametrize("cells", [("0", "1"), ("a", "a")])
def test_a_first_column_without_a_header_of_figures_or_repeats_names_nothing(tmp_path, cells):
    """A saved index (0, 1, ...) or a repeated text names no rows: still 'column 1', said unread."""
    from audit.api import check, to_json

    path = tmp_path / "t.csv"
    path.write_text(f",params,tokens\n{cells[0]},7B,2T\n{cells[1]},13B,2T\n", encoding="utf-8")
    report = to_json(check([str(path)]))
    assert [c["name"] for c in report["claims"]] == [None, None]
    assert [u["column"] for u in report["summary"]["input"]["unread_columns"]] == ["column 1"]


# --------------------------------------------------------------------------------------------------------
# --sheet all: every sheet shown of a workbook.


def _cluster_book(tmp_path: Path) -> Path:
    """One sheet per cluster, as a platform team keeps them. cluster-a's run agrees: 6 × 7e9 × 1e12 = 4.2e22 FLOP.
    cluster-b's first run claims 4.2e23, ten times 6 × 7e9 × 1e12 (a C001 error); its second, with no id, agrees.
    'notes' holds remarks (no field), 'empty' nothing, 'lookup' is hidden; 'repeat' uses cluster-a's id again."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    a = book.active
    a.title = "cluster-a"
    a.append(["id", "params", "tokens", "compute_flops", "owner"])
    a.append(["run-a", "7B", "1T", "4.2e22", "ana"])
    b = book.create_sheet("cluster-b")
    b.append(["run_id", "model_size", "tokens", "compute_flops", "ownr"])  # another header: read by its own
    b.append(["run-b", "7B", "1T", "4.2e23", "bo"])
    b.append([None, "7B", "1T", "4.2e22", "bo"])
    book.create_sheet("empty")
    notes = book.create_sheet("notes")
    notes.append(["remark"])
    notes.append(["budgets approved in March"])
    lookup = book.create_sheet("lookup")
    lookup.append(["id", "params", "tokens", "compute_flops"])
    lookup.append(["hidden-run", "7B", "1T", "9e30"])
    lookup.sheet_state = "hidden"
    repeat = book.create_sheet("repeat")
    repeat.append(["id", "params", "tokens"])
    repeat.append(["run-a", "7B", "1T"])
    path = tmp_path / "clusters.xlsx"
    book.save(path)
    return path


def test_sheet_all_reads_every_sheet_shown_and_fails_on_the_second(tmp_path, cli_run):
    """A failing run on the second sheet passed CI (exit 0) with the first sheet read by default; with --sheet
    all it fails (exit 1), each claim placed in its sheet, the hidden sheet not read, the sheets with no claims
    said in notes, the unread columns said per sheet, and the id used again on a third sheet a duplicate (V002)."""
    path = _cluster_book(tmp_path)
    first = cli_run("check", str(path))
    assert first.exit_code == 0 and "--sheet all reads every sheet" in first.stderr
    res = cli_run("check", str(path), "--sheet", "all", "--format", "json")
    assert res.exit_code == 1
    doc = res.json()
    assert [c["id"] for c in doc["claims"]] == ["run-a", "run-b", "clusters.xlsx[cluster-b]#3", "run-a"]
    assert [c["input"] for c in doc["claims"]] == [
        {"file": str(path), "sheet": "cluster-a", "row": 2}, {"file": str(path), "sheet": "cluster-b", "row": 2},
        {"file": str(path), "sheet": "cluster-b", "row": 3}, {"file": str(path), "sheet": "repeat", "row": 2}]
    assert [c["status"] for c in doc["claims"]][:3] == ["pass", "fail", "pass"]
    assert [f["ratio"] for f in doc["claims"][1]["findings"] if f["rule"] == "C001"] == [10.0]  # 4.2e23 / 4.2e22
    assert [f["rule"] for f in doc["claims"][3]["findings"] if f["severity"] == "warning"] == ["V002"]
    said = doc["summary"]["input"]
    assert said["unread_columns"] == [
        {"file": str(path), "sheet": "cluster-a", "column": "owner", "suggestion": None},
        {"file": str(path), "sheet": "cluster-b", "column": "ownr", "suggestion": None}]
    notes = {(n["file"], n.get("sheet")): n["message"] for n in said["notes"]}
    assert notes[(str(path), None)] == ("--sheet all: every sheet shown is read (5 of 6: 'cluster-a', 'cluster-b', "
                                        "'empty', 'notes', 'repeat'; hidden, not read: 'lookup', --sheet NAME "
                                        "reads one)")
    assert notes[(str(path), "empty")] == "no claims, passed over: the sheet is empty"
    assert notes[(str(path), "notes")].startswith("no claims, passed over: none of its columns is understood")
    assert "hidden-run" not in res.stdout
    # The stderr of a text run names each sheet in the same form, book.xlsx[SHEET].
    text = cli_run("check", str(path), "--sheet", "*")
    assert text.exit_code == 1 and f"run-b  [{path}[cluster-b]:2]" in text.stdout
    assert f"train-audit: warning: {path}[cluster-b]: 1 column is not read (kept as extra fields): 'ownr'" \
        in text.stderr
    assert f"train-audit: note: {path}[empty]: no claims, passed over: the sheet is empty" in text.stderr


def test_sheet_all_with_no_sheet_of_claims_is_unusable(tmp_path, cli_run):
    """Only when no sheet shown has claims does --sheet all stop the run (exit 2), naming why for each."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.title = "Runs"
    book.active.append(["id", "params"])  # a header, no rows
    book.create_sheet("Blank")
    path = tmp_path / "none.xlsx"
    book.save(path)
    with pytest.raises(LoadError, match=r"no claims in any sheet shown: 'Runs' \(the sheet has a header \(id, "
                                        r"params\) but no rows\); 'Blank' \(the sheet is empty\)"):
        load([str(path)], sheet="all")
    assert cli_run("check", str(path), "--sheet", "all").exit_code == 2


def test_sheet_all_on_inputs_without_workbooks_is_no_error(tmp_path):
    """--sheet all is a standing choice (a settings file's): a CSV input reads as it does without it, where
    --sheet NAME is refused."""
    path = tmp_path / "runs.csv"
    path.write_text("id,params,tokens\nr,7B,1T\n", encoding="utf-8")
    assert list(load([str(path)], sheet="all").info["id"]) == ["r"]
    with pytest.raises(LoadError, match="applies to spreadsheets"):
        load([str(path)], sheet="Runs")
