"""Strategies for gradekit's values: texts, answers, tool calls, samples, grade results,
grader entries.

Every strategy builds values the way a suite file or an agent trace would give them: YAML
values for answers, JSON values for tool arguments and details.

`texts()` aims at what breaks text graders: the empty string, very long answers, control and
format characters, and one word in several Unicode normalisation forms. `numbers_as_text()`
aims at what breaks number parsing: signs, separators, exponents, percentages and look-alikes.
`samples()` gives gradekit.Samples as a suite gives them to graders: outputs and expected
values are drawn together, so that graders see equal pairs and near misses as well as
unrelated answers; workspaces are real folders.
"""

from __future__ import annotations

import atexit
import functools
import math
import shutil
import tempfile
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

import attrs
from hypothesis import strategies as st

from gradekit.core.types import GradeResult, Sample, ToolCall

__all__ = [
    "HUGE_TEXT_SIZE",
    "answers",
    "grade_results",
    "grader_entries",
    "json_values",
    "kind_names",
    "numbers_as_text",
    "samples",
    "small_json",
    "texts",
    "tool_calls",
]


HUGE_TEXT_SIZE: Final = 100_000
"""About how many characters a "huge" text from `texts()` has."""

# Characters with canonical or compatibility decompositions, and combining marks, so the
# same word can be written in NFC, NFD, NFKC and NFKD and still look the same.
_COMPOSABLE: Final = "eéèêAÅåñçöüÿǅﬁ①½ｱ가각ḱṩΩΩ\u0301\u0308\u0327 "
_Form = Literal["NFC", "NFD", "NFKC", "NFKD"]
_FORMS: Final[tuple[_Form, ...]] = ("NFC", "NFD", "NFKC", "NFKD")


# A small vocabulary, so outputs and expected texts share words, and repeat them.
_WORDS: Final = ("the", "a", "is", "Paris", "paris", "42", "0", "yes", "no", "I", "cannot", "é")


