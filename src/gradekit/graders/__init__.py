"""The built-in grader kinds, one module each, loaded through gradekit's own entry points.

Text kinds (`equality`, `numeric`, `contains`, `not_contains`, `regex`, `json`), the `code`
kind (`user_code`: the user's own Python function), and the agent kinds (`behavior`, `file`,
`program`, `build`, `lint`; the last three run commands through `gradekit.process`). The
composite kinds live in `gradekit.run.composite`: they are the runner's verdict rules applied
inside one grader.

May import: the core modules (`gradekit.core.types`, `_errors`, `_frozen`, `_hints`,
`_json_check`, `_load_context`, `gradekit.code`), `gradekit.process` (running commands) and
each other's private helpers. Never
`suite`, `run`, `report` or `cli`.
"""
