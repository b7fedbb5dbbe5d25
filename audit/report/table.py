"""Tabular output: one row per claim (``--format csv|parquet``) and one row per finding (``--findings FILE``).

Every input row appears exactly once in the claims table, in input order, so it joins back to the input. A claim's
findings include those of its phases (a multi-phase run is as bad as its worst phase, and says why). CSV is written
for spreadsheets: lines end with CRLF (RFC 4180), so a cell holding any line break, a bare CR included, is quoted
and stays one cell; and no line of a cell starts a formula.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from audit.columns import map_unique
from audit.findings import SEVERITY_RANK
from audit.records import SHOWN_QUANTITIES
from audit.report import Options, register
from audit.result import AuditResult
from audit.rounding import round_array

if TYPE_CHECKING:  # annotations only: pyarrow is imported when a Parquet file is written
    import pyarrow as pa
    import pyarrow.parquet as pq


def claims_frame(result: AuditResult) -> pd.DataFrame:
    """One row per claim: identity, status, key quantities (value and source) and its non-ok rule codes."""
    info = result.claims.info
    columns: dict[str, object] = {
        "id": info["id"].astype(str),
        "name": info["name"],
        "file": info["file"],
        "row": info["row"].astype(int),
        "status": result.status.astype(str),
        "accelerator": result.hardware["accelerator"],
        "precision": result.hardware["precision"],
    }
    for name in SHOWN_QUANTITIES:
        columns[name] = round_array(result.q[name].to_numpy(dtype=float))
        columns[f"{name}_source"] = result.source[name]
    rows, rules, error = _warnings_and_errors(result)
    n = len(result)
    columns["rules"] = _rule_sets(rows, rules, n)
    columns["errors"] = np.bincount(rows[error], minlength=n)[:n].astype(int)
    columns["warnings"] = np.bincount(rows[~error], minlength=n)[:n].astype(int)
    # copy=False: each column stays a block of its own; pandas would otherwise copy every column into blocks by
    # dtype (consolidation), which was two thirds of the time of the table (cProfile, 300,000 claims).
    return pd.DataFrame(columns, index=info.index, copy=False)


def _rule_sets(rows: np.ndarray, rules: np.ndarray, n: int) -> np.ndarray:
    """Per claim, its distinct rule codes sorted and joined by spaces ("" for none), with no Python per row: each
    claim's set of codes is a bit mask (one bit per distinct code, in sorted order), and each distinct mask is
    spelt once."""
    codes, names = pd.factorize(pd.Series(rules, dtype=object), sort=True)
    names = [str(x) for x in names]
    words = (len(names) + 62) // 63 or 1  # 63 codes per int64 word
    masks = np.zeros((n, words), dtype=np.int64)
    for w in range(words):
        sel = (codes // 63) == w
        np.bitwise_or.at(masks[:, w], rows[sel], np.left_shift(np.int64(1), (codes[sel] % 63).astype(np.int64)))
    if words == 1:  # the same order as np.unique(axis=0) on one column, many times faster
        distinct, inverse = np.unique(masks[:, 0], return_inverse=True)
        distinct = distinct[:, None]
    else:
        distinct, inverse = np.unique(masks, axis=0, return_inverse=True)
    spelt = np.array([" ".join(names[w * 63 + b] for w in range(words) for b in range(63)
                               if w * 63 + b < len(names) and (int(m[w]) >> b) & 1) for m in distinct], dtype=object)
    return spelt[np.asarray(inverse).reshape(-1)]


def _warnings_and_errors(result: AuditResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows (claim), rule codes (text) and whether it is an error, of every warning and error of each claim, its
    phases' included. Severities are compared as the findings' categorical codes, and only the rules of warnings
    and errors are spelt (ok and info findings are most of them)."""
    def columns(findings: pd.DataFrame, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rank = findings["severity"].cat.codes.to_numpy()  # positions in SEVERITIES (audit.findings.status_of)
        at = np.flatnonzero(rank >= SEVERITY_RANK["warning"])
        return rows[at], _text(findings["rule"].iloc[at]), rank[at] == SEVERITY_RANK["error"]

    own = columns(result.findings, result.findings["row"].to_numpy(dtype=np.int64))
    phases, parent = result.phase_result, result.phase_parent
    if phases is None or parent is None or not len(phases.findings):
        return own
    theirs = columns(phases.findings, np.asarray(parent)[phases.findings["row"].to_numpy(dtype=int)].astype(np.int64))
    return tuple(np.concatenate([a, b]) for a, b in zip(own, theirs))  # type: ignore[return-value]


def _text(column: pd.Series) -> np.ndarray:
    """A categorical column's cells as ``str`` (an object array; a missing cell "nan"), each category spelt once."""
    spelt = np.array([str(x) for x in column.cat.categories] + ["nan"], dtype=object)
    return spelt[np.asarray(column.cat.codes)] if len(column) else np.empty(0, dtype=object)


FINDINGS_COLUMNS = ("claim_id", "file", "row", "rule", "name", "severity", "quantity", "claimed", "expected", "ratio",
                    "message", "formula")


def findings_frame(result: AuditResult) -> pd.DataFrame:
    """One row per finding, with its message and formula, in claim order; a run's phases' findings follow its own
    (their ``claim_id`` is the phase's, ``run/phase-1``).

    Built column by column from ``result.findings``: identity, names and numbers with numpy, the formulas a rule at
    a time (:meth:`~audit.rules.Rule.formula_texts`); only the messages are written one finding at a time. The same
    table as :class:`~audit.findings.Finding` records would give (explanations are not part of it)."""
    parts = [_finding_columns(result)]
    keys = [(result.findings["row"].to_numpy(dtype=np.int64), np.zeros(len(result.findings), dtype=np.int64))]
    phases, parent = result.phase_result, result.phase_parent
    if phases is not None and parent is not None and len(phases.findings):
        part = _finding_columns(phases)
        own_row = phases.findings["row"].to_numpy(dtype=np.int64)
        run = np.asarray(parent, dtype=np.int64)[own_row]
        # A phase is located where its run is: the run's file and row (the phase's claim id names the phase).
        part["file"] = result.claims.info["file"].to_numpy(dtype=object)[run]
        part["row"] = result.claims.info["row"].to_numpy(dtype=np.int64)[run]
        parts.append(part)
        keys.append((run, own_row + 1))
    claim_rows = np.concatenate([k[0] for k in keys])
    phase_rank = np.concatenate([k[1] for k in keys])  # 0: the run's own; 1 + i: its phase i
    # Claim order; within a claim its own findings then each phase's, in the order the audit listed them.
    order = np.lexsort((np.arange(len(claim_rows)), phase_rank, claim_rows))
    columns = {}
    for name in FINDINGS_COLUMNS:
        values = np.concatenate([part[name] for part in parts]) if len(parts) > 1 else parts[0][name]
        columns[name] = values[order]
    frame = pd.DataFrame(columns, columns=list(FINDINGS_COLUMNS))
    # Numbers stay numbers whatever the batch holds (a batch whose findings all lack a ratio included).
    return frame.astype({"row": np.int64, "claimed": float, "expected": float, "ratio": float})


def _finding_columns(result: AuditResult) -> dict[str, np.ndarray]:
    """The findings table's columns for ``result.findings``, in its order (phases' findings not included)."""
    from audit.records import _records
    from audit.rules import RULES

    frame = result.findings
    n = len(frame)
    rows = frame["row"].to_numpy(dtype=np.int64)
    ids = result.claims.info["id"].to_numpy(dtype=object)
    distinct_ids, id_codes = np.unique(rows, return_inverse=True) if n else (rows, rows)
    claim_id = np.array([str(x) for x in ids[distinct_ids]], dtype=object)[np.asarray(id_codes).reshape(-1)] \
        if n else np.empty(0, dtype=object)
    rule = frame["rule"].astype(str).to_numpy(dtype=object)
    codes, names = pd.factorize(rule)
    name = np.array([RULES[c].name for c in names], dtype=object)[codes] if n else np.empty(0, dtype=object)
    message = np.empty(n, dtype=object)
    formula = np.empty(n, dtype=object)
    records = _records(frame)
    for k, code in enumerate(names):
        positions = np.flatnonzero(codes == k)
        chosen = [records[j] for j in positions.tolist()]
        r = RULES[code]
        message[positions] = [r.message(result, f) for f in chosen]
        formula[positions] = r.formula_texts(result, chosen)
    info = result.claims.info
    return {"claim_id": claim_id, "file": info["file"].to_numpy(dtype=object)[rows],
            "row": info["row"].to_numpy(dtype=np.int64)[rows], "rule": rule, "name": name,
            "severity": frame["severity"].astype(str).to_numpy(dtype=object),
            "quantity": np.array([str(x) for x in frame["quantity"].tolist()], dtype=object),
            "claimed": _rounded(frame["claimed"]), "expected": _rounded(frame["expected"]),
            "ratio": _rounded(frame["ratio"]), "message": message, "formula": formula}


def _rounded(values: pd.Series) -> np.ndarray:
    """A column of numbers as written out: each rounded as :func:`audit.rounding.round_value` rounds it, non-finite
    ones missing (NaN). :func:`round_array` rounds all of them at once, correctly but for a value whose scaled
    figure is (after its one rounded multiplication) at a tie; values within far more than that error of a tie, or
    of a change of magnitude, are redone one by one, so every value is the correctly rounded decimal."""
    from audit.rounding import _EXACT, SIGNIFICANT_DIGITS, round_value

    x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    out = round_array(x)
    out[~np.isfinite(x)] = np.nan
    ok = np.flatnonzero(np.isfinite(x) & (x != 0.0))
    if not len(ok):
        return out
    a = np.abs(x[ok])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        shift = (SIGNIFICANT_DIGITS - 1) - np.floor(np.log10(a)).astype(np.int64)
        exact = np.abs(shift) <= 22
        p = _EXACT[np.clip(np.abs(shift), 0, 22)]
        scaled = np.where(shift >= 0, a * p, a / p)  # as round_array scales it: within half a unit in the last place
        frac = scaled - np.floor(scaled)
    low, high = 10.0 ** (SIGNIFICANT_DIGITS - 1), 10.0 ** SIGNIFICANT_DIGITS
    redo = ~exact | (np.abs(frac - 0.5) <= 1e-3) | (scaled < low * 1.01) | (scaled > high * 0.99)
    if redo.any():
        idx = ok[redo]
        out[idx] = [round_value(float(v)) for v in x[idx]]
    return out


#: A CSV cell starting with one of these is run as a formula by spreadsheet programs (OWASP "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

#: A line of a cell: at the start, or after a line break. A program that splits rows at a bare CR (or a user who
#: pastes the cell) sees each line as a cell of its own, so each line is defused as a cell start.
_LINE = re.compile(r"(?:^|(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n))[^\r\n]*")


def _defuse_line(line: str) -> str:
    if not line.startswith(_FORMULA_START):
        return line
    try:
        float(line)  # "-3.5" is a number, not a formula
        return line
    except ValueError:
        return "'" + line


def _defuse_text(value: object) -> object:
    if not isinstance(value, str):
        return value
    if "\n" not in value and "\r" not in value:
        return _defuse_line(value)
    return _LINE.sub(lambda m: _defuse_line(m.group()), value)


def _defuse(column: pd.Series) -> pd.Series:
    """Text cells that a spreadsheet would run as a formula get a leading apostrophe (shown, not evaluated)."""
    if _text_categories(column):  # each category once (sources: none changes)
        categories = column.cat.categories.tolist()
        if all(_defuse_text(c) == c for c in categories):
            return column
        texts = np.array([*categories, None], dtype=object)[column.cat.codes.to_numpy().astype(np.intp)]
        return _defuse(pd.Series(texts, index=column.index, dtype=object))
    if column.dtype != object:
        return column
    values = column.to_numpy(dtype=object)
    if len(values) and pd.api.types.infer_dtype(values, skipna=True) == "string":
        import pyarrow as pa
        import pyarrow.compute as pc

        missing = pd.isna(values)
        try:
            text = values[~missing] if missing.any() else values
            # Only cells that start like a formula or hold a line break can change: found by Arrow, at once.
            risky = pc.match_substring_regex(pa.array(text, type=pa.large_string()), _RISKY)
            where = np.flatnonzero(risky.to_numpy(zero_copy_only=False))
        except (pa.ArrowException, UnicodeError):
            return map_unique(column, _defuse_text)
        out = values.copy()
        out[missing] = None  # as map_unique leaves a missing cell
        if len(where):
            at = np.flatnonzero(~missing)[where] if missing.any() else where
            out[at] = [_defuse_text(v) for v in values[at]]
        return pd.Series(out, index=column.index, dtype=object)
    return map_unique(column, _defuse_text)  # once per distinct value: source columns hold three


#: A cell that :func:`_defuse_text` may change: it starts with a character of :data:`_FORMULA_START`, or holds a
#: line break (each line is a cell start).
_RISKY = "^[=+\\-@\t\r]|[\r\n]"


def arrow_schema(frame: pd.DataFrame) -> "pa.Schema":
    """The Parquet schema of a claims or findings table, fixed by its columns' kinds (float64, int64, text) and not
    by the values of one batch: an all-empty text column is text, so tables written batch by batch
    (:mod:`audit.stream`) have one schema."""
    import pyarrow as pa

    def kind(dtype: object) -> pa.DataType:
        if pd.api.types.is_bool_dtype(dtype):
            return pa.bool_()
        if pd.api.types.is_integer_dtype(dtype):
            return pa.int64()
        if pd.api.types.is_float_dtype(dtype):
            return pa.float64()
        return pa.string()

    return pa.schema([(str(c), kind(frame[c].dtype)) for c in frame.columns])


def arrow_table(frame: pd.DataFrame, schema: "pa.Schema | None" = None) -> "pa.Table":
    """A claims or findings table as Arrow, with :func:`arrow_schema` (text cells that are not text are written as
    their ``str``)."""
    return _arrow(frame, schema, frozenset())


def arrow_piece(frame: pd.DataFrame) -> "pa.Table":
    """A claims or findings table as Arrow to write as Parquet (:func:`parquet_writer`): :func:`arrow_table`, its
    :func:`repeated_columns` as Arrow dictionaries (each distinct text once, and a code per row). Read back from the
    file they are text again: the same table, the same file (:func:`parquet_group`)."""
    return _arrow(frame, None, repeated_columns(frame.columns))


def _arrow(frame: pd.DataFrame, schema: "pa.Schema | None", dictionaries: frozenset[str]) -> "pa.Table":
    import pyarrow as pa

    schema = schema or arrow_schema(frame)
    columns = {}
    for f in schema:
        col = frame[f.name]
        if pa.types.is_string(f.type) and _text_categories(col):  # sources: their codes are a dictionary already
            few = _categorical_texts(col)
            columns[f.name] = few if f.name in dictionaries else few.dictionary.take(few.indices)
            continue
        if pa.types.is_string(f.type) and col.dtype == object:
            values = col.to_numpy(dtype=object)
            few = _few_texts(values) if f.name in dictionaries or _mostly_repeated(values) else None
            if few is not None:
                columns[f.name] = few if f.name in dictionaries else few.dictionary.take(few.indices)
                continue
            odd = np.fromiter((v is not None and not isinstance(v, str) for v in values), dtype=bool,
                              count=len(values)) if len(values) and pd.api.types.infer_dtype(col, skipna=True) \
                not in ("string", "empty") else np.zeros(len(values), dtype=bool)
            if odd.any():
                values = values.copy()
                values[odd] = [str(v) for v in values[odd]]
            text = pa.array(values, type=f.type, from_pandas=True)
            # dictionary_encode: first appearance order, as _few_texts and the Parquet writer's own dictionary
            columns[f.name] = text.dictionary_encode() if f.name in dictionaries else text
        else:
            columns[f.name] = pa.array(col.to_numpy(), type=f.type, from_pandas=True)
            if f.name in dictionaries and pa.types.is_string(f.type):
                columns[f.name] = columns[f.name].dictionary_encode()
    if dictionaries:
        schema = pa.schema([pa.field(f.name, pa.dictionary(pa.int32(), pa.string()))
                            if f.name in dictionaries and pa.types.is_string(f.type) else f for f in schema])
    return pa.Table.from_pydict(columns, schema=schema)


def repeated_columns(columns: "pd.Index | list[str]") -> frozenset[str]:
    """The text columns of a claims or findings table that repeat a few values whatever the input: statuses,
    severities, rule codes and names, sources, accelerators, precisions, the input files (a findings table has
    ``claim_id``). Chosen from the columns, never from a batch's values, so every batch has the same types."""
    names = {str(c) for c in columns}
    if "claim_id" in names:
        few = {"file", "rule", "name", "severity", "quantity"}
    else:
        few = {"file", "status", "accelerator", "precision", "rules"} | {c for c in names if c.endswith("_source")}
    return frozenset(few & names)


def _mostly_repeated(values: np.ndarray) -> bool:
    """Whether a text column seems to hold few distinct values (a strided sample of 1,024 says)."""
    sample = values[:: max(1, len(values) // 1024)]
    return len(values) >= 1024 and len(pd.unique(sample)) <= len(sample) // 8


def _repeated_texts(values: np.ndarray) -> "pa.Array | None":
    """A text column of few distinct values (sources, statuses, accelerators) as Arrow: each distinct text
    converted once, then taken for every row (about a third faster than converting every cell). None when the
    column's values are mostly distinct (a strided sample of 1,024 says) or not all text: the caller converts it
    cell by cell."""
    few = _few_texts(values) if _mostly_repeated(values) else None
    return None if few is None else few.dictionary.take(few.indices)


def _few_texts(values: np.ndarray) -> "pa.DictionaryArray | None":
    """A text column as an Arrow dictionary, its distinct texts in the order of their first appearance (as the
    Parquet writer orders a dictionary), None and NaN missing; None when a cell is neither text nor missing."""
    import pyarrow as pa

    codes, distinct = pd.factorize(values)  # None and NaN: code -1, a missing cell
    if not all(isinstance(v, str) for v in distinct):  # a str is never equal to anything but a str
        return None
    return pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0, type=pa.int32()),
                                          pa.array(distinct, type=pa.string()))


def _text_categories(column: pd.Series) -> bool:
    """Whether a column is categorical over texts (a claims table's sources: :func:`audit.state.source_frame`)."""
    return isinstance(column.dtype, pd.CategoricalDtype) and all(isinstance(c, str) for c in column.cat.categories)


def _categorical_texts(column: pd.Series) -> "pa.DictionaryArray":
    """A categorical column of texts as :func:`_few_texts` makes the column of its texts: an Arrow dictionary of the
    texts it holds in the order of their first appearance, missing cells null. From the codes alone: the texts of
    the column are never made (factorizing 43 source columns of objects was most of the time of a claims table's
    Arrow conversion)."""
    import pyarrow as pa

    raw = column.cat.codes.to_numpy()
    # Where each category present first appears (a sort of the codes, as np.unique does, cost several times more
    # than a search per category: a source column has three).
    present = np.flatnonzero(np.bincount(raw.astype(np.intp) + 1, minlength=len(column.cat.categories) + 1)[1:])
    first = np.array([int(np.argmax(raw == c)) for c in present.tolist()], dtype=np.intp)
    used = present[np.argsort(first)]  # the categories present, in the order of first appearance
    recode = np.full(len(column.cat.categories) + 1, -1, dtype=np.int32)  # the last: for code -1, by wrapping
    recode[used] = np.arange(len(used), dtype=np.int32)
    codes = recode[raw.astype(np.intp)]
    texts = column.cat.categories.to_numpy(dtype=object)[used]
    # safe=False: the codes are made above, each within the dictionary (checking them cost half the time).
    return pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0, type=pa.int32()),
                                          pa.array(texts, type=pa.string()), safe=False)


