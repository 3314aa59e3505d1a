"""The kit's two commands over grader packs: `gradekit new-pack NAME` writes one, `gradekit
check-pack DIST` checks an installed one. Public, so the command line (`gradekit.cli`)
imports no private name.

`new_pack`: write a ready grader pack that installs and passes its own tests. The pack is the
distribution `gradekit-NAME` with the package `gradekit_NAME`, one kind `NAME.word_count`
registered through the `gradekit.graders` entry point, its contract test (a GraderContract
subclass), a behaviour test and a README.

`check_pack`: the contract over every kind an installed distribution registers. Prints one
line per kind, then each violation with its falsifying example. Exit codes: 0 every kind keeps
the contract, 1 some violation (or the distribution registers no kind), 2 the distribution is
not installed or the kit's dependencies are missing. Each kind is checked in a child process
of its own (forked, where the system forks): a kind that ends its process (`os._exit`, a
crash, a signal) is a violation of that kind (`ends_the_process`) and the kinds after it are
still checked. Inside the child, `os._exit` is refused as in a run: the rule that made the
kind call it reports it with its example. Nothing of hypothesis, the registry or the contract
is imported until `check_pack` runs, so a missing testing extra is a clear message.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Final, TextIO

if TYPE_CHECKING:
    from gradekit.testing._contract import Outcome
    from gradekit.testing._packs import PackKind
    from gradekit.testing._subject import Violation

__all__ = ["check_pack", "new_pack", "write_pack"]


NAMESPACE: Final = re.compile(r"^[a-z](?:[a-z0-9_]*[a-z0-9])?$")
"""A pack's name: its kinds' namespace, and (`_` as `-`) its distribution's name, which may
not end with `-`."""

_PYPROJECT: Final = Template("""\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "$dist"
version = "0.1.0"
description = "gradekit grader kinds in the $name namespace"
readme = "README.md"
requires-python = ">=3.10"
dependencies = ["gradekit"]

[project.optional-dependencies]
test = ["gradekit[testing]"]

# name = kind (dotted: the pack's namespace first), value = factory
[project.entry-points."gradekit.graders"]
"$name.word_count" = "$package.word_count:WordCount"

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
testpaths = ["tests"]
""")

_INIT: Final = Template('''\
"""Grader kinds for gradekit in the `$name` namespace: $name.word_count."""
''')

_GRADER: Final = Template('''\
"""The `$name.word_count` kind: the output has between `min_words` and `max_words` words."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from gradekit import GradeResult, Sample


@attrs.frozen
class WordCount:
    """Passes when the output has at least `min_words` and at most `max_words` words.

    Words are separated by whitespace; an output that is not text is counted as its text
    (`42` is one word) and a missing output has none. The score is 1.0 on a pass, else 0.0.
    """

    kind: ClassVar[str] = "$name.word_count"
    # Pure, CPU-only and always fast: the runner may call it in batches on its own thread.
    inline: ClassVar[bool] = True
    # The configs `gradekit check-pack` and `pytest --gradekit-pack` check it with.
    examples: ClassVar[tuple[dict[str, Any], ...]] = ({}, {"min_words": 2, "max_words": 50})

    name: str = attrs.field(kw_only=True, default="$name.word_count")
    min_words: int = attrs.field(kw_only=True, default=1)
    max_words: int | None = attrs.field(kw_only=True, default=None)

    def grade(self, sample: Sample) -> GradeResult:
        """Count the words of `sample.output`."""
        text = "" if sample.output is None else str(sample.output)
        count = len(text.split())
        high = self.max_words
        passed = count >= self.min_words and (high is None or count <= high)
        wanted = f"at least {self.min_words}" + ("" if high is None else f", at most {high}")
        message = f"{count} words ({wanted})"
        return GradeResult(
            self.kind, self.name, passed, 1.0 if passed else 0.0, message, {"words": count}
        )
''')

_CONTRACT_TEST: Final = Template('''\
"""The gradekit contract for $name.word_count: every rule, on every example config."""

from gradekit.testing import GraderContract

from $package.word_count import WordCount


class TestWordCount(GraderContract):
    kind = "$name.word_count"
    configs = WordCount.examples
    factory = WordCount
