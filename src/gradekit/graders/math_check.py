"""The `math` kind's check, where math-verify is imported: the answer found in an output
compared with the expected answer (`check`), and the warm worker's work function (`work`).

math-verify (Hugging Face's, Apache-2.0) parses LaTeX and plain answers into sympy and compares
them: numbers within a rounding, fractions, sets, intervals, tuples, equations and expressions.
Its own time limit is `signal.alarm`, which works only in a process's main thread; gradekit
grades in worker threads, so the check runs without it and `gradekit.graders.math` runs it in
a warm worker killed at the kind's `timeout`.

math-verify is imported at the top, and one check is made at import (the warm-up): a worker
imports this module before it says it is ready, so neither the import (seconds, with sympy)
nor a first check's compiling counts in a grade's timeout. Imports the
numeric kind's number grammar (`extract: last_number` reads a number as `numeric` does).
"""

from __future__ import annotations

import logging
from typing import Any, Final, Literal, NamedTuple

from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

from gradekit.core.types import error_text
from gradekit.graders.numeric import number_patterns

__all__ = ["Checked", "Extract", "check", "last_boxed", "work"]

Extract = Literal["auto", "boxed", "last_number", "whole"]

# A `\boxed{}` answer first, then math-verify's anchors ("final answer is", "answer:"), then
# the last LaTeX or plain expression in the text. One config for every parse: math-verify
# caches the regular expressions of one config only.
_CONFIG: Final = (LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig())
_DELIMITERS: Final = ("$", "\\[", "\\(", "\\boxed", "\\fbox")
_BOXES: Final = ("\\boxed", "\\fbox")


class _NoTimeoutWarning(logging.Filter):
    """math-verify warns once that its signal timeout is off: gradekit's worker is the limit."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Timeout is disabled")


for _logger in ("math_verify.parser", "math_verify.grader"):
    logging.getLogger(_logger).addFilter(_NoTimeoutWarning())


class Checked(NamedTuple):
    """What a check found. `outcome`: `equal`, `different`, `no_answer` (nothing to read in the
    output), `bad_expected` (the expected value does not parse) or `error` (math-verify
    raised); `answer` and `expected` as math-verify read them (None when not read); `reason`
    says why for the last three."""

    outcome: Literal["equal", "different", "no_answer", "bad_expected", "error"]
    answer: str | None = None
    expected: str | None = None
    reason: str = ""


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}` (or `\\fbox{...}`) in `text`, braces balanced;
    None when there is none, or it is never closed."""
    start = max(text.rfind(box) for box in _BOXES)
    if start < 0:
        return None
    opening = text.find("{", start)
    if opening < 0 or text[start:opening].strip() not in _BOXES:
        return None
    depth = 0
    for index in range(opening, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[opening + 1 : index]
    return None


def _as_latex(text: str) -> str:
    """`text` as math-verify reads a LaTeX answer: between `$` unless it has its delimiters."""
    stripped = text.strip()
    if any(delimiter in stripped for delimiter in _DELIMITERS):
        return stripped
    return f"${stripped}$"


def _parsed(text: str) -> list[Any]:
    return list(parse(text, extraction_config=_CONFIG, parsing_timeout=None))


def _shown(parsed: list[Any]) -> str:
    """The text math-verify extracted (its last item), else the parsed value written out."""
    return parsed[-1] if isinstance(parsed[-1], str) else str(parsed[0])


def _answer(output: str, extract: Extract) -> list[Any] | str:
    """The parsed answer of `output`, or why there is none."""
    if extract == "auto":
        found = _parsed(output)
        return found or "no mathematical answer found in the output"
    if extract == "boxed":
        boxed = last_boxed(output)
        if boxed is None:
            return "no \\boxed{} answer in the output"
        found = _parsed(f"${boxed}$")
        return found or f"the \\boxed{{}} answer {boxed!r} is not a mathematical expression"
    if extract == "last_number":
        numbers = list(number_patterns(True, False)[1].finditer(output))
        if not numbers:
            return "no number in the output"
        number, separator = numbers[-1]["number"], numbers[-1]["sep"]
        if separator:
            number = number.replace(separator, "")
        return _parsed(f"${number.replace(chr(0x2212), '-')}$")
    found = _parsed(_as_latex(output))
    return found or "the output is not a mathematical expression"


def check(output: str, expected: str, extract: Extract, float_rounding: int) -> Checked:
    """Whether the answer `extract` finds in `output` equals `expected` (math-verify's
    `verify`, gold first: it is not symmetric). Never raises."""
    try:
        gold = _parsed(_as_latex(expected))
        if not gold:
            return Checked("bad_expected", reason="math-verify reads no expression in it")
        answer = _answer(output, extract)
        if isinstance(answer, str):
            return Checked("no_answer", expected=_shown(gold), reason=answer)
        same = verify(gold, answer, float_rounding=float_rounding, timeout_seconds=None)
        return Checked("equal" if same else "different", _shown(answer), _shown(gold))
    except MemoryError:
        raise
    except Exception as error:  # math-verify catches its own; sympy's str() may still raise
        return Checked("error", reason=error_text(error))


def work(options: tuple[Extract, int], item: tuple[str, str]) -> tuple[Checked, bool]:
    """The warm worker's work: `check` of (output, expected) with (extract, float_rounding);
    a worker that ran out of memory is not used again."""
    try:
        return check(item[0], item[1], *options), True
    except MemoryError:
        return Checked("error", reason="MemoryError: the check ran out of memory"), False


# Warm up at import, before a worker says it is ready: math-verify compiles its regular
# expressions and sympy fills its caches on the first check (a second or more), which would
# otherwise count in the first grade's timeout of every fresh worker.
check("\\boxed{\\frac{1}{2}}", "0.5", "auto", 6)
