"""Renderers: one module per output format, all reading the same findings records."""

from __future__ import annotations

FORMATS: tuple[str, ...] = ("text", "json", "html", "markdown", "csv", "parquet")
