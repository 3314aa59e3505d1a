"""`gradekit run`'s output paths checked against its inputs and against each other, before
anything is graded: a report written over the suite, its dataset, the `--resume` log or
another report would lose that file."""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = ["path_clash"]


def _file(path: str) -> str:
    """The file `path` names, whatever the spelling (`./a/../b`, a symlink)."""
    return os.path.realpath(path)


def path_clash(
    outputs: Sequence[tuple[str, str]], inputs: Sequence[tuple[str, str | None]]
) -> str | None:
    """What is wrong when an output (flag, path) names an input (what it is, path) or the
    same file as an earlier output; None when every output has a file of its own."""
    read = {_file(path): what for what, path in inputs if path}
    written: dict[str, tuple[str, str]] = {}
    for flag, path in outputs:
        file = _file(path)
        if file in read:
            return (
                f"{flag} {path} is {read[file]}; the report would overwrite it, give it "
                "another path"
            )
        if file in written:
            first_flag, first_path = written[file]
            return f"{first_flag} {first_path} and {flag} {path} are one file; give each its own"
        written[file] = (flag, path)
    return None
