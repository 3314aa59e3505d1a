/* gradekit report viewer, part 2 of 3: one case, each turn's sample beside its graders'
   verdicts. Reads the case's JSON form; sample keys are shown whenever present. */
(function () {
  "use strict";
  var el = GK.el;

  function compact(value) {
    if (value === null || typeof value !== "object") { return GK.value(value); }
    var text = JSON.stringify(value);
    if (text.length <= 100) { return el("code", { "class": "json", text: GK.visible(text) }); }
    return GK.tree(value);
  }

  function field(label, value) {
    var body = typeof value === "string" && value === ""
      ? el("p", { "class": "muted", text: "(empty)" })
      : GK.value(value);
    return el("div", { "class": "field field-" + label.toLowerCase() },
      el("h4", { text: label }), body);
  }

  function toolCalls(calls) {
    var list = el("ol", { "class": "timeline" });
    calls.forEach(function (call, k) {
      call = call && typeof call === "object" ? call : { name: String(call) };
      var failed = call.error !== undefined && call.error !== null;
      var head = el("div", { "class": "call-head" },
        el("span", { "class": "step", text: String(k + 1) }),
        el("code", { "class": "tool", text: GK.visible(call.name === undefined ? "?" : call.name) }),
        typeof call.turn === "number" ? el("span", { "class": "chip", text: "agent turn " + call.turn }) : null,
        failed ? GK.badge("error", "error") : null);
      var item = el("li", { "class": "call" + (failed ? " failed" : "") }, head);
      var args = call.arguments;
      if (args !== undefined && args !== null &&
          !(typeof args === "object" && Object.keys(args).length === 0)) {
        item.appendChild(el("div", { "class": "kv" }, el("span", { "class": "k", text: "arguments" }), compact(args)));
      }
      if (call.result !== undefined && call.result !== null) {
        item.appendChild(el("div", { "class": "kv" }, el("span", { "class": "k", text: "result" }), compact(call.result)));
      }
      if (failed) {
        item.appendChild(el("div", { "class": "kv" }, el("span", { "class": "k", text: "error" }),
          el("pre", { "class": "text error-text" }, GK.text(typeof call.error === "string" ? call.error : JSON.stringify(call.error)))));
      }
      list.appendChild(item);
    });
    return el("div", { "class": "field field-tool-calls" },
      el("h4", { text: "Tool calls (" + calls.length + ")" }), list);
  }

  function requestedCalls(calls) {
    return calls.map(function (call) {
      var fn = (call && call["function"]) || call || {};
      var args = fn.arguments;
      if (typeof args === "string") {
        try { args = JSON.parse(args); } catch (ignored) { /* shown as the text it is */ }
      }
      return el("div", { "class": "tool-request" }, el("span", { "class": "k", text: "calls " }),
        el("code", { "class": "tool", text: GK.visible(fn.name || "?") }),
        args === undefined ? null : compact(args));
    });
  }

  function content(value) {
    if (value === null || value === undefined) { return null; }
    if (typeof value === "string") { return el("div", { "class": "content" }, GK.text(value)); }
    if (Array.isArray(value)) {
      return value.map(function (part) {
        if (part && part.type === "text" && typeof part.text === "string") { return content(part.text); }
        return GK.tree(part);
      });
    }
    return GK.tree(value);
  }

  function transcript(messages) {
    var chat = el("div", { "class": "chat" });
    messages.forEach(function (m) {
      m = m && typeof m === "object" ? m : { content: String(m) };
      var role = typeof m.role === "string" ? m.role : "message";
      var who = [role];
      if (m.name) { who.push(String(m.name)); }
      if (m.tool_call_id) { who.push(String(m.tool_call_id)); }
      chat.appendChild(el("div", { "class": "bubble role-" + role.toLowerCase().replace(/[^a-z]/g, "") },
        el("div", { "class": "who", text: GK.visible(who.join(" \u00b7 ")) }),
        content(m.content),
        Array.isArray(m.tool_calls) ? requestedCalls(m.tool_calls) : null));
    });
    return el("div", { "class": "field field-transcript" },
      el("h4", { text: "Transcript (" + messages.length + " messages)" }), chat);
  }

  function present(turn, key) { return turn[key] !== undefined && turn[key] !== null; }

  function sample(turn) {
    var box = el("div", { "class": "sample" });
    if (present(turn, "input")) { box.appendChild(field("Input", turn.input)); }
    if (Array.isArray(turn.messages) && turn.messages.length) { box.appendChild(transcript(turn.messages)); }
    if (Array.isArray(turn.tool_calls) && turn.tool_calls.length) { box.appendChild(toolCalls(turn.tool_calls)); }
    if (present(turn, "output")) { box.appendChild(field("Output", turn.output)); }
    if (present(turn, "expected")) { box.appendChild(field("Expected", turn.expected)); }
    if (!box.firstChild) {
      box.appendChild(el("p", { "class": "muted no-sample", text: "This report carries no sample for this turn." }));
    }
    return box;
  }

  function result(r) {
    var outcome = GK.outcomeOf(r);
    var details = r.details;
    var children = [];
    var rest = details;
    if (details && typeof details === "object" && !Array.isArray(details) && Array.isArray(details.results)) {
      children = details.results.filter(function (c) { return c && typeof c === "object"; });
      rest = {};
      Object.keys(details).forEach(function (k) { if (k !== "results") { rest[k] = details[k]; } });
      if (!Object.keys(rest).length) { rest = null; }
    }
    var item = el("li", { "class": "result " + outcome, "data-grader": r.name },
      el("div", { "class": "result-head" }, GK.badge(outcome),
        el("b", { "class": "grader-name", text: GK.visible(r.name) }),
        el("code", { text: GK.visible(r.kind) }),
        r.advisory ? el("span", { "class": "chip advisory", text: "advisory" }) : null,
        outcome === "error" ? null : el("span", { "class": "muted", text: "score " + GK.score(r.score) }),
        r.weight !== undefined && r.weight !== 1 ? el("span", { "class": "muted", text: "weight " + r.weight }) : null,
        typeof r.duration_ms === "number" ? el("span", { "class": "muted", text: GK.ms(r.duration_ms) }) : null));
    if (r.error) { item.appendChild(el("pre", { "class": "text error-text" }, GK.text(r.error))); }
    if (r.message && r.message !== r.error) { item.appendChild(el("p", { "class": "message" }, GK.text(r.message))); }
    if (rest !== null && rest !== undefined) {
      var tree = GK.el("div", { "class": "details" }, GK.tree(rest, "details"));
      item.appendChild(tree);
    }
    if (children.length) { item.appendChild(el("ul", { "class": "results" }, children.map(result))); }
    return item;
  }

  /* This run's answer beside the baseline's, for a regressed or fixed case: `base` is the
     baseline's turn of the same index (undefined when the baseline's case has none). */
  function answer(turn, who, missing) {
    var outcome = GK.outcomeOf(turn);
    var side = el("div", { "class": "side " + who }, el("h4", null, who === "baseline-side" ? "Baseline " : "This run ",
      GK.badge(outcome), outcome === "error" || outcome === "skip" ? null : el("span", { "class": "muted", text: " score " + GK.score(turn.score) })));
    side.appendChild(present(turn, "output") ? field("Output", turn.output) : el("p", { "class": "muted no-sample", text: missing }));
    return side;
  }

  function beside(turn, base) {
    var box = el("div", { "class": "vs-baseline" });
    if (!base) {
      box.appendChild(el("p", { "class": "muted no-sample", text: "The baseline's case has no such turn." }));
      return box;
    }
    var verdicts = Array.isArray(base.results) ? base.results : [];
    var left = answer(base, "baseline-side", "The baseline report carries no output for this turn (written without samples?).");
    left.appendChild(el("ul", { "class": "results" }, verdicts.map(result)));
    box.appendChild(el("div", { "class": "turn-grid" }, left, answer(turn, "new-side", "This report carries no output for this turn.")));
    return box;
  }

  function turnSection(turn, position, baseCase) {
    var outcome = GK.outcomeOf(turn);
    var index = typeof turn.index === "number" ? turn.index : position;
    var head = el("h3", null, "Turn " + index + " ", GK.badge(outcome),
      outcome === "error" || outcome === "skip" ? null : el("span", { "class": "muted", text: " score " + GK.score(turn.score) }));
    var section = el("section", { "class": "turn " + outcome, "data-turn": String(index) }, head);
    if (turn.skipped) {
      section.appendChild(el("p", { "class": "muted", text: "Not run: an earlier error ended the case (fail_on_error)." }));
    }
    var results = Array.isArray(turn.results) ? turn.results : [];
    var verdicts = el("div", { "class": "verdicts" }, el("h4", { text: "Verdicts (" + results.length + ")" }),
      el("ul", { "class": "results" }, results.map(result)));
    section.appendChild(el("div", { "class": "turn-grid" }, sample(turn), verdicts));
    if (baseCase) {
      var baseTurns = Array.isArray(baseCase.turns) ? baseCase.turns : [];
      section.appendChild(beside(turn, baseTurns.filter(function (t, k) {
        return (typeof t.index === "number" ? t.index : k) === index;
      })[0]));
    }
    return section;
  }

  /* The pass@k line of the case group `name` (from the page's gk-pass-at-k data), or null. */
  var groups = null;
  GK.passAtK = function (name) {
    if (groups === null) {
      var node = document.getElementById("gk-pass-at-k");
      try { groups = node ? JSON.parse(node.textContent) : {}; } catch (error) { groups = {}; }
    }
    return Object.prototype.hasOwnProperty.call(groups, name) ? groups[name] : null;
  };

  /* The line of the trace a case was read from (`traces:`, its metadata.trace), as the
     Markdown report's block starts with it; null for other cases. */
  function traceLine(metadata) {
    var trace = metadata && typeof metadata === "object" ? metadata.trace : null;
    if (!trace || typeof trace !== "object" || Array.isArray(trace)) { return null; }
    function known(value) { return value === null || value === undefined ? "?" : String(value); }
    var ms = trace.duration_ms;
    var failed = typeof trace.error_spans === "number" && trace.error_spans > 0;
    return el("p", { "class": "trace-line" + (failed ? " failed" : ""), id: "case-trace",
      text: GK.visible("trace " + known(trace.id) + ": model " + known(trace.model) +
        ", tokens " + known(trace.input_tokens) + " in / " + known(trace.output_tokens) +
        " out, " + (typeof ms === "number" ? Math.round(ms) + " ms" : "?") +
        ", error spans " + known(trace.error_spans)) });
  }

  /* The detail of one case; `outcome` comes from the index (the report's own verdict). */
  /* `base`: the baseline's form of a regressed or fixed case (its answer shown beside this
     run's), null when the page does not hold it, undefined for other cases. */
  GK.renderCase = function (data, outcome, base) {
    var turns = Array.isArray(data.turns) ? data.turns : [];
    var facts = el("div", { "class": "facts" }, GK.badge(outcome),
      outcome === "error"
        ? el("span", { "class": "no-score", text: "errored: no score" })
        : el("span", { text: "score " + GK.score(data.score) }),
      el("span", { text: turns.length + (turns.length === 1 ? " turn" : " turns") }),
      el("span", { text: GK.ms(data.duration_ms) }),
      typeof data.baseline === "string"
        ? el("span", { "class": "mark " + data.baseline, text: data.baseline + " against the baseline" })
        : null);
    var attempt = typeof data.attempt === "number" ? data.attempt : null;
    var title = attempt === null ? data.name : data.name + " [attempt " + attempt + "]";
    var article = el("article", { "class": "case " + outcome, id: "case-detail", "data-name": data.name },
      el("h2", { text: GK.visible(title) }), facts, traceLine(data.metadata));
    var group = attempt === null ? null : GK.passAtK(data.name);
    if (group) {
      article.appendChild(el("p", { "class": "pass-at-k", id: "case-pass-at-k",
        text: "This case's attempts: " + group }));
    }
    var tags = Array.isArray(data.tags) ? data.tags : [];
    if (tags.length) {
      article.appendChild(el("div", { "class": "tags" }, tags.map(function (t) {
        return el("span", { "class": "chip tag", text: GK.visible(t) });
      })));
    }
    if (data.error) { article.appendChild(el("pre", { "class": "text error-text" }, GK.text(data.error))); }
    if (data.metadata && typeof data.metadata === "object" && Object.keys(data.metadata).length) {
      article.appendChild(el("div", { "class": "metadata" }, GK.tree(data.metadata, "metadata")));
    }
    if (base === null) {
      article.appendChild(el("p", { "class": "muted", id: "baseline-missing", text: "The baseline's answer is not in this page: " +
        "it is shown beside this run's when the baseline is a report file that holds this case (the first 1,000 regressed or fixed cases)." }));
    }
    turns.forEach(function (turn, position) { article.appendChild(turnSection(turn, position, base)); });
    return article;
  };
})();
