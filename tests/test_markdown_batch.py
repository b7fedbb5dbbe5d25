"""Markdown for a pull-request comment, issue 11: in a large batch whose invalid rows outnumber the list's cap, the
failures still lead, every rule is counted, the likely causes stay, and the comment says what it left out."""

from __future__ import annotations

import re

from audit.api import check_records
from audit.report import markdown

#: 6 x 7e9 x 1e12 = 4.2e22 FLOP.
FINE = {"params": "7B", "tokens": "1T", "compute_flops": 4.2e22}


def batch() -> list[dict]:
    """5,000 claims in the order a sheet might hold them: 3,000 invalid first (half a chip), then 5 failures (the
    compute 1,000x 6·N·D: a unit prefix), 100 warnings (the compute 3x 6·N·D, within C001's warning band of 4x)
    and 1,895 that pass."""
    rows = [{"id": f"bad-{i}", **FINE, "chips": 1.5} for i in range(3000)]
    rows += [{"id": f"fail-{i}", **FINE, "compute_flops": 4.2e25} for i in range(5)]
    rows += [{"id": f"warn-{i}", **FINE, "compute_flops": 1.26e23} for i in range(100)]
    rows += [{"id": f"ok-{i}", **FINE} for i in range(1895)]
    return rows


def test_failures_lead_a_batch_whose_invalid_rows_exceed_the_cap():
    result = check_records(batch())
    assert len(result) == 5000
    page = markdown.render(result)  # the default cap: 200 claims listed
    assert page.splitlines()[2] == "✅ 1895 pass · ⚠️ 100 warn · ❌ 5 fail · ⛔ 3000 invalid · ❔ 0 unchecked — 5000 claims"
    lines = page.splitlines()
    start = lines.index("| status | id | name | findings |") + 2
    listed = [line for line in lines[start:] if line.startswith("| ")]
    assert len(listed) == 200
    # fail, then invalid, then warn: the five failures first, then 195 of the invalid rows.
    assert [re.match(r"\| \S+ (\w+) \| ([\w-]+) ", line).groups() for line in listed[:6]] == \
        [("fail", f"fail-{i}") for i in range(5)] + [("invalid", "bad-0")]
    assert all(" invalid | bad-" in line for line in listed[5:])
    # Counts per rule cover the whole batch, not only the rows listed.
    assert "| `V001` invalid-value | 3000 | 3000 | 0 |" in page
    assert "| `C001` compute-6nd | 105 | 5 | 100 |" in page
    # What was left out, by status: 3,000 - 195 invalid, every warning and pass.
    assert "4800 more claims not listed (2805 invalid, 100 warn, 1895 pass); use `--format csv` for all of them." \
        in page
    # The failures keep their likely cause (the compute 1,000x: a unit prefix).
    details = page.split("<details><summary>Findings</summary>", 1)[1]
    fail0 = details.split("**fail-0**", 1)[1].split("\n\n**", 1)[0]
    assert "likely cause: unit prefix" in fail0


def test_the_markdown_report_names_the_columns_it_did_not_read(tmp_path):
    """Issue 9: a column not understood is never dropped without a word; a pull-request comment says it too."""
    from audit.api import check

    path = tmp_path / "runs.csv"
    path.write_text("run_id,model_size,num_gpus,gpu_type,train_hours,n_toks\nr1,7B,64,A100,100,140B\n",
                    encoding="utf-8")
    page = markdown.render(check([str(path)]))
    assert "Columns not read" in page and "`train_hours`" in page and "`n_toks`" in page
