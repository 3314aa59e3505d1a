"""The `build` kind: does the workspace build? A command, or a preset per language.

Owns the build presets too: for each language, a preset looks at the (sandboxed) workspace and
returns a `Plan`: the commands to run in order, the toolchain variables they need, and whether
to keep going after a failing command (one `node --check` per file) or stop (configure, then
build).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

import attrs

from gradekit.core.errors import OptionError, SandboxError, did_you_mean
from gradekit.core.types import GradeResult, Sample, as_text
from gradekit.graders.patterns import workspace_error
from gradekit.graders.program import SandboxOptions, command_argv, tail, timeout_seconds
from gradekit.graders.results import Check, checks_result, validate_threshold
from gradekit.process.bubblewrap import NO_MOUNTS, Mounts
from gradekit.process.commands import ProcessResult

__all__ = ["ALIASES", "MARKERS", "PRESETS", "Build", "Plan", "canonical", "detect", "plan_for"]


SKIPPED_DIRS: Final = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "__pycache__",
        "node_modules",
        "site-packages",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "target",
    }
)
_PY_SKIP: Final = (
    r"(^|/)(\.venv|venv|\.tox|\.nox|__pycache__|\.git|node_modules|site-packages)(/|$)"
)


@attrs.frozen
class Plan:
    """What a preset runs: `steps` in order; `env` set before the user's `env` (a None value
    passes the parent's variable through); `search` folders tried after PATH; `empty` is the
    failure message when there is nothing to build; `mounts` the toolchain's folders in
    bubblewrap (its own files read-only, its download caches writable)."""

    steps: tuple[tuple[str, ...], ...] = ()
    env: Mapping[str, str | None] = attrs.field(factory=dict)
    search: tuple[str, ...] = ()
    keep_going: bool = False
    empty: str | None = None
    mounts: Mounts = NO_MOUNTS


def _files(root: Path, suffixes: tuple[str, ...]) -> list[str]:
    """Relative paths of files with these suffixes, outside skipped folders, sorted."""
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in names:
            if name.endswith(suffixes):
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(found)


def _real_home(folder: str) -> str | None:
    """A toolchain folder in the real home (HOME is replaced inside the sandbox)."""
    path = Path(os.path.expanduser("~")) / folder
    return str(path) if path.is_dir() else None


def _python(root: Path, scratch: Path) -> Plan:
    # When the workspace is not a copy, a pycache prefix keeps .pyc files out of it (at the
    # price of compiling the standard library's imports afresh, about half a second).
    in_place = scratch.parent not in root.parents
    env = {"PYTHONPYCACHEPREFIX": str(scratch / "pycache")} if in_place else {}
    return Plan(((sys.executable, "-m", "compileall", "-q", "-x", _PY_SKIP, "."),), env=env)


def _javascript(root: Path, scratch: Path) -> Plan:
    files = _files(root, (".js", ".mjs", ".cjs"))
    return Plan(
        tuple(("node", "--check", file) for file in files),
        keep_going=True,
        empty="no JavaScript files (.js, .mjs, .cjs) to check",
    )


def _typescript(root: Path, scratch: Path) -> Plan:
    local = (str(root / "node_modules" / ".bin"),)
    if (root / "tsconfig.json").is_file():
        return Plan((("tsc", "--noEmit", "-p", "."),), search=local)
    files = _files(root, (".ts", ".tsx", ".mts", ".cts"))
    return Plan(
        (("tsc", "--noEmit", *files),) if files else (),
        search=local,
        empty="no TypeScript files and no tsconfig.json",
    )


def _go(root: Path, scratch: Path) -> Plan:
    passed = dict.fromkeys(("GOPATH", "GOMODCACHE", "GOCACHE", "GOFLAGS", "GOPROXY", "GOROOT"))
    gopath = (os.environ.get("GOPATH") or "").split(os.pathsep)[0]
    modules = os.environ.get("GOMODCACHE") or (gopath and os.path.join(gopath, "pkg", "mod"))
    mounts = Mounts(
        readonly=_present(gopath, os.environ.get("GOROOT")),
        writable=_present(modules, os.environ.get("GOCACHE")),
    )
    return Plan((("go", "build", "./..."),), env=passed, mounts=mounts)


def _rust(root: Path, scratch: Path) -> Plan:
    env: dict[str, str | None] = {"CARGO_TARGET_DIR": str(scratch / "target")}
    for variable, folder in (("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")):
        env[variable] = os.environ.get(variable) or _real_home(folder)
    cargo_bin = _real_home(".cargo/bin")
    cargo = env["CARGO_HOME"]
    # Toolchains and installed binaries stay read-only (hostile code must not replace
    # `cargo` for the next build); only the download caches are writable; tokens are hidden.
    mounts = Mounts(
        readonly=_present(cargo, env["RUSTUP_HOME"]),
        writable=tuple(os.path.join(cargo, name) for name in ("registry", "git")) if cargo else (),
        hidden=tuple(os.path.join(cargo, n) for n in ("credentials.toml", "credentials"))
        if cargo
        else (),
    )
    return Plan(
        (("cargo", "build", "--quiet"),),
        env=env,
        search=(cargo_bin,) if cargo_bin else (),
        mounts=mounts,
    )


def _present(*paths: str | None) -> tuple[str, ...]:
    return tuple(path for path in paths if path)


def _java(root: Path, scratch: Path) -> Plan:
    env: dict[str, str | None] = {"JAVA_HOME": None, "MAVEN_OPTS": None}
    java_home = _present(os.environ.get("JAVA_HOME"))
    if (root / "pom.xml").is_file():
        repository = _real_home(".m2/repository")
        local = (f"-Dmaven.repo.local={repository}",) if repository else ()
        mounts = Mounts(readonly=java_home, writable=_present(repository))
        return Plan((("mvn", "-q", *local, "compile"),), env=env, mounts=mounts)
    files = _files(root, (".java",))
    return Plan(
        (("javac", "-d", str(scratch / "classes"), *files),) if files else (),
        env=env,
        empty="no pom.xml and no .java files",
        mounts=Mounts(readonly=java_home),
    )


def _c(root: Path, scratch: Path) -> Plan:
    if any((root / name).is_file() for name in ("Makefile", "makefile", "GNUmakefile")):
        return Plan((("make",),))
    if (root / "CMakeLists.txt").is_file():
        build = str(scratch / "cmake-build")
        return Plan((("cmake", "-S", ".", "-B", build), ("cmake", "--build", build)))
    return Plan(empty="no Makefile and no CMakeLists.txt")


PRESETS: Final[Mapping[str, Callable[[Path, Path], Plan]]] = {
    "python": _python,
    "javascript": _javascript,
    "typescript": _typescript,
    "go": _go,
    "rust": _rust,
    "java": _java,
    "c": _c,
    "cpp": _c,
}
ALIASES: Final = {
    "py": "python",
    "js": "javascript",
    "ts": "typescript",
    "golang": "go",
    "c++": "cpp",
    "rs": "rust",
}


def canonical(language: str) -> str:
    """The preset name of `language` (a preset name or alias, any case)."""
    name = language.lower()
    return ALIASES.get(name, name)


def plan_for(language: str, root: Path, scratch: Path) -> Plan:
    """The plan of `language` (a preset name or alias, any case) for the workspace `root`."""
    return PRESETS[canonical(language)](root, scratch)


MARKERS: Final = (
    ("Cargo.toml", "rust"),
    ("go.mod", "go"),
    ("tsconfig.json", "typescript"),
    ("package.json", "javascript"),
    ("pyproject.toml", "python"),
    ("setup.py", "python"),
    ("setup.cfg", "python"),
    ("pom.xml", "java"),
    ("Makefile", "c"),
    ("makefile", "c"),
    ("GNUmakefile", "c"),
    ("CMakeLists.txt", "c"),
)
"""Files that tell a workspace's toolchain, first match wins: a language's own manifest comes
before a Makefile, which many projects keep for chores rather than for building."""


def detect(root: Path) -> tuple[str, str] | None:
    """(preset, the file that told it) for the workspace `root`, or None."""
    for name, language in MARKERS:
        if (root / name).is_file():
            return language, name
    return None


_LANGUAGES = sorted({*PRESETS, *ALIASES})
_UNDETECTED = (
    "ValueError: no build command: set `command` or `language` on the grader, or give the "
    "sample a `language`; the workspace has none of "
    + ", ".join(name for name, _ in MARKERS)
    + " to tell its toolchain"
)


def _language(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and value.lower() not in _LANGUAGES:
        suffix = did_you_mean(value.lower(), _LANGUAGES) or "use one of " + ", ".join(PRESETS)
        raise OptionError(attribute.name, f"no build preset for '{value}'; {suffix}")


def _command(value: Any) -> tuple[str, ...] | None:
    return command_argv(value, "command")


@attrs.frozen
class Build(SandboxOptions):
    """Builds the sample's workspace; passes when every build command exits 0.

    `command` runs as given; otherwise `language` (or the sample's `language` metadata, or the
    workspace's files: `Cargo.toml`, `go.mod`, `package.json`, `pyproject.toml`, a `Makefile`...)
    picks a preset, named in details (`language`, and `detected_from` when told by a file). A
    sample carrying a recorded outcome (`build_status: success|failed|skipped`, with
    `build_output`) is graded from it without running anything. Details keep each command's
    exit code and the tail of its output.
    """

    kind: ClassVar[str] = "build"

    name: str = attrs.field(kw_only=True, default="build")
    command: Any = attrs.field(kw_only=True, default=None, converter=_command)
    """The build command, as for `program` (default: the language's preset)."""
    language: str | None = attrs.field(kw_only=True, default=None, validator=_language)
    """A language preset; without it, the sample's `language` metadata or the files choose."""
    timeout: float = attrs.field(kw_only=True, default=300.0, validator=timeout_seconds)
    threshold: float | None = attrs.field(kw_only=True, default=None, validator=validate_threshold)

    def _grade(self, sample: Sample, cancel: threading.Event | None) -> GradeResult:
        status = sample.metadata.get("build_status")
        if status is not None:
            return self._recorded(status, sample.metadata.get("build_output"))
        problem = workspace_error(sample)
        if problem is not None:
            return GradeResult.of_error(self.kind, self.name, problem)
        language = self.language or sample.metadata.get("language")
        about: dict[str, Any] = {}
        if self.command is None and not language:
            assert sample.workspace is not None  # workspace_error said so
            detected = detect(Path(sample.workspace))
            if detected is None:
                return GradeResult.of_error(self.kind, self.name, _UNDETECTED)
            language, about["detected_from"] = detected
        if self.command is None and str(language).lower() not in _LANGUAGES:
            return GradeResult.of_error(
                self.kind,
                self.name,
                f"ValueError: no build preset for language {language!r}; "
                f"use one of {', '.join(PRESETS)} or set `command`",
            )
        deadline = time.monotonic() + self.timeout
        try:
            with self.open_sandbox(sample) as box:
                if self.command is not None:
                    plan = Plan((self.command,))
                else:
                    about = {"language": canonical(str(language)), **about}
                    plan = plan_for(str(language), box.cwd, box.tmp)
                if not plan.steps:
                    return self._result(False, plan.empty or "nothing to build", about)
                results = self._run(plan, box, deadline, cancel)
        except (SandboxError, OSError) as error:  # CommandError is an OSError
            return GradeResult.of_error(self.kind, self.name, error)
        return self._outcome(results, about)

    def _run(
        self, plan: Plan, box: Any, deadline: float, cancel: threading.Event | None
    ) -> list[ProcessResult]:
        results = []
        for step in plan.steps:
            result = self.execute(
                box,
                step,
                deadline=deadline,
                extra_env=plan.env,
                search=plan.search,
                cancel=cancel,
                mounts=plan.mounts,
            )
            results.append(result)
            if result.timed_out or (result.exit_code != 0 and not plan.keep_going):
                break
        return results

    def _outcome(self, results: list[ProcessResult], about: dict[str, Any]) -> GradeResult:
        failed = [result for result in results if result.exit_code != 0]
        last = failed[0] if failed else results[-1]
        details: dict[str, Any] = {
            **about,
            "command": list(last.argv),
            "commands": len(results),
            "exit_code": last.exit_code,
            "stderr": tail("".join(result.stderr for result in failed or results)),
            "stdout": tail("".join(result.stdout for result in failed or results)),
        }
        if last.timed_out:
            return self._result(False, f"timed out after {self.timeout:g}s", details)
        if not failed:
            return self._result(True, "built", details)
        details["failed_commands"] = [" ".join(result.argv) for result in failed]
        return self._result(False, f"build failed with exit code {last.exit_code}", details)

    def _recorded(self, status: Any, output: Any) -> GradeResult:
        """The result of a recorded outcome. `skipped` (Hyoka's, for a build that did not
        run) fails: a build that never ran is no evidence that the work builds."""
        if status not in ("success", "failed", "skipped"):
            return GradeResult.of_error(
                self.kind,
                self.name,
                f"ValueError: recorded build_status must be 'success', 'failed' or 'skipped', "
                f"got {status!r}; fix the sample",
            )
        details = {"recorded": True, "build_status": status, "stderr": tail(as_text(output))}
        message = f"recorded build: {status}"
        if status == "skipped":
            message += (
                " (the harness did not build; a build that did not run does not pass: remove "
                "build_status to have gradekit build the workspace)"
            )
        return self._result(status == "success", message, details)

    def _result(self, passed: bool, message: str, details: dict[str, Any]) -> GradeResult:
        return checks_result(
            self.kind,
            self.name,
            [Check("build", passed, message)],
            threshold=self.threshold,
            details=details,
            message=message,
        )
