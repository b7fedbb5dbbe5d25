"""The vectorized reading of common cell shapes (``units._parse_common``) gives what the per-cell parser gives.

``parse_series`` reads many distinct cells such as ``7B``, ``871,170 GPU-hours`` or ``46.2%`` together (Arrow's
regular expressions, each unit text read once); every other cell, and every cell whose unit is refused, takes the
per-cell parser. These tests read thousands of cells of every shape both ways, for every kind, with and without a
unit in the column header, and require the same float to the bit and the same message; the last ones check
values written out by hand.
"""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from audit import units
from audit.units import UnitError, parse_series, parse_value

SIGNS = ["", "+", "-"]
INTS = ["", "0", "7", "007", "65", "1,234", "12,345,678", "1234", "1,23", "123,4567", "10", "2"]
FRACS = [None, "", "5", "25", "0001", "788", "99999999999999999999"]
EXPONENTS = ["", "e5", "E-3", "e+07", "e", "e-", "e400", "e-400", "e1234567", "e0"]
SEPARATORS = ["", " ", "  ", "\t", "-"]
UNITS = ["", "B", "b", "M", "m", "T", "t", "k", "K", "G", "g", "bn", "mn", "million", "Billion", "tokens",
         "T tokens", "B params", "B training tokens", "GPU-hours", "M GPU-hours", "m GPU-hours", "H100 GPU hours",
         "GPU hours", "TPU-days", "node-hours", "core-hours", "days", "d", "wall clock days", "months", "mo",
         "weeks", "h", "hours", "min", "%", "percent", "pct", "PF-days", "petaflop/s-days", "PFLOP", "ZFLOP",
         "FLOP", "FLOPs", "e", "TFLOP/s", "TFLOPS", "TFLOPs", "PF", "TFLOPS per GPU", "GB", "GiB", "Gb", "TB",
         "bytes", "bits", "W", "kW", "MW", "MWh", "kWh", "GWh", "GJ", "t CO2e", "kg", "tCO2eq", "USD",
         "million USD", "tokens/s", "M tokens/sec", "tokens/hour", "tokens/s per GPU", "e5", "e5-h", "E5 GPU-hours",
         "-h", "/s", "x 1024", "%%", "nodes", "words", "GPUs", "chips", "TPU v4 chips", "A100s", "3 GPUs",
         "2.5 GPUs", "days+", "+", "^2", "$", "€", "×10^3", "…", "ℹ", "B\u2013tokens", "\u00a0B", "(est.)", "h100"]
PADDING = ["", " ", "  ", "\n"]
#: Whole cells of shapes the grammar above does not make: missing values, qualifiers, powers, odd text.
ODD = ["nan", "NaN", "-nan", "N/A", "none", "", " ", "inf", "-inf", "1.#IND", "-1.#QNAN", "~175B", "about 7B",
       ">1T tokens", "15T+ tokens", "15+ trillion tokens", "3.14 × 10^23", "10^24", "2^30", "1e400", "1e-400",
       "$5.6M", "US$ 2", "USD 5.576 million", "2260275840,2290000001", "0,45", "1.2.3", ".", "-", "+", "e5", ".e5",
       "5.e3", ".5", "5.", "-0", "+0.0", "0x10", "١٢٣", "12\u00a0345", "7 B", "7  B", "7B ", " 7B", "x" * 250,
       "1" * 201, "9" * 400, "1,234,567.891e-2 GPU-hours", "5e5-h", "5e5 -x", "1e5/s", "123456789012345678901234567890"]


def _example_units(kind: str) -> list[str]:
    """The unit texts of the examples a kind's messages give (``2.788M GPU-hours``: ``M GPU-hours``)."""
    out = []
    for example in units._EXAMPLES.get(kind, "").split(", "):
        m = units._NUM_RE.match(example)
        if m and m.end() > 0:
            out.append(example[m.end():].strip())
    return out


