"""gradekit's launcher of limited commands: built once into the user's cache folder, reused,
rebuilt when broken, refused where someone else could have replaced it, and `prlimit` used
where it cannot be built."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradekit.core.errors import CommandError
from gradekit.process import limits
from gradekit.process.commands import Limits, run
from gradekit.process.limits import launcher, reset
from gradekit.process.scratch import Sandbox

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) here")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache folder of this test's own; the process's launcher is looked up afresh before
    and after (it is found once per process)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CC", raising=False)
    reset()
    yield tmp_path / "cache" / "gradekit"
    reset()


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

    reset()  # as a new process finds it
    assert launcher() == path
    again = Path(path).stat()
    assert (again.st_ino, again.st_mtime_ns) == (made.st_ino, made.st_mtime_ns)


def test_the_limits_go_through_the_launcher(cache):
    prefix = limits.limit_prefix(1 << 30, 7)
    assert prefix is not None
    assert prefix[0] == launcher()
    assert prefix[1:] == ("-", str(1 << 30), "7")


def test_a_broken_launcher_in_the_cache_is_built_again(cache):
    path = Path(launcher() or "")
    path.write_bytes(b"not a program")
    reset()
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
    monkeypatch.setattr(limits, "SOURCE", broken)
    assert launcher() is None
    assert _built(cache) == []
    assert [item.name for item in cache.iterdir()] == []  # no half-built file left


def _plant(cache: Path, marker: Path) -> Path:
    """A program at the launcher's own path that leaves `marker` when run."""
    real = Path(launcher() or "")
    reset()
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
    reset()
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
    reset()
    os.chown(cache, 65534, 65534)
    assert launcher() is None


def test_the_launcher_sets_the_limits_and_execs_in_place(cache):
    code = (
        "import os, resource as r, sys; "
        "print(r.getrlimit(r.RLIMIT_DATA), r.getrlimit(r.RLIMIT_CPU), r.getrlimit(r.RLIMIT_CORE), "
        "os.getpid(), sys.argv[1:])"
    )
    path = launcher()
    assert path is not None
    process = subprocess.Popen(
        [path, "-", str(1 << 30), "9", sys.executable, "-c", code, "a b"],
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

    reset()
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "")  # expanduser then leaves `~` as it is
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)
    assert launcher() is None
    assert not (tmp_path / "~").exists()  # nothing made in the working folder


def test_a_limit_the_kernel_refuses_is_an_error_naming_the_limits(cache):
    # A CPU limit whose hard limit (one more) does not fit: setrlimit refuses it, as it
    # refuses a limit above the hard limit gradekit runs under for a user who is not root.
    with Sandbox(None) as box, pytest.raises(CommandError) as raised:
        run(["/bin/true"], cwd=box.cwd, env=box.env(), timeout=10, limits=Limits(cpu=2**64 - 1))
    assert str(raised.value).startswith("cannot set the limits of '/bin/true': Invalid argument")
    assert "memory_limit and cpu_limit" in str(raised.value)


def test_a_cache_folder_that_cannot_hold_the_build_falls_back(cache):
    path = Path(launcher() or "")
    reset()
    path.unlink()
    path.mkdir()  # something in the launcher's place that no build can replace
    assert launcher() is None
    prefix = limits.limit_prefix(1 << 30, None)
    assert prefix is None or Path(prefix[0]).name == "prlimit"
    assert [item.name for item in cache.iterdir()] == [path.name]  # no half-built file left


def test_a_folder_above_that_others_can_write_to_is_refused_unless_sticky(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared / "cache"))
    reset()
    try:
        shared.chmod(0o777)
        assert launcher() is None
        reset()
        shared.chmod(0o1777)  # sticky, as /tmp: others cannot rename what is not theirs
        assert launcher() is not None
    finally:
        reset()


@pytest.mark.skipif(os.getuid() != 0, reason="acting as another user needs root")
def test_another_user_could_swap_the_folder_under_a_folder_others_can_write_to(monkeypatch):
    # Under /tmp itself: pytest's own folders are private, and the other user must reach it.
    base = Path(tempfile.mkdtemp(prefix="gradekit-test-swap-", dir="/tmp"))
    base.chmod(0o755)
    shared = base / "shared"
    shared.mkdir(mode=0o755)
    marker = base / "planted-program-ran"
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    reset()
    try:
        trusted = launcher()
        assert trusted is not None
        shared.chmod(0o777)  # from now on anyone can rename what `shared` holds

        # The attack: another user moves the folder away and puts their own in its place.
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                os.setgid(65534)
                os.setuid(65534)
                os.rename(shared / "gradekit", shared / "moved")
                (shared / "gradekit").mkdir()
                planted = Path(trusted)
                planted.write_text(f'#!/bin/sh\ntouch {marker}\nexec "$3"\n')
                planted.chmod(0o755)
                code = 0
            finally:
                os._exit(code)
        assert os.waitpid(pid, 0)[1] == 0
        # A process that trusted the folder before runs what is there now: theirs.
        assert subprocess.run([trusted, "-", "-", "/bin/true"], check=False).returncode == 0
        assert marker.exists()
        # The protection: such a folder is never trusted in the first place.
        reset()
        assert launcher() is None
    finally:
        reset()
        shutil.rmtree(base)


