"""Write `openllmetry-0.47.5.jsonl`: the test agent's runs as an older OpenLLMetry writes them.

OpenLLMetry's `opentelemetry-instrumentation-openai` before 0.60 writes each model call's
messages as indexed span attributes (`gen_ai.prompt.N.role` / `.content` / `.tool_call_id` /
`.tool_calls.K.id|name|arguments`, `gen_ai.completion.N.*`); 0.62.4, installed in the venv,
writes the GenAI conventions instead. This release needs the OpenTelemetry packages of its
time (`opentelemetry._events`, gone from opentelemetry-api 1.45), so it is installed with them
into a folder of its own, put first on the producer's path:

    python tests/suite/traces/data/make_openllmetry_indexed.py [OUT [TARGET]]

OUT defaults to `openllmetry-0.47.5.jsonl` beside this script; TARGET (where the packages
go) to a cache folder. The recorded file's runs are `paris-and-rome` and `stray`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PRODUCER = HERE.parent / "trace_producer.py"
JUDGE = HERE.parents[2] / "fixtures" / "judge"
VERSION = "0.47.5"
OUT = HERE / f"openllmetry-{VERSION}.jsonl"
PACKAGES = (
    f"opentelemetry-instrumentation-openai=={VERSION}",
    "opentelemetry-semantic-conventions-ai==0.4.13",
    "opentelemetry-sdk==1.33.1",
    "opentelemetry-exporter-otlp-proto-common==1.33.1",
    "opentelemetry-instrumentation==0.54b1",
    "opentelemetry-semantic-conventions==0.54b1",
    "openai==1.82.0",
    "attrs",  # the scripted server's
)
"""The older release and the packages of its time it runs with (all installed apart)."""
CASES = ("paris-and-rome", "stray")


def install(target: Path) -> Path:
    """Install the older release and its packages into `target` (once)."""
    done = target / f".installed-{VERSION}"
    if not done.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--target", str(target), *PACKAGES],
            check=True,
            stdin=subprocess.DEVNULL,
        )
        done.touch()
    return target


def produce(out: Path, target: Path) -> Path:
    """Run the test agent under the older release, one run per case, writing `out`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(install(target)), str(JUDGE)])
    subprocess.run(
        [sys.executable, "-W", "ignore", str(PRODUCER), "openllmetry-indexed", str(out), *CASES],
        check=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )
    return out


def default_target() -> Path:
    """A cache folder for the installed packages."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "gradekit-tests" / f"openllmetry-{VERSION}"


if __name__ == "__main__":
    args = sys.argv[1:]
    produce(
        Path(args[0]) if args else OUT,
        Path(args[1]) if len(args) > 1 else default_target(),
    )