def csv_text(frame: pd.DataFrame, header: bool = True) -> str:
    """A table as spreadsheet-safe CSV text (written batch by batch, the header only with the first), its float
    cells spelt by :func:`number_texts`."""
    safe = frame.apply(_defuse) if len(frame.columns) else frame
    # CRLF line ends: the csv writer quotes a cell holding any character of the line end, so a bare CR (which a
    # spreadsheet takes as a new row) is quoted too; with "\n" alone it was not.
    text = _fast_csv(safe, header)
    if text is not None:
        return text
    spelt = safe.copy()
    for name in [c for c in spelt.columns if spelt[c].dtype == np.float64]:
        spelt[name] = pd.Series(_spelt_floats(spelt[name].to_numpy()).to_numpy(zero_copy_only=False),
                                index=spelt.index, dtype=object)
    return spelt.to_csv(index=False, header=header, lineterminator="\r\n")


#: Whole numbers below this are written as integers ("65200000000"); from it up, as Python writes a float
#: ("1e+16", "3.14e+23"). It is where Python's and numpy's ``repr`` turn to an exponent.
WHOLE_BELOW = 1e16


def number_texts(values: np.ndarray) -> list[str]:
    """Floats (already rounded to 12 significant digits, :mod:`audit.rounding`) as a CSV table writes them: the
    shortest text that reads back as the same double, as Python's ``repr`` writes it, but a whole number without
    its ".0": chips ``2048``, parameters ``65200000000`` (``repr``: "2048.0", "65200000000.0"), compute
    ``3.14e+23``, MFU ``0.462``; a missing value (NaN) empty.

    Why: "2048.0" reads as odd in a spreadsheet and differs, for a diff tool, from the "2048" of the input. Whole
    numbers stay positional below 1e16 (``repr``'s own limit), not "6.52e+10": every whole number below 2**53
    (9.007e15) is exact in a double, and 12 significant digits are within the 15 that Excel and LibreOffice keep,
    so the digits read back as the same number in Excel, LibreOffice, pandas (int64 for a column without gaps),
    R and ``sort -n``, and a count reads as a count. Larger figures (compute, FLOP/s) keep ``repr``'s exponent,
    which every one of them reads too: 24 positional digits would claim a precision no report has. Every step is
    correctly rounded (shortest round-trip digits, integer printing), so the text is the same on every machine.
    """
    return _spelt_floats(np.asarray(values, dtype=np.float64)).to_pylist()


