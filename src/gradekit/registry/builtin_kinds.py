"""gradekit's own kinds: the same entry points as in pyproject.toml, as a table in code.

The registry resolves a built-in kind from this table without reading any installed metadata:
finding gradekit's own distribution means importing importlib.metadata (about 25 ms) and
searching the path, and the full scan of entry points costs about 0.5 ms per installed
plugin. The pyproject keeps declaring the same entry points (so other tools see them), and
tests/registry/test_builtin_table.py holds the two equal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

__all__ = ["BUILTIN_DISTRIBUTION", "BUILTIN_KINDS", "KIND_PATTERN"]

KIND_PATTERN: Final = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")
"""What a kind name looks like; a name without a dot belongs to gradekit's own kinds."""

BUILTIN_DISTRIBUTION: Final = "gradekit"

BUILTIN_KINDS: Final[Mapping[str, str]] = {
    "equality": "gradekit.graders.equality:Equality",
    "numeric": "gradekit.graders.numeric:Numeric",
    "contains": "gradekit.graders.contains:Contains",
    "not_contains": "gradekit.graders.contains:NotContains",
    "regex": "gradekit.graders.regex:Regex",
    "json": "gradekit.graders.json:Json",
    "code": "gradekit.graders.user_code:Code",
    "all": "gradekit.run.composite:AllOf",
    "any": "gradekit.run.composite:AnyOf",
    "at_least": "gradekit.run.composite:AtLeast",
    "weighted": "gradekit.run.composite:Weighted",
    "not": "gradekit.run.composite:Not",
    "behavior": "gradekit.graders.behavior:Behavior",
    "file": "gradekit.graders.file:File",
    "program": "gradekit.graders.program:Program",
    "build": "gradekit.graders.build:Build",
    "lint": "gradekit.graders.lint:Lint",
    "prompt": "gradekit.graders.prompt.kind:Prompt",
    "budget": "gradekit.graders.budget:Budget",
}
