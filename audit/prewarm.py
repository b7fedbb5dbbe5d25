"""A small audit run once in the server that forks the worker processes (:data:`audit.batching.WORKER_PRELOAD`),
before it forks them.

A process's first batch costs more than the next ones: the modules imported when first needed, the catalog read,
the patterns compiled and the caches filled on the way (0.3-0.4 s of CPU for a batch of 50,000 claims on the
2-core machine of ``bench/scale.py``: 1.39 s, then 1.13 s and 0.96 s). Done here once, in the server, it is done for
every worker the server forks, and while the main process makes its own imports. Importing this module runs it:
the server can only be told which modules to import.

The claims are the bundled corpus, read as a worker reads a Parquet file's batch (:class:`audit.stream.ArrowBatch`),
audited for a claims table and made into one. Nothing is kept and nothing is written; a failure is ignored (the
workers would then warm up on their first batch, as they did before).
"""

from __future__ import annotations


def warm_up() -> None:
    """Audit the bundled corpus as a worker audits a batch of a Parquet file, for a claims table."""
    import pandas as pd
    import pyarrow as pa

    from audit.config import Config
    from audit.reading import ReadOptions, bundled_corpus_path
    from audit.report import table
    from audit.stream import ArrowBatch, BatchAuditor, _claims_of, table_piece

    frame = pd.read_csv(bundled_corpus_path(), dtype=str, keep_default_na=False)
    batch = ArrowBatch(pa.Table.from_pandas(frame, preserve_index=False), "<warm-up>", 1, ReadOptions().maps)
    result = BatchAuditor(Config.default(), words=False)(_claims_of(batch, None))
    table_piece(table.claims_frame(result), "parquet")


try:
    warm_up()
except Exception:  # an optimization only: a worker that starts cold still audits its batches
    pass