def _spelt_floats(values: np.ndarray) -> "pa.Array":
    """:func:`number_texts` as an Arrow array of large strings, a column at a time: each distinct value (by its
    bits, so -0.0 is "-0") spelt once, whole numbers by Arrow's integer printing, the others by numpy's ``repr``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(values):
        return pa.array([], type=pa.large_string())
    codes, distinct_bits = pd.factorize(values.view(np.int64))
    distinct = distinct_bits.view(np.float64)
    with np.errstate(invalid="ignore"):
        whole = (np.abs(distinct) < WHOLE_BELOW) & (distinct == np.trunc(distinct))  # NaN and inf: not whole
    spelt = np.empty(len(distinct), dtype=object)
    rest = np.flatnonzero(~whole)
    if len(rest):
        spelt[rest] = distinct[rest].astype(str)
        spelt[rest[np.isnan(distinct[rest])]] = ""
    at = np.flatnonzero(whole)
    if len(at):
        ints = pc.cast(pa.array(distinct[at].astype(np.int64)), pa.large_string()).to_numpy(zero_copy_only=False)
        spelt[at] = ints
        spelt[at[np.signbit(distinct[at]) & (distinct[at] == 0)]] = "-0"
    return pa.array(spelt, type=pa.large_string()).take(pa.array(codes))


#: A cell holding one of these is quoted (the csv module's QUOTE_MINIMAL with "," and "\r\n"), its quotes doubled.
_NEEDS_QUOTES = '[,"\r\n]'


def _fast_csv(frame: pd.DataFrame, header: bool) -> str | None:
    """``frame.to_csv(index=False, lineterminator="\\r\\n")`` with floats spelt by :func:`number_texts`, made a
    column at a time with numpy and Arrow: each distinct float spelt once, missing cells empty, cells
    quoted as the csv module quotes them, the rows joined by Arrow. None when the frame holds anything else than
    float64, int64, text and categorical text columns (or text Arrow cannot hold): pandas writes those."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(frame.columns) < 2:  # a one-column row of an empty cell is quoted by the csv module
        return None
    n = len(frame)
    cells = []
    try:
        for name in frame.columns:
            col = frame[name]
            if col.dtype == np.float64:
                text = _spelt_floats(col.to_numpy())
            elif col.dtype == np.int64:
                text = pa.array(col.to_numpy().astype(str).astype(object), type=pa.large_string())
            elif _text_categories(col):  # sources: each category spelt once, missing cells empty
                spelt = pa.array([*col.cat.categories.tolist(), ""], type=pa.large_string())
                codes = col.cat.codes.to_numpy().astype(np.int64)
                text = spelt.take(pa.array(np.where(codes < 0, len(spelt) - 1, codes)))
            elif col.dtype == object:
                values = col.to_numpy(dtype=object)
                missing = pd.isna(values)
                if pd.api.types.infer_dtype(values[~missing], skipna=False) not in ("string", "empty"):
                    return None
                if missing.any():
                    values = values.copy()
                    values[missing] = ""
                text = pa.array(values, type=pa.large_string())
            else:
                return None
            if col.dtype != np.float64 and col.dtype != np.int64:  # a number's text holds no "," '"' CR or LF
                quote = pc.match_substring_regex(text, _NEEDS_QUOTES)
                if pc.any(quote).as_py():
                    text = pc.if_else(quote, _quoted(text), text)
            cells.append(text)
        head = ""
        if header:
            names = pa.array([str(c) for c in frame.columns], type=pa.large_string())
            quote = pc.match_substring_regex(names, _NEEDS_QUOTES)
            names = pc.if_else(quote, _quoted(names), names)
            head = ",".join(names.to_pylist()) + "\r\n"
        if not n:
            return head
        rows = pc.binary_join_element_wise(*cells, pa.scalar(",", pa.large_string()))
        lines = pa.LargeListArray.from_arrays(pa.array([0, n], type=pa.int64()), rows)
        body = pc.binary_join(lines, pa.scalar("\r\n", pa.large_string()))[0].as_py()
    except (pa.ArrowException, UnicodeError):
        return None
    return head + body + "\r\n"


