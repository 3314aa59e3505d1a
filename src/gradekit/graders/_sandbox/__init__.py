"""Running agent-written commands for the `program`, `build` and `lint` kinds.

`process` runs one command (no shell, its own process group, a scratch copy of the workspace,
a scrubbed environment, resource limits, optionally no network) and reads its output capped;
`options` holds the sandbox options every process-running kind shares.

May import: the core modules only.
"""
