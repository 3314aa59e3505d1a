"""The judge at the network's pace: HTTP transports side by side, then gradekit's whole judge.

    .venv/bin/python bench/judge.py                          # 2,000 calls, 64 and 256 connections
    .venv/bin/python bench/judge.py --calls 500 --rounds 1   # quick

A child process serves an OpenAI-compatible `/v1/chat/completions` on 127.0.0.1 that answers
every request after `--delay` seconds (50 ms), over keep-alive HTTP/1.1 connections. This
process then sends `--calls` requests at each concurrency, once per transport:

- `httpx`: an `httpx.AsyncClient` as gradekit configured it before (every request wrapped in
  `asyncio.wait_for`, a `Timeout` object per request);
- `httpx-tuned`: the same client, the request bounded by httpx's own timeouts only;
- `aiohttp`: an `aiohttp.ClientSession` with an unlimited `TCPConnector`;
- `asyncio`: a plain HTTP/1.1 client over `asyncio.open_connection`, a pool of keep-alive
  connections (the floor: what the loop itself costs);

then gradekit's own judge (`prompt` graders in `gradekit run`, `--judge-concurrency` = the
concurrency): prompt, cache, transport, parse, report; and the peer, inspect_ai's judge
(`model_graded_qa` in an `eval` with `max_connections` = the concurrency, in inspect_ai's own
virtual environment, which bench/peers.py installs in bench/.peers/ with `openai` beside it),
timed whole in the same way. Each line prints requests a second
(wall) and CPU milliseconds a call of this process (`time.process_time`: the server's CPU is
the child's and not counted). Medians over `--rounds`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

REPLY = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "model": "bench-judge",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": json.dumps({"reasoning": "The answer is right.", "score": 9}),
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
    }
).encode()

SERVER = textwrap.dedent(
    """
    import asyncio, sys

    DELAY = float(sys.argv[1])
    BODY = sys.stdin.buffer.read()
    HEAD = (b"HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\n"
            b"content-length: %d\\r\\n\\r\\n" % len(BODY))

    class Judge(asyncio.Protocol):
        def connection_made(self, transport):
            self.transport, self.buffer = transport, b""

        def data_received(self, data):
            self.buffer += data
            loop = asyncio.get_running_loop()
            while True:
                end = self.buffer.find(b"\\r\\n\\r\\n")
                if end < 0:
                    return
                length = 0
                for line in self.buffer[:end].split(b"\\r\\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if len(self.buffer) < end + 4 + length:
                    return
                self.buffer = self.buffer[end + 4 + length:]
                loop.call_later(DELAY, self.answer)

        def answer(self):
            if not self.transport.is_closing():
                self.transport.write(HEAD + BODY)

    async def main():
        server = await asyncio.get_running_loop().create_server(Judge, "127.0.0.1", 0,
                                                                backlog=1024)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

    asyncio.run(main())
    """
)

REQUEST = {
    "model": "bench-judge",
    "messages": [
        {"role": "system", "content": "You grade answers."},
        {"role": "user", "content": "QUESTION: What is 6 x 7?\nANSWER: 42\nGrade it."},
    ],
    "temperature": 0,
    "max_tokens": 256,
}


def start_server(delay: float) -> tuple[subprocess.Popen[bytes], int]:
    """The judge server in a child process, and its port."""
    child = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(REPLY)
    child.stdin.close()
    port = int(child.stdout.readline())
    return child, port


Sender = Callable[[str, int, int], Awaitable[None]]


async def _many(calls: int, concurrency: int, one: Callable[[], Awaitable[None]]) -> None:
    """`calls` calls of `one`, at most `concurrency` in flight."""
    gate = asyncio.Semaphore(concurrency)

    async def bounded() -> None:
        async with gate:
            await one()

    await asyncio.gather(*(bounded() for _ in range(calls)))


async def send_httpx(url: str, calls: int, concurrency: int, *, tuned: bool = False) -> None:
    import httpx

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(limits=limits, follow_redirects=False) as client:

        async def one() -> None:
            if tuned:
                response = await client.post(url, json=REQUEST, timeout=30.0)
            else:
                timeout = httpx.Timeout(30.0, connect=10.0)
                response = await asyncio.wait_for(
                    client.post(url, json=REQUEST, headers={}, timeout=timeout), 30.0
                )
            json.loads(response.text)

        await _many(calls, concurrency, one)


async def send_aiohttp(url: str, calls: int, concurrency: int) -> None:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=30.0, connect=10.0)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def one() -> None:
            async with session.post(url, json=REQUEST) as response:
                json.loads(await response.read())

        await _many(calls, concurrency, one)


async def send_asyncio(url: str, calls: int, concurrency: int) -> None:
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, port = host_port.rsplit(":", 1)
    path = "/" + url.split("//", 1)[1].split("/", 1)[1]
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def one() -> None:
        if idle:
            reader, writer = idle.pop()
        else:
            reader, writer = await asyncio.open_connection(host, int(port))
        body = json.dumps(REQUEST).encode()
        writer.write(
            b"POST %s HTTP/1.1\r\nhost: %s\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n%s" % (path.encode(), host_port.encode(), len(body), body)
        )
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        json.loads(await reader.readexactly(length))
        idle.append((reader, writer))

    await _many(calls, concurrency, one)
    for _, writer in idle:
        writer.close()


def gradekit_judge(base_url: str, calls: int, concurrency: int, *, judge: bool = True) -> None:
    """`calls` cases graded by one `prompt` grader: `gradekit run --jobs CONCURRENCY
    --judge-concurrency CONCURRENCY --no-cache -o report.json` in a child process (its CPU is
    counted). `judge=False`: the same cases graded by `contains` instead (start-up, reading
    the suite and writing the report: what the judge's figure is measured above)."""
    folder = Path(tempfile.mkdtemp(prefix="bench-judge-"))
    suite = folder / "suite.yaml"
    cases = "\n".join(
        f"  - {{name: c{i}, input: 'What is {i} x 7?', output: '{i * 7}', expected: '{i * 7}'}}"
        for i in range(calls)
    )
    grader = (
        "name: judge-bench\ngraders:\n  - kind: prompt\n    name: judge\n"
        f"    model: bench-judge\n    base_url: {base_url}\n    api_key_env: BENCH_JUDGE_KEY\n"
        "    rubric: Is the answer right?\ncases:\n"
        if judge
        else "name: judge-bench\ngraders:\n  - {kind: regex, pattern: '^[0-9]+$'}\ncases:\n"
    )
    suite.write_text(grader + cases + "\n")
    command = [
        str(Path(sys.executable).with_name("gradekit")),
        "run",
        str(suite),
        "--no-cache",
        "--jobs",
        str(concurrency),
        "--judge-concurrency",
        str(concurrency),
        "-o",
        str(folder / "report.json"),
    ]
    environment = dict(os.environ, BENCH_JUDGE_KEY="none")
    try:
        done = subprocess.run(command, env=environment, capture_output=True, text=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(f"judge bench: gradekit exited {done.returncode}: {done.stderr[-2000:]}")


def inspect_ai_judge(base_url: str, calls: int, concurrency: int) -> None:
    """`calls` samples graded by inspect_ai's `model_graded_qa` against the same server, in a
    child process of inspect_ai's own interpreter (its CPU is counted)."""
    from peers import _imports, peer_python

    python = peer_python("inspect_ai")
    if isinstance(python, str):
        raise RuntimeError(python)
    if not _imports(python, "openai"):  # inspect_ai's OpenAI provider needs it
        subprocess.run([str(python), "-m", "pip", "install", "-q", "openai"], check=True)
    child = Path(__file__).resolve().parent / "peer_children" / "child_inspect_judge.py"
    with tempfile.TemporaryDirectory(prefix="bench-judge-inspect-") as logs:
        command = [str(python), str(child), base_url, str(calls), str(concurrency), logs]
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"inspect_ai exited {done.returncode}: {done.stderr[-2000:]}")


def _cpu() -> float:
    """CPU seconds of this process and its finished children (gradekit runs as a child)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(run: Callable[[], object], calls: int) -> tuple[float, float]:
    """(requests a second, CPU ms a call) of one run."""
    wall, cpu = time.perf_counter(), _cpu()
    run()
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    return calls / wall, cpu * 1000 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", default="64,256")
    parser.add_argument(
        "--only", default="httpx,httpx-tuned,aiohttp,asyncio,gradekit,no-judge,inspect_ai"
    )
    args = parser.parse_args()
    server, port = start_server(args.delay)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    senders: dict[str, Callable[[int, int], object]] = {
        "httpx": lambda n, c: asyncio.run(send_httpx(url, n, c)),
        "httpx-tuned": lambda n, c: asyncio.run(send_httpx(url, n, c, tuned=True)),
        "aiohttp": lambda n, c: asyncio.run(send_aiohttp(url, n, c)),
        "asyncio": lambda n, c: asyncio.run(send_asyncio(url, n, c)),
        "gradekit": lambda n, c: gradekit_judge(f"http://127.0.0.1:{port}/v1", n, c),
        "no-judge": lambda n, c: gradekit_judge("", n, c, judge=False),
        "inspect_ai": lambda n, c: inspect_ai_judge(f"http://127.0.0.1:{port}/v1", n, c),
    }
    chosen = args.only.split(",")
    try:
        print(f"{args.calls} calls, server delay {args.delay * 1000:g} ms, {args.rounds} rounds")
        print(f"{'transport':<12} {'conc':>5} {'req/s':>8} {'CPU ms/call':>12}")
        for concurrency in map(int, args.concurrency.split(",")):
            for name in chosen:
                send = senders[name]
                with contextlib.suppress(Exception):  # warm: imports, connections
                    send(min(args.calls, 200), concurrency)
                rates, cpus = [], []
                try:
                    for _ in range(args.rounds):
                        rate, cpu = measure(
                            lambda s=send, c=concurrency: s(args.calls, c), args.calls
                        )
                        rates.append(rate)
                        cpus.append(cpu)
                except Exception as error:  # a transport that cannot keep up: say so, go on
                    print(f"{name:<12} {concurrency:>5}   failed: {type(error).__name__}: {error}")
                    continue
                print(
                    f"{name:<12} {concurrency:>5} {statistics.median(rates):>8.0f} "
                    f"{statistics.median(cpus):>12.3f}",
                    flush=True,
                )
    finally:
        server.kill()


if __name__ == "__main__":
    main()
