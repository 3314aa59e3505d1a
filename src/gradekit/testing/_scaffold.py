"""`gradekit new-pack NAME`: write a ready grader pack that installs and passes its own tests.

The pack is the distribution `gradekit-NAME` with the package `gradekit_NAME`, one kind
`NAME.word_count` registered through the `gradekit.graders` entry point, its contract test
(a GraderContract subclass), a behaviour test and a README.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from string import Template
from typing import Final, TextIO

__all__ = ["main", "write_pack"]

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

Grader kinds for [gradekit](https://pypi.org/project/gradekit/) in the `$name` namespace.

- `$name.word_count`: passes when the output has between `min_words` (default 1) and
  `max_words` (default: no limit) words.

```yaml
graders:
  - kind: $name.word_count
    min_words: 2
    max_words: 50
```

## Develop

```sh
python3 -m venv .venv && .venv/bin/pip install -e '.[test]'
# the behaviour tests and the gradekit contract
.venv/bin/pytest
# the contract over every kind this pack registers
.venv/bin/gradekit check-pack $dist
# the pack's kinds, listed beside gradekit's
.venv/bin/gradekit kinds
```

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


def main(name: str, dest: str, out: TextIO) -> int:
    """Write the pack and say what to do next; 0 when written, 2 when it cannot be."""
    try:
        folder = write_pack(name, Path(dest))
    except (ValueError, OSError) as error:
        print(f"gradekit: {error}", file=sys.stderr)
        return 2
    print(f"wrote {folder} (kind {name}.word_count); next:", file=out)
    print(f"  cd {folder} && pip install -e '.[test]' && pytest", file=out)
    return 0
