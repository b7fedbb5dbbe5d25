"""The JSON records made a chunk of claims at a time, and their words a column at a time (issue 12: JSON of
100,000 claims in bounded memory, within 3x of the standard json module), are the texts made one at a time: the
column formatters against the one-number formatters, the formulas of a whole rule against ``substituted`` of each
finding, and every claim's record against its record made alone."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import audit.records
from audit import formatting as fmt
from audit.api import check, check_records
from audit.cli import cli
from audit.quantities import BY_NAME
from audit.reading import bundled_corpus_path
from audit.records import claim_chunks, claim_record, findings_by_row, to_json
from audit.rules import RULES, RelationRule

ROOT = Path(__file__).resolve().parent.parent

# PaLM 540B as Chowdhery et al. 2022 report it (Sec. 4, Table 21): two TPU v4 pods of 3072 chips, 6144 in all,
# in two phases (a run with phases is written with its phases' own records).
PALM = {"id": "palm", "params": "540B", "tokens": "780B", "hardware": "TPU v4", "precision": "bf16",
        "mfu": "46.2%", "phases": [{"chips": 6144, "wall_clock_days": "1200 hours"},
                                   {"chips": 3072, "wall_clock_days": "336 hours"}]}
# A GPU-days figure written as GPU-hours (the slip the README's example shows): findings with explanations.
SLIP = {"id": "llama-65b-slip", "params": "65.2B", "tokens": "1.4T", "hardware": "A100 80GB", "chips": 2048,
        "wall_clock_days": 21, "chip_hours": 1_022_362 / 24}


def _numbers() -> list[float]:
    """Numbers where the texts change shape: zeros of both signs, NaN, infinities, the thresholds of count and
    hours (1e6, 1e7, 1000, 100), values that round up across them at 12 or 4 digits, halves (ties), tiny and huge
    magnitudes, and random ones over 240 decades."""
    rng = np.random.default_rng(12)
    edges = [0.0, -0.0, math.nan, math.inf, -math.inf, 1.0, -1.0, 0.5, 2.5, 999.5, 999.95, 999.99995, 1000.0,
             99.99995, 100.0, 999_999.5, 1e6, 9_999_999.5, 1e7, 1e9, 1e12, 999_999_999_999.5, 1e-9, 5e-324,
             1.7976931348623157e308, 0.1 + 0.2, 2.6625e13, 1_022_362.0, 1e22, 1e100, -1e-100, 123.456e15]
    ties = [float(f"{m}5e{e}") for m in (1, 12, 99, 9999, 123456789012) for e in range(-6, 25)]
    spread = (10 ** rng.uniform(-120, 120, 3000) * rng.choice([-1, 1], 3000)).tolist()
    whole = rng.integers(0, 5000, 500).astype(float).tolist() + (rng.integers(0, 5000, 500) + 0.5).tolist()
    return edges + ties + spread + whole


NUMBERS = _numbers()


@pytest.mark.parametrize("name", sorted(BY_NAME) + ["n_eff", "catalog_peak", "not-a-quantity"])
def test_a_column_of_values_reads_as_each_value_alone(name):
    for unit in (True, False):
        assert fmt.values(name, NUMBERS, unit) == [fmt.value(name, x, unit) for x in NUMBERS]
    assert fmt.operands(name, NUMBERS) == [fmt.operand(name, x) for x in NUMBERS]
    assert fmt.values(name, [None, math.nan]) == ["—", "—"]


def test_columns_of_counts_and_significant_digits_read_as_each_number_alone():
    assert fmt.counts(NUMBERS) == [fmt.count(x) for x in NUMBERS]
    for digits in range(1, 19):
        assert fmt.sigs(NUMBERS, digits) == [fmt.sig(x, digits) for x in NUMBERS]
        assert fmt.scis(NUMBERS, digits) == [fmt.sci(x, digits) for x in NUMBERS]
    # As people read them (the README's LLaMA-65B and GPT-3 figures).
    assert fmt.counts([1_022_362.0, 175e9, 65.2e9, 2048.0]) == ["1.022M", "175B", "65.2B", "2,048"]
    assert fmt.values("compute_flops", [3.14e23, 6.3e23]) == ["3.14e23 FLOP", "6.3e23 FLOP"]
    assert fmt.values("chip_hours", [1_022_362.0, 30.84e6]) == ["1,022,362 h", "30.84M h"]
    assert fmt.scis([1e-5, 1.0, 3.1e23], 4) == ["1e-5", "1e0", "3.1e23"]


@pytest.fixture(scope="module", params=["corpus", "example", "synthetic"])
def result(request, tmp_path_factory):
    if request.param == "corpus":
        return check([str(bundled_corpus_path())])
    if request.param == "example":
        return check([str(ROOT / "reports" / "example-claims.json")])
    # Consistent and doctored claims (compute 1000x, GPU-days as GPU-hours), some hardware unknown to the catalog
    # (its peak derived by C003), some with a precision, a few with an architecture.
    rng = np.random.default_rng(7)
    n = 300
    params = 10 ** rng.uniform(8, 11.5, n)
    tokens = params * rng.uniform(5, 2000, n)
    chips = (2 ** rng.integers(3, 14, n)).astype(float)
    hours = 6 * params * tokens / (chips * 3600 * 312e12 * 0.4)
    frame = pd.DataFrame({
        "id": [f"run-{i}" for i in range(n)], "params": [f"{p / 1e9:.3g}B" for p in params], "tokens": tokens,
        "compute_flops": 6 * params * tokens * np.where(rng.random(n) < 0.2, 1000, 1),
        "hardware": rng.choice(["A100", "H100", "TPU v4", "v4-2048", "no-such-chip"], n),
        "precision": rng.choice(["bf16", "fp8", "fp16"], n), "chips": chips,
        "chip_hours": np.where(rng.random(n) < 0.2, chips * hours / 24, chips * hours),
        "mfu": [f"{m:.1f}%" for m in rng.uniform(20, 60, n)],
        "layers": np.where(rng.random(n) < 0.1, 32.0, np.nan), "d_model": 4096.0, "heads": 32.0,
        "seq_len": 4096.0, "vocab_size": 32000.0,
    })
    path = tmp_path_factory.mktemp("synthetic") / "claims.parquet"
    frame.to_parquet(path, index=False)
    return check([str(path)])


def test_the_formulas_of_a_whole_rule_are_each_findings_formula(result):
    checked = 0
    for code, frame in result.findings.groupby("rule", observed=True):
        rule = RULES[str(code)]
        if not issubclass(rule, RelationRule) or not len(frame):
            continue
        findings = audit.records._records(frame)
        names = rule.relation.quantities
        alone = []
        for f in findings:  # substituted, one finding at a time, as formula_text wrote them before
            row = int(f["row"])
            values = {n: float(result.column("q", n)[row]) for n in names}
            derived = frozenset(n for n in names if result.column("source", n)[row] == "derived")
            active = "n_eff" in rule.symbols and result.column("how", "n_eff")[row] == "active_params"
            symbols = {**rule.symbols, "n_eff": "N_active"} if active else rule.symbols
            alone.append(rule.substituted(str(f["quantity"]), values, symbols, derived))
        assert rule.formula_texts(result, findings) == alone
        checked += len(findings)
        rows = list(range(len(result)))
        for subject in names:  # the derivations of every claim, missing values included
            assert rule.substituted_texts(result, rows, subject) == [
                rule.substituted(subject, {n: float(result.column("q", n)[row]) for n in names}) for row in rows]
    assert checked > 0


def test_records_made_a_few_claims_at_a_time_are_each_claims_record(monkeypatch):
    # Chunks of 2 claims: PaLM's phases, the slip's explanations and an empty claim fall on different chunks.
    result = check_records([{"id": "x"}, PALM, SLIP, {**PALM, "id": "palm-again"}, {"id": "y", "params": "7B"}])
    monkeypatch.setattr(audit.records, "CHUNK_CLAIMS", 2)
    chunks = list(claim_chunks(result))
    assert [len(c) for c in chunks] == [2, 2, 1]
    grouped = findings_by_row(result)
    made = [record for chunk in chunks for record in chunk]
    assert [json.dumps(r) for r in made] == [json.dumps(claim_record(result, row, grouped.get(row, [])))
                                             for row in range(len(result))]
    assert json.dumps(to_json(result)["claims"]) == json.dumps(made)
    # 6144 chips x 1200 h (Chowdhery et al. 2022, Table 21), in the second chunk
    assert made[1]["phases"][0]["quantities"]["chip_hours"]["value"] == 6144 * 1200


def test_the_command_line_never_makes_every_record_at_once(tmp_path, monkeypatch):
    # The JSON report goes to the file a chunk of claims at a time, each written before the next is made: to_json
    # (every record at once) is never called, and the text is the one to_json gives.
    import audit.cli

    path = tmp_path / "claims.json"
    path.write_text(json.dumps([PALM, SLIP, {"id": "x"}]))
    whole = to_json(check([str(path)]))
    monkeypatch.setattr(audit.records, "CHUNK_CLAIMS", 1)

    def refused(result):
        raise AssertionError("every record made at once")

    monkeypatch.setattr(audit.records, "to_json", refused)
    real_chunk, real_write, events = audit.records.ClaimRecords.chunk, audit.cli._write_file, []
    monkeypatch.setattr(audit.records.ClaimRecords, "chunk",
                        lambda self, start, stop: events.append(f"made {start}") or real_chunk(self, start, stop))

    def write(data, output):
        def pieces():
            for piece in data:
                events.append("written")
                yield piece

        assert not isinstance(data, (str, bytes))
        return real_write(pieces(), output)

    monkeypatch.setattr(audit.cli, "_write_file", write)
    out = tmp_path / "out.json"
    res = CliRunner().invoke(cli, ["check", str(path), "-f", "json", "-o", str(out)])
    assert res.exit_code == 1, res.output
    assert events == ["made 0", "written", "made 1", "written", "made 2", "written", "written"]  # then the summary
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(json.dumps(whole))


@pytest.mark.parametrize("batched", [False, True])
def test_a_json_report_that_fails_half_way_leaves_the_previous_one(tmp_path, monkeypatch, batched):
    # Written a chunk at a time, the report can fail after some chunks are out: the previous file stays as it was,
    # with no temporary file beside it (one piece, and batch by batch).
    path = tmp_path / "claims.json"
    path.write_text(json.dumps([PALM, SLIP, {"id": "x"}]))
    report = tmp_path / "report.json"
    report.write_text("previous report\n")
    monkeypatch.setattr(audit.records, "CHUNK_CLAIMS", 1)
    real, made = audit.records.ClaimRecords.chunk, []

    def dies_on_the_second(self, start, stop):
        if made:
            raise RuntimeError("records died half-way")
        made.append(start)
        return real(self, start, stop)

    monkeypatch.setattr(audit.records.ClaimRecords, "chunk", dies_on_the_second)
    # In one process (-j 1): batches of a JSON report are otherwise made in worker processes, which the patch
    # above does not reach (tests/test_parallel.py has a worker fail).
    args = ["check", str(path), "-f", "json", "-o", str(report)] + (["--batch-size", "2", "-j", "1"] if batched else [])
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "internal error" in res.stderr and "Traceback" not in res.stderr, res.output
    assert made == [0] and report.read_text() == "previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claims.json", "report.json"]
