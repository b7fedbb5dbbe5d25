"""The warm-up the worker processes' server runs before it forks them (audit/prewarm.py)."""

from audit.batching import WORKER_PRELOAD
from audit.prewarm import warm_up


def test_the_warm_up_audits_the_corpus_as_a_worker_would_without_error():
    """Its import swallows any error (an optimization must not stop a run), so it is called here directly: a change
    to the worker's path (ArrowBatch, BatchAuditor, the claims table) that broke it would otherwise go unseen, and
    every worker would quietly start cold again."""
    warm_up()


def test_the_server_imports_the_warm_up_after_the_modules_it_warms():
    assert WORKER_PRELOAD[-1] == "audit.prewarm"
    assert {"audit.stream", "audit.report.table"} <= set(WORKER_PRELOAD)
