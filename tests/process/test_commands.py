"""The sandboxed process runner, on real child processes."""

from __future__ import annotations

import asyncio
import errno
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from gradekit.core.errors import CommandError
from gradekit.process.commands import (
    Limits,
    ProcessResult,
    resolve,
    run,
    run_async,
)
from gradekit.process.scratch import Sandbox

Workspace = Callable[[Mapping[str, str]], Path]
Gone = Callable[..., bool]
PY = sys.executable


def python(box: Sandbox, code: str, **kwargs: object) -> ProcessResult:
    options: dict[str, object] = {"timeout": 10.0, "env": box.env(), **kwargs}
    return run([PY, "-c", code], cwd=box.cwd, **options)  # type: ignore[arg-type]


def test_no_shell_is_involved() -> None:
    with Sandbox(None) as box:
        echo = resolve("echo", box.env(), box.cwd)
        result = run([echo, "a; rm -rf /", "$HOME", "*"], cwd=box.cwd, env=box.env(), timeout=5)
    assert result.exit_code == 0
    assert result.stdout == "a; rm -rf / $HOME *\n"


def test_grandchild_left_sleeping_is_killed_at_timeout(gone: Gone) -> None:
    with Sandbox(None) as box:
        started = time.monotonic()
        result = python(
            box,
            "import subprocess, sys, time\n"
            "child = subprocess.Popen(['sleep', '300'])\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(300)\n",
            timeout=1.0,
        )
    elapsed = time.monotonic() - started
    grandchild = int(result.stdout.split()[0])
    assert result.timed_out
    assert result.exit_code == -1
    assert elapsed < 3.0
    assert gone(grandchild)


def test_background_children_are_killed_when_the_command_exits(gone: Gone) -> None:
    with Sandbox(None) as box:
        started = time.monotonic()
        result = python(
            box, "import subprocess\nprint(subprocess.Popen(['sleep', '300']).pid)", timeout=20
        )
    assert result.exit_code == 0
    assert not result.timed_out
    assert time.monotonic() - started < 5.0  # not held until the timeout by the open pipe
    assert gone(int(result.stdout))


def test_fifty_megabytes_of_output_are_cut_with_a_marker() -> None:
    with Sandbox(None) as box:
        started = time.monotonic()
        result = python(
            box,
            "import sys\n"
            "chunk = 'x' * 1_000_000\n"
            "for _ in range(50): sys.stdout.write(chunk); sys.stderr.write('e' * 1000)\n",
            limits=Limits(output=1024 * 1024),
        )
    assert result.exit_code == 0
    assert time.monotonic() - started < 10.0
    assert result.stdout_cut
    assert not result.stderr_cut
    assert result.stdout == (
        "x" * 1024 * 1024 + f"\n[gradekit: output cut at 1048576 bytes; "
        f"{50_000_000 - 1024 * 1024} more bytes dropped]"
    )
    assert result.stderr == "e" * 50_000


def test_secret_in_the_parent_environment_never_reaches_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("DECLARED", "passed-on")
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    with Sandbox(None) as box:
        import json

        seen = json.loads(python(box, code, env=box.env()).stdout)
        declared = json.loads(
            python(box, code, env=box.env({"DECLARED": None, "MODE": "test"})).stdout
        )
        home, tmp = str(box.home), str(box.tmp)
    assert "OPENAI_API_KEY" not in seen
    assert seen["HOME"] == home and seen["TMPDIR"] == tmp
    assert set(seen) - {"LC_CTYPE"} <= {"PATH", "HOME", "LANG", "TMPDIR"}
    assert declared["DECLARED"] == "passed-on" and declared["MODE"] == "test"
    assert "OPENAI_API_KEY" not in declared


def test_workspace_is_copied_and_never_modified(workspace: Workspace) -> None:
    root = workspace({"data.txt": "original"})
    code = "open('data.txt', 'w').write('changed'); open('new.txt', 'w').write('x')"
    with Sandbox(root) as box:
        assert python(box, code).exit_code == 0
        assert (box.cwd / "data.txt").read_text() == "changed"
        scratch = box.root
    assert (root / "data.txt").read_text() == "original"
    assert not (root / "new.txt").exists()
    assert not scratch.exists()


