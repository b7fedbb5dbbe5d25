"""The column-at-a-time table writers (audit/report/table.py) give exactly what the per-row ones gave: pandas'
``to_csv`` text (numbers as :func:`audit.report.table.number_texts` writes them), ``round_value`` rounding,
``map_unique`` defusing."""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.columns import map_unique
from audit.report import table
from audit.rounding import round_value


def _tricky_strings(n: int, seed: int = 1) -> pd.Series:
    rng = np.random.default_rng(seed)
    alpha = list("ab=+-@\t\r\n1.,\"é ")
    values: list[object] = ["".join(rng.choice(alpha, rng.integers(0, 8))) for _ in range(n)]
    values += ["-3.5", "=1+2", "a\r=b", "x\n-y", "\r\n+z", None, np.nan, "+", "-", "-inf", ""]
    return pd.Series(values, dtype=object)


def test_defuse_matches_per_value_defusing() -> None:
    s = _tricky_strings(3000)
    fast, slow = table._defuse(s), map_unique(s, table._defuse_text)
    assert fast.index.equals(slow.index)
    assert all(a == b or (a is None and b is None) for a, b in zip(fast, slow))


def _written(x: float) -> str:
    """A float as the CSV table writes it, one at a time: ``repr``, a whole number without its ".0", NaN empty."""
    if x != x:
        return ""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def test_csv_text_is_pandas_to_csv_with_numbers_as_written() -> None:
    rng = np.random.default_rng(2)
    s = _tricky_strings(3000)
    n = len(s)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)
    x[::5] = np.round(x[::5])  # whole numbers, below and above 1e16
    x[::3] = rng.integers(-10**15, 10**15, len(x[::3])).astype(float)
    x[::7], x[::11], x[::13], x[::17] = np.nan, -0.0, np.inf, -np.inf
    frame = pd.DataFrame({'t,"q"': s, "u": s[::-1].to_numpy(), "x": x, "i": rng.integers(-5, 5, n)})
    safe = frame.apply(table._defuse)
    spelt = safe.assign(x=[_written(v) for v in x])
    assert table._fast_csv(safe, True) is not None  # the fast path is taken
    for header in (True, False):
        assert table.csv_text(frame, header=header) == spelt.to_csv(index=False, header=header,
                                                                     lineterminator="\r\n")
    assert table.csv_text(frame.iloc[:0]) == frame.iloc[:0].to_csv(index=False, lineterminator="\r\n")


def test_numbers_are_written_as_integers_below_1e16() -> None:
    """By hand: repr(2048.0) is "2048.0", written "2048"; 65.2e9 is the integer 65,200,000,000; 1e16 is where
    repr turns to an exponent; -0.0 keeps its sign."""
    x = [2048.0, 65.2e9, 80.0, 0.462, 3.14e23, 1e16, 9.99999999999e15, -0.0, -5.0, float("nan"), 1e-05]
    assert table.number_texts(np.array(x)) == ["2048", "65200000000", "80", "0.462", "3.14e+23", "1e+16",
                                               "9999999999990000", "-0", "-5", "", "1e-05"]


def test_csv_text_falls_back_for_other_cells() -> None:
    frame = pd.DataFrame({"a": [1, 2], "b": [np.float64(1.5), "x"], "c": [True, False], "d": [2048.0, 0.5]})
    assert table.csv_text(frame) == frame.apply(table._defuse).assign(d=["2048", "0.5"]).to_csv(
        index=False, lineterminator="\r\n")


def test_rounded_is_round_value() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([
        rng.standard_normal(50_000) * 10.0 ** rng.integers(-40, 40, 50_000),
        np.round(rng.random(20_000) * 1e6, 6) + 5e-7,
        # exact decimal ties at the 13th digit
        (rng.integers(10**11, 10**12, 20_000) * 10 + 5).astype(float) * 10.0 ** rng.integers(-20, 10, 20_000),
        [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e308, 5e-324, 0.5, 2.5, 123456789012.5, 999999999999.5],
    ])
    got = table._rounded(pd.Series(x))
    want = np.array([round_value(float(v)) if np.isfinite(v) else np.nan for v in x])
    same = ((got == want) & (np.signbit(got) == np.signbit(want))) | (np.isnan(got) & np.isnan(want))
    assert same.all()


def test_a_column_of_few_texts_converts_as_cell_by_cell():
    """Sources and statuses repeat: converted once per distinct text, the same Arrow array as converting every
    cell (None and NaN missing); a column of distinct texts, or one holding a number, is left to the cell-by-cell
    conversion (None)."""
    import numpy as np
    import pyarrow as pa

    from audit.report.table import _repeated_texts

    values = np.array(["claimed", None, "derived (C001)", float("nan"), "catalog"] * 400, dtype=object)
    assert _repeated_texts(values).equals(pa.array(values, type=pa.string(), from_pandas=True))
    assert _repeated_texts(np.array([f"run-{i}" for i in range(2000)], dtype=object)) is None
    assert _repeated_texts(np.array(["claimed", 1.0] * 1000, dtype=object)) is None
