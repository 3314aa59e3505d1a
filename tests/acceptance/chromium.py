"""Drive headless Chromium for the HTML report tests, with the standard library only.

`dump_dom(url)` is Chromium's `--dump-dom`: the DOM after the page's scripts ran.
`Browser` speaks the DevTools protocol over `--remote-debugging-pipe` (JSON messages ended by
a NUL byte on file descriptors 3 and 4), to evaluate JavaScript in a page as a user's clicks
and keystrokes would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


def chromium() -> str:
    """The Chromium binary; skip the test when absent, except in CI, where it must exist."""
    if os.path.exists(CHROMIUM):
        return CHROMIUM
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing in CI: .ci/run must install Debian's chromium")
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium); CI runs this test")


def dump_dom(url: str, timeout: float = 60) -> str:
    """The page's DOM, serialised after its scripts ran."""
    binary = chromium()
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [binary, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class Browser:
    """One headless Chromium driven over the DevTools pipe."""

    def __init__(self) -> None:
        binary = chromium()
        self._profile = tempfile.mkdtemp(prefix="gradekit-chromium-")
        to_chrome_read, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_write = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4: a small Python step
        # puts the pipe ends there, then becomes Chromium (no preexec_fn: unsafe with threads;
        # no shell: dash cannot name descriptors above 9).
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _PLACE_FDS,
                str(to_chrome_read),
                str(from_chrome_write),
                binary,
                *FLAGS,
                f"--user-data-dir={self._profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(to_chrome_read, from_chrome_write),
        )
        os.close(to_chrome_read)
        os.close(from_chrome_write)
        self._buffer = b""
        self._next_id = 0
        self._session: str | None = None

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30) -> Any:
        """Send one command (to the attached page, once there is one) and return its result."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self._session is not None and not method.startswith("Target."):
            message["sessionId"] = self._session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_chrome], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        result: dict[str, Any] = json.loads(message)
        return result

    def open(self, url: str) -> None:
        """Open `url` in a new page and wait until its scripts have run."""
        target = self.call("Target.createTarget", {"url": url})["targetId"]
        attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        self._session = attached["sessionId"]
        # A new target shows about:blank first, itself "complete": wait for the page itself.
        base = json.dumps(url.split("#", 1)[0].split("?", 1)[0])
        loaded = f"location.href.startsWith({base}) && document.readyState === 'complete'"
        deadline = time.monotonic() + 30
        while self.evaluate(loaded) is not True:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not finish loading")
            time.sleep(0.05)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise's, once settled)."""
        reply = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def resize(self, width: int, height: int) -> None:
        """Give the page a window of `width` x `height` CSS pixels."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def screenshot(self, path: Path) -> Path:
        """Save what the page shows now as a PNG at `path`."""
        import base64

        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        """Stop Chromium and remove its profile."""
        os.close(self._to_chrome)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._from_chrome)
        shutil.rmtree(self._profile, ignore_errors=True)


_PLACE_FDS = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
    "os.execv(sys.argv[3], sys.argv[3:])"
)


def file_url(path: Path) -> str:
    """`file://` URL of a local file."""
    return path.resolve().as_uri()
