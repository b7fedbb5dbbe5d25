"""Shared helpers for the train-audit tests: fixture paths, reference constants and a CLI runner.

The constants below are the independent sources the tests compare against (datasheets and unit definitions),
each written out with where it comes from, so no expected value is copied from the code's own output.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from audit.cli import cli

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"


# --------------------------------------------------------------------------------------------------------
# How many processes run the tests.


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject.toml's addopts): one pytest-xdist worker per core for the suite or a folder of it, but
    one process for chosen files or tests (``python -m pytest tests/test_x.py``), where starting the workers would
    cost more than it saves. ``-n N`` is taken as given."""
    chosen = [arg for arg in config.option.file_or_dir or [] if not arg.startswith("-")]
    if chosen and all("::" in arg or not Path(arg).is_dir() for arg in chosen):
        return 0
    return None  # pytest-xdist's own count: the cores this process may use

# --------------------------------------------------------------------------------------------------------
# Units and datasheet figures (independent of the code under test).

#: One petaflop/s-day: 1e15 FLOP/s for 86,400 s (Brown et al. 2020, Appendix D: "PF-days").
PF_DAY = 1e15 * 86400
SECONDS_PER_HOUR = 3600
HOURS_PER_DAY = 24
DAYS_PER_JULIAN_YEAR = 365.25

#: NVIDIA H100 Tensor Core GPU Architecture whitepaper v1.04, Table 1: H100 SXM5 BF16 tensor 989.4 TFLOPS dense
#: (1,978.9 with sparsity). The lesson rounded it to 989e12.
H100_SXM_BF16 = 989.4e12
H100_LESSON_PEAK = 989e12
#: NVIDIA A100 datasheet: BF16 tensor 312 TFLOPS dense (624 with sparsity).
A100_BF16 = 312e12
#: Google Cloud TPU v4 documentation: 275 TFLOPS bf16 per chip.
TPU_V4_BF16 = 275e12
#: AMD ROCm documentation, MI300 architecture (mi300.md): MI300X BF16 matrix 1,307.4 TFLOPS dense.
MI300X_BF16 = 1307.4e12
#: H100 SXM5 memory: 80 GB HBM3 (NVIDIA H100 whitepaper, Table 1).
H100_MEMORY_BYTES = 80e9
#: Adam in mixed precision: 2 + 2 + 4 + 4 + 4 bytes per parameter (Rajbhandari et al. 2020, ZeRO, Sec. 3.1).
BYTES_PER_PARAM = 2 + 2 + 4 + 4 + 4


# --------------------------------------------------------------------------------------------------------
# The command line.


@dataclass
class CliResult:
    """What one ``train-audit`` invocation produced."""

    exit_code: int
    stdout: str
    stderr: str
    stdout_bytes: bytes

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def json(self) -> Any:
        return json.loads(self.stdout)


def _runner() -> CliRunner:
    # click < 8.2 mixes stderr into stdout unless told not to; 8.2+ always keeps them apart.
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
        return CliRunner(mix_stderr=False)
    return CliRunner()


def run_cli(*args: str, input: str | bytes | None = None) -> CliResult:
    """Run ``train-audit ARGS`` in-process; fail the test if it crashed or printed a traceback."""
    result = _runner().invoke(cli, list(args), input=input, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"train-audit {' '.join(args)} raised {result.exception!r}") from result.exception
    stderr = result.stderr if result.stderr_bytes is not None else ""
    for stream in (result.stdout, stderr):
        assert "Traceback" not in stream, f"traceback printed by train-audit {' '.join(args)}:\n{stream}"
    return CliResult(result.exit_code, result.stdout, stderr, result.stdout_bytes)


@pytest.fixture
def cli_run():
    """The in-process command line (see :func:`run_cli`)."""
    return run_cli


# --------------------------------------------------------------------------------------------------------
# Reading JSON output.


def claim_by_id(doc: dict, claim_id: str) -> dict:
    matches = [c for c in doc["claims"] if c["id"] == claim_id]
    assert len(matches) == 1, f"expected one claim {claim_id!r}, got {[c['id'] for c in doc['claims']]}"
    return matches[0]


def findings_of(claim: dict, rule: str) -> list[dict]:
    return [f for f in claim["findings"] if f["rule"] == rule]


def one_finding(claim: dict, rule: str) -> dict:
    found = findings_of(claim, rule)
    assert len(found) == 1, f"expected one {rule} finding on {claim['id']}, got {claim['findings']}"
    return found[0]
