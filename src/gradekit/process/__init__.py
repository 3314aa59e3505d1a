"""Running code elsewhere: agent-written commands and process-isolated graders.

- `bubblewrap`: the sandbox's layout (a fresh root, the system read-only, secrets hidden, the
  kernel's interfaces read-only, new namespaces) and which mode applies (`auto`, `bwrap`,
  `none`; bubblewrap probed once per process); `seccomp`: the system calls it refuses;
- `commands`: one command (no shell, its own process group, limits, optionally no network,
  in bubblewrap where the mode says so), its streams read capped, and the registry of the
  children gradekit runs right now; `limits`: the limits prefix and gradekit's launcher
  (`launcher.c`);
- `scratch`: a command's scratch root (a fresh home and temp folder, the scrubbed
  environment, the bounded, sparse-aware copy of the workspace it runs in), removed off the
  grade's path or kept as a spare;
- `workers` (the parent's side) and `worker_child` (the child's): warm workers, forked from a
  fork server or a Python in bubblewrap, killed and replaced at a timeout or a crash; what a
  worker does with a request is a function its caller hands in (process isolation's lives in
  `gradekit.run.isolation`); `_forkserver`, the fork server's preload that makes its children
  ignore Ctrl-C (a module of its own: importing it is what sets the handler).

May import: `core` only. Imported by the graders, by the registry and the suite (a
`sandbox:` mode checked at load), by the runner and the command line; it never imports them."""
