"""UTF-8 for every text gradekit writes, lone surrogates included.

A lone surrogate (half of an emoji cut in two: the JSON escape `\\ud800` alone) is valid in a
Python string read from JSON, and has no UTF-8 form: the strict encoder refuses it. Every
file gradekit writes takes U+FFFD in its place (`REPLACE_SURROGATES`), as the JUnit report
does for every character XML cannot hold. Other texts are encoded as usual, at no extra cost:
the handler runs only where the strict encoder would refuse.
"""

from __future__ import annotations

import codecs
from typing import Final

__all__ = ["REPLACE_SURROGATES", "utf8", "written"]

REPLACE_SURROGATES: Final = "gradekit.replace_surrogates"
"""The `errors` handler of every UTF-8 write: U+FFFD for each character UTF-8 cannot hold
(only lone surrogates are such). For `str.encode` and `open(..., errors=...)`."""


_FFFD: Final = "\ufffd".encode()


def _replacement(error: UnicodeError) -> tuple[bytes, int]:
    # Bytes: the UTF-8 encoder takes only ASCII text from a handler.
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return _FFFD * (error.end - error.start), error.end


codecs.register_error(REPLACE_SURROGATES, _replacement)


def utf8(text: str) -> bytes:
    """`text` in UTF-8, with U+FFFD for each lone surrogate."""
    return text.encode("utf-8", REPLACE_SURROGATES)


def written(text: str) -> str:
    """`text` as every file holds it: U+FFFD for each lone surrogate. For names, which runs
    match against the files of earlier runs (`--resume`, baselines)."""
    if text.isascii():  # the usual name: nothing to replace
        return text
    return utf8(text).decode()
