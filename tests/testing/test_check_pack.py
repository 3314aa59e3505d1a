"""`gradekit check-pack DIST`, run as a user runs it, on really installed distributions."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pack_support import pip_install_target


def gradekit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = Path(sys.executable).parent / "gradekit"
    return subprocess.run(
        [str(command), *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_a_broken_pack_lists_every_violation_with_its_example(pack_env: dict[str, str]) -> None:
    done = gradekit("check-pack", "acme-broken", env=pack_env)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "checking acme-broken 1.0: 10 kinds"
    status = dict(re.findall(r"^  (\S+) +(.+)$", done.stdout, re.MULTILINE)[:10])
    assert status == {
        "acme.bad_examples": "1 violation",
        "acme.first_word": "1 violation",
        "acme.judge": "2 violations",
        "acme.lenient": "2 violations",
        "acme.locked": "1 violation",
        "acme.logged": "1 violation",
        "acme.normalised": "1 violation",
        "acme.prefix": "1 violation",
        "acme.token_f1": "1 violation",
        "shout": "1 violation",
    }
    violations = re.findall(r"^(\S+): (\w+): ", done.stdout, re.MULTILINE)
    assert sorted(violations) == [
        ("acme.bad_examples", "examples"),
        ("acme.first_word", "well_formed"),
        ("acme.judge", "deterministic"),
        ("acme.judge", "pickles"),
        ("acme.lenient", "unknown_option"),
        ("acme.lenient", "wrong_type"),
        ("acme.locked", "pickles"),
        ("acme.logged", "inline_pure"),
        ("acme.normalised", "leaves_sample"),
        ("acme.prefix", "creates"),
        ("acme.token_f1", "well_formed"),
        ("shout", "namespaced"),
    ]
    assert done.stdout.count("\n  Falsifying example: ") == 12
    assert "\n  Falsifying example: Sample(" in done.stdout
    assert lines[-1] == "acme-broken 1.0: 12 violations in 10 of 10 kinds"
    # What a grader or factory raised points at the pack's own line, never at gradekit's
    # frames (a score gradekit's GradeResult refused: the pack's line that built it).
    source = Path(pack_env["PYTHONPATH"].split(os.pathsep)[0], "acme_broken", "__init__.py")
    text = source.read_text().splitlines()
    places = re.findall(r"^(\S+): \w+: .* \(at (\S+):(\d+) in (\w+)\)", done.stdout, re.M)
    assert [(kind, name) for kind, _, _, name in places] == [
        ("acme.first_word", "grade"),
        ("acme.lenient", "lenient"),
        ("acme.token_f1", "grade"),
    ]
    assert {path for _, path, _, _ in places} == {str(source)}
    shown = [text[int(line) - 1].strip() for _, _, line, _ in places]
    assert shown[1].startswith("return _Lenient(name, float(")
    assert shown[2].startswith("return GradeResult(self.kind, self.name, score >= self.minimum")


def test_a_clean_pack_exits_0(pack_env: dict[str, str]) -> None:
    done = gradekit("check-pack", "acme_clean", env=pack_env)  # any spelling of the name
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "checking acme-clean 1.0: 2 kinds",
        "  acme.length  ok (18 checks passed, 4 not applicable)",
        "  acme.shout   ok (18 checks passed, 4 not applicable)",
        "acme-clean 1.0: every kind keeps the contract",
    ]


@pytest.mark.parametrize("dist", ["acme-nowhere"])
def test_a_distribution_that_is_not_installed_exits_2(dist: str) -> None:
    done = gradekit("check-pack", dist)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"gradekit: distribution '{dist}' is not installed; install it first "
        f"(pip install {dist}) or check its name (pip list)\n"
    )


def test_a_distribution_without_kinds_exits_1() -> None:
    done = gradekit("check-pack", "attrs")
    assert done.returncode == 1
    assert re.fullmatch(
        r"attrs \S+: registers no grader kinds; declare them as entry points of group "
        r"'gradekit.graders' in its pyproject.toml\n",
        done.stdout,
    )


def test_a_kind_without_examples_is_told_to_declare_them(pack_env: dict[str, str]) -> None:
    done = gradekit("check-pack", "acme-broken", env=pack_env)
    assert (
        "acme.prefix: creates: the factory rejected the example config: ConfigError: invalid "
        "options for kind 'acme.prefix'\n$.prefix: this option is required\n(the factory "
        "declares no `examples`, so the kind is checked with {}: give the factory an "
        "`examples` attribute, a sequence of configs that it accepts)\n  config: {}\n"
        "  Falsifying example: {}\n"
    ) in done.stdout


# Slow (about 40 s): every built-in kind through the whole kit in a child process. The default
# run checks the same contract in process (tests/testing/test_builtin_contract.py).
@pytest.mark.slow
def test_gradekit_itself_keeps_its_own_contract() -> None:
    done = gradekit("check-pack", "gradekit")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "namespaced" not in done.stdout  # gradekit's own kinds need no dot
    status = dict(re.findall(r"^  (\S+) +(.+)$", done.stdout, re.MULTILINE))
    declared = importlib.metadata.distribution("gradekit").entry_points
    assert sorted(status) == sorted(ep.name for ep in declared if ep.group == "gradekit.graders")
    assert all(line.startswith("ok (") for line in status.values()), status
    version = importlib.metadata.version("gradekit")
    assert done.stdout.splitlines()[-1] == f"gradekit {version}: every kind keeps the contract"


def test_a_kind_missing_inside_a_factory_gets_no_hint_about_examples() -> None:
    from gradekit import Registry, UnknownKindError
    from gradekit.testing._contract import contract_settings, run_rule
    from gradekit.testing._packs import PackKind

    def wrapper(name: str, config: object) -> object:
        # Wraps another pack's kind, which is not installed: `examples` would not help.
        raise UnknownKindError("acme.base")

    registry = Registry(entry_points=False)
    registry.register("acme.wrapper", wrapper)
    kind = PackKind("acme.wrapper", "acme:wrapper", wrapper, ({},))
    (creates,) = [c for c in kind.checks(registry) if c.rule.name == "creates"]
    (violation,) = run_rule(creates.rule, creates.subject, contract_settings(None)).violations
    assert violation.message.startswith("the factory rejected the example config: UnknownKind")
    assert "examples" not in violation.message


def test_a_kind_that_ends_its_process_is_a_violation_and_the_others_are_checked(
    pack_env: dict[str, str],
) -> None:
    done = gradekit("check-pack", "acme-exits", env=pack_env)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "checking acme-exits 1.0: 3 kinds"
    status = dict(re.findall(r"^  (\S+) +(.+)$", done.stdout, re.MULTILINE)[:3])
    assert status == {
        "acme.exits": "1 violation",
        "acme.killed": "1 violation",
        "acme.later": "ok (8 checks passed, 4 not applicable)",
    }
    # os._exit is refused in the kind's call: the rule that called it names it.
    assert re.search(
        r"^acme\.exits: \w+: .*ExitRefusedError: os\._exit\(0\) was called", done.stdout, re.M
    ), done.stdout
    assert (
        "acme.killed: ends_the_process: the kind's check ended its process (killed by signal 9, "
        "SIGKILL) before every rule was checked"
    ) in done.stdout
    assert lines[-1] == "acme-exits 1.0: 2 violations in 2 of 3 kinds"


def test_a_pack_that_calls_os_exit_when_imported_is_reported_not_a_silent_exit_0(
    tmp_path: Path,
) -> None:
    # Installed apart: anything listing the shared test site's kinds would import it.
    project = tmp_path / "acme-imports"
    (project / "acme_imports").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "acme-imports"\nversion = "1.0"\n'
        '[tool.setuptools]\npackages = ["acme_imports"]\n'
        '[project.entry-points."gradekit.graders"]\n'
        '"acme.ends" = "acme_imports.ends:Ends"\n"acme.later" = "acme_imports:Later"\n'
    )
    (project / "acme_imports" / "__init__.py").write_text("class Later:\n    pass\n")
    (project / "acme_imports" / "ends.py").write_text("import os\n\nos._exit(0)\n")
    site = tmp_path / "site"
    pip_install_target(site, project)
    paths = [str(site), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    done = gradekit("check-pack", "acme-imports", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("checking acme-imports 1.0: 2 kinds\n  acme.ends   1 violation\n")
    assert (
        "acme.ends: resolves: the registry cannot resolve the kind: cannot load grader kind "
        "'acme.ends' from distribution 'acme-imports 1.0' (entry point 'acme_imports.ends:Ends'): "
        "ExitRefusedError: os._exit(0) was called while gradekit was grading"
    ) in done.stdout
    assert done.stdout.splitlines()[-1] == "acme-imports 1.0: 2 violations in 2 of 2 kinds"
