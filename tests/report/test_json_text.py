"""`json_text`: orjson's text where it is installed (the test extra installs it), the standard
library's otherwise or when `GRADEKIT_JSON=stdlib`; the same data either way, and values
orjson refuses (integers beyond 64 bits, keys that are not text) written all the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gradekit.report.json import CHOICE_VARIABLE, json_text

leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
        | st.dictionaries(st.integers(), inner, max_size=2)
    ),
    max_leaves=12,
)


@given(values)
def test_the_text_holds_the_standard_library_s_data(value: Any) -> None:
    text = json_text(value)
    assert "\n" not in text
    assert json.loads(text) == json.loads(json.dumps(value, ensure_ascii=False))


def test_orjson_writes_where_installed_and_the_variable_chooses_the_standard_library() -> None:
    script = (
        "import sys; from gradekit.report.json import json_text; "
        "print(json_text({'a': [1, 2.5, 'é'], 'big': 2 ** 70, 'n': None}))"
    )
    env = {key: value for key, value in os.environ.items() if key != CHOICE_VARIABLE}
    fast = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    # The integer beyond 64 bits makes orjson refuse the value: the standard library writes it.
    assert fast.stdout == '{"a": [1, 2.5, "é"], "big": 1180591620717411303424, "n": null}\n'
    small = script.replace(", 'big': 2 ** 70", "")
    fast = subprocess.run(
        [sys.executable, "-c", small], env=env, capture_output=True, text=True, check=True
    )
    assert fast.stdout == '{"a":[1,2.5,"é"],"n":null}\n'
    chosen = subprocess.run(
        [sys.executable, "-c", small],
        env={**env, CHOICE_VARIABLE: "stdlib"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert chosen.stdout == '{"a": [1, 2.5, "é"], "n": null}\n'


def test_import_gradekit_does_not_import_orjson() -> None:
    script = "import sys, gradekit; print('orjson' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert shown.stdout == "False\n"


class _Name(str):
    pass


class _Amount(float):
    pass


def test_subclasses_of_json_types_are_written_as_their_values() -> None:
    # What `finish` lets through in details (subclasses of dict, list, tuple, str, int and
    # float) is written as the standard library writes it, by orjson or by the fallback.
    import collections
    import enum

    class Level(enum.IntEnum):
        HIGH = 2

    point = collections.namedtuple("point", "x y")
    value = collections.OrderedDict(
        level=Level.HIGH,
        name=_Name("x"),
        amount=_Amount(1.5),
        point=point(1, 2),
        counts=collections.defaultdict(int, k=2),
    )
    assert json.loads(json_text(value)) == json.loads(json.dumps(value))