def _quoted(text: "pa.Array") -> "pa.Array":
    """Cells (large strings) in double quotes, their quotes doubled."""
    import pyarrow as pa
    import pyarrow.compute as pc

    mark, nothing = pa.scalar('"', pa.large_string()), pa.scalar("", pa.large_string())
    return pc.binary_join_element_wise(mark, pc.replace_substring(text, '"', '""'), mark, nothing)


def dictionary_columns(schema: "pa.Schema") -> list[str]:
    """The columns worth dictionary encoding in Parquet: text (sources, statuses and rule codes repeat), whole
    numbers (counts) and quantities that count things (chips, layers: :attr:`Quantity.integer`). Measured
    quantities (FLOPs, tokens, days) are nearly all distinct and are written plain: the writer would build a
    dictionary for each only to drop it at 1 MiB. Chosen from the columns alone, never from a batch's values, so
    the file is the same whatever the batches. Writing a claims table of 100,000 synthetic claims: 0.19 s
    against 0.27 s with every column tried, and a file 2 % smaller (CPU time, minimum of 5).

    A claims table's ``id`` and ``row`` are one per claim, as distinct as a measured figure, and written plain
    too: the ids' dictionary was dropped at 1 MiB, the rows' one (800 kB a row group) kept, a file 4 % larger
    (1,000,000 synthetic claims: 92.2 MB against 88.6 MB). A findings table's claim ids and rows repeat (a claim
    has several findings) and stay dictionary encoded."""
    import pyarrow as pa

    from audit.quantities import BY_NAME

    def counts(name: str) -> bool:
        q = BY_NAME.get(name)
        return q is not None and bool(q.integer)

    distinct = {"id", "row"} if "id" in schema.names else set()
    return [f.name for f in schema if f.name not in distinct and (
        pa.types.is_string(f.type) or pa.types.is_large_string(f.type) or pa.types.is_dictionary(f.type)
        or pa.types.is_integer(f.type) or pa.types.is_boolean(f.type) or counts(f.name))]


