"""The built-in grader kinds, one module each, loaded through gradekit's own entry points.

Text kinds (`equality`, `numeric`, `contains`, `not_contains`, `regex`, `json`), the `math`
kind (math-verify, each check in a warm worker of `gradekit.process`), the `code` kind
(`user_code`: the user's own Python function), and the agent kinds (`behavior`, `file`,
`program`, `build`, `lint`; the last three run commands through `gradekit.process`). The
composite kinds live in `gradekit.run.composite`: they are the runner's verdict rules applied
inside one grader.

May import: `core` and `process` (running commands), and each other's private helpers;
the judge's package (`graders/prompt/`) likewise. Never the suite, the runner, the reports
or the command line."""
