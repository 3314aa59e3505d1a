"""The `attempt` index of dataset lines: each case name's attempts numbered 0, 1, 2 ... in file
order, checked as the lines stream by (see `gradekit.suite.attempts` for what attempts are)."""

from __future__ import annotations

from typing import Any

import attrs

from gradekit.suite.parse import describe

__all__ = ["DatasetAttempts"]


@attrs.define
class DatasetAttempts:
    """The `attempt` indexes of one pass over a dataset: each case name's attempts must be
    numbered 0, 1, 2 ... in file order, and a name with attempts has one on every line."""

    _last: dict[str, tuple[int, str]] = attrs.field(factory=dict)

    def take(self, raw: dict[str, Any], name: str, where: str) -> tuple[int | None, str | None]:
        """Remove `attempt` from the line `raw` (at `where`, `file:line`) and return (its
        index, None), or (None, the message of what is wrong with it)."""
        if "attempt" not in raw:
            if name in self._last:
                return None, (
                    f"case '{name}' has attempts (the last at {self._last[name][1]}), so this "
                    "line must give its 'attempt' index too"
                )
            return None, None
        index = raw.pop("attempt")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            return None, f"attempt: expected a whole number from 0, got {describe(index)}"
        last, at = self._last.get(name, (-1, ""))
        if index <= last:
            said = "also at" if index == last else f"after attempt {last} at"
            return None, (
                f"attempt: attempt {index} of case '{name}' is given twice or out of order "
                f"({said} {at}); number each case's attempts 0, 1, 2 ... in file order"
            )
        if index != last + 1:
            missing = f"attempt {last + 1}" if index == last + 2 else f"attempts {last + 1}-"
            missing += "" if index == last + 2 else str(index - 1)
            before = f"attempt {last} is at {at}" if last >= 0 else "it is the first"
            return None, (
                f"attempt: attempt {index} of case '{name}' leaves a gap: {missing} missing "
                f"({before}); number each case's attempts 0, 1, 2 ... in file order"
            )
        self._last[name] = (index, where)
        return index, None
