"""Build presets: for each language, the commands that check a workspace builds.

A preset looks at the (sandboxed) workspace and returns a `Plan`: the commands to run in
order, the toolchain variables they need, and whether to keep going after a failing command
(one `node --check` per file) or stop (configure, then build).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

import attrs

from gradekit.process.bubblewrap import NO_MOUNTS, Mounts

__all__ = ["ALIASES", "MARKERS", "PRESETS", "Plan", "canonical", "detect", "plan_for"]

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
