"""`gradekit check-pack DIST`: the contract over every kind an installed distribution registers.

Prints one line per kind, then each violation with its falsifying example. Exit codes: 0 every
kind keeps the contract, 1 some violation (or the distribution registers no kind), 2 the
distribution is not installed or the kit's dependencies are missing.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Final, TextIO

if TYPE_CHECKING:
    from gradekit.testing._engine import Outcome
    from gradekit.testing._packs import PackKind
    from gradekit.testing._violation import Violation

__all__ = ["main"]

EXIT_CLEAN: Final = 0
EXIT_VIOLATED: Final = 1
EXIT_INVALID: Final = 2


def _check_kind(pack_kind: PackKind) -> tuple[list[Violation], int, int]:
    """(violations, rules checked, rules skipped) for one kind over all its examples."""
    from gradekit.registry.registry import Registry
    from gradekit.testing._engine import contract_settings, run_rule

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
    found: list[Violation] = []
    broken = 0
    for pack_kind in pack.kinds:
        violations, checked, skipped = _check_kind(pack_kind)
        if violations:
            broken += 1
            count = len(violations)
            status = f"{count} violation{'s' if count != 1 else ''}"
        else:
            status = f"ok ({checked - skipped} checks passed, {skipped} not applicable)"
        print(f"  {pack_kind.kind:<{width}}  {status}", file=out, flush=True)
        found.extend(violations)
    for violation in found:
        print(f"\n{violation}", file=out)
    if not found:
        print(f"{pack.label}: every kind keeps the contract", file=out)
        return EXIT_CLEAN
    print(
        f"\n{pack.label}: {len(found)} violation{'s' if len(found) != 1 else ''} "
        f"in {broken} of {len(pack.kinds)} {noun}",
        file=out,
    )
    return EXIT_VIOLATED
