"""Running agent-written commands for the `program`, `build` and `lint` kinds.

`process` runs one command (no shell, its own process group, resource limits, optionally no
network, in bubblewrap where the sandbox mode says so) and reads its output capped; `scratch`
is the command's scratch root (a copy of the workspace, a fresh home and temp folder, the
scrubbed environment); `options` holds the sandbox options every process-running kind shares.

May import: the core modules only.
"""
