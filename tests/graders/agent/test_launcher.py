"""gradekit's launcher of limited commands: built once into the user's cache folder, reused,
rebuilt when broken, refused where someone else could have replaced it, and `prlimit` used
where it cannot be built."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradekit.graders._sandbox import launcher as launcher_module
from gradekit.graders._sandbox import limits
from gradekit.graders._sandbox.launcher import launcher

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) here")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache folder of this test's own; the process's launcher is looked up afresh before
    and after (it is found once per process)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CC", raising=False)
    launcher.cache_clear()
    yield tmp_path / "cache" / "gradekit"
    launcher.cache_clear()


def _built(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if path.name.startswith("gradekit-limits-"))


def test_the_launcher_is_built_once_privately_and_then_reused(cache):
    path = launcher()
    assert path is not None
    assert _built(cache) == [Path(path)]
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(Path(path).stat().st_mode) == 0o700
    assert [item.name for item in cache.iterdir() if item.name.startswith(".")] == []
    made = Path(path).stat()

    launcher.cache_clear()  # as a new process finds it
    assert launcher() == path
    again = Path(path).stat()
    assert (again.st_ino, again.st_mtime_ns) == (made.st_ino, made.st_mtime_ns)


def test_the_limits_go_through_the_launcher(cache):
    prefix = limits.limit_prefix(1 << 30, 7)
    assert prefix is not None
    assert prefix[0] == launcher()
    assert prefix[1:] == (str(1 << 30), "7")


def test_a_broken_launcher_in_the_cache_is_built_again(cache):
    path = Path(launcher() or "")
    path.write_bytes(b"not a program")
    launcher.cache_clear()
    assert launcher() == str(path)
    assert path.read_bytes().startswith(b"\x7fELF")


def test_without_a_compiler_the_limits_fall_back_to_prlimit(cache, monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler-here")
    assert launcher() is None
    prefix = limits.limit_prefix(1 << 30, None)
    if limits._prlimit() is None:
        assert prefix is None
    else:
        assert prefix is not None
        assert Path(prefix[0]).name == "prlimit"
        assert prefix[-1] == "--"


def test_a_source_that_does_not_compile_falls_back(cache, monkeypatch, tmp_path):
    broken = tmp_path / "launcher.c"
    broken.write_text("this is not C\n")
    monkeypatch.setattr(launcher_module, "SOURCE", broken)
    assert launcher() is None
    assert _built(cache) == []
    assert [item.name for item in cache.iterdir()] == []  # no half-built file left


def _plant(cache: Path, marker: Path) -> Path:
    """A program at the launcher's own path that leaves `marker` when run."""
    real = Path(launcher() or "")
    launcher.cache_clear()
    real.unlink()
    real.write_text(f'#!/bin/sh\ntouch {marker}\nexec "$3"\n')
    real.chmod(0o700)
    return real


def test_a_launcher_others_could_have_replaced_is_never_run(cache, tmp_path):
    marker = tmp_path / "planted-program-ran"
    planted = _plant(cache, marker)

    cache.chmod(0o777)  # anyone could have written the file in it
    assert launcher() is None
    assert not marker.exists()

    # The attack, where the folder is trusted: the planted program at the launcher's path is
    # what gradekit runs (so the check above is what stops it).
    cache.chmod(0o700)
    launcher.cache_clear()
    assert launcher() == str(planted)
    assert marker.exists()


def test_a_launcher_file_others_can_write_is_built_again(cache, tmp_path):
    marker = tmp_path / "planted-program-ran"
    planted = _plant(cache, marker)
    planted.chmod(0o777)
    assert launcher() == str(planted)
    assert not marker.exists()  # replaced by a fresh build before anything ran it
    assert planted.read_bytes().startswith(b"\x7fELF")


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_a_cache_folder_of_another_user_is_refused(cache):
    assert launcher() is not None
    launcher.cache_clear()
    os.chown(cache, 65534, 65534)
    assert launcher() is None


def test_the_launcher_sets_the_limits_and_execs_in_place(cache):
    import subprocess

    code = (
        "import os, resource as r, sys; "
        "print(r.getrlimit(r.RLIMIT_DATA), r.getrlimit(r.RLIMIT_CPU), r.getrlimit(r.RLIMIT_CORE), "
        "os.getpid(), sys.argv[1:])"
    )
    path = launcher()
    assert path is not None
    process = subprocess.Popen(
        [path, str(1 << 30), "9", sys.executable, "-c", code, "a b"],
        stdout=subprocess.PIPE,
        text=True,
    )
    out, _ = process.communicate(timeout=30)
    gib = 1 << 30
    assert out == f"({gib}, {gib}) (9, 10) (0, 0) {process.pid} ['a b']\n"


def test_a_relative_cache_setting_is_ignored_and_no_home_means_no_launcher(
    cache, monkeypatch, tmp_path
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = launcher()
    assert path is not None
    assert Path(path).parent == tmp_path / "home" / ".cache" / "gradekit"
    assert not (tmp_path / "relative").exists()

    launcher.cache_clear()
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "")  # expanduser then leaves `~` as it is
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)
    assert launcher() is None
    assert not (tmp_path / "~").exists()  # nothing made in the working folder
