"""``train-audit estimate``, issue 11: its options described for what they take, and values out of range refused
as usage errors (exit 2) before anything is computed, with a hint that is right for what was written."""

from __future__ import annotations

import re

import pytest

BASE = ("estimate", "--params", "70B", "--tokens", "1.4T", "--hardware", "H100", "--chips", "4096")


def option_help(page: str, option: str) -> str:
    """The help text of ``option`` in a click help page (its wrapped lines joined)."""
    lines = page.splitlines()
    at = next(i for i, line in enumerate(lines) if re.match(rf"\s+{re.escape(option)}\s", line))
    text = [lines[at].strip()[len(option):].strip()]  # the metavar, then the help's first line
    for line in lines[at + 1:]:
        if re.match(r"\s+-", line) or not line.strip():
            break
        text.append(line.strip())
    return " ".join(t for t in text if t)


def test_help_describes_hardware_and_precision_as_text(cli_run):
    page = cli_run("estimate", "--help").stdout
    hardware, precision = option_help(page, "--hardware"), option_help(page, "--precision")
    # Before issue 11 both read "(a number, or text with units)".
    assert "number" not in hardware and "number" not in precision
    assert hardware.startswith("TEXT") and "H100" in hardware and "train-audit hardware" in hardware
    assert precision.startswith("TEXT") and all(p in precision for p in ("bf16", "fp16", "fp8", "tf32", "fp32"))
    assert "percentage such as 40%" in option_help(page, "--mfu")


def test_a_percentage_without_percent_sign_is_refused_with_the_hint(cli_run):
    res = cli_run(*BASE, "--mfu", "40")
    assert res.exit_code == 2 and res.stdout == ""
    assert "--mfu 40: a fraction of 1 is expected; 40 looks like a percentage: write 0.4 or 40%" in res.stderr
    assert cli_run(*BASE, "--mfu", "40%").exit_code == 0


@pytest.mark.parametrize(("option", "value", "message"), [
    # 140% is 1.4 of the peak: no reading of it is a utilization, and "write 0.014 or 1.4%" would be wrong.
    ("--mfu", "140%", "--mfu 140%: MFU cannot exceed 100 % (a fraction of at most 1)"),
    # 120 is above any percentage: "write 1.2 or 120%" would still be out of range.
    ("--hfu", "120", "--hfu 120: HFU cannot exceed 100 % (a fraction of at most 1)"),
    # A facility cannot use less power than its chips (PUE = facility / IT power >= 1).
    ("--pue", "0.5", "--pue 0.5: PUE is at least 1"),
])
def test_other_out_of_range_values_are_usage_errors_before_computing(cli_run, option, value, message):
    res = cli_run(*BASE, option, value)
    assert res.exit_code == 2 and res.stdout == ""
    assert message in res.stderr
    assert "looks like a percentage" not in res.stderr