def _cells(count: int, seed: int, kind: str = "") -> list[str]:
    """Cells of every shape: numbers from the grammar with unit text after them (half of them, for a ``kind``, a
    unit of the kind's examples), and the odd ones."""
    rng = random.Random(seed)
    cells = set(ODD)
    own = _example_units(kind)
    while len(cells) < count:
        frac = rng.choice(FRACS)
        number = rng.choice(SIGNS) + rng.choice(INTS) + ("" if frac is None else "." + frac) + rng.choice(EXPONENTS)
        unit = rng.choice(own if own and rng.random() < 0.5 else UNITS)
        sep = rng.choice(SEPARATORS) if unit else ""
        pad = rng.choice(PADDING) if rng.random() < 0.1 else ""
        cells.add(pad + number + sep + unit + (rng.choice(PADDING) if rng.random() < 0.1 else ""))
    return sorted(cells)


#: A header unit per kind that each kind can be written in (None: no header unit), powers of ten included.
HEADER_UNITS: dict[str, list[str | None]] = {
    "count": [None, "B", "million"], "flop": [None, "PF-days", "ZFLOP"], "days": [None, "hours", "months"],
    "hours": [None, "M GPU-hours", "GPU-days"], "fraction": [None, "%"], "tokens_rate": [None, "tokens/min"],
    "flops_rate": [None, "TFLOP/s"], "bytes": [None, "GiB", "GB"], "power": [None, "kW"],
    "energy": [None, "GWh", "GJ"], "co2": [None, "kg"], "usd": [None, "million USD"], "usd_rate": [None],
    "intensity": [None, "g/kWh"], "ratio": [None],
}


def _one_by_one(cells: list, kind: str, unit: str | None) -> tuple[np.ndarray, list[str | None]]:
    """The per-cell parser's reading of each cell: its float, or NaN and its message."""
    values, messages = [], []
    for cell in cells:
        try:
            values.append(parse_value(cell, kind, unit=unit))
            messages.append(None)
        except UnitError as e:
            values.append(np.nan)
            messages.append(str(e))
    return np.array(values, dtype=float), messages


