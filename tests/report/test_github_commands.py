"""GitHub workflow commands read back as they were written: the message and the properties
escaped as GitHub's toolkit does, so no text can end a value, a command or a line."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from gradekit.report.github import command


def _read(line: str) -> tuple[str, dict[str, str], str]:
    """How GitHub's runner splits and unescapes a command line."""
    match = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line, re.S)
    assert match is not None, line
    unescape = lambda text: re.sub(  # noqa: E731
        "%(25|0D|0A|3A|2C)", lambda m: bytes.fromhex(m[1]).decode(), text
    )
    properties = {}
    for part in match[2].split(","):
        key, _, value = part.partition("=")
        properties[key] = unescape(value)
    return match[1], properties, unescape(match[3])


@given(st.text(), st.text(), st.text(), st.integers(min_value=1))
def test_every_text_reads_back(message: str, file: str, title: str, line: int) -> None:
    written = command("error", message, file=file, line=line, title=title)
    assert "\n" not in written and "\r" not in written
    assert _read(written) == ("error", {"file": file, "line": str(line), "title": title}, message)


def test_the_escapes_of_githubs_toolkit() -> None:
    assert command("error", "50%\r\nof: it, all", title="a:b,c%") == (
        "::error title=a%3Ab%2Cc%25::50%25%0D%0Aof: it, all"
    )
    assert command("notice", "done", file=None) == "::notice::done"
