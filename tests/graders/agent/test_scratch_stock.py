"""Scratch roots made ahead (`graders._sandbox.stock`), on real folders and real commands:
each grade still gets a fresh, empty root of its own, and none is left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import gradekit
from gradekit import Sample
from gradekit.graders._sandbox import remover, stock

PY = sys.executable

LOOK_AND_LITTER = (
    "import json, os\n"
    "home, tmp = os.environ['HOME'], os.environ['TMPDIR']\n"
    "seen = {'home': home, 'in_home': os.listdir(home), 'in_tmp': os.listdir(tmp),\n"
    "        'in_cwd': os.listdir('.')}\n"
    "open(os.path.join(home, '.history'), 'w').write('x')\n"
    "open(os.path.join(tmp, 'left.txt'), 'w').write('x')\n"
    "os.mkdir('build')\n"
    "print(json.dumps(seen))\n"
)


def test_every_grade_gets_a_fresh_empty_root_though_roots_are_made_ahead() -> None:
    grader = gradekit.create("program", config={"command": [PY, "-c", LOOK_AND_LITTER]})
    seen = []
    for _ in range(12):
        result = grader.grade(Sample(output=""))
        assert result.passed, result
        assert result.details is not None
        seen.append(json.loads(result.details["stdout"]))
        time.sleep(0.01)  # the stocker refills meanwhile
    # Each grade littered its home, temp folder and working folder; the next saw none of it.
    assert all(s["in_home"] == [] and s["in_tmp"] == [] and s["in_cwd"] == [] for s in seen)
    assert len({s["home"] for s in seen}) == 12
    assert remover.drain(10)
    assert not any(os.path.exists(s["home"]) for s in seen)  # littered roots removed too


EXITS = """
import gradekit, sys
from gradekit import Sample
grader = gradekit.create("program", config={"command": [sys.executable, "-c", "pass"]})
for _ in range(3):
    assert grader.grade(Sample(output="")).passed
import time, os
from gradekit.graders._sandbox import stock
deadline = time.monotonic() + 10
while len(stock._ready) < stock.STOCK and time.monotonic() < deadline:
    time.sleep(0.01)
print(len(stock._ready), len(os.listdir(sys.argv[1])), flush=True)
"""


def test_the_stock_is_removed_when_gradekit_exits(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    done = subprocess.run(
        [PY, "-c", EXITS, str(tmp)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    ready, present = map(int, done.stdout.split())
    assert ready == stock.STOCK and present >= stock.STOCK  # the stock was there
    assert os.listdir(tmp) == []


def test_a_forked_child_never_takes_a_root_of_its_parents_stock() -> None:
    first = stock.fresh_root()  # starts the stocker
    deadline = time.monotonic() + 10
    while len(stock._ready) < stock.STOCK and time.monotonic() < deadline:
        time.sleep(0.01)
    parents = set(stock._ready)
    assert parents
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(write, str(stock.fresh_root()).encode())
        finally:
            os._exit(0)
    os.close(write)
    taken = Path(os.read(read, 4096).decode())
    os.close(read)
    os.waitpid(pid, 0)
    assert taken not in parents
    assert f"gradekit-sandbox-{pid}-" in taken.name  # the child's own, swept once it is gone
    assert set(stock._ready) == parents
    for root in (taken, first):
        (root / "home").rmdir()
        (root / "tmp").rmdir()
        root.rmdir()
