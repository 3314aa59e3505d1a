"""Code graders for the quickstart suite (`kind: code`, `grader: "graders:NAME"`)."""

from __future__ import annotations

from gradekit.code import GraderContext, GraderResult


def called_expected_tool(ctx: GraderContext) -> GraderResult:
    """Pass when the agent called the tool named by the case's `expected_tool` key."""
    wanted = ctx.turn_config.get("expected_tool")
    called = [call.name for call in ctx.tool_invocations]
    if wanted in called:
        return GraderResult(1.0, reason=f"called {wanted}")
    return GraderResult(0.0, reason=f"expected a call to {wanted}, got {called or 'no calls'}")
