"""Loading without per-cell Python: what the faster paths of the readers and ``normalize`` must still give.

Parquet columns already in their final form (text, float64) are kept as Arrow converted them; numbers keep their
shortest ``repr`` as text, made once per distinct number; a CSV cell is missing only when empty; text limits and
ids are checked on whole columns. Expected values are written out by hand.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.reading import canonical_columns, load, read_path
from audit.reading.normalize import cell_texts, normalize, _blank, _text_lengths


def _write(tmp_path, table: pa.Table, name: str = "claims.parquet"):
    path = tmp_path / name
    pq.write_table(table, path)
    return path


def test_parquet_columns_of_every_type_become_python_values_with_none_for_missing(tmp_path):
    table = pa.table({
        "id": pa.array(["a", None, "c"]),
        "hardware": pa.array(["H100", None, "H100"]).dictionary_encode(),
        "domain": pa.array(["x", None, "z"], pa.large_string()),
        "name": pa.array([None, None, None], pa.null()),
        "flag": pa.array([True, None, False]),
        "chips": pa.array([8, None, 16], pa.int64()),
        "mfu": pa.array([0.5, None, 0.25], pa.float32()),
        "tokens": pa.array([1e12, None, 2.5e12]),
        "layers": pa.array([32, 40, 48], pa.int32()),
    })
    frame = read_path(_write(tmp_path, table)).frame
    assert frame["id"].tolist() == ["a", None, "c"]
    assert frame["hardware"].tolist() == ["H100", None, "H100"] and frame["hardware"].dtype == object
    assert frame["domain"].tolist() == ["x", None, "z"]
    assert frame["name"].tolist() == [None, None, None]
    assert frame["flag"].tolist() == [True, None, False]
    assert frame["chips"].dtype == np.float64 and frame["chips"].tolist()[::2] == [8.0, 16.0]
    assert frame["mfu"].dtype == np.float64 and frame["mfu"].tolist()[::2] == [0.5, 0.25]
    assert frame["tokens"].tolist()[::2] == [1e12, 2.5e12]
    assert frame["layers"].dtype == np.int32 and frame["layers"].tolist() == [32, 40, 48]


def test_numbers_keep_their_shortest_repr_as_text_once_per_distinct_number():
    # 0.1 + 0.2 is 0.30000000000000004 (binary floating point); -0.0 is not 0.0; NaN has no text.
    values = [0.1 + 0.2, -0.0, 0.0, 4096.0, np.nan, 1e16, 1e-05] * 3
    assert cell_texts(pd.Series(values)).tolist() == [
        "0.30000000000000004", "-0.0", "0.0", "4096.0", None, "1e+16", "1e-05"] * 3
    assert cell_texts(pd.Series([7, -3, 7, 2 ** 40])).tolist() == ["7", "-3", "7", "1099511627776"]
    assert cell_texts(pd.Series([2.5], dtype=np.float32)).tolist() == ["2.5"]
    assert cell_texts(pd.Series([], dtype=float)).tolist() == []


def test_text_lengths_and_blank_texts():
    texts = np.array(["abc", None, "", "   ", "\t\n", "é", " x "], dtype=object)
    assert _text_lengths(texts).tolist() == [3, -1, 0, 3, 2, 1, 3]
    assert _blank(texts).tolist() == [False, True, True, True, True, False, False]


def test_blank_and_long_ids_in_a_large_file(tmp_path):
    n = 1000
    ids = [f"run-{i}" for i in range(n)]
    # Whitespace, empty, and longer than the 200 characters schemas/claims.schema.json allows an id.
    ids[3], ids[5], ids[7] = "   ", "", "x" * 600
    path = _write(tmp_path, pa.table({"id": ids, "params": [f"{i}B" for i in range(1, n + 1)]}))
    claims = load([str(path)])
    assert claims.info.loc[3, "id"] == "claims.parquet#4" and claims.info.loc[5, "id"] == "claims.parquet#6"
    assert claims.info.loc[7, "id"] == "x" * 200 + "…"
    assert claims.info["id_given"].sum() == n - 2
    assert claims.values["params"].tolist() == [float(f"{i}e9") for i in range(1, n + 1)]
    assert claims.text.loc[0, "params"] == "1B"
    bad = claims.invalid
    assert bad.loc[bad["row"] == 7, "message"].tolist() == ["id is longer than 200 characters"]


def test_a_csv_cell_is_missing_only_when_empty(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text('id,params,hardware\nr1,,""\nr2,NA,H100\nr3,7B\n', encoding="utf-8")
    frame = read_path(path).frame
    assert frame["params"].tolist() == [None, "NA", "7B"]
    assert frame["hardware"].tolist() == [None, "H100", None]
    claims = load([str(path)])
    # "NA" is the parser's missing value, not an error (pandas' own default missing strings are read so).
    assert np.isnan(claims.values.loc[1, "params"]) and claims.text.loc[1, "params"] == "NA"
    assert claims.values.loc[2, "params"] == 7e9


@pytest.mark.parametrize("rows", [10, 500])
def test_frames_are_the_same_whatever_the_size(tmp_path, rows):
    """Large and small files take different paths (vectorized above ``units.COMMON_FROM`` distinct cells)."""
    cells = [f"{k},{k % 7 + 1}.5M GPU-hours,{k % 50}.5%" for k in range(rows)]
    path = tmp_path / "runs.csv"
    path.write_text("id,chip_hours,mfu\n" + "\n".join(cells) + "\n", encoding="utf-8")
    claims = load([str(path)])
    assert claims.values["chip_hours"].tolist() == [float(f"{k % 7 + 1}.5e6") for k in range(rows)]
    assert claims.values["mfu"].tolist() == [float(f"{k % 50}.5e-2") for k in range(rows)]
    assert list(claims.values.columns) == list(claims.text.columns)
    assert claims.values.dtypes.eq(np.float64).all() and claims.text.dtypes.eq(object).all()


@pytest.mark.parametrize("kind", ["plain", "large_string", "with_pandas_metadata", "index_kept", "repeated"])
def test_a_parquet_batch_of_distinct_texts_converts_as_arrow_converts_it(kind):
    """Batches over 2,048 rows convert mostly distinct text columns without Arrow's sharing of one string per
    distinct text (audit.reading.parquetfile._to_pandas): the frame must be the one pyarrow's own
    ``to_pandas(integer_object_nulls=False, date_as_object=True)`` gives, columns, order, dtypes and values (None
    where a cell is missing), whatever the column types and pandas metadata."""
    import pyarrow as pa

    from audit.reading.parquetfile import _to_pandas

    n = 5_000
    ids = [None if i % 97 == 0 else f"run-{i}" for i in range(n)]
    hardware = ["H100" if i % 3 else "A100" for i in range(n)]
    frame = pd.DataFrame({"id": ids, "params": [f"{i % 500}B" for i in range(n)], "hardware": hardware,
                          "chips": [float(i) for i in range(n)], "notes": [f"note {i}" for i in range(n)]})
    if kind == "index_kept":
        frame.index = pd.Index([f"r{i}" for i in range(n)], name="key")
    if kind == "repeated":
        frame["id"] = ["same"] * n
    table = pa.Table.from_pandas(frame, preserve_index=kind == "index_kept") if kind in (
        "with_pandas_metadata", "index_kept", "repeated") else pa.table({c: frame[c].tolist() for c in frame})
    if kind == "large_string":
        table = table.cast(pa.schema([pa.field(f.name, pa.large_string()) if pa.types.is_string(f.type) else f
                                      for f in table.schema]))
    expected = table.to_pandas(integer_object_nulls=False, date_as_object=True)
    got = _to_pandas(table)
    assert list(got.columns) == list(expected.columns)
    assert list(got.dtypes) == list(expected.dtypes)
    assert got.index.equals(expected.index)
    for column in expected.columns:
        assert got[column].tolist() == expected[column].tolist(), column


def _same_claims(a, b) -> None:
    pd.testing.assert_frame_equal(a.values, b.values)
    pd.testing.assert_frame_equal(a.info, b.info)
    pd.testing.assert_frame_equal(a.text, b.text)
    pd.testing.assert_frame_equal(a.invalid, b.invalid)
    pd.testing.assert_frame_equal(a.readings, b.readings)


@pytest.mark.parametrize("rows", [5, 5000])
def test_text_read_from_arrow_is_read_as_from_the_python_strings(tmp_path, rows):
    # Blank ids of every kind of whitespace str.isspace knows (the Arrow check looks at a first printable ASCII
    # character only), texts over their limits, placeholders, precisions and figures with units.
    ids = ["run-1", None, "", " ", "\u3000", "\x1c\x1f", "\xa0x", "~", "\x7f", "é", "a" * 600, "\t b "]
    hardware = ["H100", "N/A", None, " unknown ", "A100 80GB", "x" * 300, "TPU v5p", "-", "H100", "é", "", "MI300X"]
    precision = ["bf16", "FP16/FP32 mixed", None, "Unknown", "fp8 (E4M3)", "", "p" * 600, "TF32", "int8", "é", "x",
                 " "]
    chip_hours = ["2.62M GPU-hours", "5155.8", None, "less than 400K GPU-hours", "41-42", "n/a", "1,024", "-1",
                  "2260275840,2290000001", "", "1e400", "7 days"]
    mfu = ["22.4%", "40% HFU", None, "0.5", "nan", "TBD", "0", "41-42%", "1.5", "", "35 %", "3e-1"]
    k = len(ids)
    table = pa.table({"id": [ids[i % k] for i in range(rows)], "hardware": [hardware[i % k] for i in range(rows)],
                      "precision": [precision[i % k] for i in range(rows)],
                      "chip_hours": [chip_hours[i % k] for i in range(rows)], "mfu": [mfu[i % k] for i in range(rows)],
                      "name": pa.array([ids[(i + 3) % k] for i in range(rows)], pa.large_string())})
    raw = read_path(str(_write(tmp_path, table)))
    canon = canonical_columns(raw, "claims.parquet")
    assert set(canon.arrow_text) == set(table.column_names)
    assert all(held.of(canon.frame[name]) is not None for name, held in canon.arrow_text.items())
    fast = normalize(canon)
    slow = normalize(dataclasses.replace(canon, arrow_text={}))
    _same_claims(fast, slow)
    assert (~fast.info["id_given"]).sum() > 0 and fast.readings["rule"].eq("V011").any()


def test_arrow_text_is_only_that_of_the_very_cells_converted_from_it(tmp_path):
    table = pa.table({"id": ["a", "b", None], "params": ["7B", "7B", "70B"]})
    raw = read_path(str(_write(tmp_path, table)))
    held = raw.arrow_text["params"]
    assert held.of(raw.frame["params"]).to_pylist() == ["7B", "7B", "70B"]
    assert held.of(raw.frame["params"].copy()) is None  # a copy may since have been changed
    assert held.of(raw.frame["params"].iloc[:2]) is None  # another length: other cells
    assert held.of(raw.frame["id"]) is None
