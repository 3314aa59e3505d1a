"""A table on the console: drawn by rich on a terminal, aligned plain text elsewhere.

rich draws the table when it is installed (`pip install gradekit[cli]`) and the stream is a
terminal, or colour is forced (`FORCE_COLOR`, for CI logs that render it). A pipe or a file
gets aligned plain text, one row a line, which `grep`, `awk` and `cut` read as they are; so
does a terminal without rich, and a table of more than `LONG_TABLE` rows: rich lays out a
table cell by cell (about 0.14 s with its import for the 225 rows of `gradekit kinds` with
200 plugins installed, half the command's time), and a listing that long scrolls past the
screen anyway. Cells are text as given: a name such as `[red]` or `:smile:` is shown as
written, never read as rich's markup or emoji codes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TextIO

from gradekit.report import terminal
from gradekit.report.text import escaped

__all__ = ["LONG_TABLE", "print_table"]

LONG_TABLE = 50
"""Tables of more rows than this are aligned plain text even on a terminal (see above)."""

# A count, a score, a percentage, a duration, or "-" (nothing to count): aligned right.
_NUMBER = re.compile(r"-|\d[\d.,]*(%| s| ms)?")


def print_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], stream: TextIO
) -> None:
    """`rows` under `headers`, titled, on `stream` (see the module's rules). Numbers align
    right; control characters show as escapes (`escaped`)."""
    title, headers = escaped(title), [escaped(header) for header in headers]
    rows = [[escaped(cell) for cell in row] for row in rows]
    numeric = [all(_NUMBER.fullmatch(row[i]) for row in rows) for i in range(len(headers))]
    if len(rows) <= LONG_TABLE and terminal.draws_tables(stream) and terminal.rich_installed():
        from rich.table import Table
        from rich.text import Text

        table = Table(title=Text(title, style="table.title"), title_justify="left")
        for header, right in zip(headers, numeric, strict=True):
            table.add_column(Text(header), justify="right" if right else "left")
        for row in rows:
            table.add_row(*map(Text, row))
        terminal.rich_console(stream).print(table)
        return
    widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.rjust(w) if right else cell.ljust(w)
            for cell, w, right in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    stream.write(f"{title}\n{line(headers)}\n{line(['-' * w for w in widths])}\n")
    stream.writelines(line(row) + "\n" for row in rows)
