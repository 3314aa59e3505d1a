"""The code path of the `code` kind resolves with importlib and getattr only."""

from __future__ import annotations

from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[3] / "src" / "gradekit"
FILES = ["code.py", "graders/user_code.py"]


@pytest.mark.parametrize("relative", FILES)
def test_no_exec_eval_or_compile(relative: str) -> None:
    text = (SOURCE / relative).read_text(encoding="utf-8")
    found = [word for word in ("exec(", "eval(", "compile(") if word in text]
    assert found == [], f"{relative} contains {found}"


def test_resolution_uses_import_module_and_getattr() -> None:
    text = (SOURCE / "graders/user_code.py").read_text(encoding="utf-8")
    assert "importlib.import_module(" in text
    assert "getattr(" in text
    assert "__import__(" not in text
