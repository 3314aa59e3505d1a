"""The `samples()` strategy: gradekit.Samples as a suite gives them to graders.

Outputs and expected values are drawn together, so that graders see equal pairs and near
misses as well as unrelated answers; workspaces are real folders.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs
from hypothesis import strategies as st

from gradekit._types import Sample
from gradekit.testing._strategies import answers, small_json, tool_calls
from gradekit.testing._text import texts

__all__ = ["samples"]


# -- workspaces --------------------------------------------------------------------------

_FOLDERS: Final = ("", "", "src/", "tests/", "src/pkg/", ".git/", "node_modules/")
_STEMS: Final = ("main", "solution", "test_main", "README", "notes", "data", "__init__")
_SUFFIXES: Final = ("", ".py", ".txt", ".md", ".json", ".js", ".toml", ".log")
_SNIPPETS: Final = (
    "def main():\n    print(42)\n\nmain()\n",
    "print('hello')\n",
    '{"answer": 42}\n',
    "import os\nos.environ\n",
    "",
)


@functools.cache
def _workspace_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="gradekit-contract-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def _make_workspace(files: Mapping[str, str]) -> str:
    folder = Path(tempfile.mkdtemp(dir=_workspace_root()))
    for name, text in files.items():
        path = folder / name
        if any(parent.is_file() for parent in path.parents):
            continue  # `a` is a file already: `a/b` cannot be made
        if path.is_dir():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return str(folder)


@functools.cache
def _workspaces() -> st.SearchStrategy[str]:
    contents = st.one_of(st.sampled_from(_SNIPPETS), texts(huge=False))
    names = st.builds(
        "{}{}{}".format,
        st.sampled_from(_FOLDERS),
        st.one_of(st.sampled_from(_STEMS), st.text("abcxyz_0189", min_size=1, max_size=6)),
        st.sampled_from(_SUFFIXES),
    )
    files = st.dictionaries(names, contents, max_size=4)
    return files.map(_make_workspace)


# -- samples -----------------------------------------------------------------------------


@functools.cache
def _earlier_turn() -> st.SearchStrategy[Sample]:
    return st.builds(
        Sample,
        input=st.one_of(st.none(), texts(huge=False)),
        output=answers(),
        expected=st.one_of(st.none(), answers()),
        tool_calls=st.lists(tool_calls(), max_size=1),
    )


@functools.cache
def _parts() -> dict[str, st.SearchStrategy[Any]]:
    # Built once: a strategy made inside a draw is validated again on every draw, which
    # costs more than the drawing itself.
    return {
        "input": st.one_of(st.none(), texts(huge=False)),
        "case": st.text(max_size=12),
        "context": st.one_of(st.none(), st.lists(texts(huge=False), max_size=2)),
        "metadata": st.dictionaries(st.text(max_size=8), small_json(), max_size=2),
    }


@st.composite
def _near_miss(draw: st.DrawFn, text: str) -> str:
    words = text.split()
    how = draw(st.sampled_from((0, 1, 1, 2, 3, 4)))
    if how == 0:
        start = draw(st.integers(0, len(words)))
        return " ".join(words[start : draw(st.integers(start, len(words)))])
    if how == 1:
        return " ".join(words + words)
    if how == 2:
        return text.swapcase()
    if how == 3:
        return " ".join(words)
    return f" {text}\n"


@st.composite
def _answer_and_expected(draw: st.DrawFn, require_expected: bool) -> tuple[Any, Any]:
    # Shrinks towards no expected value (when optional), then towards the output itself;
    # most often a near miss of one by the other (some of its words, its words twice,
    # another case, other whitespace), else independent answers.
    relation = draw(st.sampled_from((0, 1, 2, 2, 2, 3)[int(require_expected) :]))
    output = draw(answers())
    if relation == 0:
        return output, None
    if relation == 1:
        return output, "" if output is None and require_expected else output
    if relation == 2 and isinstance(output, str):
        near = draw(_near_miss(output))
        return (near, output) if draw(st.booleans()) else (output, near)
    expected = draw(answers())
    return output, "" if expected is None and require_expected else expected


@st.composite
def _sample(
    draw: st.DrawFn,
    *,
    require_expected: bool,
    require_tool_calls: bool,
    require_history: bool,
    require_workspace: bool,
) -> Sample:
    parts = _parts()
    output, expected = draw(_answer_and_expected(require_expected))
    case = draw(parts["case"])
    # Earlier turns and workspaces cost the most to draw (a workspace is a real folder), so
    # unless required they come in about one sample in four.
    history: list[Sample] = []
    if require_history or draw(st.integers(0, 3)) == 3:
        earlier = draw(st.lists(_earlier_turn(), min_size=1, max_size=2))
        history = [attrs.evolve(turn, case=case, turn=index) for index, turn in enumerate(earlier)]
    workspace = None
    if require_workspace or draw(st.integers(0, 3)) == 3:
        workspace = draw(_workspaces())
    return Sample(
        case=case,
        turn=len(history),
        input=draw(parts["input"]),
        output=output,
        expected=expected,
        tool_calls=draw(st.lists(tool_calls(), min_size=int(require_tool_calls), max_size=2)),
        context=draw(parts["context"]),
        history=history,
        workspace=workspace,
        metadata=draw(parts["metadata"]),
    )


def samples(
    *,
    require_expected: bool = False,
    require_tool_calls: bool = False,
    require_history: bool = False,
    require_workspace: bool = False,
) -> st.SearchStrategy[Sample]:
    """Samples as a suite gives them to graders.

    `output` and `expected` are texts (see `texts()`), numbers as text (see
    `numbers_as_text()`) or other YAML values; `expected` is often the output itself and
    sometimes None. Tool calls, retrieval context, earlier turns (`history`, with turn indexes
    that follow on), a real workspace folder (a fresh temporary folder holding a few files,
    removed when the process exits) and metadata come and go. The `require_*` options make
    one always present: a non-None `expected`, at least one tool call, at least one earlier
    turn, a workspace folder.
    """
    return _sample(
        require_expected=require_expected,
        require_tool_calls=require_tool_calls,
        require_history=require_history,
        require_workspace=require_workspace,
    )