#: Rows the Parquet writer takes at a time (Arrow's default: 1,024). The statistics of a dictionary column are
#: worked out once a batch (Arrow finds the dictionary's texts that the batch's codes name), which in batches of
#: 1,024 rows took about what the dictionaries saved: writing 1,000,000 claims, 1.79 s against 1.39 s in batches
#: of 16,384 (CPU time, minimum of 7). The file is the same: Arrow ends a page at 20,000 rows whatever the batch
#: (``max_rows_per_page``), and no page of a claims table comes near 1 MiB (the 1,000,000 claims were 88,631,100
#: bytes in batches of 1,024, 4,096, 16,384 and 65,536 rows).
PARQUET_BATCH_ROWS = 16_384


def parquet_writer(where: Any, schema: "pa.Schema") -> "pq.ParquetWriter":
    """A Parquet writer of a claims or findings table (:func:`arrow_piece`), with :func:`dictionary_columns`.

    The Arrow schema is not stored in the file: its dictionaries (:func:`repeated_columns`) would be read back as
    categories. Without it, a reader takes the Parquet types: text, float64, int64, as the table was."""
    import pyarrow.parquet as pq

    return pq.ParquetWriter(where, schema, use_dictionary=dictionary_columns(schema), store_schema=False,
                            write_batch_size=PARQUET_BATCH_ROWS)


