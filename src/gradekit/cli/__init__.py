"""The `gradekit` command line: a thin layer over the Python API (`load_suite`, `run_suite`,
the writers of `gradekit.report`) that parses the arguments, calls it and prints.

`main` (the console script `gradekit`, and `python -m gradekit`) lives in `cli.parser`, with
the parser and the small commands (validate, compare, kinds, schema, check-pack, new-pack,
traces); `cli.run` is `gradekit run`, and `cli.supervise` its supervising process when the
suite's graders may hold the GIL; `cli.options` the argument types and the case selection
every command shares; `cli.gates` the gates, the baseline and GitHub's annotations.

May import: every package of the layout (`testing`, `run`, `history`, `suite`, `registry`,
`report`, `graders`, `process`) and `core`; only `gradekit.__main__` and the console script
import it."""

from __future__ import annotations

from gradekit.cli.parser import main

__all__ = ["main"]
