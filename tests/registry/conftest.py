"""Throwaway plugin distributions, built and installed for real with pip into a folder.

Each distribution is a tiny setuptools project declaring `gradekit.graders` entry points. They
are installed once per session with `pip install --target`, and the tests run Python in a child
process whose path includes that folder, so importlib.metadata finds them exactly as it finds
any installed package, and the test process's own registry is never touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

GOOD_MODULE = '''
import attrs
from typing import ClassVar
from gradekit import GradeResult

@attrs.frozen
class Shout:
    """Passes when the output is upper case."""
    kind: ClassVar[str] = "acme.shout"
    name: str = attrs.field(kw_only=True, default="acme.shout")
    min_length: int = 0

    def grade(self, sample):
        text = str(sample.output)
        ok = text.isupper() and len(text) >= self.min_length
        return GradeResult(self.kind, self.name, ok, 1.0 if ok else 0.0, f"got {text!r}")

class _Plain:
    kind = "acme.plain"
    def __init__(self, name, config):
        self.name = name
        self.config = dict(config)
    def grade(self, sample):
        return GradeResult(self.kind, self.name, True, 1.0, "plain")

def plain(name, config):
    return _Plain(name, config)
'''

DISTRIBUTIONS = {
    "acme-good": {
        "module": ("acme_good", GOOD_MODULE),
        "entry_points": {"acme.shout": "acme_good:Shout", "acme.plain": "acme_good:plain"},
    },
    "acme-broken": {
        "module": ("acme_broken", "import acme_missing_dependency\n"),
        "entry_points": {"acme.broken": "acme_broken:factory"},
    },
    "acme-noattr": {
        "module": ("acme_noattr", "def something_else(name, config):\n    return None\n"),
        "entry_points": {"acme.noattr": "acme_noattr:factory"},
    },
    "acme-dup-one": {
        "module": ("acme_dup_one", "from acme_good import plain as factory\n"),
        "entry_points": {"acme.dup": "acme_dup_one:factory"},
    },
    "acme-dup-two": {
        "module": ("acme_dup_two", "from acme_good import Shout as factory\n"),
        "entry_points": {"acme.dup": "acme_dup_two:factory"},
    },
}


SQUAT_MODULE = """
from gradekit import GradeResult

class _PassEverything:
    kind = "numeric"
    def __init__(self, name, config):
        self.name = name
    def grade(self, sample):
        return GradeResult(self.kind, self.name, True, 1.0, "squatted")

def factory(name, config):
    return _PassEverything(name, config)
"""

# Distributions that declare names without a dot, which belong to gradekit: one whose `numeric`
# would pass every answer, one whose `numeric` cannot even be imported. Installed in their own
# folder, so the other tests never see them.
SQUATTERS = {
    "acme-squat": {
        "module": ("acme_squat", SQUAT_MODULE),
        "entry_points": {
            "numeric": "acme_squat:factory",
            "rouge": "acme_squat:factory",
            "acme_squat.fine": "acme_squat:factory",
        },
    },
    "acme-squat-broken": {
        "module": ("acme_squat_broken", "import acme_missing_dependency\n"),
        "entry_points": {"numeric": "acme_squat_broken:factory"},
    },
}


def _write_project(root: Path, dist: str, spec: dict) -> Path:
    project = root / dist
    module, source = spec["module"]
    (project / module).mkdir(parents=True)
    (project / module / "__init__.py").write_text(textwrap.dedent(source))
    entry_points = "\n".join(
        f'"{kind}" = "{value}"' for kind, value in spec["entry_points"].items()
    )
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [build-system]
            requires = ["setuptools"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "{dist}"
            version = "1.0"

            [tool.setuptools]
            packages = ["{module}"]

            [project.entry-points."gradekit.graders"]
            """
        )
        + entry_points
        + "\n"
    )
    return project


def _install(factory: pytest.TempPathFactory, distributions: dict, name: str) -> Path:
    root = factory.mktemp(f"{name}-src")
    site = factory.mktemp(f"{name}-site")
    projects = [str(_write_project(root, dist, spec)) for dist, spec in distributions.items()]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--target",
            str(site),
            *projects,
        ],
        check=True,
        capture_output=True,
    )
    return site


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where the throwaway plugin distributions are really installed."""
    return _install(tmp_path_factory, DISTRIBUTIONS, "plugin")


@pytest.fixture(scope="session")
def squatter_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where the distributions declaring undotted kinds are really installed."""
    return _install(tmp_path_factory, SQUATTERS, "squatter")


@pytest.fixture
def run_python(plugin_site: Path):
    """Run a Python snippet in a child interpreter that sees the installed plugins.

    `sites` replaces the default folder of plugins (`[]`: none).
    """

    def run(
        code: str, *, with_plugins: bool = True, sites: list[Path] | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ)
        folders = ([plugin_site] if with_plugins else []) if sites is None else sites
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [*map(str, folders), env.get("PYTHONPATH", "")])
        )
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    return run
