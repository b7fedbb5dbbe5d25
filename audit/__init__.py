"""train-audit: check the arithmetic of ML training reports.

The library API is in :mod:`audit.api`; the command line (``train-audit``) is a thin layer in :mod:`audit.cli`.
"""

__version__ = "0.1.0"