def _repeated(text: str) -> str:
    return text * (HUGE_TEXT_SIZE // len(text) + 1)


def _mixed_forms() -> st.SearchStrategy[str]:
    part = st.tuples(st.text(st.sampled_from(_COMPOSABLE), max_size=8), st.sampled_from(_FORMS))
    return st.lists(part, min_size=1, max_size=4).map(
        lambda parts: "".join(unicodedata.normalize(form, text) for text, form in parts)
    )


@functools.cache
def texts(*, huge: bool = True) -> st.SearchStrategy[str]:
    """Texts that break text graders: any unicode, the empty string, huge texts, control and
    format characters, whitespace-only texts, mixed normalisation forms (the same word in NFC
    and NFD), and sentences of a few common words (which outputs and expected texts share).
    `huge=False` leaves out the texts of about `HUGE_TEXT_SIZE` characters."""
    choices = [
        st.text(),
        st.just(""),
        st.text(st.characters(categories=["Cc", "Cf", "Zl", "Zp"]), max_size=10),
        st.text(st.sampled_from(" \t\n\r\x0b\x0c\u00a0\u2028\u3000\ufeff"), max_size=6),
        _mixed_forms(),
        st.text(st.characters(codec="ascii"), max_size=30),
        st.lists(st.sampled_from(_WORDS), max_size=8).map(" ".join),
    ]
    if huge:
        choices.append(st.text(min_size=1, max_size=8).map(_repeated))
    return st.one_of(choices)


_SIGNS: Final = ("", "", "+", "-", "\u2212")
_SEPARATORS: Final = (",", "_", "\u00a0", "\u202f", "'", " ", ".")
# Texts that look like numbers, or nearly: each one has broken some parser somewhere.
_EDGE_CASES: Final = (
    "0",
    "-0",
    "0.0",
    ".5",
    "5.",
    "-.5e-3",
    "1e999999",
    "1e-999999",
    "NaN",
    "nan",
    "inf",
    "-Infinity",
    "∞",
    "1,000.5",
    "1.000,5",
    "1,00,000",
    "١٢٣",
    "\uff11\uff12\uff13",  # fullwidth digits
    "$1,234.56",
    "(42)",
    "42 %",
    "0x1F",
    "1_000",
    "--1",
    "+-1",
    "1e",
    "e5",
    "",
    " ",
    "%",
)


@st.composite
def _written_number(draw: st.DrawFn) -> str:
    integer = draw(st.integers(min_value=0, max_value=10**18))
    text = str(integer)
    if draw(st.booleans()):
        separator = draw(st.sampled_from(_SEPARATORS))
        text = f"{integer:,}".replace(",", separator)
    if draw(st.booleans()):
        text += "." + draw(st.from_regex(r"\A[0-9]{1,8}\Z"))
    if draw(st.booleans()):
        sign = draw(st.sampled_from(_SIGNS))
        text += draw(st.sampled_from("eE")) + sign + str(draw(st.integers(0, 400)))
    if draw(st.booleans()):
        text += draw(st.sampled_from(("%", " %", "\u00a0%")))
    return draw(st.sampled_from(_SIGNS)) + text


@functools.cache
def numbers_as_text() -> st.SearchStrategy[str]:
    """Numbers as an agent writes them: integers, decimals, exponents (`1e-6`, `2E+10`),
    percentages, thousands separators (`,` `_` `'`, no-break and thin spaces), signs
    (`+`, `-`, the minus sign `\u2212`), sometimes with surrounding text or whitespace, plus
    edge cases such as `NaN`, `1e999999`, `1.000,5` and non-ASCII digits."""
    plain = st.one_of(
        st.integers().map(str),
        st.decimals(allow_nan=False, allow_infinity=False).map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        _written_number(),
        st.sampled_from(_EDGE_CASES),
    )
    padded = st.tuples(st.sampled_from(("", " ", "\n", "\t")), plain, st.sampled_from(("", " ")))
    worded = st.tuples(st.sampled_from(("The answer is ", "≈ ", "Total: ")), plain)
    return st.one_of(
        plain,
        padded.map("".join),
        worded.map(lambda parts: parts[0] + parts[1] + "."),
    )


_KIND: Final = r"\A[a-z][a-z0-9_]{0,8}(\.[a-z0-9_]{1,8}){0,2}\Z"


@functools.cache
def kind_names() -> st.SearchStrategy[str]:
    """Valid kind names, dotted or not (`numeric`, `acme.rouge_l`)."""
    return st.from_regex(_KIND)


def _json_scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
    )


