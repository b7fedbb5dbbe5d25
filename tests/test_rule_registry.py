"""A new rule is one class: defined in a test, it is evaluated by the engine and appears in ``train-audit rules``
and in the JSON, text and HTML outputs, with no other file touched."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from audit import rules
from audit.api import check_records, to_json
from audit.cli import cli
from audit.findings import FindingsPart, findings_part
from audit.report import html, text
from audit.rules import Relation, RelationRule, Rule
from audit.state import WorkState


@pytest.fixture
def tokens_per_param_rule():
    """A made-up relation: Chinchilla's 20 tokens per parameter, as an equation D = 20 · N."""

    class ChinchillaRatio(RelationRule):
        """Training tokens are twenty times the parameters: D = 20 · N.

        **What it checks.** A test relation.

        **Why it matters.** It shows that a relation is one class.

        **Example.** 70B parameters on 1.4T tokens: 1.4e12 / (20 × 70e9) = 1. Pass.

        **References.** Hoffmann et al. 2022.
        """

        code = "C901"
        name = "chinchilla-ratio"
        quantity = "tokens"
        formula = "D = 20 · N"
        relation = Relation((("tokens", 1.0), ("n_eff", -1.0)), 20.0)
        subjects = ("tokens", "n_eff")
        symbols = {"tokens": "D", "n_eff": "N"}
        order = 5

    yield ChinchillaRatio
    rules.unregister("C901")


@pytest.fixture
def chip_limit_rule():
    """A made-up bound: more than 100,000 accelerators at once is a warning."""

    class ChipLimit(Rule):
        """No training run has used more than 100,000 accelerators at once.

        **What it checks.** A test bound.

        **Why it matters.** It shows that a bound is one class.

        **Example.** 200,000 GPUs: warning.

        **References.** None.
        """

        code = "U901"
        name = "chip-limit"
        quantity = "chips"
        formula = "chips ≤ 100,000"
        severity = "warning"

        @classmethod
        def evaluate(cls, state: WorkState) -> FindingsPart | None:
            chips = state.col("chips")
            rows = np.flatnonzero(~np.isnan(chips))
            sev = np.where(chips[rows] > 100_000, "warning", "ok")
            return findings_part(rows, cls.code, sev, "chips", chips[rows], 100_000.0)

        @classmethod
        def message(cls, result: Any, f: Any) -> str:
            return f"{int(f['claimed']):,} chips against a limit of 100,000"

    yield ChipLimit
    rules.unregister("U901")


def _codes(doc: dict, claim: int) -> dict[str, str]:
    return {f["rule"]: f["severity"] for f in doc["claims"][claim]["findings"]}


def test_a_relation_is_one_class(tokens_per_param_rule):
    # 70B x 20 = 1.4T: ratio 1. 7B on 2T: 2e12 / (20 x 7e9) = 14.3, beyond the default 2x warning limit.
    result = check_records([{"id": "chinchilla", "params": "70B", "tokens": "1.4T"},
                            {"id": "llama-2-7b", "params": "7B", "tokens": "2T"}])
    doc = to_json(result)
    assert _codes(doc, 0)["C901"] == "ok"
    assert _codes(doc, 1)["C901"] == "error"
    finding = next(f for f in doc["claims"][1]["findings"] if f["rule"] == "C901")
    assert finding["ratio"] == pytest.approx(2e12 / (20 * 7e9))
    assert finding["formula"] == "D = 20 · N = 20 × 7B = 140B"
    page = text.render(result)
    assert "C901" in page and "D = 20 · N = 20 × 7B = 140B" in page
    assert "C901" in html.render(result) and "Training tokens are twenty times the parameters" in html.render(result)
    listing = CliRunner().invoke(cli, ["rules"])
    assert "C901  chinchilla-ratio" in listing.output
    documented = CliRunner().invoke(cli, ["rules", "C901", "--format", "json"])
    assert json.loads(documented.output)[0]["formula"] == "D = 20 · N"


def test_a_relation_derives_what_is_missing(tokens_per_param_rule):
    doc = to_json(check_records([{"id": "x", "params": "70B"}]))
    tokens = doc["claims"][0]["quantities"]["tokens"]
    assert tokens["value"] == pytest.approx(1.4e12) and tokens["rule"] == "C901"


def test_a_bound_is_one_class(chip_limit_rule):
    result = check_records([{"id": "small", "chips": 2048}, {"id": "huge", "chips": 200_000}])
    doc = to_json(result)
    assert _codes(doc, 0)["U901"] == "ok"
    assert _codes(doc, 1)["U901"] == "warning"
    assert result.status.tolist() == ["pass", "warn"]
    assert "200,000 chips against a limit of 100,000" in text.render(result)
    page = html.render(result)
    assert "200,000 chips against a limit of 100,000" in page and "No training run has used more" in page
    assert "U901  chip-limit" in CliRunner().invoke(cli, ["rules"]).output


def test_a_code_is_never_reused():
    with pytest.raises(ValueError, match="C001 is already used"):
        class Impostor(Rule):  # noqa: F841 - defining it is the test
            code = "C001"
            name = "impostor"
    assert rules.RULES["C001"].name == "compute-6nd"
