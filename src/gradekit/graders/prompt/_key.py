"""The API key: read from its environment variable, checked, and kept out of every text.

A key is sent in an HTTP header, which carries printable ASCII (and spaces) only. A key
read from a file often ends with a newline (`export KEY=$(cat key.txt)` keeps none, a CRLF
`.env` keeps a `\\r`): surrounding whitespace is removed; any other character outside
printable ASCII makes the key unusable, and is reported without showing the key.
"""

from __future__ import annotations

import json
import os
from typing import Final, TypeGuard

__all__ = ["REDACTED", "UnusableKey", "api_key", "redact", "redact_values"]

REDACTED: Final = "[redacted]"

SHORTEST_HIDDEN: Final = 8
"""Keys shorter than this are placeholders (`none`, `ollama`, `9`) that a local server
ignores, not secrets: hiding them would rewrite every `none` in a reply."""


class UnusableKey(ValueError):
    """The key in the variable holds a character an HTTP header cannot carry."""


def api_key(variable: str) -> str | None:
    """The key in `$variable` without surrounding whitespace; None when unset or blank.

    Raises UnusableKey, naming the variable and the character (never the key), when the key
    holds a character an HTTP header cannot carry.
    """
    key = os.environ.get(variable, "").strip()
    if not key:
        return None
    for position, character in enumerate(key, 1):
        if not (" " <= character <= "~" or character == "\t"):  # what a header value takes
            raise UnusableKey(
                f"the API key in ${variable} holds {_described(character)} at character "
                f"{position}, which an HTTP header cannot carry; set ${variable} to the key alone"
            )
    return key


def _described(character: str) -> str:
    if character.isascii():
        return f"a control character (U+{ord(character):04X})"
    return f"a non-ASCII character (U+{ord(character):04X})"


def _hidden(secret: str | None) -> TypeGuard[str]:
    """Whether texts must not show `secret`: a key, not a placeholder (SHORTEST_HIDDEN)."""
    return secret is not None and len(secret) >= SHORTEST_HIDDEN


def redact(text: str, secret: str | None) -> str:
    """`text` with every form of `secret` (as is, and escaped as Python or JSON shows it)
    replaced by `[redacted]`. Placeholder keys (shorter than SHORTEST_HIDDEN) are left."""
    if not _hidden(secret):
        return text
    for form in {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]}:
        text = text.replace(form, REDACTED)
    return text


def redact_values(data: object, secret: str | None) -> object:
    """Decoded JSON `data` with `redact` applied to each of its strings (keys included)."""
    if not _hidden(secret):
        return data
    if isinstance(data, str):
        return redact(data, secret)
    if isinstance(data, list):
        return [redact_values(item, secret) for item in data]
    if isinstance(data, dict):
        return {redact(str(k), secret): redact_values(v, secret) for k, v in data.items()}
    return data
