"""The registry: kind names to grader factories, and how a grader entry becomes a grader.

Owns `Registry` (register, create, kinds; entry points of the `gradekit.graders` group read
lazily), the options converter that structures a kind's config into its attrs options class,
`GraderEntry` / `build_entry`, the common keys every grader entry takes, and the detection of
graders' optional abilities (`abilities`); what the runner decides from them (inline,
blocking) is `gradekit.run.dispatch`'s.

May import: `core`, and `process` to check an entry's `sandbox:` mode at load. Never the
suite, the runner, the reports or the graders: kinds are reached through entry points only."""
