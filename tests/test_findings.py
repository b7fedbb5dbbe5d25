"""Findings and statuses as data (audit/findings.py): the order of statuses, a claim's status, exit codes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit.findings import (STATUSES, exit_status, fail_levels, findings_part, findings_table,
                            status_of, worst_status)


def _frame(rows, rules, severities):
    return findings_table([findings_part(np.array([r]), rule, sev, "q") for r, rule, sev in
                           zip(rows, rules, severities)])


def test_status_from_the_worst_finding_and_unchecked_without_any():
    # Claim 0: ok and warning -> warn; 1: an error -> fail; 2: a V001 -> invalid whatever else; 3: nothing -> unchecked;
    # 4: only an info that is a note (how a figure was read) -> unchecked; 5: an ok check -> pass.
    f = _frame([0, 0, 1, 2, 2, 4, 5], ["C001", "C002", "C001", "V001", "C001", "C015", "C001"],
               ["ok", "warning", "error", "error", "ok", "info", "ok"])
    notes = (f["rule"] == "C015").to_numpy()
    invalid = (f["rule"] == "V001").to_numpy()
    assert status_of(f, 6, notes, invalid).tolist() == ["warn", "fail", "invalid", "unchecked", "unchecked", "pass"]
    # Without the notes mask every finding counts as a check; without the invalid mask no value was unusable.
    assert status_of(f, 6).tolist() == ["warn", "fail", "fail", "unchecked", "pass", "pass"]
    # The invalidating rules are read from the registry (Rule.invalidates), not listed here.
    from audit.rules import codes_where
    assert codes_where("invalidates") == ("V001",)


def test_a_run_is_as_bad_as_its_worst_phase_and_checked_if_a_phase_is():
    runs = pd.Series(["unchecked", "pass", "warn"])
    phases = pd.Series(["pass", "fail", "unchecked", "pass"])
    assert worst_status(runs, phases, np.array([0, 1, 2, 2])).tolist() == ["pass", "fail", "warn"]


@pytest.mark.parametrize("fail_on, statuses, code", [
    ("fail", ["pass", "warn", "unchecked"], 0),
    ("warn", ["pass", "warn"], 1),
    ("fail", ["invalid"], 1),
    ("never", ["fail", "invalid"], 0),
    ("fail,unchecked", ["pass", "unchecked"], 1),
    # "unchecked" adds to a level; alone, to the default: a failed claim still fails the run (it exited 0).
    ("unchecked", ["fail"], 1),
    ("unchecked", ["pass", "unchecked"], 1),
    ("unchecked", ["pass", "warn"], 0),
    ("never,unchecked", ["fail", "invalid"], 0),
    ("never,unchecked", ["unchecked"], 1),
])
def test_exit_status(fail_on, statuses, code):
    assert exit_status(statuses, fail_on) == code


def test_unknown_fail_level_is_refused():
    with pytest.raises(ValueError, match="sometimes"):
        fail_levels("fail,sometimes")


@pytest.mark.parametrize("fail_on", ["never,warn", "warn,never", "fail,warn", "error,warning"])
def test_two_fail_levels_are_refused(fail_on):
    # "never,warn" exited 1 on a warning and "fail,warn" gated on warn: which one was meant cannot be guessed.
    with pytest.raises(ValueError, match="more than one level"):
        fail_levels(fail_on)


def test_statuses_are_reported_in_one_order():
    assert STATUSES == ("pass", "warn", "fail", "invalid", "unchecked")


def test_fail_on_takes_the_severities_a_report_prints():
    """A CI user reads "warning C003" and writes --fail-on warning: it was refused with exit 2 (field test, session
    23). The severities name the statuses they give: warning a warn, error a fail."""
    from audit.findings import fail_levels

    assert fail_levels("warning") == fail_levels("warn") == frozenset({"warn", "fail", "invalid"})
    assert fail_levels("error") == fail_levels("fail") == frozenset({"fail", "invalid"})
    assert fail_levels("warning,unchecked") == frozenset({"warn", "fail", "invalid", "unchecked"})
