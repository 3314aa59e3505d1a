"""The sandbox for agent-written code: bubblewrap (`bwrap`), and which mode applies.

`mode` decides between `auto`, `bwrap` and `none` (bubblewrap probed once per process, a
warning once when `auto` must run without it); `bwrap` builds the bubblewrap command line: a
fresh root with the system read-only, secrets hidden, the kernel's interfaces in /proc
read-only, a private /tmp, the workspace writable, new PID (and, without network, network)
namespaces; `seccomp` builds the system-call filter bubblewrap loads. Used by the
command-running kinds (`graders/_sandbox/`) and by process isolation under bubblewrap
(`run/jailed.py`).

May import: the core modules only (it is part of the core layer).
"""
