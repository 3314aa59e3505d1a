"""`gradekit check-pack DIST`: the contract over every kind an installed distribution registers.

Prints one line per kind, then each violation with its falsifying example. Exit codes: 0 every
kind keeps the contract, 1 some violation (or the distribution registers no kind), 2 the
distribution is not installed or the kit's dependencies are missing.

Each kind is checked in a child process of its own (forked, where the system forks): a kind
that ends its process (`os._exit`, a crash, a signal) is a violation of that kind
(`ends_the_process`) and the kinds after it are still checked. Inside the child, `os._exit` is
refused as in a run: the rule that made the kind call it reports it with its example.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Final, TextIO

if TYPE_CHECKING:
    from gradekit.testing._contract import Outcome
    from gradekit.testing._packs import PackKind
    from gradekit.testing._subject import Violation

__all__ = ["main"]

EXIT_CLEAN: Final = 0
EXIT_VIOLATED: Final = 1
EXIT_INVALID: Final = 2

ENDS_THE_PROCESS: Final = "ends_the_process"
"""The rule broken by a kind whose check ended the process checking it."""


def _check_kind(pack_kind: PackKind) -> tuple[list[Violation], int, int]:
    """(violations, rules checked, rules skipped) for one kind over all its examples."""
    from gradekit.registry.registry import Registry
    from gradekit.testing._contract import contract_settings, run_rule

    settings = contract_settings()
    outcomes: list[Outcome] = []
    failed_configs: set[int] = set()
    for check in pack_kind.checks(Registry()):
        if check.config_index in failed_configs:
            continue  # no grader from this config: every other rule would say the same
        outcome = run_rule(check.rule, check.subject, settings)
        outcomes.append(outcome)
        if check.rule.name == "creates" and outcome.violations:
            assert check.config_index is not None
            failed_configs.add(check.config_index)
    violations = [violation for outcome in outcomes for violation in outcome.violations]
    examples = pack_kind.examples_violation()
    if examples is not None:
        violations.append(examples)
    skipped = sum(1 for outcome in outcomes if outcome.skipped is not None)
    return violations, len(outcomes), skipped


def _check_apart(pack_kind: PackKind, out: TextIO) -> tuple[list[str], int, int]:
    """`_check_kind` in a forked child: (each violation's text, rules checked, rules skipped);
    a child that ends before it says is the violation `ends_the_process`."""
    if not hasattr(os, "fork"):
        violations, checked, skipped = _check_kind(pack_kind)
        return [str(violation) for violation in violations], checked, skipped
    from gradekit._exits import owning_exits, real_exit

    for stream in (out, sys.stdout, sys.stderr):  # else the child would print them again
        stream.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: check, say what was found, and end here whatever happens
        code = 1
        try:
            os.close(read)
            with owning_exits():
                violations, checked, skipped = _check_kind(pack_kind)
            said = json.dumps([[str(v) for v in violations], checked, skipped]).encode()
            with os.fdopen(write, "wb") as pipe:
                pipe.write(said)
            code = 0
        finally:
            for stream in (out, sys.stdout, sys.stderr):
                with contextlib.suppress(BaseException):  # the child ends next, whatever they do
                    stream.flush()
            real_exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read()
    _, status = os.waitpid(pid, 0)
    if said and os.waitstatus_to_exitcode(status) == 0:
        texts, checked, skipped = json.loads(said)
        return texts, checked, skipped
    from gradekit.testing._subject import Violation

    how = _ended(status)
    message = (
        f"the kind's check ended its process ({how}) before every rule was checked: a grader "
        "and its factory must return or raise, never end the process (os._exit, a crash, a "
        "signal to itself)"
    )
    return [str(Violation(pack_kind.kind, ENDS_THE_PROCESS, message, pack_kind.kind))], 0, 0


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            return f"killed by signal {number}"
        return f"killed by signal {number}, {name}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def main(dist: str, out: TextIO) -> int:
    """Check every kind of the installed distribution `dist`, printing to `out`; the exit
    code (0 clean, 1 violations, 2 not installed)."""
    try:
        import hypothesis  # noqa: F401 - only to say clearly that the extra is missing
    except ImportError:
        print(
            "gradekit: check-pack needs the testing extra: pip install 'gradekit[testing]'",
            file=sys.stderr,
        )
        return EXIT_INVALID
    from gradekit.registry.plugins import metadata
    from gradekit.testing._packs import find_pack

    try:
        pack = find_pack(dist)
    except metadata().PackageNotFoundError:
        print(
            f"gradekit: distribution {dist!r} is not installed; install it first "
            f"(pip install {dist}) or check its name (pip list)",
            file=sys.stderr,
        )
        return EXIT_INVALID
    if not pack.kinds:
        print(
            f"{pack.label}: registers no grader kinds; declare them as entry points of group "
            "'gradekit.graders' in its pyproject.toml",
            file=out,
        )
        return EXIT_VIOLATED
    noun = "kind" if len(pack.kinds) == 1 else "kinds"
    print(f"checking {pack.label}: {len(pack.kinds)} {noun}", file=out)
    width = max(len(kind.kind) for kind in pack.kinds)
    found: list[str] = []
    broken = 0
    for pack_kind in pack.kinds:
        violations, checked, skipped = _check_apart(pack_kind, out)
        if violations:
            broken += 1
            count = len(violations)
            status = f"{count} violation{'s' if count != 1 else ''}"
        else:
            status = f"ok ({checked - skipped} checks passed, {skipped} not applicable)"
        print(f"  {pack_kind.kind:<{width}}  {status}", file=out, flush=True)
        found.extend(violations)
    for text in found:
        print(f"\n{text}", file=out)
    if not found:
        print(f"{pack.label}: every kind keeps the contract", file=out)
        return EXIT_CLEAN
    print(
        f"\n{pack.label}: {len(found)} violation{'s' if len(found) != 1 else ''} "
        f"in {broken} of {len(pack.kinds)} {noun}",
        file=out,
    )
    return EXIT_VIOLATED