''')

_BEHAVIOUR_TEST: Final = Template('''\
"""What $name.word_count decides, on examples a reader can check."""

import gradekit


def test_passes_within_the_bounds_and_fails_outside() -> None:
    grader = gradekit.create("$name.word_count", config={"min_words": 2, "max_words": 3})
    assert grader.grade(gradekit.Sample(output="two words")).passed
    assert not grader.grade(gradekit.Sample(output="one")).passed
    assert not grader.grade(gradekit.Sample(output="one two three four")).passed


def test_an_unknown_option_is_an_error_naming_it() -> None:
    try:
        gradekit.create("$name.word_count", config={"min_word": 2})
    except gradekit.ConfigError as error:
        assert "min_word" in str(error)
    else:
        raise AssertionError("an unknown option was accepted")
''')

_README: Final = Template("""\
# $dist

Grader kinds for gradekit in the `$name` namespace.

- `$name.word_count`: passes when the output has between `min_words` (default 1) and
  `max_words` (default: no limit) words.

```yaml
graders:
  - kind: $name.word_count
    min_words: 2
    max_words: 50
```

## Develop

gradekit is not on the package index: install it first from a checkout of its repository
(replace /path/to/gradekit with that checkout's path), then this pack.

```sh
python3 -m venv .venv
.venv/bin/pip install -e '/path/to/gradekit[testing]'
.venv/bin/pip install -e '.[test]'
# the behaviour tests and the gradekit contract
.venv/bin/pytest
# the contract over every kind this pack registers
.venv/bin/gradekit check-pack $dist
# the pack's kinds, listed beside gradekit's
.venv/bin/gradekit kinds
```

From a wheel instead of a checkout: `.venv/bin/pip wheel --no-deps -w wheels /path/to/gradekit`
(or `python -m build --wheel --outdir wheels /path/to/gradekit`, with the `build` package)
writes gradekit's wheel into `wheels/`; then `.venv/bin/pip install --find-links wheels -e
'.[test]'` takes gradekit from there.

Add a kind: write its grader (an attrs class whose fields are its options), register it
under `[project.entry-points."gradekit.graders"]` in pyproject.toml with a dotted name
(`$name.your_kind`: names without a dot are gradekit's own), declare example configs in
its `examples` attribute, and give it a GraderContract test like tests/test_contract.py.

Graders run as the user who runs gradekit, with full privileges: users should install
packs only from sources they trust.
""")


def write_pack(name: str, dest: Path) -> Path:
    """Write the pack for namespace `name` into `dest/gradekit-NAME`; returns that folder.

    Raises ValueError for a name that is not a valid namespace, FileExistsError when the
    folder exists.
    """
    if not NAMESPACE.match(name):
        raise ValueError(
            f"invalid pack name {name!r}: a pack name is its kinds' namespace, lowercase "
            "letters, digits and underscores, starting with a letter and not ending with an "
            "underscore (such as 'acme')"
        )
    dist = "gradekit-" + name.replace("_", "-")
    package = f"gradekit_{name}"
    folder = dest / dist
    if folder.exists():
        raise FileExistsError(f"{folder} exists already; remove it or choose another --dest")
    values = {"name": name, "dist": dist, "package": package}
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"src/{package}/__init__.py": _INIT,
        f"src/{package}/word_count.py": _GRADER,
        "tests/test_contract.py": _CONTRACT_TEST,
        "tests/test_word_count.py": _BEHAVIOUR_TEST,
    }
    for relative, template in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.substitute(values), encoding="utf-8")
    return folder


def new_pack(name: str, dest: str, out: TextIO) -> int:
    """Write the pack and say what to do next; 0 when written, 2 when it cannot be."""
    try:
        folder = write_pack(name, Path(dest))
    except (ValueError, OSError) as error:
        print(f"gradekit: {error}", file=sys.stderr)
        return 2
    print(f"wrote {folder} (kind {name}.word_count); next:", file=out)
    print(f"  cd {folder}", file=out)
    print("  pip install -e '/path/to/gradekit[testing]'   # gradekit from its checkout", file=out)
    print("  pip install -e '.[test]' && pytest             # (README.md says more)", file=out)
    return 0


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
    from gradekit.run.exits import owning_exits, real_exit

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


def check_pack(dist: str, out: TextIO) -> int:
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
