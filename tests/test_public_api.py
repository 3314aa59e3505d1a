"""The public surface: `__all__` is honest, and `import gradekit` stays light."""

from __future__ import annotations

import subprocess
import sys

import gradekit


def test_every_name_in_all_resolves_and_is_documented():
    for name in gradekit.__all__:
        value = getattr(gradekit, name)
        if name != "__version__":
            assert value.__doc__, f"gradekit.{name} has no docstring"


def test_public_names_are_exactly_all():
    public = {name for name in dir(gradekit) if not name.startswith("_")}
    assert public - set(gradekit.__all__) == set()


def test_version_comes_from_installed_metadata():
    from importlib.metadata import version

    assert gradekit.__version__ == version("gradekit")


def test_import_gradekit_loads_no_dependency_and_no_module_of_its_own():
    # Every public name is served on first use: the import alone loads none of its
    # dependencies, not even attrs or typing, and no gradekit module but the facade.
    code = (
        "import sys, gradekit; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('yaml', 'hypothesis', 'cattrs', 'rich', 'jsonschema', 'regex', 'attr', 'attrs', "
        "'typing', 'asyncio') or m.startswith('gradekit.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_name_used_first_loads_what_it_needs():
    code = (
        "import sys, gradekit; from gradekit import Sample, GradekitError; "
        "print(Sample(output='x').output, issubclass(GradekitError, Exception), "
        "'attrs' in sys.modules, 'gradekit.run.runner' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["x", "True", "True", "False"]
