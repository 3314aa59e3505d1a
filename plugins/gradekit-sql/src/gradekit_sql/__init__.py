"""gradekit-sql: grader kinds for text-to-SQL answers.

- `sql.execution` (gradekit_sql.execution:Execution): runs the agent's SQL and the reference
  SQL on a SQLite database, read-only, and compares their result sets.
- `sql.valid` (gradekit_sql.valid:Valid): the SQL parses (sqlglot), only reads and, when
  listed, reads only the allowed tables and columns; SQL in prose is read from its fenced block.

gradekit finds both through the `gradekit.graders` entry points of this distribution; nothing
here is imported until a suite uses one of the kinds.
"""

from __future__ import annotations

__all__: list[str] = []
