"""The core every layer shares: the types (`ToolCall`, `Sample`, `GradeResult`, the `Grader`
protocol and its abilities, frozen sample data, the marks of built-in kinds), the one error
hierarchy rooted in `GradekitError`, the rules for values (fractions, timeouts, UTF-8 text,
strict JSON), the load and run contexts, running a coroutine from sync code, and scratch files
named for their owner.

May import: nothing of gradekit outside `core` but `gradekit.code` (the `code` kind's
contract, part of the core layer).
"""