def test_a_compiler_given_with_its_own_words_is_used_and_threads_build_once(
    cache, monkeypatch, tmp_path
):
    calls = tmp_path / "compiler-calls"
    wrapper = tmp_path / "wrapped-cc"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", f"{wrapper} {shutil.which('cc')}")
    found: list[str | None] = []
    threads = [threading.Thread(target=lambda: found.append(launcher())) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(found)) == 1
    assert found[0] is not None
    assert len(calls.read_text().splitlines()) == 1  # one build (static) for six threads
    assert _built(cache) == [Path(found[0])]


def test_half_built_files_of_killed_builds_are_swept(cache):
    cache.mkdir(parents=True, mode=0o700)
    stale = cache / ".gradekit-limits-stale"
    fresh = cache / ".gradekit-limits-fresh"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    os.utime(stale, (1, 1))
    assert launcher() is not None
    assert not stale.exists()
    assert fresh.exists()  # another process may be building it now


def _wrapped(folder: Path, name: str, calls: Path, *, fail: bool = False) -> None:
    """A `name` on PATH in `folder` that logs its call, then fails or runs the real one."""
    folder.mkdir(exist_ok=True)
    real = shutil.which(name)
    then = "exit 1" if fail or real is None else f'exec {real} "$@"'
    (folder / name).write_text(f'#!/bin/sh\necho {name} "$@" >> {calls}\n{then}\n')
    (folder / name).chmod(0o755)


@pytest.mark.skipif(shutil.which("musl-gcc") is None, reason="musl-gcc is not installed here")
def test_without_cc_set_musl_builds_it_static_where_it_is_installed(cache, monkeypatch, tmp_path):
    calls = tmp_path / "compiler-calls"
    _wrapped(tmp_path / "bin", "musl-gcc", calls)
    _wrapped(tmp_path / "bin", "cc", calls)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    path = launcher()
    assert path is not None
    assert [line.split()[:3] for line in calls.read_text().splitlines()] == [
        ["musl-gcc", "-O2", "-static"]
    ]
    assert not _has_interpreter(Path(path))  # static: no dynamic loader to start


def _has_interpreter(program: Path) -> bool:
    """Whether the ELF file `program` names a dynamic loader (a PT_INTERP program header)."""
    data = program.read_bytes()
    assert data[:4] == b"\x7fELF"
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    if wide:
        offset, size, count = struct.unpack_from(order + "Q14xHH", data, 0x20)
    else:
        offset, size, count = struct.unpack_from(order + "I10xHH", data, 0x1C)
    kinds = [struct.unpack_from(order + "I", data, offset + i * size)[0] for i in range(count)]
    return 3 in kinds  # PT_INTERP


def test_the_interpreter_check_tells_a_linked_program_from_a_static_one(tmp_path):
    source = tmp_path / "empty.c"
    source.write_text("int main(void) { return 0; }\n")
    for flags, linked in (([], True), (["-static"], False)):
        program = tmp_path / f"empty{len(flags)}"
        subprocess.run(["cc", *flags, "-o", str(program), str(source)], check=True)
        assert _has_interpreter(program) is linked


def test_musl_installed_later_builds_a_launcher_of_its_own(cache, monkeypatch, tmp_path):
    if shutil.which("musl-gcc") is None or shutil.which("gcc") is None:
        pytest.skip("musl-gcc and gcc are not installed here")
    calls = tmp_path / "compiler-calls"
    tools = tmp_path / "tools"  # every program on PATH but musl-gcc: musl not installed yet
    tools.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        with contextlib.suppress(OSError):
            for program in Path(folder or ".").iterdir():
                if program.name != "musl-gcc" and not (tools / program.name).exists():
                    (tools / program.name).symlink_to(program)
    monkeypatch.setenv("PATH", str(tools))
    before = launcher()
    assert before is not None

    _wrapped(tmp_path / "musl", "musl-gcc", calls)
    monkeypatch.setenv("PATH", f"{tmp_path / 'musl'}:{tools}")
    reset()
    after = launcher()
    assert after is not None
    assert after != before
    assert [line.split()[0] for line in calls.read_text().splitlines()] == ["musl-gcc"]
    reset()
    assert launcher() == after  # and kept for the next process


