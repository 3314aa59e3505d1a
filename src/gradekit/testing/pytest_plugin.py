"""gradekit's pytest plugin: `pytest --gradekit-pack DIST` checks an installed grader pack.

Registered through the `pytest11` entry point, so pytest loads it in every run where gradekit
is installed: importing it only defines hooks. The registry, hypothesis and the contract are
imported when `--gradekit-pack` is given, never otherwise.

With `--gradekit-pack DIST` (repeatable), every kind the distribution DIST registers (entry
points of group `gradekit.graders` whose distribution is DIST) gets one test per contract
rule and example config (from the factory's `examples` attribute, else `{}`), beside the
tests pytest collects as usual; `-k` selects among them as among any tests.
"""

from __future__ import annotations

import pytest

__all__ = ["pytest_addoption", "pytest_collection_modifyitems"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add `--gradekit-pack DIST`."""
    group = parser.getgroup("gradekit", "gradekit grader packs")
    group.addoption(
        "--gradekit-pack",
        action="append",
        default=[],
        metavar="DIST",
        dest="gradekit_pack",
        help="run gradekit's grader contract over every kind the installed distribution DIST "
        "registers (repeat for several distributions)",
    )


# tryfirst: the contract's items are added before `-k` and `-m` deselect among all items.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add the contract's tests for each `--gradekit-pack` distribution."""
    distributions = config.getoption("gradekit_pack")
    if not distributions:
        return
    from gradekit.testing._pytest_items import pack_items

    for distribution in distributions:
        items.extend(pack_items(session, distribution))
