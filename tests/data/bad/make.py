"""Regenerate the bad-input corpus in this folder: ``python tests/data/bad/make.py [OUT_DIR]``.

Every file here is written by this script, byte for byte (BOMs, Latin-1 bytes, NUL bytes, missing final newlines
and the Parquet files cannot be typed by hand reliably), and ``expected.json`` says what train-audit must do with
each one. ``tests/test_bad_inputs.py`` checks that the committed files are what this script writes (Parquet files
are compared as tables: their bytes carry the writer's version) and that train-audit does what the manifest says.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import random
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# A claim every check agrees with, whatever else the engine learns to check: 7B parameters, 140B tokens
# (20 tokens per parameter, the Chinchilla-optimal ratio) and compute = 6 N D = 5.88e21 FLOP exactly.
GOOD = {"params": "7B", "tokens": "140B", "compute_flops": "5.88e21"}


def good(claim_id: str, **fields: object) -> dict:
    return {"id": claim_id, **GOOD, **fields}


def json_text(value: object) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False) + "\n"


def text_files() -> dict[str, bytes]:
    """Every file but the Parquet ones, as bytes."""
    rnd = random.Random(20240605)
    f: dict[str, bytes] = {}

    # ---- whole-file problems: exit 2 with one message naming the file
    f["empty.json"] = b""
    f["empty.csv"] = b""
    f["whitespace.json"] = b"  \n\t\r\n  \n"
    f["truncated.json"] = b'[{"id": "a", "params": "7B", "tokens": "140B"}, {"id": "b", "par'
    f["garbage.json"] = rnd.randbytes(512)
    f["garbage.csv"] = b"id,params\n" + rnd.randbytes(512)
    f["garbage_no_nul.json"] = bytes(rnd.choice(range(0x80, 0x100)) for _ in range(256))
    f["number.json"] = b"42\n"
    f["string.json"] = b'"175B"\n'
    f["null.json"] = b"null\n"
    f["true.json"] = b"true\n"
    f["empty_array.json"] = b"[]\n"
    f["empty_claims.json"] = b'{"claims": []}\n'
    f["claims_not_array.json"] = b'{"claims": {"id": "a", "params": "7B"}}\n'
    f["deep_array.json"] = b"[" * 100_000 + b"]" * 100_000
    f["deep_object.json"] = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    f["deep_in_claim.json"] = (b'[{"id": "a", "params": "7B", "notes": ' + b"[" * 100_000 + b"]" * 100_000
                               + b"}]\n")
    f["deep_unclosed.json"] = b"[" * 100_000
    f["header_only.csv"] = b"id,params,tokens,compute_flops\n"
    f["header_only_bom.csv"] = b"\xef\xbb\xbfid,params\r\n"
    f["blank_lines.jsonl"] = b"\n   \n\n"
    f["unclosed_quote.csv"] = b'id,name,params\na,"GPT, the first,7B\nb,ok,7B\n'
    f["yaml_is_refused.yaml"] = b"id: a\nparams: !!python/object/apply:os.system ['echo pwned']\n"
    f["no_extension"] = json_text(good("a")).encode()
    f["text.parquet"] = b"id,params\na,7B\n"

    # ---- row problems: the claim is invalid (one finding per field), the other rows are audited
    f["strings.json"] = json_text(["gpt-3", "llama"]).encode()
    f["mixed_items.json"] = json_text([good("ok-1"), 5, None, [1, 2], "text", True, good("ok-2")]).encode()
    f["nan_inf.json"] = (
        b'[{"id": "nan", "params": NaN, "tokens": "140B"},\n'
        b' {"id": "inf", "params": "7B", "tokens": Infinity},\n'
        b' {"id": "neg-inf", "params": "7B", "chip_hours": -Infinity},\n'
        b' {"id": "overflow", "params": "7B", "compute_flops": 1e400},\n'
        b' {"id": "big-int", "params": 1' + b"0" * 400 + b'},\n'
        b' {"id": "nan-text", "params": "NaN"},\n'
        b' {"id": "ok", "params": "7B", "tokens": "140B", "compute_flops": 5.88e21}]\n')
    f["huge_integer.json"] = (b'[{"id": "huge", "params": 1' + b"0" * 5000 + b', "notes": 1' + b"0" * 5000 + b"},\n"
                              + json.dumps(good("ok")).encode() + b"]\n")
    f["nan_inf.csv"] = (b"id,params,tokens\n"
                        b"nan,NaN,140B\n"
                        b"inf,7B,inf\n"
                        b"overflow,1e400,140B\n"
                        b"neg-overflow,-1e400,140B\n"
                        b"ok,7B,140B\n")
    f["negative_zero.json"] = json_text([
        good("neg-params", params="-7B"),
        good("zero-tokens", tokens=0),
        {"id": "zero-chips", "chips": 0},
        {"id": "neg-chips", "chips": -8},
        {"id": "zero-days", "wall_clock_days": "0 days"},
        {"id": "neg-hours", "chip_hours": -1},
        {"id": "zero-mfu", "mfu": 0},
        {"id": "neg-mfu", "mfu": "-40%"},
        {"id": "neg-compute", "compute_flops": "-3.14e23"},
        good("ok"),
    ]).encode()
    f["fractional_chips.json"] = json_text([
        {"id": "half", "chips": 1.5},
        {"id": "text-fraction", "chips": "2048.5"},
        {"id": "whole-float", "chips": 2048.0},
        {"id": "exponent", "chips": "1e3"},
        {"id": "thousands", "chips": "2,048 GPUs"},
    ]).encode()
    f["fractional_chips.csv"] = b"id,chips\nhalf,1.5\nwhole,2048\nwhole-float,2048.0\nthird,0.333\n"
    f["unknown_units.json"] = json_text([
        good("apples", params="5 apples"),
        good("bananas", tokens="1.4T bananas"),
        good("fortnights", compute_flops="3 PF-fortnights"),
        {"id": "parsecs", "wall_clock_days": "21 parsecs"},
        {"id": "node-hours", "chip_hours": "1M node-hours"},
        {"id": "words", "tokens": "300B words"},
        {"id": "currency", "compute_flops": "$4.6M"},
        {"id": "decimal-comma", "mfu": "0,45"},
        good("ok", mfu="40 %"),
    ]).encode()
    f["percent_over_100.json"] = json_text([
        {"id": "mfu-150pct", "mfu": "150%"},
        {"id": "mfu-46.2-bare", "mfu": 46.2},
        {"id": "hfu-250pct", "hfu": "250%"},
        {"id": "mfu-ok", "mfu": "46.2%"},
    ]).encode()
    f["wrong_types.json"] = json_text([
        good("params-true", params=True),
        good("tokens-false", tokens=False),
        good("params-list", params=[7, "B"]),
        good("tokens-object", tokens={"value": 140, "unit": "B"}),
        good("hardware-number", hardware=100),
        good("source-true", source=True),
        good("precision-number", precision=16),
        {**good("x"), "id": True},
        {**good("x"), "id": [1, 2]},
        good("name-number", name=1984),
        {**good("x"), "id": 7},
        good("nulls", chips=None, hardware=None, name=None),
    ]).encode()
    f["duplicate_ids.json"] = json_text([good("llama"), good("gpt"), good("llama"), good("llama")]).encode()
    f["duplicate_ids.csv"] = (b"id,params,tokens,compute_flops\n"
                              b"llama,7B,140B,5.88e21\nllama,7B,140B,5.88e21\ngpt,7B,140B,5.88e21\n"
                              b",7B,140B,5.88e21\n,7B,140B,5.88e21\n")
    f["duplicate_keys.json"] = (b'[{"id": "differ", "params": "7B", "tokens": "140B", "params": "70B"},\n'
                                b' {"id": "same", "params": "7B", "tokens": "140B", "params": "7B"}]\n')
    f["bom.csv"] = ("\ufeffid,params,tokens,compute_flops\r\nbom-1,7B,140B,5.88e21\r\n").encode("utf-8")
    f["utf16.csv"] = ("\ufeffid,name,params,tokens\r\nutf16,Modèle ß,7B,140B\r\n").encode("utf-16-le")
    f["thousands.csv"] = (b"id,chips,wall_clock_days,chip_hours\n"
                          b'quoted,"2,048",21,"1,032,192"\n'
                          b"unquoted,2,048,21,1,032,192\n"
                          b'with-units,"2,048 GPUs",21 days,"1,032,192 GPU-hours"\n'
                          b'bad-groups,"20,48",21,"1,032,192"\n')
    f["latin1.csv"] = ("id,name,source,params,tokens\n"
                       "cafe,Café Zürich naïve,Müller et al. – 2021,7B,140B\n"
                       "plain,Plain,none,7B,140B\n").encode("cp1252")
    f["ragged.csv"] = (b"id,params,tokens\n"
                       b"long,7B,140B,oops,again\n"
                       b"short,7B\n"
                       b"trailing-commas,7B,140B,,\n"
                       b"ok,7B,140B\n")
    f["first_row_long.csv"] = b"id,params\nfirst,7B,140B\nsecond,7B\n"
    f["trailing_commas.csv"] = b"id,params,tokens,\nt1,7B,140B,\nt2,7B,140B,\n"
    f["unnamed_column.csv"] = b"id,,tokens\nu1,lost?,140B\nu2,,140B\n"
    f["semicolons.csv"] = "id;name;params;tokens;mfu\r\nsemi-1;Modèle;7B;140B;45%\r\nsemi-2;x;7B;140B;0,45\r\n".encode("cp1252")
    f["blank_lines.csv"] = b"id,params,tokens\n\nb1,7B,140B\n\n\nb2,7B,140B\n\n"
    f["nul_late.csv"] = b"id,params\n" + b"ok,7B\n" * 1000 + b"bad,7\x00B\n"
    long_name = "N" * 10_000
    f["long_strings.json"] = json_text([
        good("long-name", name=long_name),
        {**good("x"), "id": "I" * 300},
        good("long-number", params="1" * 300),
        good("long-source", source="S" * 3000),
        good("long-hardware", hardware="H" * 1000),
        good("long-extra", notes="E" * 100_000),
        good("ok"),
    ]).encode()
    f["long_strings.csv"] = ("id,name,params,tokens,notes\n"
                             f"long-name,{'N' * 600},7B,140B,\n"
                             f"long-extra,ok,7B,140B,{'E' * 200_000}\n"
                             f"long-number,ok,{'9' * 250},140B,\n").encode()
    f["bad_lines.jsonl"] = (json.dumps(good("l1")).encode() + b"\n"
                            + b'{"id": "l2", "params": "7B"\n'
                            + b"\n"
                            + b"42\n"
                            + b"[" * 100_000 + b"]" * 100_000 + b"\n"
                            + json.dumps(good("l6")).encode() + b"\n")
    f["empty_object.json"] = b"{}\n"

    # ---- round two (issue 10): inputs aimed at the guarantees
    # One row's spelling of a key must not change how another row is read; two spellings in one row are invalid.
    f["key_spellings.json"] = json_text([
        {"id": "other", "n_params": "7B", "tokens": "140B", "compute_flops": "5.88e21"},
        {"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": "1e30"},
        {"id": "both", "params": "7B", "n_params": "70B", "tokens": "140B"},
        {"id": "Params", "Params": "7B", "tokens": "140B", "compute_flops": "5.88e21"},
        {"id": "gpus", "gpus": 8, "wall_clock_days": 1, "chip_hours": 1000},
        {"id": "chips", "chips": 8, "wall_clock_days": 1, "chip_hours": 1000},
        {"id": "twice-same", "params": "7B", "parameters": "7B", "tokens": "140B", "compute_flops": "5.88e21"},
    ]).encode()
    f["key_spellings.csv"] = b"id,params,n_params,tokens\na,7B,,140B\nb,,7B,140B\n"
    f["citation_columns.csv"] = (b"id,Link,Reference,params,tokens,compute_flops\n"
                                 b"c1,https://arxiv.org/abs/1,A paper,7B,140B,5.88e21\n"
                                 b"c2,,Only a title,7B,140B,5.88e21\n")
    # A lone surrogate escape cannot be written as UTF-8: shown escaped, never an abort.
    surrogate_rows = [
        '{"id": "x\\ud800", "name": "n\\udfff", "notes": "\\ud800", "params": "7B", "tokens": "140B", '
        '"compute_flops": "5.88e21"}',
        '{"id": "ok", "params": "7B", "tokens": "140B", "compute_flops": "5.88e21"}',
        '{"id": "key", "\\udc00key": ["\\ud800"], "params": "7B\\ud800", "tokens": "140B"}',
        '{"id": "pair", "name": "\\ud83d\\ude00", "params": "7B", "tokens": "140B", "compute_flops": "5.88e21"}',
    ]
    f["surrogates.json"] = ("[" + ",\n".join(surrogate_rows) + "]\n").encode()
    f["surrogates.jsonl"] = ("\n".join(surrogate_rows) + "\n").encode()
    # Field names the reader used for its own bookkeeping are user data like any other.
    internal = {"_row": 1, "_row (input)": 2, "_file": "f", "_file (input)": 3}
    f["internal_names.json"] = json_text([good("i1", **internal), good("i2")]).encode()
    f["internal_names.csv"] = (b"id,_row,_row (input),_file,_file (input),params,tokens,compute_flops\n"
                               b"i1,1,2,f,3,7B,140B,5.88e21\n")
    # A carriage return in a name must not split a row of --format csv, nor let a formula through after it.
    f["formula_names.csv"] = (b'id,name,params,tokens,compute_flops\n'
                              b'"cr","Model X\r=cmd|\' /C calc\'!A0",7B,140B,5.88e21\n'
                              b'"lf","Model Y\n@SUM(1+1)*cmd|\' /C calc\'!A0",7B,140B,5.88e21\n'
                              b'"crlf","Model Z\r\n+1",7B,140B,5.88e21\n')
    # A multiplier before a unit word is read, or the value refused: never the bare number.
    f["multipliers.json"] = json_text([
        good("m-gpu-hours", chip_hours="2.788m GPU-hours"),
        good("mn-gpu-hours", chip_hours="2.788 mn GPU-hours"),
        good("mn-hours", chip_hours="2.788 mn"),
        good("b-gpu-hours", chip_hours="1.5b GPU-hours"),
        good("b-hours", chip_hours="1.5b"),
        good("min-gpu-hours", chip_hours="5 min GPU-hours"),
        {"id": "times-params", "params": "3 x 1024"},
        {"id": "times-chips", "chips": "3 x 1024 GPUs"},
        good("min-tokens", tokens="5 min tokens"),
        good("two-multipliers", tokens="140 billion B tokens"),
        good("M-gpu-hours", chip_hours="2.788 M GPU hours"),
    ]).encode()
    # Multipliers this does not know, and rates, before a unit word: refused, never dropped as a description
    # (these read as the bare number before the fix: 2.788 hours, 1.5 tokens, 2 chips).
    f["unread_multipliers.json"] = json_text([
        good("mln-gpu-hours", chip_hours="2.788 mln GPU-hours"),
        good("mio-gpu-hours", chip_hours="1.5 Mio GPU-hours"),
        good("lakh-gpu-hours", chip_hours="2 lakh GPU-hours"),
        good("mm-gpu-hours", chip_hours="2.788mm GPU-hours"),
        good("mrd-tokens", tokens="140 Mrd tokens"),
        good("crore-tokens", tokens="14000 crore tokens"),
        good("e-gpu-hours", chip_hours="1e5 e GPU-hours"),
        good("price-per-hour", chip_hours="2 USD per hour"),
        good("rate-per-gpu", chips="5 TFLOPS per GPU"),
        good("described", chip_hours="2.788M NVIDIA H100 GPU-hours", chips="2,048 AMD MI250X GPUs",
             tokens="140B text tokens"),
    ]).encode()
    # A phase's invalid value is part of its run's audit in every output.
    f["phase_invalid.json"] = json_text([
        good("run", phases=[{"hardware": "H100", "chips": 1.5, "wall_clock_days": 2},
                            {"hardware": "A100", "chips": 8, "wall_clock_days": 1}]),
        good("ok"),
    ]).encode()
    f["nested_phases.json"] = json_text([
        good("nested", phases=[{"hardware": "H100", "chips": 8, "wall_clock_days": 2,
                                "phases": [{"hardware": "A100", "chips": 8, "wall_clock_days": 1}]}]),
        good("ok"),
    ]).encode()
    # Markdown and the terminal interpret none of this.
    f["markdown_injection.json"] = json_text([
        good("`code`|x", name="![img](http://example.com/x.png) [link](http://example.com) <img src=x>"),
        good("mention", name="@octocat and #1 and https://example.com and www.example.com"),
        good("cr", name="line one\rline two\n| a | b |"),
        good("escape", name="\x1b[31mred\x1b[0m \x9b31m \u202eevil"),
        good("emphasis", name="*bold* _it_ ~~s~~ $x$ <!-- c --> &amp; \\"),
    ]).encode()
    # A JSON object that wraps the claims under another key is not one empty claim.
    f["wrapped_runs.json"] = json_text({"runs": [good("w1"), good("w2")]}).encode()
    f["wrapped_capital.json"] = json_text({"Claims": [good("w1")]}).encode()
    f["claims_and_meta.json"] = json_text({"claims": [good("m1")], "version": 2}).encode()
    f["claims_and_runs.json"] = json_text({"claims": [good("m1")], "runs": [good("m2")]}).encode()
    f["empty_objects.json"] = json_text([{}, {}]).encode()
    f["no_known_columns.csv"] = b"a,b,c\n1,2,3\n"
    f["no_known_keys.json"] = json_text([{"model_sz": "7B", "toks": "140B"}]).encode()
    # Columns the tool does not read are named once per file, with a did-you-mean; messages name the header.
    f["unread_columns.csv"] = (b"run_id,model_size,num_gpus,gpu_type,train_hours,tokens_seen,reported_mfu\n"
                               b"r1,7B,8,H100,120,140B,40%\n"
                               b"r2,5 apples,8,H100,120,140B,40%\n")
    # Excel's separator hint on the first line.
    f["sep_line.csv"] = b"sep=;\r\nid;params;tokens;compute_flops\r\nsep-1;7B;140B;5.88e21\r\nsep-2;7B;140B;5.88e21\r\n"
    # JSON Lines from an old Mac: lines end with a carriage return alone.
    f["cr_only.jsonl"] = b"\r".join(json.dumps(good(f"cr{i}")).encode() for i in range(3)) + b"\r"
    # Two values that compare equal but are written differently keep their own text.
    f["colliding_values.json"] = json_text([
        {"id": 7, "name": 1984, "params": 7000000000, "tokens": "140B", "compute_flops": "5.88e21"},
        {"id": 7.0, "name": 1984.0, "params": 7000000000.0, "tokens": "140B", "compute_flops": "5.88e21"},
        {"id": "bool", "params": True, "tokens": "140B"},
        good("one", chips=1),
        good("one-float", chips=1.0),
    ]).encode()
    return f


#: Files named too long for the file system: refused with the error, not "no such file" or an internal error.
LONG_NAME = "N" * 300 + ".json"


def xlsx_workbooks() -> dict[str, object]:
    """Spreadsheets (openpyxl writes no cached value for a formula, as a program that never computed it)."""
    import openpyxl

    books: dict[str, object] = {}
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Runs"
    ws.append(["id", "params", "tokens", "compute_flops"])
    ws.append(["x1", "7B", "140B", "5.88e21"])
    ws.append([None, None, None, None])
    ws.append(["x2", "7B", "140B", "5.88e21"])
    ws.append([None, None, None, None])
    ws.cell(row=9, column=2).number_format = "0.00"  # a formatted but empty cell: not a row
    books["blank_rows.xlsx"] = wb
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Runs"
    ws.append(["id", "params", "tokens", "compute_flops"])
    ws.append(["f1", "=7*10^9", "140B", "5.88e21"])
    ws.append(["f2", "7B", "140B", "5.88e21"])
    books["formula_no_cache.xlsx"] = wb
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Runs"
    ws.append(["id", "params", "tokens", "compute_flops"])
    ws.append(["s1", "7B", "140B", "5.88e21"])
    other = wb.create_sheet("More runs")
    other.append(["id", "params", "tokens", "compute_flops"])
    other.append(["s2", "7B", "140B", "1e30"])
    other.append(["s3", "7B", "140B", "5.88e21"])
    books["two_sheets.xlsx"] = wb
    return books


def parquet_tables() -> dict[str, object]:
    import pyarrow as pa

    t: dict[str, object] = {}
    t["types.parquet"] = pa.table({
        "id": ["t1", "t2"],
        "params": pa.array([[7, 0], [140]], pa.list_(pa.int64())),
        "chips": pa.array([True, False]),
        "tokens": pa.array([dt.datetime(2023, 1, 1), dt.datetime(2023, 6, 1)], pa.timestamp("us")),
        "compute_flops": pa.array([decimal.Decimal("5880000000000000000000"), decimal.Decimal("1E+23")],
                                  pa.decimal128(38, 0)),
        "hardware": pa.array([b"H100", b"A100"], pa.binary()),
        "name": pa.array(["dictionary", "encoded"]).dictionary_encode(),
        "elapsed": pa.array([86400, 3600], pa.duration("s")),
        "meta": pa.array([{"a": 1}, {"a": 2}]),
        "nothing": pa.array([None, None], pa.null()),
    })
    t["bool_params.parquet"] = pa.table({"id": ["b1", "b2"], "params": [True, None], "tokens": ["140B", "140B"]})
    t["timestamp_params.parquet"] = pa.table({
        "id": ["ts1", "ts2"],
        "params": pa.array([dt.datetime(3000, 1, 1), None], pa.timestamp("us")),
        "tokens": ["140B", "140B"]})
    t["numeric.parquet"] = pa.table({
        "id": ["n1", "n2", "n3"],
        "params": pa.array([7e9, 7e9, None], pa.float64()),
        "tokens": pa.array([140_000_000_000, 140_000_000_000, 140_000_000_000], pa.int64()),
        "compute_flops": pa.array([5.88e21, float("inf"), 5.88e21]),
        "chips": pa.array([8, None, 3], pa.int32()),
        "mfu": pa.array([0.4, 0.4, 0.4], pa.float16()),
    })
    t["duplicate_columns.parquet"] = pa.Table.from_arrays(
        [pa.array(["d1"]), pa.array(["7B"]), pa.array(["70B"]), pa.array(["140B"])],
        names=["id", "params", "params", "tokens"])
    t["no_rows.parquet"] = pa.table({"id": pa.array([], pa.string()), "params": pa.array([], pa.float64())})
    t["no_columns.parquet"] = pa.table({})
    t["internal_names.parquet"] = pa.table({"id": ["i1"], "_row": [1], "_row (input)": [2], "_file": ["f"],
                                            "params": ["7B"], "tokens": ["140B"], "compute_flops": ["5.88e21"]})
    return t


def write(out: Path) -> None:
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    for name, data in text_files().items():
        (out / name).write_bytes(data)
    for name, table in parquet_tables().items():
        pq.write_table(table, out / name)
    for name, book in xlsx_workbooks().items():
        book.save(out / name)
    # A damaged Parquet file: the real one with its middle overwritten, and one cut in half.
    buf = io.BytesIO()
    pq.write_table(parquet_tables()["numeric.parquet"], buf)
    whole = buf.getvalue()
    middle = len(whole) // 2
    (out / "corrupt.parquet").write_bytes(whole[:8] + bytes(middle - 8) + whole[middle:])
    (out / "truncated.parquet").write_bytes(whole[:middle])
    (out / "zero_bytes.parquet").write_bytes(b"")
    # A folder where a file is expected (git keeps it through the file inside).
    folder = out / "folder.csv"
    folder.mkdir(exist_ok=True)
    (folder / "README").write_text("A folder named like a CSV file: train-audit must refuse it.\n")
    missing = out / "missing.json"
    if missing.exists():
        missing.unlink()
    # A symbolic link to itself: the error is the loop, not "no such file".
    loop = out / "symlink_loop.json"
    if loop.is_symlink() or loop.exists():
        loop.unlink()
    loop.symlink_to("symlink_loop.json")


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    if target.resolve() != HERE and target.exists():
        shutil.rmtree(target)
    write(target)
    print(f"wrote the bad-input corpus to {target}")