def test_a_build_that_does_not_run_gives_way_to_the_next_recipe(cache, monkeypatch, tmp_path):
    calls = tmp_path / "compiler-calls"
    compiler = tmp_path / "odd-cc"
    # Its static build "succeeds" with a file that is no program; its linked build is real.
    compiler.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {calls}\n'
        'case " $* " in *" -static "*)\n'
        '  while [ "$1" != -o ]; do shift; done; echo "not a program" > "$2"; exit 0;;\n'
        "esac\n"
        f'exec {shutil.which("cc")} "$@"\n'
    )
    compiler.chmod(0o755)
    monkeypatch.setenv("CC", str(compiler))
    path = launcher()
    assert path is not None
    assert [line.split()[:2] for line in calls.read_text().splitlines()] == [
        ["-O2", "-static"],
        ["-O2", "-o"],
    ]
    assert _has_interpreter(Path(path))  # the linked one
    assert [item.name for item in cache.iterdir()] == [Path(path).name]


def test_when_musl_cannot_build_it_cc_does(cache, monkeypatch, tmp_path):
    calls = tmp_path / "compiler-calls"
    _wrapped(tmp_path / "bin", "musl-gcc", calls, fail=True)
    _wrapped(tmp_path / "bin", "cc", calls)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    assert launcher() is not None
    assert [line.split()[:3] for line in calls.read_text().splitlines()] == [
        ["musl-gcc", "-O2", "-static"],
        ["cc", "-O2", "-static"],
    ]


def _outcome(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    """What became of starting `argv`: its output, or the reason it did not start (as
    gradekit reads the launcher's)."""
    try:
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=10)
    except OSError as error:
        return f"not started: {os.strerror(error.errno or 0)}"
    failure = limits.exec_failure(done.returncode, done.stderr)
    return done.stdout if failure is None else f"not started: {failure}"


def test_the_launcher_finds_and_starts_a_command_as_subprocess_does(cache, tmp_path):
    path = launcher()
    assert path is not None
    echo = shutil.which("echo") or "/bin/echo"
    blocked, later, here = tmp_path / "blocked", tmp_path / "later", tmp_path / "here"
    for folder in (blocked, later, here):
        folder.mkdir()
    (blocked / "tool").write_text("#!/bin/sh\necho blocked\n")  # not executable
    (later / "tool").write_text("#!/bin/sh\necho later\n")
    (later / "tool").chmod(0o755)
    (blocked / "only-blocked").write_text("#!/bin/sh\necho never\n")
    (here / "plain").write_text("echo run by a shell\n")  # neither a program nor `#!`
    (here / "plain").chmod(0o755)
    (here / "local").write_text("#!/bin/sh\necho from the working folder\n")
    (here / "local").chmod(0o755)
    cases = [
        (["tool"], f"{blocked}:{later}"),  # a folder that cannot run it, then one that can
        (["only-blocked"], f"{blocked}:{later}"),  # the first error other than not found
        (["no-such-tool"], f"{blocked}:{later}"),
        (["./plain"], f"{later}"),  # never handed to /bin/sh
        (["local"], f":{later}"),  # an empty entry is the working folder
        (["local"], f"{later}"),
        ([echo, "as", "is"], ""),
        (["tool"], f"/{'a' * 5000}:{later}"),  # a folder whose path is too long, passed over
        (["no-such-tool"], f"/{'a' * 5000}:{later}"),
        (["no-such-tool"], f"{later}:{here / 'plain'}"),  # last, a file: "not a directory"
    ]
    for argv, search in cases:
        env = {"PATH": search}
        expected = _outcome(argv, env, here)
        assert _outcome([path, "-", "-", "-", *argv], env, here) == expected, (argv, search)
    assert (
        _outcome([path, "-", "-", "-", "tool"], {"PATH": f"{blocked}:{later}"}, here) == "later\n"
    )
    assert _outcome([path, "-", "-", "-", "./plain"], {}, here) == "not started: Exec format error"


def test_without_path_the_launcher_searches_bin_and_usr_bin(cache, tmp_path):
    path = launcher()
    assert path is not None
    assert _outcome([path, "-", "-", "-", "true"], {}, tmp_path) == ""
    name = "gradekit-test-nowhere-in-bin"
    assert _outcome([path, "-", "-", "-", name], {}, tmp_path) == (
        "not started: No such file or directory"
    )
