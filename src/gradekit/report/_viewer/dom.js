/* gradekit report viewer, part 1 of 3: building elements, showing text, the collapsible tree.
   Every text from the report goes into the page as a text node, never as markup. */
var GK = {};
(function () {
  "use strict";

  /* el("div", {class: "x"}, child, "text", [more, children]) */
  GK.el = function (tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value === null || value === undefined || value === false) { return; }
        if (key === "text") { node.textContent = value; } else { node.setAttribute(key, value); }
      });
    }
    for (var i = 2; i < arguments.length; i += 1) { GK.append(node, arguments[i]); }
    return node;
  };

  GK.append = function (node, child) {
    if (child === null || child === undefined || child === false) { return; }
    if (Array.isArray(child)) { child.forEach(function (c) { GK.append(node, c); }); return; }
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  };

  /* Control characters (other than newline and tab) are invisible on screen: each is shown
     as its escape (\x00 to \x1f, \x7f to \x9f, \ufffe, \uffff), as gradekit's messages write
     them. `visible` gives plain text (for one-line cells); `text` a fragment that marks each
     escape out. */
  var CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufffe\uffff]/g;
  function escapeOf(c) {
    var code = c.charCodeAt(0);
    var hex = code.toString(16);
    if (code > 0xff) { return "\\u" + hex; }
    return "\\x" + (hex.length < 2 ? "0" : "") + hex;
  }
  GK.visible = function (text) { return String(text).replace(CONTROL, escapeOf); };

  GK.text = function (text) {
    text = String(text);
    var fragment = document.createDocumentFragment();
    var last = 0;
    text.replace(CONTROL, function (c, at) {
      if (at > last) { fragment.appendChild(document.createTextNode(text.slice(last, at))); }
      fragment.appendChild(GK.el("span", { "class": "ctl", title: "control character", text: escapeOf(c) }));
      last = at + 1;
      return c;
    });
    if (last < text.length) { fragment.appendChild(document.createTextNode(text.slice(last))); }
    return fragment;
  };

  GK.OUTCOME_WORD = { pass: "passed", fail: "failed", error: "errored", skip: "skipped" };

  GK.badge = function (outcome, text) {
    return GK.el("span", { "class": "badge " + outcome, text: text || GK.OUTCOME_WORD[outcome] });
  };

  GK.score = function (value) {
    return typeof value === "number" ? value.toFixed(2) : "-";
  };

  GK.ms = function (value) {
    if (typeof value !== "number") { return "-"; }
    return value < 1000 ? value.toFixed(1) + " ms" : (value / 1000).toFixed(2) + " s";
  };

  /* A result's (or a turn's) outcome from its JSON form; an error always wins. */
  GK.outcomeOf = function (item) {
    if (item.skipped) { return "skip"; }
    if (item.error || item.errored) { return "error"; }
    return item.passed ? "pass" : "fail";
  };

  function preview(value) {
    if (Array.isArray(value)) { return "[" + value.length + "]"; }
    var keys = Object.keys(value);
    var shown = keys.slice(0, 4).join(", ");
    return "{" + shown + (keys.length > 4 ? ", \u2026" : "") + "}";
  }

  function leaf(value) {
    if (typeof value === "string") {
      if (value.indexOf("\n") >= 0 || value.length > 120) {
        return GK.el("pre", { "class": "text" }, GK.text(value));
      }
      return GK.el("span", { "class": "v-string", text: JSON.stringify(value) });
    }
    var kind = value === null ? "null" : typeof value;
    return GK.el("span", { "class": "v-" + kind, text: String(value) });
  }

  /* A JSON value as a tree of <details>: objects and arrays fold; children are built the
     first time their node opens, so a huge value costs nothing until looked at. */
  GK.tree = function (value, label, depth) {
    depth = depth || 0;
    var key = label === undefined ? null : GK.el("span", { "class": "key", text: label + ": " });
    if (value === null || typeof value !== "object") {
      return GK.el("div", { "class": "leaf" }, key, leaf(value));
    }
    if (Object.keys(value).length === 0) {
      return GK.el("div", { "class": "leaf" }, key, GK.el("span", { "class": "muted", text: Array.isArray(value) ? "[]" : "{}" }));
    }
    var entries = Array.isArray(value)
      ? value.map(function (v, i) { return [String(i), v]; })
      : Object.keys(value).map(function (k) { return [k, value[k]]; });
    var node = GK.el("details", { "class": "tree" },
      GK.el("summary", null, key, GK.el("span", { "class": "muted", text: preview(value) })));
    var built = false;
    function build() {
      if (built || !node.open) { return; }
      built = true;
      var body = GK.el("div", { "class": "children" });
      entries.forEach(function (entry) { body.appendChild(GK.tree(entry[1], entry[0], depth + 1)); });
      node.appendChild(body);
    }
    node.addEventListener("toggle", build);
    if (depth < 3 && entries.length <= 50) { node.open = true; build(); }
    return node;
  };

  /* A value as the sample shows it: text as text, anything else as a tree. */
  GK.value = function (value) {
    if (typeof value === "string") { return GK.el("pre", { "class": "text" }, GK.text(value)); }
    if (value === null || typeof value !== "object") { return GK.el("div", { "class": "leaf" }, leaf(value)); }
    return GK.tree(value);
  };
})();
