"""The fixed parts of the HTML report: its style and its script (inline: no network, no assets).

The script filters the case table by name (substring, or a glob when the text holds `*` or
`?`) and by outcome. It reads its starting filter from the page address (`#filter=...&outcome=
fail`, or the same as a query string) and writes the current filter back there, so a filtered
view can be shared as a link.
"""

from __future__ import annotations

__all__ = ["SCRIPT", "STYLE"]

STYLE = """
:root { --pass: #1a7f37; --fail: #cf222e; --error: #9a6700; --skip: #6e7781; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1f2328; background: #f6f8fa; }
header, main { max-width: 1200px; margin: 0 auto; padding: 16px 24px; }
h1 { font-size: 22px; margin: 8px 0 12px; }
.counts { display: flex; gap: 12px; flex-wrap: wrap; margin-bottom: 12px; }
.count { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 14px; }
.count b { display: block; font-size: 22px; }
.badge { display: inline-block; border-radius: 10px; padding: 0 8px; color: #fff;
         font-size: 12px; font-weight: 600; background: var(--skip); }
.pass > .badge, .badge.pass { background: var(--pass); }
.fail > .badge, .badge.fail { background: var(--fail); }
.error > .badge, .badge.error { background: var(--error); }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #eaeef2; }
#cases td:nth-child(2) { width: 70%; }
td.num, th.num { text-align: right; white-space: nowrap; }
.filters { display: flex; gap: 8px; align-items: center; margin: 8px 0; }
.filters input { flex: 1; padding: 6px 8px; font-size: 14px; }
summary { cursor: pointer; }
.turn { margin: 6px 0 6px 8px; }
.turn h4 { margin: 4px 0; font-size: 13px; }
ul.results { margin: 2px 0; padding-left: 18px; }
li.result { margin: 2px 0; }
.advisory { font-style: italic; color: var(--skip); }
pre { background: #f6f8fa; padding: 6px; overflow-x: auto; margin: 2px 0; }
.muted { color: var(--skip); }
"""

SCRIPT = """
(function () {
  var input = document.getElementById("filter");
  var outcome = document.getElementById("outcome");
  var shown = document.getElementById("shown");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#cases tr.case"));

  function matcher(text) {
    if (!text) { return function () { return true; }; }
    var lower = text.toLowerCase();
    if (!/[*?]/.test(lower)) {
      return function (name) { return name.indexOf(lower) >= 0; };
    }
    var source = lower.replace(/[.+^${}()|[\\]\\\\]/g, "\\\\$&")
      .replace(/\\*/g, ".*").replace(/\\?/g, ".");
    var pattern = new RegExp("^" + source + "$");
    return function (name) { return pattern.test(name); };
  }

  function apply() {
    var text = input.value.trim();
    var want = outcome.value;
    var match = matcher(text);
    var count = 0;
    rows.forEach(function (row) {
      var visible = match(row.getAttribute("data-name")) &&
        (!want || row.getAttribute("data-outcome") === want);
      row.hidden = !visible;
      if (visible) { count += 1; }
    });
    shown.textContent = count + " of " + rows.length + " cases shown";
    var params = new URLSearchParams();
    if (text) { params.set("filter", text); }
    if (want) { params.set("outcome", want); }
    try {
      var hash = params.toString();
      history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    } catch (ignored) { /* some browsers refuse history changes on file: pages */ }
  }

  var start = new URLSearchParams(location.hash.slice(1) || location.search.slice(1));
  if (start.get("filter")) { input.value = start.get("filter"); }
  if (start.get("outcome")) { outcome.value = start.get("outcome"); }
  input.addEventListener("input", apply);
  outcome.addEventListener("change", apply);
  apply();
  document.body.setAttribute("data-ready", "true");
})();
"""