def parquet_group(table: "pa.Table", whole: bool = True) -> "pa.Table":
    """A row group to write, of one chunk a column: the dictionaries of its pieces (:func:`arrow_piece`) made one,
    each distinct text once in the order of its first appearance in the group, the order the Parquet writer gives
    a column it encodes itself, so the file is the same whatever the pieces. ``whole``: the group is whole pieces
    (their dictionaries are their texts in order, merged in order by Arrow); otherwise (a piece cut) each
    dictionary is remade from the group's codes."""
    import pyarrow as pa

    if table.num_columns and any(c.num_chunks > 1 for c in table.columns):
        table = table.unify_dictionaries()
    if not whole:
        for i, f in enumerate(table.schema):
            if pa.types.is_dictionary(f.type):
                table = table.set_column(i, f, _first_seen(table.column(i).combine_chunks()))
    return table.combine_chunks()


def _first_seen(column: "pa.DictionaryArray") -> "pa.DictionaryArray":
    """A dictionary array with only the texts its codes name, in the order of their first appearance."""
    import pyarrow as pa
    import pyarrow.compute as pc

    used = pc.unique(column.indices).drop_null()  # in the order of first appearance
    recode = np.zeros(len(column.dictionary), dtype=np.int32)
    recode[used.to_numpy()] = np.arange(len(used), dtype=np.int32)
    return pa.DictionaryArray.from_arrays(pc.take(pa.array(recode), column.indices), column.dictionary.take(used))


