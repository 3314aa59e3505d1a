"""Running: grading a suite's cases (or one sample) into reports, concurrently and safely.

Owns `run_suite` and `grade`, the event-loop side of a run (`loop`), the one assembly of a
graded turn and case that every lane calls, and grading one case on the loop (`grade`), many
inline cases in one thread (`batch`), cases whose graders run commands (`blocking`), dispatch
of one entry with its timeout and isolation and the decisions of which entries are inline or
blocking (`dispatch`, `isolation`, `pool`), the checks on what a grader returned
(`results`), the verdict rules (`verdict`), the composite kinds that apply those rules inside
one grader (`composite`), the results log a run resumes from (`resume`), the caller's side
of a run (`collect`), the signals that stop it (`interrupts`), and what a supervised run
writes for its supervisor (`rescue`).

May import: `suite` (the model it grades, and which cases to grade), `registry`, `history`
(baseline marks), `report` (the model it produces, the results log, the report files),
`process` (workers, the sandbox mode) and `core`. Never the command line."""