def test_copy_workspace_false_runs_in_place(workspace: Workspace) -> None:
    root = workspace({"data.txt": "original"})
    with Sandbox(root, copy=False) as box:
        python(box, "open('data.txt', 'w').write('changed')")
    assert (root / "data.txt").read_text() == "changed"
    assert root.exists()


def test_symlinks_are_copied_as_links_not_followed(workspace: Workspace) -> None:
    root = workspace({"a.txt": "a"})
    os.symlink("/etc", root / "etc")
    with Sandbox(root) as box:
        assert (box.cwd / "etc").is_symlink()


def test_memory_limit_stops_a_hungry_command() -> None:
    with Sandbox(None) as box:
        result = python(box, "x = bytearray(512 * 1024 * 1024)", limits=Limits(memory=64 << 20))
    assert result.exit_code == 1
    assert "MemoryError" in result.stderr


def test_cpu_limit_kills_a_spinning_command() -> None:
    with Sandbox(None) as box:
        result = python(box, "while True: pass", limits=Limits(cpu=1), timeout=20)
    assert result.exit_code < 0  # SIGXCPU, then SIGKILL at the hard limit
    assert not result.timed_out


def test_network_false_cannot_reach_a_server_the_parent_can() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        "    print('connected')\n"
        "except OSError as e:\n"
        "    print('refused', e.errno)\n"
        "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]))\n"
    )
    try:
        with Sandbox(None) as box:
            allowed = python(box, code)
            isolated = python(box, code, network=False)
    finally:
        server.close()
    assert allowed.stdout.splitlines()[0] == "connected"
    assert isolated.exit_code == 0, isolated.stderr
    outcome, interfaces = isolated.stdout.splitlines()
    assert outcome == f"refused {errno.ENETUNREACH}"
    assert interfaces == "['lo']"


def test_stdin_of_several_megabytes_is_fed_without_deadlock() -> None:
    data = "line\n" * 1_000_000
    with Sandbox(None) as box:
        result = python(
            box, "import sys; d = sys.stdin.read(); print(len(d)); print(d[:5], end='')", stdin=data
        )
    assert result.stdout == f"{len(data)}\nline\n"


def test_a_command_that_stops_reading_stdin_is_fine() -> None:
    with Sandbox(None) as box:
        result = python(box, "print('done')", stdin="x" * 5_000_000)
    assert result.exit_code == 0
    assert result.stdout == "done\n"


def test_command_not_found() -> None:
    with Sandbox(None) as box, pytest.raises(CommandError) as caught:
        resolve("gradekit-no-such-tool", box.env(), box.cwd)
    assert str(caught.value) == (
        "command 'gradekit-no-such-tool' not found on PATH; install it or give its full path"
    )


def test_cancelling_run_async_kills_the_group(gone: Gone) -> None:
    async def main() -> float:
        with Sandbox(None) as box:
            marker = box.tmp / "pid"
            code = (
                "import subprocess, time\n"
                f"open({str(marker)!r}, 'w').write(str(subprocess.Popen(['sleep', '300']).pid))\n"
                "time.sleep(300)\n"
            )
            task = asyncio.ensure_future(
                run_async([PY, "-c", code], cwd=box.cwd, env=box.env(), timeout=60)
            )
            while not marker.exists() or not marker.read_text():
                await asyncio.sleep(0.05)
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            pid = int(marker.read_text())
            assert gone(pid, within=5.0)
            return time.monotonic() - started

    assert asyncio.run(main()) < 3.0


def test_many_commands_run_in_parallel() -> None:
    async def main() -> list[ProcessResult]:
        with Sandbox(None) as box:
            sleep = resolve("sleep", box.env(), box.cwd)
            jobs = [
                run_async([sleep, "1"], cwd=box.cwd, env=box.env(), timeout=10) for _ in range(8)
            ]
            return await asyncio.gather(*jobs)

    started = time.monotonic()
    results = asyncio.run(main())
    assert [r.exit_code for r in results] == [0] * 8
    assert time.monotonic() - started < 3.0