@functools.cache
def json_values(*, max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Strict JSON values: null, booleans, integers, finite floats, text, lists and objects."""
    return st.recursive(
        _json_scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=max_leaves,
    )


def _shallow(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # One level of lists and mappings: inside samples, drawing is most of the contract's
    # time, and recursive strategies cost the most to draw and to shrink.
    return st.one_of(
        scalars,
        st.lists(scalars, max_size=3),
        st.dictionaries(st.text(max_size=6), scalars, max_size=3),
    )


@functools.cache
def small_json() -> st.SearchStrategy[Any]:
    """JSON values one level deep: scalars, and lists or objects of scalars."""
    return _shallow(_json_scalars())


@functools.cache
def _yaml_values() -> st.SearchStrategy[Any]:
    # What YAML can hand a grader as `output` or `expected`: NaN and infinities included.
    return _shallow(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.floats(),
            texts(huge=False),
            numbers_as_text(),
        )
    )


@functools.cache
def answers() -> st.SearchStrategy[Any]:
    """What an agent answers, as a suite gives it: mostly text and numbers as text, sometimes
    any other YAML value (numbers, booleans, lists, mappings, null), NaN and the infinities
    among them (`.nan`, `.inf`)."""
    return _answers()


@st.composite
def _answers(draw: st.DrawFn) -> Any:
    # NaN and the infinities about one answer in 12, chosen apart: as one branch of a one_of
    # they came one answer in 70 (one_of flattens nested one_ofs into branches of equal
    # chance), and a search of 200 samples could miss them. The finite branch is the one
    # shrinking leads to.
    if draw(st.integers(0, 11)) == 11:
        return draw(st.sampled_from(_NOT_FINITE))
    return draw(st.one_of(texts(), numbers_as_text(), _yaml_values()))


_NOT_FINITE: Final = (math.nan, math.inf, -math.inf)


@functools.cache
def tool_calls() -> st.SearchStrategy[ToolCall]:
    """Tool calls as traces record them: a name, JSON arguments, a result or an error, and
    sometimes the agent-loop turn."""
    names = st.one_of(
        st.sampled_from(["read_file", "edit_file", "run_tests", "search", "mcp__github__get"]),
        st.text(max_size=10),
    )
    return st.builds(
        ToolCall,
        name=names,
        arguments=st.dictionaries(st.text(max_size=8), small_json(), max_size=3),
        result=st.one_of(st.none(), small_json()),
        error=st.one_of(st.none(), st.text(max_size=30)),
        turn=st.one_of(st.none(), st.integers(min_value=0, max_value=30)),
    )


# -- results and entries -----------------------------------------------------------------


@st.composite
def _result(draw: st.DrawFn, kind: str | None, name: str | None) -> GradeResult:
    kind = draw(kind_names()) if kind is None else kind
    name = (
        draw(st.one_of(st.just(kind), st.text(min_size=1, max_size=12))) if name is None else name
    )
    details = draw(st.one_of(st.none(), st.dictionaries(st.text(max_size=8), json_values())))
    duration = draw(st.floats(min_value=0.0, max_value=1e6))
    message = draw(st.text(max_size=40))
    if draw(st.integers(0, 3)) == 0:
        error = draw(st.sampled_from(["ValueError", "TimeoutError", "ChildError"]))
        error += ": " + draw(st.text(min_size=1, max_size=20))
        return GradeResult(kind, name, False, 0.0, message or error, details, error, duration)
    passed = draw(st.booleans())
    score = draw(st.floats(min_value=0.0, max_value=1.0))
    return GradeResult(kind, name, passed, score, message, details, None, duration)


def grade_results(
    *, kind: str | None = None, name: str | None = None
) -> st.SearchStrategy[GradeResult]:
    """Valid GradeResults: passes, fails and errors (about one in four; `passed` False and
    `score` 0.0), with JSON details or none. `kind` and `name` are drawn unless given."""
    return _result(kind, name)


_DEFAULT_ENTRY_KINDS: Final = ("equality", "numeric", "json")


def grader_entries(
    kinds: st.SearchStrategy[str] | None = None,
    options: st.SearchStrategy[Mapping[str, Any]] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """Grader entries as plain mappings, the way a suite's YAML gives them: `kind` plus any of
    the common keys (`name`, `weight`, `advisory`, `threshold`, `timeout`, `isolation`,
    `enabled`, `fail_on_error`) with valid values, plus the kind's own options.

    `kinds` draws the kind (default: built-in kinds that need no options); `options` draws
    the kind's options (default: none), merged into the entry.
    """
    common = st.fixed_dictionaries(
        {"kind": kinds if kinds is not None else st.sampled_from(_DEFAULT_ENTRY_KINDS)},
        optional={
            "name": st.text(min_size=1, max_size=16),
            "weight": st.floats(min_value=0.0, max_value=100.0),
            "advisory": st.booleans(),
            "threshold": st.floats(min_value=0.0, max_value=1.0),
            "timeout": st.floats(min_value=0.1, max_value=600.0),
            "isolation": st.sampled_from(["thread", "process"]),
            "enabled": st.booleans(),
            "fail_on_error": st.booleans(),
        },
    )
    own = options if options is not None else st.just({})
    return st.tuples(common, own).map(lambda parts: {**parts[1], **parts[0]})


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