def _same_floats(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether two float arrays hold the same bits (``-0.0`` is not ``0.0``); any NaN equals any NaN."""
    return (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))


@pytest.mark.parametrize("kind", sorted(HEADER_UNITS))
def test_common_shapes_read_as_the_per_cell_parser_reads_them(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(units, "COMMON_FROM", 0)
    cells = _cells(1500, seed=sum(map(ord, kind)), kind=kind)
    read_together = 0
    for unit in HEADER_UNITS[kind]:
        expected, messages = _one_by_one(cells, kind, unit)
        values, errors = parse_series(pd.Series(cells, dtype=object), kind, unit=unit)
        same = _same_floats(values, expected)
        assert same.all(), [(c, v, e) for c, v, e, s in zip(cells, values, expected, same) if not s][:5]
        assert errors.tolist() == messages
        header = None if unit is None else units._header_scale(unit, kind)
        done, _ = units._parse_common(np.array(cells, dtype=object), kind, header)
        read_together += int(done.sum())
    # The comparison is not vacuous: many cells (numbers with a unit of the kind, or none) took the new path.
    assert read_together >= 150 * len(HEADER_UNITS[kind]), read_together


def test_other_cells_in_the_column_take_the_per_cell_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numbers, booleans, missing values and text in one object column (JSON input) with many distinct cells."""
    monkeypatch.setattr(units, "COMMON_FROM", 0)
    cells: list = [f"{i}B" for i in range(100)] + [3, 2.5, None, np.nan, "~7B", "7 bn", "1,5B", "x", True,
                                                   "\ud800", "7\u00a0B", float("inf"), 10 ** 400, (1, 2),
                                                   frozenset({1}), b"7", "NaN"]
    column = pd.Series(cells, dtype=object)
    values, errors = parse_series(column, "count")
    monkeypatch.setattr(units, "COMMON_FROM", 10 ** 9)
    expected, messages = parse_series(column, "count")
    assert _same_floats(values, expected).all()
    assert errors.tolist() == messages.tolist()
    assert messages[108] == "cannot read a boolean as a count: a boolean is not a number"


def test_values_written_out_by_hand() -> None:
    """Columns with more distinct cells than ``COMMON_FROM``, against arithmetic written out here."""
    # 871,170 GPU-hours (a thousands separator) ... ; 2.788M GPU-hours is 2.788 × 10^6 hours (DeepSeek-V3).
    cells = [f"{k:,} GPU-hours" for k in range(1000, 1100)] + ["2.788M GPU-hours", "30.84M H100-hours", "1 GPU-year"]
    values, errors = parse_series(pd.Series(cells), "hours")
    assert errors.isna().all()
    assert values[:100].tolist() == [float(k) for k in range(1000, 1100)]
    assert values[100] == 2788000.0 and values[101] == 30840000.0
    assert values[102] == 365.25 * 24  # a Julian year of accelerator time: 8,766 hours
    # Model sizes: 0.1B .. 10.0B parameters; "175B" is 175 × 10^9 (GPT-3).
    sizes = [f"{k / 10:.1f}B" for k in range(1, 101)] + ["175B", "1.4T tokens", "65.2B"]
    values, _ = parse_series(pd.Series(sizes), "count")
    assert values[:100].tolist() == [float(f"{k / 10:.1f}e9") for k in range(1, 101)]
    assert values[100:].tolist() == [175e9, 1.4e12, 65.2e9]
    # Percentages are fractions: 46.2 % is 0.462 (the decimal text 46.2e-2, read once).
    shares = [f"{k / 10:.1f}%" for k in range(100, 700)]
    values, _ = parse_series(pd.Series(shares), "fraction")
    assert values.tolist() == [float(f"{k / 10:.1f}e-2") for k in range(100, 700)]
    assert values[shares.index("46.2%")] == 0.462
    # GPT-3's 3,640 PF-days (Brown et al. 2020, Appendix D): 3640 × 10^15 FLOP/s × 86,400 s = 3.14496e23 FLOP.
    flops = ["3640 PF-days"] + [f"{k} PF-days" for k in range(1, 100)]
    values, _ = parse_series(pd.Series(flops), "flop")
    assert values[0] == 3640e15 * 86400 == 3.14496e23
    # A duration: 3.5 months is 3.5 × 365.25 / 12 = 106.53125 days; 180 under a header in hours is 7.5 days.
    durations = ["3.5 months"] + [f"{k} days" for k in range(1, 100)]
    values, _ = parse_series(pd.Series(durations), "days")
    assert values[0] == 106.53125 and values[1:].tolist() == [float(k) for k in range(1, 100)]
    bare = [str(k) for k in range(100, 200)] + ["180", "2 days"]
    values, _ = parse_series(pd.Series(bare, dtype=object).iloc[[*range(100), 101]], "days", unit="hours")
    assert values[80] == 7.5 and values[-1] == 2.0


def test_refused_units_keep_their_messages() -> None:
    """A refused unit in a large column is worded by the per-cell parser, hint and all."""
    cells = [f"{k}m GPU-hours" for k in range(100)] + [f"{k} node-hours" for k in range(100)]
    values, errors = parse_series(pd.Series(cells), "hours")
    assert np.isnan(values).all()
    assert errors[0].startswith("cannot read '0m GPU-hours' as accelerator-hours: 'm' is ambiguous here")
    assert "node-hours are not accelerator-hours" in errors[150]


@pytest.mark.parametrize("count", [units.COMMON_FROM - 1, units.COMMON_FROM])
def test_both_sides_of_the_threshold(count: int) -> None:
    cells = [f"{k}.5B" for k in range(count)]
    values, errors = parse_series(pd.Series(cells), "count")
    assert values.tolist() == [float(f"{k}.5e9") for k in range(count)]
    assert errors.isna().all()


def test_grammar_covers_each_piece() -> None:
    """Every piece of the grammar appears in the cells read above (a guard against a shrunken sample)."""
    cells = _cells(1500, seed=1)
    assert all(any(u in c for c in cells) for u in UNITS if u)
    assert len(set(cells)) == len(cells) == 1500


def test_distinct_cells_are_read_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many distinct cells are read a million at a time (an Arrow string array holds at most 2 GiB); pieces of 7
    read the same as one piece."""
    cells = pd.Series([f"{k},{k:03d} GPU-hours" if k % 3 else f"{k}.25" for k in range(1, 200)] + ["2 nodes"])
    whole = parse_series(cells, "hours")
    monkeypatch.setattr(units, "_COMMON_CHUNK", 7)
    pieces = parse_series(cells, "hours")
    assert _same_floats(whole[0], pieces[0]).all() and whole[1].tolist() == pieces[1].tolist()
    assert whole[0][:3].tolist() == [1001.0, 2002.0, 3.25]  # "1,001 GPU-hours", "2,002 GPU-hours", "3.25"
    assert whole[1][199].startswith("cannot read '2 nodes' as accelerator-hours: node-hours")
