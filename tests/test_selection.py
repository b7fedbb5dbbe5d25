"""Rule selection as ruff selects: ``--select``/``--ignore``/``--extend-select`` by code or prefix; ignored rules
still run and derive values but report nothing; ``--statistics`` counts findings per rule."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from audit.api import check_records
from audit.selection import SelectionError, apply, enabled
from conftest import run_cli

#: 1B parameters on 20B tokens: 6·N·D = 6 × 1e9 × 20e9 = 1.2e20 FLOP. A claimed 1.2e21 is 10x that, beyond any
#: tolerance of C001 (no convention explains 10x): an error. The second claim states 1.2e20: it agrees.
TEN_X = {"id": "ten-x", "params": "1B", "tokens": "20B", "compute_flops": "1.2e21"}
AGREES = {"id": "agrees", "params": "1B", "tokens": "20B", "compute_flops": "1.2e20"}
#: 2,048 chips for 21 days are 2,048 × 24 × 21 = 1,032,192 chip-hours; a claim of 43,008 (2,048 × 21: chip-days
#: written as hours) is 24x too few (C002).
HOURS_OFF = {"id": "hours-off", "chips": 2048, "wall_clock_days": 21, "chip_hours": 43008}


def test_select_a_prefix_keeps_only_its_rules_and_v001():
    codes = enabled(select=["C00"])
    assert {"C001", "C002", "C009"} <= codes
    assert not {"C010", "U001", "M001", "H001", "V002"} & codes
    assert "V001" in codes  # an unusable value is always reported


def test_the_most_specific_selector_wins_and_ignore_wins_a_tie():
    codes = enabled(select=["C"], ignore=["C001"])
    assert "C002" in codes and "C001" not in codes
    codes = enabled(ignore=["C"], extend_select=["C003"])
    assert "C003" in codes and "C001" not in codes and "U001" in codes
    assert "C001" not in enabled(select=["C001"], ignore=["C001"])
    assert enabled(select=["ALL"]) == enabled()
    assert enabled(select=["c001,u"]) >= {"C001", "U001", "U002", "V001"}  # comma-separated, any case


@pytest.mark.parametrize("kwargs, words", [
    ({"select": ["Z9"]}, ["--select Z9", "no rule"]),
    ({"ignore": ["C0001"]}, ["--ignore C0001", "close: C001"]),
    ({"extend_select": ["X"]}, ["--extend-select X"]),
    ({"ignore": ["V001"]}, ["always reported"]),
])
def test_unknown_selectors_are_errors(kwargs: dict, words: list[str]):
    with pytest.raises(SelectionError) as err:
        enabled(**kwargs)
    for word in words:
        assert word in str(err.value)


def test_ignored_rules_still_derive_values_but_report_nothing():
    result = check_records([TEN_X, AGREES, HOURS_OFF])
    selected = apply(result, enabled(ignore=["C001"]))
    assert "C001" not in set(selected.findings["rule"])
    assert "C002" in set(selected.findings["rule"])
    # The values every rule derived are the same object: nothing is recomputed or dropped.
    assert selected.q is result.q
    # ten-x's only check was C001: with it ignored nothing was checked, which is never a pass.
    assert result.status.tolist()[:2] == ["fail", "pass"]
    assert selected.status.tolist()[:2] == ["unchecked", "unchecked"]
    assert selected.status.iat[2] == result.status.iat[2] == "fail"  # C002: 24x too few chip-hours


def test_explanations_follow_their_findings():
    result = check_records([TEN_X, HOURS_OFF])
    selected = apply(result, enabled(ignore=["C001"]))
    before = {(int(result.findings["row"].iat[i]), result.findings["rule"].iat[i], e["cause"])
              for i, e in zip(result.explanations["finding"], result.explanations.to_dict("records"))}
    after = {(int(selected.findings["row"].iat[i]), selected.findings["rule"].iat[i], e["cause"])
             for i, e in zip(selected.explanations["finding"], selected.explanations.to_dict("records"))}
    assert after == {x for x in before if x[1] != "C001"}
    assert ("C002", "gpu-days") in {(x[1], x[2]) for x in after}  # 24x: chip-days written as hours


def test_selecting_every_rule_changes_nothing():
    result = check_records([TEN_X, AGREES])
    assert apply(result, enabled()) is result


def test_cli_ignore_changes_the_exit_code_and_every_output(tmp_path: Path):
    path = tmp_path / "claims.json"
    path.write_text(json.dumps([TEN_X, AGREES]))
    assert run_cli("check", str(path), "--isolated").exit_code == 1
    result = run_cli("check", str(path), "--isolated", "--ignore", "C001", "-f", "json")
    assert result.exit_code == 0
    doc = result.json()
    assert "C001" not in doc["summary"]["rules"]
    assert all(f["rule"] != "C001" for c in doc["claims"] for f in c["findings"])
    findings = tmp_path / "findings.csv"
    run_cli("check", str(path), "--isolated", "--select", "U", "--findings", str(findings), "-o",
            str(tmp_path / "r.json"), "-f", "json")
    assert "C001" not in findings.read_text()


def test_cli_unknown_code_is_a_usage_error(tmp_path: Path):
    result = run_cli("check", "--isolated", "--select", "Q1")
    assert result.exit_code == 2
    assert result.stderr.startswith("train-audit: error: --select Q1: no rule has this code or prefix")


def test_statistics_one_line_per_rule(tmp_path: Path):
    path = tmp_path / "claims.json"
    path.write_text(json.dumps([TEN_X, dict(TEN_X, id="ten-x-again"), AGREES, HOURS_OFF]))
    result = run_cli("check", str(path), "--isolated", "--statistics", "--select", "C001,C002")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    # Hand count: two C001 errors (ten-x, ten-x-again), one C002 error (hours-off); most first.
    assert lines[0].split() == ["2", "C001", "compute-6nd", "2", "error"]
    assert lines[1].split() == ["1", "C002", "chip-hours", "1", "error"]
    assert lines[-1] == "4 claims: 1 pass, 0 warn, 3 fail, 0 invalid, 0 unchecked"
    rows = run_cli("check", str(path), "--isolated", "--statistics", "--select", "C001", "-f", "json").json()
    assert rows == [{"code": "C001", "name": "compute-6nd", "count": 2, "error": 2, "warning": 0, "info": 0}]


def test_phases_findings_are_selected_too():
    run = {"id": "two-phase", "phases": [
        {"id": "a", "chips": 1024, "wall_clock_days": 10, "chip_hours": 24576},   # 1,024 × 24 × 10 = 245,760: 10x off
        {"id": "b", "chips": 1024, "wall_clock_days": 10, "chip_hours": 245760},  # agrees
    ]}
    result = check_records([run])
    assert result.phase_result is not None
    assert "C002" in set(result.phase_result.findings["rule"])
    selected = apply(result, enabled(ignore=["C002"]))
    assert selected.phase_result is not None
    assert "C002" not in set(selected.phase_result.findings["rule"])
    assert np.array_equal(selected.phase_parent, result.phase_parent)
