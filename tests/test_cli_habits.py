"""Linter habits of the command line: ``--version`` from the package metadata, ``-q``, shell completion,
``train-audit schema`` and ``train-audit explain CODE``."""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

from click.testing import CliRunner

from audit.cli import cli
from conftest import REPO, run_cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_version_is_the_package_metadata():
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert version("train-audit") == declared
    assert run_cli("--version").stdout == f"train-audit, version {declared}\n"


def test_quiet_prints_only_the_summary_and_no_notes(tmp_path: Path):
    # An unknown column ('cluster') is normally named on standard error; -q says nothing but errors.
    path = tmp_path / "runs.csv"
    path.write_text("id,params,tokens,compute_flops,cluster\nx,1B,20B,1.2e21,west\n")
    loud = run_cli("check", str(path), "--isolated")
    assert "cluster" in loud.stderr
    quiet = run_cli("check", str(path), "--isolated", "-q")
    # 6 × 1e9 × 20e9 = 1.2e20: the claimed 1.2e21 is 10x off, an error.
    assert quiet.exit_code == 1
    assert quiet.stdout == "1 claim: 0 pass, 0 warn, 1 fail, 0 invalid, 0 unchecked\n"
    assert quiet.stderr == ""
    both = run_cli("check", str(path), "--isolated", "-q", "-v")
    assert both.exit_code == 2 and "-q/--quiet" in both.stderr


def test_shell_completion_script_and_completions():
    runner = CliRunner()
    script = runner.invoke(cli, [], prog_name="train-audit", env={"_TRAIN_AUDIT_COMPLETE": "bash_source"})
    assert script.exit_code == 0
    assert "_train_audit_completion" in script.output and "complete -o nosort -F" in script.output
    words = runner.invoke(cli, [], prog_name="train-audit", env={"_TRAIN_AUDIT_COMPLETE": "bash_complete",
                                                                "COMP_WORDS": "train-audit ch", "COMP_CWORD": "1"})
    assert "plain,check" in words.output.splitlines()


def test_schema_prints_the_claims_schema():
    result = run_cli("schema")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == json.loads((REPO / "schemas" / "claims.schema.json").read_text())
    bad = run_cli("schema", "nothing")
    assert bad.exit_code == 2 and "claims" in bad.stderr


def test_explain_is_rules_code():
    explained = run_cli("explain", "c001")
    assert explained.exit_code == 0
    assert explained.stdout == run_cli("rules", "C001").stdout
    assert explained.stdout.startswith("C001 compute-6nd")
    assert run_cli("explain", "Z999").exit_code == 2


def test_a_report_under_another_formats_extension_is_refused_before_any_work(tmp_path):
    """`-f csv -o runs.parquet` wrote CSV text into a .parquet file, and `--findings f.json` wrote CSV into .json."""
    claims = tmp_path / "c.json"
    claims.write_text(json.dumps([{"id": "a", "params": "7B", "tokens": "140B"}]), encoding="utf-8")
    runner = CliRunner()
    for args, words in ((["-f", "csv", "-o", str(tmp_path / "out.parquet")], "names a parquet file"),
                        (["--findings", str(tmp_path / "f.json")], "written as CSV or Parquet")):
        result = runner.invoke(cli, ["check", str(claims), *args])
        assert result.exit_code == 2 and words in result.output, result.output
    assert not list(tmp_path.glob("out*")) and not (tmp_path / "f.json").exists()
    ok = runner.invoke(cli, ["check", str(claims), "-f", "csv", "-o", str(tmp_path / "out.csv"),
                             "--findings", str(tmp_path / "f.parquet")])
    assert ok.exit_code == 0, ok.output


def test_the_schema_documents_every_field_check_reads():
    # `train-audit schema` left out the fine-tune's fields (base_model, trainable_params), the architecture and the
    # dataset's: a user writing claims from the contract could not know they are read.
    from audit.quantities import INPUT_QUANTITIES, TEXT_FIELDS

    schema = json.loads((REPO / "schemas" / "claims.schema.json").read_text())
    missing = [f for f in (*INPUT_QUANTITIES, *TEXT_FIELDS) if f not in schema["properties"]]
    assert not missing, missing
