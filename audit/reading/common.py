"""Helpers shared by several readers: decoding text files, row origins, and naming columns as pandas does."""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any, Sequence

from audit.reading.errors import LoadError

#: C0 control characters other than tab, line feed, form feed and carriage return: text files hold none, random
#: bytes about one in nine.
_CONTROL_CHARS = {c: None for c in range(32) if chr(c) not in "\t\n\x0c\r"}


def read_text(path: Path, data: bytes | None, file: str) -> str:
    """The file's text: UTF-8 (a byte-order mark is dropped), UTF-16/32 with a byte-order mark, else cp1252."""
    raw = data if data is not None else path.read_bytes()
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if raw.startswith(bom):  # "Unicode text" exports from spreadsheets
            try:
                raw = raw.decode(codec).encode("utf-8")
            except UnicodeDecodeError:
                raise LoadError(file, f"not valid {codec.upper()} text (the file starts with its byte-order "
                                      f"mark)") from None
            break
    nul = raw.find(b"\x00")
    if nul >= 0:
        where = "" if nul < 4096 else f" (a NUL byte at offset {nul:,})"
        raise LoadError(file, f"binary data, not text{where}: is this the right file?")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Spreadsheets exported on Windows are often cp1252/Latin-1; every byte decodes, and the bytes that
        # differ from UTF-8 are accented letters in names, not digits.
        text = raw.decode("cp1252", errors="replace")
    head = text[:65536]
    controls = len(head) - len(head.translate(_CONTROL_CHARS))
    if controls > 8 and controls > len(head) // 200:
        raise LoadError(file, "binary data, not text (control characters throughout): is this the right file?")
    return text


def printable(text: str) -> str:
    """Text that can be written out as UTF-8: a lone surrogate (from a JSON escape such as ``"\\ud800"``, or a
    file name that is not valid UTF-8) is shown as its escape, ``\\ud800``; all else is kept."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="backslashreplace").decode("utf-8")
    return text


def printable_value(value: Any) -> Any:
    """A cell with every string in it made :func:`printable` (lists and objects from JSON included)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(str(k)) if isinstance(k, str) else k: printable_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(printable_value(v) for v in value)
    return value


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (a library's multi-line message would break the one-line error)."""
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def header_words(columns: Sequence[Any]) -> str:
    """The first few column names, for a message about a file with a header but no rows."""
    names = [str(c) for c in columns][:5]
    more = len(columns) - len(names)
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


def mangle(names: list[str]) -> list[str]:
    """Column names as pandas makes them: an empty name is ``Unnamed: i``, a repeat gets ``.1``, ``.2``."""
    out: list[str] = []
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        name = name or f"Unnamed: {i}"
        base = name
        while name in seen:
            seen[base] += 1
            name = f"{base}.{seen[base]}"
        seen.setdefault(name, 0)
        out.append(name)
    return out


