"""Numbers that leave the tool are rounded to 12 significant digits, so reports are the same on every machine."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from audit.api import check, to_json
from audit.report import table
from audit.rounding import SIGNIFICANT_DIGITS, round_array, round_value


def test_twelve_significant_digits():
    assert SIGNIFICANT_DIGITS == 12
    # PaLM's MFU as two numpy builds computed it (issue 8): both print as 0.307255255715.
    assert round_value(0.3072552557150452) == 0.307255255715
    assert round_value(0.30725525571504525) == 0.307255255715
    assert round_value(3.14e23) == 3.14e23
    assert round_value(1 / 3) == 0.333333333333
    assert round_value(2.0 / 3.0 * 1e25) == 6.66666666667e24
    assert round_value(None) is None and round_value("text") == "text" and round_value(7) == 7


def test_array_rounding_agrees_with_decimal_rounding():
    values = np.array([0.3072552557150452, 0.30725525571504525, 1 / 3, 2 / 3 * 1e25, 989.4e12, 1.4e12 / 7e10,
                       -5.5e-3 / 3, 123456789012345.0, np.nan, np.inf, 0.0])
    got = round_array(values)
    want = [0.307255255715, 0.307255255715, 0.333333333333, 6.66666666667e24, 9.894e14, 20.0,
            -0.00183333333333, 123456789012000.0]
    assert got[:8].tolist() == want
    assert np.isnan(got[8]) and got[9] == np.inf and got[10] == 0.0


TIES: list[int] = []


def _perturbed(values: np.ndarray) -> np.ndarray:
    """Every finite value one unit in the last place higher: what another numpy build or CPU may compute.

    A value within one unit of a rounding tie at the 12th digit (an exact binary fraction such as
    1,200 × 1.5 / 1,024) can round either way, whatever the rounding; such values come from exact arithmetic,
    which is the same on every machine, so they are left as they are (and counted).
    """
    out = values.copy()
    finite = np.isfinite(out)
    up = np.nextafter(out[finite], np.inf)
    stable = round_array(up) == round_array(out[finite])
    TIES.append(int((~stable).sum()))
    out[np.flatnonzero(finite)[stable]] = up[stable]
    return out


@pytest.fixture(scope="module")
def corpus():
    return check()


def test_a_last_bit_difference_never_reaches_the_output(corpus):
    q = corpus.q.apply(lambda c: _perturbed(c.to_numpy(dtype=float)))
    findings = corpus.findings.copy()
    for col in ("claimed", "expected", "ratio"):
        findings[col] = _perturbed(findings[col].to_numpy(dtype=float))
    other = dataclasses.replace(corpus, q=q, findings=findings)
    changed = (other.q.to_numpy() != corpus.q.to_numpy())[np.isfinite(corpus.q.to_numpy())]
    assert changed.mean() > 0.99 and sum(TIES) < 5
    assert json.dumps(to_json(other)) == json.dumps(to_json(corpus))
    assert table.claims_bytes(other, "csv") == table.claims_bytes(corpus, "csv")


def test_json_numbers_have_at_most_twelve_significant_digits(corpus):
    def numbers(x):
        if isinstance(x, float):
            yield x
        elif isinstance(x, dict):
            for v in x.values():
                yield from numbers(v)
        elif isinstance(x, list):
            for v in x:
                yield from numbers(v)

    doc = to_json(corpus)
    found = [v for c in doc["claims"] for k, v in c.items() if k in ("quantities", "findings") for v in numbers(v)]
    assert len(found) > 500
    assert all(float(f"{v:.12g}") == v for v in found)
