"""The pre-commit hook: ``.pre-commit-hooks.yaml`` declares a ``train-audit`` hook whose entry, run as pre-commit
runs it (entry + args + the matching file names, in a subprocess), fails on a claims file with an error."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import REPO, run_cli

#: 1B parameters on 20B tokens: 6·N·D = 6 × 1e9 × 20e9 = 1.2e20 FLOP; 1.2e21 is 10x that, a C001 error.
CLAIMS = "id,params,tokens,compute_flops\nagrees,1B,20B,1.2e20\nten-x,1B,20B,1.2e21\n"


def _hook() -> dict:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == "train-audit"]
    return hook


def _executable(name: str) -> str:
    """The console script as pre-commit's environment would have it: on PATH, or beside this Python."""
    found = shutil.which(name) or str(Path(sys.executable).with_name(name))
    assert Path(found).exists(), f"{name} is not installed (pip install -e .)"
    return found


def test_hook_declaration():
    hook = _hook()
    assert hook["entry"] == "train-audit check"
    assert hook["language"] == "python"
    pattern = re.compile(hook["files"])
    assert pattern.search("data/runs-claims.csv") and pattern.search("claims.json")
    assert not pattern.search("package.json") and not pattern.search("claims/README.md")


def test_hook_entry_fails_on_a_claims_file_with_an_error(tmp_path: Path):
    hook = _hook()
    (tmp_path / "good-claims.csv").write_text(CLAIMS.splitlines()[0] + "\n" + CLAIMS.splitlines()[1] + "\n")
    (tmp_path / "paper-claims.csv").write_text(CLAIMS)
    command = shlex.split(hook["entry"])
    command[0] = _executable(command[0])
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    bad = subprocess.run([*command, *hook.get("args", []), "paper-claims.csv"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1, bad.stderr
    assert any(line.startswith("paper-claims.csv:3: C001 error: Compute 1.2e21 FLOP (claimed)")
               for line in bad.stdout.splitlines()), bad.stdout
    # The same file passing, and GitHub's format (the annotation a workflow step shows), in-process.
    good = run_cli(*command[1:], *hook.get("args", []), "--isolated", str(tmp_path / "good-claims.csv"))
    assert good.exit_code == 0, good.output
    annotated = run_cli(*command[1:], "--format", "github", "--isolated", str(tmp_path / "paper-claims.csv"))
    assert annotated.exit_code == 1
    assert f"\n::error file={tmp_path / 'paper-claims.csv'},line=3,title=C001 compute-6nd" in "\n" + annotated.stdout
