"""Text output: colour only on a terminal, never with NO_COLOR (https://no-color.org)."""

from __future__ import annotations

from audit.api import check_records
from audit.cli import _styler, _use_color
from audit.report import text


class FakeStream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_colour_only_on_a_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert _use_color(FakeStream(True)) is True
    assert _use_color(FakeStream(False)) is False


def test_no_color_wins_even_on_a_terminal(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    assert _use_color(FakeStream(True)) is False


def test_coloured_and_plain_text_say_the_same_thing():
    result = check_records([{"id": "bad", "params": "175B", "tokens": "300B", "compute_flops": 3.15e26}])
    plain = text.render(result)
    coloured = text.render(result, _styler(True))
    assert "\x1b[" not in plain and "\x1b[" in coloured
    import re
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
    assert "error" in plain and "C001" in plain


def test_derived_values_are_marked_and_the_accelerator_is_the_resolved_one():
    # Llama 2 70B without a stated compute: 6 x 70e9 x 2e12 = 8.4e23 is derived, and so is the MFU.
    result = check_records([{"id": "llama2-70b", "params": "70B", "tokens": "2T", "hardware": "A100",
                             "chip_hours": "1,720,320"}, {"id": "x", "params": "7B", "hardware": "H1000"}])
    lines = text.render(result).splitlines()
    row = next(line for line in lines if "llama2-70b" in line)
    assert "8.4e23*" in row and "NVIDIA A100 SXM4 80GB" in row and row.rstrip().endswith("%*")
    assert "70B " in row  # stated: no mark
    assert "H1000?" in next(line for line in lines if line.split()[1:2] == ["x"])
    assert any(line.startswith("* derived by the tool") for line in lines)


def test_a_claims_source_and_extra_fields_are_shown():
    result = check_records([{"id": "bad", "params": "175B", "tokens": "300B", "compute_flops": 3.15e26,
                             "source": "Brown et al. 2020, Table D.1", "cluster": "azure-v100"}])
    page = text.render(result)
    assert "  source: Brown et al. 2020, Table D.1" in page.splitlines()
    assert "  extra: cluster=azure-v100" in page.splitlines()


def test_the_longest_status_keeps_a_space_before_the_id():
    # "unchecked" is 9 characters, the width of the status column: the id must not run into it.
    out = text.render(check_records([{"id": "lonely", "params": "7B"}]))
    assert any(line.startswith("unchecked lonely") for line in out.splitlines()), out


def test_a_huge_batch_shows_the_worst_claims_and_counts_them_all(monkeypatch):
    # Five claims, a limit of two: the failing one and the warning are shown, in input order; the summary counts
    # all five. 6 x 7e9 x 1e12 = 4.2e22: 4.2e23 is 10x (an error), 1.26e23 is 3x (a warning).
    records = [{"id": "ok1", "params": "7B", "tokens": "1T", "compute_flops": 4.2e22},
               {"id": "warn", "params": "7.00B", "tokens": "1.00T", "compute_flops": 1.26e23},
               {"id": "ok2", "params": "7B", "tokens": "1T", "compute_flops": 4.2e22},
               {"id": "fail", "params": "7B", "tokens": "1T", "compute_flops": 4.2e23},
               {"id": "ok3", "params": "7B", "tokens": "1T", "compute_flops": 4.2e22}]
    monkeypatch.setattr(text, "MAX_SHOWN", 2)
    out = text.render(check_records(records))
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("-----")) + 1
    end = next(i for i, line in enumerate(lines) if line.startswith("* derived"))
    assert [line.split()[:2] for line in lines[start:end]] == [["warn", "warn"], ["fail", "fail"]], out
    assert out.startswith("showing the 2 worst of 5 claims")
    assert out.rstrip().endswith("5 claims: 3 pass, 1 warn, 1 fail, 0 invalid, 0 unchecked")


def test_verbose_text_says_how_each_derived_figure_was_derived():
    """-v listed the findings, but a derived compute (3.15e23*) had no formula in the text report (only the HTML's
    Derived table showed it). GPT-3 (Brown et al. 2020): 6 x 175e9 x 300e9 = 3.15e23 FLOP; the V100's peak
    (125 TFLOP/s, FP16 tensor) comes with its datasheet."""
    result = check_records([{"id": "gpt3", "params": "175B", "tokens": "300B", "hardware": "V100"}])
    shown = text.render(result, show_ok=True)
    assert "  derived Compute 3.15e23 FLOP: C001: C = 6 · N · D = 6 × 175B × 300B = 3.15e23" in shown
    assert any(line.startswith("  datasheet Peak FLOP/s per chip 125 TFLOP/s: NVIDIA V100")
               for line in shown.splitlines()), shown
    assert "derived Compute" not in text.render(result)  # without -v: the findings alone