def _to_bytes(frame: pd.DataFrame, fmt: str) -> bytes:
    if fmt == "parquet":
        buf = io.BytesIO()
        table = arrow_piece(frame)
        writer = parquet_writer(buf, table.schema)
        # Row groups of Arrow's default length (1,048,576 rows), each with its own dictionaries.
        rows = 1 << 20
        for start in range(0, max(table.num_rows, 1), rows):
            writer.write_table(parquet_group(table.slice(start, rows), whole=table.num_rows <= rows),
                               row_group_size=rows)
        writer.close()
        return buf.getvalue()
    return csv_text(frame).encode("utf-8")


def claims_bytes(result: AuditResult, fmt: str) -> bytes:
    """The claims table as CSV or Parquet bytes."""
    return _to_bytes(claims_frame(result), fmt)


@register("csv", description="one row per claim, in input order (spreadsheet-safe)")
def render_csv(result: AuditResult, options: Options) -> bytes:
    """The registered ``csv`` format."""
    return claims_bytes(result, "csv")


@register("parquet", binary=True, description="one row per claim, in input order")
def render_parquet(result: AuditResult, options: Options) -> bytes:
    """The registered ``parquet`` format."""
    return claims_bytes(result, "parquet")


def findings_bytes(result: AuditResult, path: str) -> bytes:
    """The findings table, in the format the file name's extension asks for (.parquet, else CSV)."""
    fmt = "parquet" if str(path).lower().endswith((".parquet", ".pq")) else "csv"
    return _to_bytes(findings_frame(result), fmt)
