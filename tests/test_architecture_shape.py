"""The shape issue 8 asks for, checked on the code itself: inputs and results are not patched after they are
built, caches live in declared places, and what is special about a rule stays in the rule's class."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

import audit
from audit.api import check_records
from audit.catalog import load_catalog
from audit.config import Config
from audit.pipeline import audit_claims
from audit.engine import evaluate
from audit.reading import claims_from_records
from audit.state import TextReadings, finetunes

PACKAGE = Path(audit.__file__).resolve().parent
CODE = re.compile(r"^[CEHMRUV]\d{3}$")


def _sources() -> dict[str, ast.Module]:
    return {str(p.relative_to(PACKAGE.parent)): ast.parse(p.read_text(encoding="utf-8"))
            for p in sorted(PACKAGE.rglob("*.py"))}


def test_no_module_stashes_attributes_on_other_objects():
    """No ``setattr`` and no ``x.__dict__`` on an object other than the method's own (``self``/``cls``): a cache
    is a declared field, not an attribute added to a claims object or a result from outside."""
    found = []
    for name, tree in _sources().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
                found.append(f"{name}:{node.lineno} setattr")
            if isinstance(node, ast.Attribute) and node.attr == "__dict__":
                owner = node.value
                if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                    found.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    assert found == []


def test_the_scan_above_sees_a_stashed_cache():
    tree = ast.parse("def f(claims):\n    claims.__dict__.setdefault('x', {})\n    setattr(claims, 'y', 1)\n")
    attrs = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "__dict__"]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setattr"]
    assert len(attrs) == 1 and len(calls) == 1


RECORDS = [
    # A fine-tune (base model named), a mixture of experts (its notes say so), a compute whose notes give stages,
    # a multi-phase run and an unusable value: every text reading of the work state and the phase expansion run.
    {"id": "ft", "params": "7B", "tokens": "2T", "base_model": "Llama 2 7B", "compute_flops": "1e22",
     "hardware": "A100", "chips": 64, "wall_clock_days": 3},
    {"id": "moe", "params": "671B", "tokens": "14.8T", "params_notes": "mixture of experts, its active share not given",
     "compute_flops": "3.3e24"},
    {"id": "stages", "params": "70B", "tokens": "1.4T", "compute_flops": "6.5e23",
     "compute_notes": "3e23 + 3.5e23 = 6.5e23"},
    {"id": "phased", "phases": [{"name": "a", "tokens": "1T", "params": "7B"}, {"name": "b", "tokens": "1T"}],
     "tokens": "2T", "params": "7B"},
    {"id": "bad", "params": "five apples"},
]


def _snapshot(claims) -> dict:
    return {"attrs": sorted(vars(claims)), "invalid": claims.invalid.copy(), "values": claims.values.copy(),
            "info": claims.info.copy()}


def test_an_audit_leaves_its_claims_as_they_were():
    claims = claims_from_records(RECORDS)
    before = _snapshot(claims)
    result = audit_claims(claims)
    after = _snapshot(claims)
    assert after["attrs"] == before["attrs"]  # nothing stashed on the claims object
    pd.testing.assert_frame_equal(after["invalid"], before["invalid"])
    pd.testing.assert_frame_equal(after["values"], before["values"])
    pd.testing.assert_frame_equal(after["info"], before["info"])
    # The audit saw what the checks below rely on: a phase expansion and an invalid claim.
    assert result.phase_result is not None and len(result.phase_result) == 2
    assert result.status.tolist()[-1] == "invalid"


def test_the_text_readings_are_made_once_and_shared_by_the_engines_states(monkeypatch):
    from audit import state as state_module

    calls = Counter()
    real = state_module.finetunes

    def counted(claims):
        calls["finetunes"] += 1
        return real(claims)

    monkeypatch.setattr(state_module, "finetunes", counted)
    claims = claims_from_records(RECORDS[:3])
    evaluate(claims, Config.default(), load_catalog())
    assert calls["finetunes"] == 1
    readings = TextReadings()
    assert readings.finetune is None and readings.sparse is None
    # A second evaluation of the same claims reads them again: nothing was kept on the claims object.
    evaluate(claims, Config.default(), load_catalog())
    assert calls["finetunes"] == 2


def test_fine_tune_and_sparse_readings_are_those_of_the_text():
    claims = claims_from_records(RECORDS[:3])
    ev = evaluate(claims, Config.default(), load_catalog())
    assert finetunes(claims).tolist() == [True, False, False]
    # The mixture of experts' total parameters only bound N from above: C = 6·N·D with N = 671e9 is
    # 5.96e25, far above the stated 3.3e24, yet the claim is not failed for it.
    assert ev.q["params"].tolist()[1] == 671e9
    result = check_records(RECORDS[1:2])
    c001 = result.findings[result.findings["rule"] == "C001"]
    assert c001["severity"].astype(str).tolist() == ["ok"]
    assert float(c001["expected"].iloc[0]) == 6 * 671e9 * 14.8e12


#: Places outside audit/rules.py that still compare a rule code with a literal (issue 8: what is special about
#: a rule belongs to its class). Counted per file so that no new one appears unnoticed; lower a count when a
#: place is moved into a rule's class.
KNOWN_CODE_COMPARISONS: dict[str, int] = {}


def _code_comparisons(tree: ast.Module) -> int:
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            literals = [p for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)]
            for p in parts:
                if isinstance(p, (ast.Tuple, ast.List, ast.Set)):
                    literals += [e for e in p.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            count += any(CODE.match(lit.value) for lit in literals)
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("np.isin", "rule_is"):
            args = node.args[1:] if len(node.args) > 1 else []
            count += any(isinstance(e, ast.Constant) and isinstance(e.value, str) and CODE.match(e.value)
                         for a in args for e in ast.walk(a))
    return count


def test_no_new_place_special_cases_a_rule_code():
    found = {name: n for name, tree in _sources().items()
             if name != "audit/rules.py" and (n := _code_comparisons(tree))}
    grown = {name: (n, KNOWN_CODE_COMPARISONS.get(name, 0)) for name, n in found.items()
             if n > KNOWN_CODE_COMPARISONS.get(name, 0)}
    assert grown == {}, f"(found, known) per file: {grown}"


def test_the_code_comparison_scan_counts_what_it_should():
    tree = ast.parse('if f.rule == "V001": pass\nx = np.isin(r, ("U001", "U002"))\nok = name == "params"\n'
                     'y = c in ("C001", "x")\n')
    assert _code_comparisons(tree) == 3
    assert np.array_equal(np.isin(np.array(["U001"]), ("U001",)), [True])
