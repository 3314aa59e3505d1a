"""`gradekit schema` in an editor: yaml-language-server (from npm) spoken to over LSP.

The schema is what `gradekit schema` prints (`suite_schema()` of every installed kind, the
packs' included), mapped onto `*.yaml` through `yaml.schemas`; each test opens a suite and
reads what the server reports, completes and shows, as an editor would.
"""

from __future__ import annotations

import itertools
import json
import queue
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gradekit.registry.registry import default_registry
from gradekit.suite.schema import suite_schema

pytestmark = pytest.mark.slow  # npm installs the server: about 20 s

_WAIT = 60.0


class Server:
    """yaml-language-server over stdio: JSON-RPC requests, and the notifications it sends."""

    def __init__(self, command: list[str], settings: dict[str, Any], root: Path) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.settings = settings
        self.root = root
        self.ids = itertools.count(1)
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        threading.Thread(target=self._read, daemon=True).start()
        capabilities = {
            "textDocument": {
                "completion": {"completionItem": {"snippetSupport": True}},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
            },
            "workspace": {"configuration": True},
        }
        self.request(
            "initialize",
            {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities},
        )
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration", {"settings": settings})

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while (line := stream.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if not line:
                self.messages.put(None)
                return
            self.messages.put(json.loads(stream.read(length)))

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        stdin.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"method": method, "params": params})

    def _until(self, found: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            message = self.messages.get(timeout=_WAIT)
            if message is None:
                raise RuntimeError("yaml-language-server exited")
            if message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                self.diagnostics[params["uri"]] = params["diagnostics"]
            elif "method" in message and "id" in message:  # the server asks: answer
                result: Any = None
                if message["method"] == "workspace/configuration":
                    result = [
                        self.settings.get(item.get("section"))
                        for item in message["params"]["items"]
                    ]
                self._send({"id": message["id"], "result": result})
            if found(message):
                return message

    def request(self, method: str, params: dict[str, Any]) -> Any:
        number = next(self.ids)
        self._send({"id": number, "method": method, "params": params})
        reply = self._until(lambda message: message.get("id") == number and "method" not in message)
        assert "error" not in reply, reply
        return reply["result"]

    def open(self, path: Path, text: str) -> list[dict[str, Any]]:
        """Open `text` as the document `path`; its diagnostics."""
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        document = {"uri": uri, "languageId": "yaml", "version": 1, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": document})
        self._until(
            lambda message: (
                message.get("method") == "textDocument/publishDiagnostics"
                and message["params"]["uri"] == uri
            )
        )
        return self.diagnostics[uri]

    def at(self, method: str, path: Path, line: int, character: int) -> Any:
        position = {"line": line, "character": character}
        return self.request(method, {"textDocument": {"uri": path.as_uri()}, "position": position})

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=_WAIT)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm and node are needed to install and run yaml-language-server")
    tools = tmp_path_factory.mktemp("yaml-ls")
    installed = subprocess.run(
        [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(tools),
            "yaml-language-server@1",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if installed.returncode != 0:
        pytest.skip(f"npm could not install yaml-language-server: {installed.stderr[-500:]}")
    suites = tmp_path_factory.mktemp("suites")
    schema = suites / "suite.schema.json"
    schema.write_text(json.dumps(suite_schema()), encoding="utf-8")
    settings = {"yaml": {"schemas": {schema.as_uri(): "*.yaml"}, "validate": True}}
    binary = tools / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"
    started = Server([node, str(binary), "--stdio"], settings, suites)
    yield started
    started.close()


@pytest.fixture
def suite(server: Server, request: pytest.FixtureRequest) -> Path:
    """A fresh suite file's path, named for the test, where the schema applies (`*.yaml`)."""
    return server.root / f"{request.node.name}.yaml"


def _labels(completion: Any) -> list[str]:
    items = completion["items"] if isinstance(completion, dict) else completion
    return [item["label"] for item in items]


def test_a_wrong_kind_is_reported_with_the_installed_kinds(server: Server, suite: Path) -> None:
    diagnostics = server.open(suite, "cases:\n  - graders:\n      - kind: contians\n")
    assert len(diagnostics) == 1
    (wrong,) = diagnostics
    assert wrong["range"]["start"] == {"line": 2, "character": 14}
    assert wrong["message"].startswith('Value is not accepted. Valid values: "all", "any", ')
    for kind in ("code", "contains", "not_contains", "regex", "prompt"):
        assert f'"{kind}"' in wrong["message"]


def test_kind_completes_every_installed_kind(server: Server, suite: Path) -> None:
    server.open(suite, "cases:\n  - graders:\n      - kind: \n")
    labels = _labels(server.at("textDocument/completion", suite, 2, 14))
    assert labels == list(default_registry.kinds())


def test_an_entry_under_graders_completes_to_a_kind_and_its_required_options(
    server: Server, suite: Path
) -> None:
    server.open(suite, "graders:\n  - \ncases: []\n")
    items = server.at("textDocument/completion", suite, 1, 4)
    snippets = {item["label"]: item for item in items["items"]}
    for kind in default_registry.kinds():
        assert kind in snippets
    assert snippets["regex"]["insertText"].startswith("kind: regex\n  pattern:")
    assert snippets["at_least"]["insertText"].startswith("kind: at_least\n  count:")
    assert "Passes when the pattern is found" in json.dumps(snippets["regex"])


def test_hover_on_an_option_shows_its_description(server: Server, suite: Path) -> None:
    server.open(
        suite, "cases:\n  - graders:\n      - kind: numeric\n        accept_percent: true\n"
    )
    hover = server.at("textDocument/hover", suite, 3, 12)
    assert "Read 14.14% (or 14.14 %) as 0.1414." in hover["contents"]["value"]


def test_composites_are_checked_inside(server: Server, suite: Path) -> None:
    text = (
        "cases:\n"
        "  - graders:\n"
        "      - kind: all\n"
        "        graders:\n"
        "          - kind: at_least\n"
        "            graders: [{kind: equality}]\n"
        "          - kind: regex\n"
        "            pattern: a\n"
        "            ful_match: true\n"
    )
    found = {(d["range"]["start"]["line"], d["message"]) for d in server.open(suite, text)}
    assert found == {(4, 'Missing property "count".'), (8, "Property ful_match is not allowed.")}
