"""The argument types the commands share: whole numbers with a least value, fractions, the
paths of files to write.

Each turns one command-line text into a value or an `argparse.ArgumentTypeError` that says
what to give instead, so every option of a kind reads and fails the same way.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from gradekit._numbers import fraction_problem

__all__ = ["fraction", "input_path", "output_path", "whole_number"]


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argument type for whole numbers of at least `minimum`."""
    bound = "must be 0 or more" if minimum == 0 else f"must be at least {minimum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{bound}, got {value}")
        return value

    return parse


def fraction(text: str) -> float:
    """An argument type for a number from 0 to 1 (a rate: 0.9 is 90%)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    problem = fraction_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{problem} (0.9 is 90%)")
    return value


def output_path(text: str) -> str:
    """An argument type for the path of a file to write (a report, the results log): not empty
    (argparse would take `--html ''` as no report at all) and not `-` (which reads as standard
    output but would be a file named `-`: reports are written to files only)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file; give the path of a file")
    if text == "-":
        raise argparse.ArgumentTypeError(
            "'-' is not standard output here: reports are written to files only; give the "
            "path of a file (./- for a file named -)"
        )
    return text


def input_path(text: str) -> str:
    """An argument type for the path of a file to read (`--baseline`, `--rerun-failed`): not
    empty (which would read as the current folder)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file; give the path of a file")
    return text
