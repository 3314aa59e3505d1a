/* gradekit report viewer, part 3 of 3: the case list. Reads the index (one JSON object of
   columns), filters and sorts it, keeps that state in the page address, draws only the rows
   on screen, and opens a case by parsing its line of the case data (read when first needed). */
(function () {
  "use strict";
  var el = GK.el;
  var ROW = 28;                /* px: the height of a row, as in viewer.css */
  var MAX_HEIGHT = 8000000;    /* px: browsers cap an element's height; longer lists scale */
  var OVERSCAN = 10;
  var OUTCOME = { p: "pass", f: "fail", e: "error" };
  var LETTER = { pass: "p", fail: "f", error: "e" };
  var CODE = { pass: 0, fail: 1, error: 2 };
  var MARK = { r: "regressed", f: "fixed", n: "new", u: "unchanged" };
  var SORTS = ["outcome", "score", "-score", "duration", "-duration", "name", "-name", "suite", "-tokens", "-cost", "-agent"];
  var USAGE = [   /* index column, header, sort, cell text: shown when some case carries it */
    ["tok", "Tokens", "-tokens", function (v) { return Math.round(v).toLocaleString("en-US"); }],
    ["cost", "Cost", "-cost", function (v) { return v.toLocaleString("en-US", { maximumFractionDigits: 4 }); }],
    ["ams", "Agent time", "-agent", function (v) { return GK.ms(v); }]
  ];

  var idx = JSON.parse(document.getElementById("gk-index").textContent);
  var n = idx.n;
  var names = idx.names;
  var letters = idx.outcome;
  var marks = idx.baseline || "";   /* one letter a case against the baseline; "" without one */
  var graderStart = offsets(idx.gc);
  var tagStart = offsets(idx.tc);
  var pairs = idx.mk || [];         /* metadata "key=value" pairs; [] without any */
  var metaStart = pairs.length ? offsets(idx.mc) : null;
  var usage = USAGE.filter(function (column) { return idx[column[0]]; });

  function offsets(counts) {
    var start = new Uint32Array(n + 1);
    for (var i = 0; i < n; i += 1) { start[i + 1] = start[i] + counts[i]; }
    return start;
  }

  var ui = {};
  ["filter", "search", "outcome", "grader", "tag", "meta", "baseline", "sort", "shown", "list", "rows", "spacer", "detail"].forEach(function (id) {
    ui[id] = document.getElementById(id);
  });
  function options(select, values) {
    values.map(function (v, i) { return [v, i]; })
      .sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; })
      .forEach(function (pair) { select.appendChild(el("option", { value: pair[0], text: GK.visible(pair[0]) })); });
  }
  options(ui.grader, idx.graders);
  options(ui.tag, idx.tags);
  var groups = {};
  pairs.slice().sort().forEach(function (pair) {   /* one group of values a key */
    var key = pair.slice(0, pair.indexOf("="));
    if (!groups[key]) { groups[key] = ui.meta.appendChild(el("optgroup", { label: GK.visible(key) })); }
    groups[key].appendChild(el("option", { value: pair, text: GK.visible(key + " = " + pair.slice(key.length + 1)) }));
  });
  usage.forEach(function (column) {   /* the header cells, before "Not passed" */
    var head = ui.list.querySelector(".row.head");
    head.insertBefore(el("span", { "class": "num", text: column[1] }), head.lastElementChild);
  });
  if (usage.length) {   /* more columns: a wider list, and the name keeps some room */
    ui.list.style.setProperty("--cols", "78px minmax(110px, 1fr) 56px 44px 68px " +
      usage.map(function (c) { return c[0] === "ams" ? "86px " : "64px "; }).join("") + "minmax(0, 0.7fr)");
    document.getElementById("app").style.gridTemplateColumns = "minmax(360px, 1fr) minmax(0, 1fr)";
  }
  Array.prototype.forEach.call(ui.sort.options, function (option) {
    var column = USAGE.filter(function (c) { return c[2] === option.value; })[0];
    if (column && usage.indexOf(column) < 0) { option.hidden = option.disabled = true; }
  });

  /* ---- state and the page address ---- */
  var state = readState();

  function readState() {
    var p = new URLSearchParams(location.hash.slice(1) || location.search.slice(1));
    var sort = p.get("sort") || "outcome";
    return {
      filter: p.get("filter") || "", outcome: p.get("outcome") || "", grader: p.get("grader") || "",
      tag: p.get("tag") || "", search: p.get("search") || "", meta: p.get("meta") || "", baseline: p.get("baseline") || "", sort: SORTS.indexOf(sort) >= 0 ? sort : "outcome", "case": p.get("case")
    };
  }

  function writeAddress() {
    var p = new URLSearchParams();
    ["filter", "search", "outcome", "grader", "tag", "meta", "baseline"].forEach(function (key) { if (state[key]) { p.set(key, state[key]); } });
    if (state.sort !== "outcome") { p.set("sort", state.sort); }
    if (state["case"] !== null && state["case"] !== undefined) { p.set("case", state["case"]); }
    var hash = p.toString();
    if ("#" + hash === location.hash || (!hash && !location.hash)) { return; }
    try {
      history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    } catch (ignored) { /* some browsers refuse history changes on file: pages */ }
  }

  function showState() {
    ui.tag.hidden = !idx.tags.length && !state.tag;   /* no tags in this report: no menu */
    ui.baseline.hidden = !marks && !state.baseline;   /* no baseline: no menu */
    ui.meta.hidden = !pairs.length && !state.meta;         /* no metadata to filter on */
    ui.filter.value = state.filter;
    ui.search.value = state.search;
    ui.sort.value = state.sort;
    [["outcome", ui.outcome], ["grader", ui.grader], ["tag", ui.tag], ["meta", ui.meta], ["baseline", ui.baseline]].forEach(function (pair) {
      var select = pair[1];
      var value = state[pair[0]];
      if (value && !Array.prototype.some.call(select.options, function (o) { return o.value === value; })) {
        select.appendChild(el("option", { value: value, text: GK.visible(value) + " (not in this report)" }));
      }
      select.value = value;
    });
  }

  /* ---- order and filter ---- */
  var orders = {};

  function byKey(values, descending) {
    var ids = [];
    for (var i = 0; i < n; i += 1) { ids.push(i); }
    var sign = descending ? -1 : 1;
    ids.sort(function (a, b) {
      var x = values[a], y = values[b];
      if (x === null || y === null) {   /* no score (errored): last either way */
        if (x === y) { return a - b; }
        return x === null ? 1 : -1;
      }
      return x < y ? -sign : x > y ? sign : a - b;
    });
    return Uint32Array.from(ids);
  }

  function order(key) {
    if (orders[key]) { return orders[key]; }
    var ids;
    if (key === "outcome") {   /* failed, then errored, then passed; suite order within each */
      ids = new Uint32Array(n);
      var k = 0;
      "fep".split("").forEach(function (letter) {
        for (var i = 0; i < n; i += 1) { if (letters.charCodeAt(i) === letter.charCodeAt(0)) { ids[k] = i; k += 1; } }
      });
    } else if (key === "suite") {
      ids = new Uint32Array(n);
      for (var j = 0; j < n; j += 1) { ids[j] = j; }
    } else {
      var descending = key.charAt(0) === "-";
      var field = descending ? key.slice(1) : key;
      var values = { score: idx.score, duration: idx.ms, tokens: idx.tok, cost: idx.cost, agent: idx.ams }[field] || names;
      ids = byKey(values, descending);
    }
    orders[key] = ids;
    return ids;
  }

  var lowerNames = null;
  function nameTest(text) {
    if (!text) { return null; }
    if (lowerNames === null) { lowerNames = names.map(function (s) { return s.toLowerCase(); }); }
    var lower = text.toLowerCase();
    if (!/[*?]/.test(lower)) { return function (i) { return lowerNames[i].indexOf(lower) >= 0; }; }
    var source = lower.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
    var pattern = new RegExp("^" + source + "$");
    return function (i) { return pattern.test(lowerNames[i]); };
  }

  var texts = null;   /* each case's searched text, lower case; null until first searched */
  function textTest(query) {   /* null: no search; false: its text is not loaded yet */
    var lower = query.trim().toLowerCase();
    if (!lower) { return null; }
    if (texts === null) {
      var node = document.getElementById("gk-text");
      if (!node || document.readyState === "loading") { return false; }
      texts = JSON.parse(node.textContent);
      for (var i = 0; i < texts.length; i += 1) { texts[i] = texts[i].toLowerCase(); }
    }
    return function (i) { return texts[i].indexOf(lower) >= 0; };
  }

  function has(start, values, i, id) {
    for (var k = start[i]; k < start[i + 1]; k += 1) { if (values[k] === id) { return true; } }
    return false;
  }

  function graderOutcome(i, grader) {   /* that grader's worst outcome in case i, or -1 */
    for (var k = graderStart[i]; k < graderStart[i + 1]; k += 1) {
      var code = idx.gv[k];
      if (Math.floor(code / 3) === grader) { return code % 3; }
    }
    return -1;
  }

  var visible = new Uint32Array(0);

  function apply() {
    var ids = order(state.sort);
    var byName = nameTest(state.filter.trim());
    var grader = state.grader ? idx.graders.indexOf(state.grader) : -1;
    var tag = state.tag ? idx.tags.indexOf(state.tag) : -1;
    var meta = state.meta ? pairs.indexOf(state.meta) : -1;
    var byText = textTest(state.search);
    var code = state.outcome in CODE ? CODE[state.outcome] : -1;
    var letter = LETTER[state.outcome];
    var mark = state.baseline && marks ? state.baseline.charAt(0) : "";
    var none = (state.grader && grader < 0) || (state.tag && tag < 0) || (state.meta && meta < 0) || byText === false || (state.outcome && code < 0) ||
      (state.baseline && (!marks || MARK[mark] !== state.baseline));
    var kept = new Uint32Array(none ? 0 : n);
    var count = 0;
    for (var k = 0; k < kept.length; k += 1) {
      var i = ids[k];
      if (byName !== null && !byName(i)) { continue; }
      if (grader >= 0) {
        var got = graderOutcome(i, grader);
        if (got < 0 || (code >= 0 && got !== code)) { continue; }
      } else if (letter && letters.charAt(i) !== letter) { continue; }
      if (tag >= 0 && !has(tagStart, idx.tv, i, tag)) { continue; }
      if (meta >= 0 && !has(metaStart, idx.mv, i, meta)) { continue; }
      if (byText && !byText(i)) { continue; }
      if (mark && marks.charAt(i) !== mark) { continue; }
      kept[count] = i;
      count += 1;
    }
    visible = kept.subarray(0, count);
    var text = count.toLocaleString("en-US") + " of " + n.toLocaleString("en-US") + " cases shown";
    if (grader >= 0 && code >= 0) { text += " (where " + state.grader + " " + GK.OUTCOME_WORD[state.outcome] + ")"; }
    if (byText === false) { text = "searching once the page has loaded\u2026"; }
    ui.shown.textContent = text;
    ui.list.scrollTop = 0;
    draw();
    writeAddress();
  }

  /* ---- the virtual list: only the rows on screen exist ---- */
  var pool = [];

  function makeRow() {
    var row = el("div", { "class": "row case", role: "row" },
      el("span", { "class": "c-outcome" }, el("span", { "class": "badge" })),
      el("span", { "class": "c-name" }, el("span", { "class": "mark" }), el("span")),
      el("span", { "class": "c-score num" }),
      el("span", { "class": "c-turns num" }), el("span", { "class": "c-time num" }));
    usage.forEach(function (column) { row.appendChild(el("span", { "class": "c-" + column[0] + " num" })); });
    row.appendChild(el("span", { "class": "c-graders" }));
    ui.rows.appendChild(row);
    return row;
  }

  function fillRow(row, i) {
    var outcome = OUTCOME[letters.charAt(i)];
    var cells = row.children;
    row.className = "row case " + outcome + (i === selected ? " selected" : "");
    row.setAttribute("data-index", String(i));
    row.setAttribute("data-name", names[i]);
    row.setAttribute("data-outcome", outcome);
    cells[0].firstChild.className = "badge " + outcome;
    cells[0].firstChild.textContent = GK.OUTCOME_WORD[outcome];
    var mark = marks ? MARK[marks.charAt(i)] : "";
    row.setAttribute("data-baseline", mark || "");
    cells[1].firstChild.className = "mark " + (mark || "");
    cells[1].firstChild.textContent = mark && mark !== "unchanged" ? mark : "";
    cells[1].lastChild.textContent = GK.visible(names[i]);
    cells[1].title = names[i];
    cells[2].textContent = outcome === "error" ? "no score" : GK.score(idx.score[i]);
    cells[3].textContent = String(idx.turns[i]);
    cells[4].textContent = GK.ms(idx.ms[i]);
    var parts = [];
    for (var k = graderStart[i]; k < graderStart[i + 1]; k += 1) {
      var code = idx.gv[k];
      if (code % 3) { parts.push((code % 3 === 2 ? "\u26a0 " : "\u2717 ") + idx.graders[Math.floor(code / 3)]); }
    }
    usage.forEach(function (column, u) {
      var value = idx[column[0]][i];
      cells[5 + u].textContent = value === null ? "" : column[3](value);
    });
    row.lastChild.textContent = GK.visible(parts.join("  "));
  }

  function geometry() {
    var total = visible.length * ROW;
    var height = Math.min(total, MAX_HEIGHT);
    var view = ui.list.clientHeight;
    var ratio = total > height && height > view ? (total - view) / (height - view) : 1;
    return { height: height, ratio: ratio, view: view };
  }

  var drawn = false;
  function draw() {
    var g = geometry();
    ui.spacer.style.height = g.height + "px";
    var top = ui.list.scrollTop;
    var virtualTop = top * g.ratio;
    var first = Math.max(0, Math.floor(virtualTop / ROW) - OVERSCAN);
    var last = Math.min(visible.length, Math.ceil((virtualTop + g.view) / ROW) + OVERSCAN);
    var used = 0;
    for (var k = first; k < last; k += 1) {
      var row = pool[used] || (pool[used] = makeRow());
      row.hidden = false;
      row.style.transform = "translateY(" + Math.round(top + k * ROW - virtualTop) + "px)";
      fillRow(row, visible[k]);
      used += 1;
    }
    for (var rest = used; rest < pool.length; rest += 1) { pool[rest].hidden = true; }
    if (!drawn) { drawn = true; firstScreen(); }
  }

  function firstScreen() {   /* when the first rows are painted (the benchmark reads it) */
    requestAnimationFrame(function () {
      setTimeout(function () { document.body.setAttribute("data-first-screen-ms", String(Math.round(performance.now()))); }, 0);
    });
  }

  function scrollTo(i) {
    var k = visible.indexOf(i);
    if (k < 0) { return; }
    var g = geometry();
    var y = k * ROW / g.ratio;
    var head = ROW;
    if (y < ui.list.scrollTop + head || y + ROW > ui.list.scrollTop + g.view) {
      ui.list.scrollTop = Math.max(0, y - g.view / 3);
    }
  }

  /* ---- a case's detail, from its line of the case data ---- */
  var selected = -1;
  var chunks = {};
  var kept = [];

  function chunkOf(i) {
    var lo = 0, hi = idx.chunks.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (idx.chunks[mid] <= i) { lo = mid; } else { hi = mid - 1; }
    }
    return lo;
  }

  function caseData(i) {   /* the case's JSON form; undefined while its chunk is loading */
    var c = chunkOf(i);
    var lines = chunks[c];
    if (!lines) {
      var node = document.getElementById("gk-cases-" + c);
      var complete = document.readyState !== "loading" || document.getElementById("gk-cases-" + (c + 1));
      if (!node || !complete) { return undefined; }
      lines = chunks[c] = node.textContent.split("\n");
      kept.push(c);
      if (kept.length > 8) { delete chunks[kept.shift()]; }
    }
    try { return JSON.parse(lines[i - idx.chunks[c]]); } catch (error) { return null; }
  }

  var baseCases = null;
  function baselineCase(i) {   /* the baseline's form of a regressed or fixed case, or null */
    var letter = marks.charAt(i);
    if (letter !== "r" && letter !== "f") { return undefined; }
    if (baseCases === null) {
      var node = document.getElementById("gk-baseline-cases");
      if (!node && document.readyState === "loading") { return null; }
      try { baseCases = node ? JSON.parse(node.textContent) : {}; } catch (error) { baseCases = {}; }
    }
    return Object.prototype.hasOwnProperty.call(baseCases, names[i]) ? baseCases[names[i]] : null;
  }

  function showDetail() {
    if (selected < 0) { return; }
    var data = caseData(selected);
    var view;
    if (data === undefined) {
      view = el("p", { "class": "muted", id: "loading", text: "Loading the case\u2026" });
    } else if (data === null) {
      view = el("p", { "class": "error", text: "This case's data could not be read from the page." });
    } else {
      view = GK.renderCase(data, OUTCOME[letters.charAt(selected)], baselineCase(selected));
    }
    ui.detail.replaceChildren(view);
    ui.detail.scrollTop = 0;
  }

  function open(i) {
    selected = i;
    state["case"] = i >= 0 ? names[i] : null;
    writeAddress();
    draw();
    showDetail();
  }

  function openNamed(name) {
    if (name === null || name === undefined) { return; }
    var i = names.indexOf(name);
    if (i >= 0) { open(i); scrollTo(i); }
  }

  /* ---- events ---- */
  ui.filter.addEventListener("input", function () { state.filter = ui.filter.value; apply(); });
  ui.search.addEventListener("input", function () { state.search = ui.search.value; apply(); });
  [["outcome", ui.outcome], ["grader", ui.grader], ["tag", ui.tag], ["meta", ui.meta], ["baseline", ui.baseline], ["sort", ui.sort]].forEach(function (pair) {
    pair[1].addEventListener("change", function () { state[pair[0]] = pair[1].value; apply(); });
  });
  var pending = false;
  ui.list.addEventListener("scroll", function () {
    if (pending) { return; }
    pending = true;
    requestAnimationFrame(function () { pending = false; draw(); });
  });
  window.addEventListener("resize", draw);
  ui.rows.addEventListener("click", function (event) {
    var row = event.target.closest(".row.case");
    if (row) { open(Number(row.getAttribute("data-index"))); ui.list.focus(); }
  });
  ui.list.addEventListener("keydown", function (event) {
    var step = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 }[event.key];
    if (!step || !visible.length) { return; }
    event.preventDefault();
    var k = visible.indexOf(selected);
    k = k < 0 ? 0 : Math.min(visible.length - 1, Math.max(0, k + step));
    open(visible[k]);
    scrollTo(visible[k]);
  });
  window.addEventListener("hashchange", function () {
    state = readState();
    showState();
    apply();
    if (state["case"] !== null && names[selected] !== state["case"]) { openNamed(state["case"]); }
  });
  document.addEventListener("DOMContentLoaded", function () {
    if (selected >= 0 && (document.getElementById("loading") || document.getElementById("baseline-missing"))) { showDetail(); }
    if (state.search.trim()) { apply(); }   /* the searched text has arrived */
    document.body.setAttribute("data-loaded-ms", String(Math.round(performance.now())));
    document.body.setAttribute("data-ready", "true");
  });

  showState();
  apply();
  openNamed(state["case"]);
  if (document.readyState !== "loading") { document.body.setAttribute("data-ready", "true"); }
})();
