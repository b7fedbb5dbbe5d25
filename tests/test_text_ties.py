"""Text output, issue 11: a check says which stated figures it ties together, and a formula marks the values the
tool derived (``*``), so that no check reads as a figure agreeing with itself."""

from __future__ import annotations

import re

from audit.api import check_records
from audit.report import text

#: GPT-3 175B as Brown et al. 2020 (Table D.1) and Patterson et al. 2021 state it: compute, parameters and tokens
#: all stated; 10,000 V100 for 14.8 days and 21.3 % MFU.
GPT3 = {"id": "gpt3", "params": "175B", "tokens": "300B", "compute_flops": 3.14e23, "hardware": "V100",
        "chips": 10000, "wall_clock_days": 14.8, "mfu": 0.213}

#: Llama 2 70B (Touvron et al. 2023, Tables 1-2) without a stated compute, with its architecture (config.json of
#: meta-llama/Llama-2-70b-hf): the compute is then C = F · D from these very tokens (C007), and C001 compares the
#: tokens with C / 6N. F by Megatron-LM's count with base = 12 · 80 · 8192² = 6.4425e10: projections x 1.125
#: (8 KV heads of 64), attention x 4096/8192, gated MLP x 28672/8192 x 1.5, logits x 32000/(2 · 80 · 8192):
#: F = 6.4425e10 x (1.125 + 0.5 + 5.25 + 0.024414) = 4.4449e11, and C / 6N = 4.4449e11 x 2e12 / 4.2e11 = 2.117e12.
LLAMA2_70B = {"id": "llama2-70b", "params": "70B", "tokens": "2T", "hardware": "A100 80GB", "chip_hours": 1720320,
              "layers": 80, "d_model": 8192, "heads": 64, "kv_heads": 8, "ffn_dim": 28672, "seq_len": 4096,
              "vocab_size": 32000, "mlp": "swiglu"}


def finding_lines(page: str, code: str) -> list[tuple[str, str]]:
    """Each finding line of ``code`` with the line after it (its formula, when it has one)."""
    lines = page.splitlines()
    return [(line, lines[i + 1] if i + 1 < len(lines) else "") for i, line in enumerate(lines)
            if re.match(rf"\s+\w+\s+{code} ", line)]


def test_a_check_of_independent_stated_figures_names_them():
    page = text.render(check_records([GPT3]), show_ok=True)
    [(c001, formula)] = finding_lines(page, "C001")
    # 6 x 175e9 x 300e9 = 3.15e23, and 3.14 / 3.15 = 0.997: three stated figures, none derived from another.
    assert "Compute 3.14e23 FLOP (claimed) agrees with 3.15e23 FLOP implied by C = 6 · N · D, which ties the " \
           "stated Compute, Parameters (N), Tokens (ratio 0.997x)" in c001
    assert formula.strip() == "C = 6 · N · D = 6 × 175B × 300B = 3.15e23"  # every operand stated: no mark


def test_a_formula_marks_the_operands_the_tool_derived():
    page = text.render(check_records([GPT3]), show_ok=True)
    [(c003, formula)] = finding_lines(page, "C003")
    # Chip-hours were not stated: 10,000 x 24 x 14.8 = 3,552,000, derived (C002), so marked; the stated compute
    # and the datasheet peak (V100 fp16, 125 TFLOP/s) are not.
    assert "3,552,000*" in formula, formula
    assert "3.14e23*" not in formula and "3.145e23*" not in formula and "1.25e14*" not in formula
    assert re.search(r"× 3,552,000\* × 1\.25e14\)", formula), formula
    # The table's legend says what the mark means.
    assert "* derived by the tool from the stated figures (not stated)" in page


def test_a_figure_compared_with_a_value_derived_from_it_says_so():
    page = text.render(check_records([LLAMA2_70B]), show_ok=True)
    [(c001, formula)] = finding_lines(page, "C001")
    assert formula.strip() == "D = C / (6 · N) = 8.89e23* / (6 × 70B) = 2.117T"
    # The tokens came back through C = F · D: the check ties N with the architecture, not the tokens with
    # themselves, and says so instead of "Tokens agrees with ... which ties the stated Parameters (N), Tokens".
    assert ("Tokens 2T (claimed) agrees with 2.117T implied by C = 6 · N · D, with C derived from the stated Tokens "
            "itself, so the check ties the stated Layers, Model width, Attention heads, KV heads, FFN width, "
            "Sequence length, Vocabulary, Parameters (N) (ratio 0.945x)") in c001, c001
    ties = c001.split("so the check ties the stated ", 1)[1]
    assert "Tokens" not in ties
