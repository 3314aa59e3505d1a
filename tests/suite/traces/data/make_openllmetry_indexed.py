"""Write `openllmetry-0.47.5.jsonl` and `anthropic-openllmetry-0.47.5.jsonl`: the test agent's
runs as an older OpenLLMetry writes them, for the openai and the anthropic SDK.

OpenLLMetry's `opentelemetry-instrumentation-openai` and `-anthropic` before 0.60 write each
model call's messages as indexed span attributes (`gen_ai.prompt.N.role` / `.content` /
`.tool_call_id` / `.tool_calls.K.id|name|arguments`, `gen_ai.completion.N.*`); 0.62.4,
installed in the venv, writes the GenAI conventions instead. These releases need the
OpenTelemetry packages of their time (`opentelemetry._events`, gone from opentelemetry-api
1.45) and SDKs of their time, so each is installed with them into a folder of its own, put
first on the producer's path:

    python tests/suite/traces/data/make_openllmetry_indexed.py [openai|anthropic [OUT [TARGET]]]

With no argument both files are written beside this script; TARGET (where the packages go)
defaults to a cache folder. Each file's runs are `paris-and-rome` and `stray`.
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
COMMON = (
    "opentelemetry-semantic-conventions-ai==0.4.13",
    "opentelemetry-sdk==1.33.1",
    "opentelemetry-exporter-otlp-proto-common==1.33.1",
    "opentelemetry-instrumentation==0.54b1",
    "opentelemetry-semantic-conventions==0.54b1",
    "openai==1.82.0",
    "attrs",  # the scripted server's
)
RELEASES = {
    "openai": (
        "openllmetry-indexed",
        HERE / f"openllmetry-{VERSION}.jsonl",
        (f"opentelemetry-instrumentation-openai=={VERSION}", *COMMON),
    ),
    "anthropic": (
        "anthropic-openllmetry-indexed",
        HERE / f"anthropic-openllmetry-{VERSION}.jsonl",
        (f"opentelemetry-instrumentation-anthropic=={VERSION}", "anthropic==0.52.0", *COMMON),
    ),
}
"""Each SDK's older release: the producer's instrumentation name, the recorded file, and the
packages it runs with (all installed apart)."""
CASES = ("paris-and-rome", "stray")


def install(sdk: str, target: Path) -> Path:
    """Install the older release for `sdk` and its packages into `target` (once)."""
    done = target / f".installed-{sdk}-{VERSION}"
    packages = RELEASES[sdk][2]
    if not done.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--target", str(target), *packages],
            check=True,
            stdin=subprocess.DEVNULL,
        )
        done.touch()
    return target


def produce(sdk: str, out: Path, target: Path | None = None) -> Path:
    """Run the test agent under the older release for `sdk`, one run per case, writing `out`."""
    target = install(sdk, target or default_target(sdk))
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(target), str(JUDGE)])
    subprocess.run(
        [sys.executable, "-W", "ignore", str(PRODUCER), RELEASES[sdk][0], str(out), *CASES],
        check=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )
    return out


def default_target(sdk: str) -> Path:
    """A cache folder for the installed packages."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "gradekit-tests" / f"openllmetry-{sdk}-{VERSION}"


if __name__ == "__main__":
    args = sys.argv[1:]
    for sdk in args[:1] or list(RELEASES):
        produce(
            sdk,
            Path(args[1]) if len(args) > 1 else RELEASES[sdk][1],
            Path(args[2]) if len(args) > 2 else None,
        )
