"""The error for an input file that cannot be used at all (its own module, so every reader can raise it)."""

from __future__ import annotations

__all__ = ["LoadError", "NothingToRead"]


class LoadError(Exception):
    """A whole input file cannot be used. ``str()`` names the file and what is wrong."""

    def __init__(self, file: str, message: str) -> None:
        super().__init__(f"{file}: {message}")
        self.file = file
        self.message = message

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        # Pickled as its two arguments (a worker process sends it to the main one, audit.stream), not as str().
        return (type(self), (self.file, self.message))


class NothingToRead(LoadError):
    """A file in which no column (or key) is understood, or none gives a figure to check. A sheet of a workbook
    read with ``--sheet all`` that says so is passed over with a note (a sheet of remarks, a lookup table)."""
