"""The reply cache: a suite graded again with unchanged outputs makes no judge call; a changed
output, an error, `samples`, `--no-cache` and `--cache-dir` behave as documented; concurrent
writers never leave a half-written reply."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from judge_server import JudgeServer, judged, text
from judge_support import use_options

import gradekit
from gradekit.graders.prompt.providers import Reply
from gradekit.graders.prompt.shared import ReplyCache


def write_suite(folder: Path, server: JudgeServer, *, outputs: list[str], extra: str = "") -> Path:
    lines = [
        "name: cached",
        "graders:",
        "  - kind: prompt",
        "    name: judge",
        '    rubric: "Is the answer polite?"',
        "    model: gpt-test",
        f"    base_url: {server.openai_url}",
        "    retry_base_delay: 0.01",
        *(f"    {line}" for line in extra.splitlines()),
        "cases:",
        *(f"  - {{name: case-{i}, output: {json.dumps(o)}}}" for i, o in enumerate(outputs)),
    ]
    path = folder / "suite.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(path: Path) -> gradekit.SuiteReport:
    return gradekit.run_suite(gradekit.load_suite(path))


def test_a_second_run_is_served_from_the_cache(server: JudgeServer, tmp_path: Path) -> None:
    path = write_suite(tmp_path, server, outputs=["Thanks!", "Go away."])
    first = run(path)
    assert first.summary.passed == 2
    assert len(server.requests) == 2
    files = sorted((tmp_path / ".gradekit-cache").rglob("*.json"))
    assert len(files) == 2
    assert (tmp_path / ".gradekit-cache" / ".gitignore").read_text().endswith("*\n")

    second = run(path)
    assert len(server.requests) == 2  # the server saw nothing new
    assert second.cases[0].to_dict()["turns"][0]["results"][0]["score"] == 0.8
    stats = second.summary.judge  # this run's own figures
    assert stats is not None
    assert (stats["calls"], stats["cached"], stats["input_tokens"]) == (0, 2, 0)
    result = second.cases[0].turns[0].results[0].result
    assert result.details is not None
    assert (result.details["cached"], result.details["usage"]["input_tokens"]) == (1, 0)


def test_a_changed_output_is_judged_again(server: JudgeServer, tmp_path: Path) -> None:
    run(write_suite(tmp_path, server, outputs=["Thanks!", "Go away."]))
    run(write_suite(tmp_path, server, outputs=["Thanks!", "Please go."]))
    assert len(server.requests) == 3
    assert "Please go." in server.requests[-1].prompt


def test_errors_are_not_cached(server: JudgeServer, tmp_path: Path) -> None:
    path = write_suite(tmp_path, server, outputs=["Thanks!"])
    server.script(text("no JSON here"))
    assert run(path).summary.errored == 1
    assert not list(tmp_path.rglob("*.json"))
    assert run(path).summary.passed == 1  # asked again
    assert len(server.requests) == 2


def test_each_sample_has_its_own_entry(server: JudgeServer, tmp_path: Path) -> None:
    server.script(judged(8), judged(2), judged(9))
    path = write_suite(
        tmp_path, server, outputs=["Thanks!"], extra="samples: 3\naggregate: majority"
    )
    first = run(path)
    assert len(list((tmp_path / ".gradekit-cache").rglob("*.json"))) == 3
    second = run(path)
    assert len(server.requests) == 3
    scores = [
        s["raw_score"]
        for report in (first, second)
        for s in report.cases[0].turns[0].results[0].result.details["samples"]  # type: ignore[index]
    ]
    assert sorted(scores[:3]) == [2, 8, 9]
    assert scores[3:] == scores[:3]


def test_no_cache_neither_reads_nor_writes(server: JudgeServer, tmp_path: Path) -> None:
    path = write_suite(tmp_path, server, outputs=["Thanks!"])
    run(path)
    use_options(judge_cache=False)
    run(path)
    assert len(server.requests) == 2
    use_options(judge_cache=False)
    other = tmp_path / "other"
    other.mkdir()
    run(write_suite(other, server, outputs=["Hello"]))
    assert not (other / ".gradekit-cache").exists()


def test_cache_dir_puts_the_cache_elsewhere(server: JudgeServer, tmp_path: Path) -> None:
    elsewhere = tmp_path / "shared-cache"
    use_options(judge_cache_dir=elsewhere)
    suite_folder = tmp_path / "suite"
    suite_folder.mkdir()
    run(write_suite(suite_folder, server, outputs=["Thanks!"]))
    assert len(list(elsewhere.rglob("*.json"))) == 1
    assert not (suite_folder / ".gradekit-cache").exists()


def test_a_grader_made_outside_a_suite_caches_only_when_told(
    server: JudgeServer, tmp_path: Path
) -> None:
    config = {"rubric": "Right?", "model": "gpt-test", "base_url": server.openai_url}
    grader = gradekit.create("prompt", "judge", config)
    sample = gradekit.Sample(output="4")
    gradekit.grade(sample, [grader])
    gradekit.grade(sample, [grader])
    assert len(server.requests) == 2
    use_options(judge_cache_dir=tmp_path / "cache")
    gradekit.grade(sample, [grader])
    gradekit.grade(sample, [grader])
    assert len(server.requests) == 3


def test_concurrent_writers_and_readers_see_whole_replies(tmp_path: Path) -> None:
    cache = ReplyCache(tmp_path / "cache")
    reply = Reply(text=json.dumps({"reasoning": "x" * 200_000, "score": 7}), input_tokens=5)
    cache.put("ab" * 32, reply, provider="openai", model="m")  # there from now on
    seen: list[Reply | None] = []
    errors: list[BaseException] = []

    def writer() -> None:
        for _ in range(30):
            cache.put("ab" * 32, reply, provider="openai", model="m")

    def reader() -> None:
        try:
            for _ in range(300):
                seen.append(cache.get("ab" * 32))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=writer) for _ in range(4)]
    threads += [threading.Thread(target=reader) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(seen) == 1200
    assert all(found == reply for found in seen)  # never a miss, never a torn file
    assert cache.get("ab" * 32) == reply
    leftovers = [p.name for p in (tmp_path / "cache").rglob("*") if p.name.startswith(".tmp-")]
    assert leftovers == []


def test_a_damaged_cache_file_is_a_miss(server: JudgeServer, tmp_path: Path) -> None:
    path = write_suite(tmp_path, server, outputs=["Thanks!"])
    run(path)
    (stored,) = (tmp_path / ".gradekit-cache").rglob("*.json")
    stored.write_text('{"format": 1, "key": "trunc', encoding="utf-8")
    assert run(path).summary.passed == 1
    assert len(server.requests) == 2
