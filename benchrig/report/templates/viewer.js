(function () {
  "use strict";
  // The sample browser. Every outside text arrives as JSON data (already made printable by
  // textsafe) and is put in the page with textContent only: never parsed as HTML.
  var island = document.getElementById("benchrig-data");
  if (!island) { return; }
  var given = JSON.parse(island.textContent);
  if (given.rows) {
    browse(given);
  } else { // `benchrig view`'s shell: the rows come from its server once it has read them
    fetch("rows").then(function (response) { return response.json(); }).then(browse)
      .then(function () {
        // the report part only once the rows show: its frame must not hold up the page
        var frame = document.querySelector("iframe[data-src]");
        if (frame) { frame.src = frame.getAttribute("data-src"); }
      });
  }

  function browse(data) {
    var C = {};
    data.columns.forEach(function (name, i) { C[name] = i; });
    var rows = data.rows;
    // What a search looks in: each attempt's answer (embedded details, or the row's excerpt
    // on a served page), lower-cased once.
    var haystack = rows.map(function (r, i) {
      return (data.details ? data.details[i].answer : r[C.search]).toLowerCase();
    });
    var SHOWN = 300; // rows put in the table at once: filtering stays fast at 10,000
    var FILTERS = ["model", "agent", "label", "suite", "task", "sample", "result", "error"];
    var state = { sort: "started", desc: false, failures: false, search: "", pin: null };
    var order = [];
    var levels = {};  // a sweep's suites: their rows are levels, counted apart
    (data.levels || []).forEach(function (suite) { levels[suite] = true; });
    var all = [0, 0];  // attempts, levels
    rows.forEach(function (r) { all[levels[r[C.suite]] ? 1 : 0] += 1; });

    function el(tag, text, cls) {
      var node = document.createElement(tag);
      if (text !== undefined && text !== null) { node.textContent = String(text); }
      if (cls) { node.className = cls; }
      return node;
    }

    var root = document.getElementById("browser");
    root.textContent = "";
    var bar = el("div", null, "filters");
    var selects = {};
    FILTERS.forEach(function (name) {
      var values = {};
      rows.forEach(function (r) { values[r[C[name]]] = true; });
      var select = el("select");
      select.setAttribute("data-filter", name);
      select.appendChild(el("option", name + ": all")).value = "";
      Object.keys(values).sort().forEach(function (v) {
        var option = el("option", v);
        option.value = v;
        select.appendChild(option);
      });
      select.addEventListener("change", update);
      selects[name] = select;
      bar.appendChild(select);
    });
    var search = el("input");
    search.type = "search";
    search.placeholder = "search answers";
    search.setAttribute("data-search", "");
    search.addEventListener("input", update);
    bar.appendChild(search);
    var failures = el("label", " failures only");
    var box = el("input");
    box.type = "checkbox";
    box.setAttribute("data-failures", "");
    box.addEventListener("change", update);
    failures.insertBefore(box, failures.firstChild);
    bar.appendChild(failures);
    var pinned = el("span", "", "meta");
    pinned.setAttribute("data-pinned", "");
    bar.appendChild(pinned);
    var count = el("span", "", "meta");
    count.setAttribute("data-count", "");
    bar.appendChild(count);
    root.appendChild(bar);

    var table = el("table", null, "samples");
    var head = el("tr");
    var HEADS = ["model", "agent", "label", "suite", "task", "sample", "result", "error",
                 "ttft_ms", "tokens_per_s", "checks", "started"];
    HEADS.forEach(function (name) {
      var th = el("th", name.replace("_", " "));
      th.setAttribute("data-sort", name);
      th.addEventListener("click", function () {
        state.desc = state.sort === name ? !state.desc : false;
        state.sort = name;
        update();
      });
      head.appendChild(th);
    });
    table.appendChild(head);
    var body = el("tbody");
    table.appendChild(body);
    root.appendChild(table);
    var panel = el("div", null, "detail");
    panel.id = "sample-detail";
    root.appendChild(panel);

    function keep(r, index) {
      for (var f = 0; f < FILTERS.length; f++) {
        var want = selects[FILTERS[f]].value;
        if (want && r[C[FILTERS[f]]] !== want) { return false; }
      }
      if (state.failures && r[C.result] === "pass") { return false; }
      var pin = state.pin;
      if (pin && (r[C.group] !== pin.group || r[C.suite] !== pin.suite ||
                  r[C.task] !== pin.task)) { return false; }
      return !state.search || haystack[index].indexOf(state.search) >= 0;
    }

    function compare(a, b) {
      var x = rows[a][C[state.sort]], y = rows[b][C[state.sort]];
      var c = x === y ? 0 : x === null ? 1 : y === null ? -1 : x < y ? -1 : 1;
      return state.desc ? -c : c;
    }

    function update() {
      state.search = search.value.toLowerCase();
      state.failures = box.checked;
      order = [];
      for (var i = 0; i < rows.length; i++) { if (keep(rows[i], i)) { order.push(i); } }
      order.sort(compare);
      body.textContent = "";
      var fragment = document.createDocumentFragment();
      order.slice(0, SHOWN).forEach(function (i) {
        var tr = el("tr");
        tr.setAttribute("data-row", String(i));
        HEADS.forEach(function (name) {
          var value = rows[i][C[name]];
          var td = el("td", value === null ? "—" : value);
          if (name === "result") { td.className = value; }
          tr.appendChild(td);
        });
        tr.addEventListener("click", function () { open(i); });
        fragment.appendChild(tr);
      });
      body.appendChild(fragment);
      pinned.textContent = state.pin ? " " + data.pins.groups[state.pin.group] + " / " +
        state.pin.suite + " / " + state.pin.task + " only" : "";
      if (state.pin) {
        var clear = el("button", "show all");
        clear.addEventListener("click", function () {
          state.pin = null;
          history.replaceState(null, "", window.location.pathname + window.location.search);
          update();
        });
        pinned.appendChild(clear);
      }
      count.textContent = " " + counted() +
        (order.length > SHOWN ? " (first " + SHOWN + " shown; filter to see others)" : "");
    }

    // Shown of all, attempts and a sweep's levels apart: a level is never an attempt.
    function counted() {
      var shown = [0, 0];
      order.forEach(function (i) { shown[levels[rows[i][C.suite]] ? 1 : 0] += 1; });
      var text = shown[0] + " of " + all[0] + (all[0] === 1 ? " attempt" : " attempts");
      return all[1] ? text + ", " + shown[1] + " of " + all[1] +
        (all[1] === 1 ? " level" : " levels") : text;
    }

    function section(title, text, cls) {
      if (!text) { return; }
      panel.appendChild(el("h4", title));
      panel.appendChild(el("pre", text, cls));
    }

    function grid(heads, lines) {
      var t = el("table");
      var tr = el("tr");
      heads.forEach(function (h) { tr.appendChild(el("th", h)); });
      t.appendChild(tr);
      lines.forEach(function (line) {
        var r = el("tr");
        line.forEach(function (cell) {
          r.appendChild(el("td", cell === true ? "yes" : cell === false ? "no" : cell,
                           cell === true ? "pass" : cell === false ? "fail" : ""));
        });
        t.appendChild(r);
      });
      panel.appendChild(t);
    }

    // A load level: its figures, then its sweep's curve, each level a row that opens it.
    function level(i, found) {
      panel.appendChild(el("h4", "load level"));
      grid(["figure", "value"], found.facts);
      grid(["distribution", "n", "p50", "p90", "p99", "mean"], found.figures);
      (data.load || []).forEach(function (curve) {
        var at = curve.members.indexOf(i);
        if (at < 0) { return; }
        panel.appendChild(el("h4", "its curve: " + curve.name + " · by " + curve.mode +
                             (curve.slo ? " · goodput against " + curve.slo : "")));
        var t = el("table", null, "curve");
        t.setAttribute("data-curve", "");
        var tr = el("tr");
        curve.headers.forEach(function (h) { tr.appendChild(el("th", h)); });
        t.appendChild(tr);
        curve.rows.forEach(function (cells, k) {
          var r = el("tr", null, k === at ? "open" : "");
          r.setAttribute("data-level-row", String(curve.members[k]));
          cells.forEach(function (cell) { r.appendChild(el("td", cell)); });
          r.addEventListener("click", function () { open(curve.members[k]); });
          t.appendChild(r);
        });
        panel.appendChild(t);
      });
    }

    function show(i, d) {
      var r = rows[i];
      panel.textContent = "";
      panel.setAttribute("data-open", String(i));
      panel.appendChild(el("h3", r[C.model] + " · " + r[C.agent] + " · " + r[C.task] +
                          (r[C.sample] !== "—" ? "#" + r[C.sample] : "") +
                          " — " + r[C.result]));
      panel.appendChild(el("p", "run " + d.run + " · label " + r[C.label] + " · " +
                          r[C.started] + " · task " + d.hash.slice(0, 19) + "…", "meta"));
      if (d.notes) { panel.appendChild(el("p", d.notes)); }
      if (d.error) { panel.appendChild(el("p", "error " + d.error, "error")); }
      if (d.load) { level(i, d.load); }
      if (d.checks.length) { panel.appendChild(el("h4", "checks")); grid(["check", "passed", "message"], d.checks); }
      section("prompt", d.prompt, "prompt");
      section("thinking", d.thinking, "thinking");
      if (d.answer) { // the whole answer, its fenced code (what a check extracts) highlighted
        panel.appendChild(el("h4", "answer (first " + data.caps.answer + " characters)"));
        var pre = el("pre", null, "answer");
        d.answer.split(/(```[^\n]*\n[\s\S]*?```)/).forEach(function (part, k) {
          pre.appendChild(k % 2 ? el("mark", part, "code") : document.createTextNode(part));
        });
        panel.appendChild(pre);
      }
      section("tool calls, turns and files", d.tools, "tools");
      section("agent events", d.events, "events");
      section("evidence: fixture results, agent events, context steps", d.evidence, "evidence");
      if (d.metrics.length) { panel.appendChild(el("h4", "metrics (value, source)")); grid(["metric", "value", "source / why"], d.metrics); }
      var link = el("p", "transcript: ", "meta");
      if (d.transcript && data.served) {
        var a = el("a", d.transcript);
        a.href = "transcript/" + i;
        link.appendChild(a);
      } else {
        link.appendChild(el("span", d.transcript || "none"));
      }
      panel.appendChild(link);
      // Side by side: the same task's attempts across models, agents and labels (a load
      // level has its curve above instead).
      var same = [];
      for (var j = 0; j < rows.length; j++) {
        if (rows[j][C.task] === r[C.task] && rows[j][C.suite] === r[C.suite] &&
            rows[j][C.sample] === r[C.sample]) { same.push(j); }
      }
      if (same.length > 1 && !d.load) {
        panel.appendChild(el("h4", "this task across models, agents and labels"));
        var side = el("div", null, "side");
        same.slice(0, 12).forEach(function (j) {
          var card = el("div", null, "sidecard");
          card.appendChild(el("b", rows[j][C.model] + " · " + rows[j][C.agent] + " · " +
                              rows[j][C.label] + " — " + rows[j][C.result]));
          var excerpt = data.details ? data.details[j].answer : rows[j][C.search];
          card.appendChild(el("pre", excerpt.slice(0, 1500)));
          card.addEventListener("click", function () { open(j); });
          side.appendChild(card);
        });
        panel.appendChild(side);
      }
      panel.scrollIntoView();
    }

    function open(i) {
      if (data.details) { show(i, data.details[i]); return; }
      // served by `benchrig view`: details on demand, read only
      fetch("attempt/" + i).then(function (response) { return response.json(); })
        .then(function (d) { show(i, d); });
    }

    if (data.details && data.sidecars < rows.length) {
      root.insertBefore(el("p", "This file embeds the transcripts of " + data.sidecars +
        " attempts (those that did not pass first); `benchrig view` shows every one.", "note"),
        bar);
    }
    // A heat-map link (#gN-tM): that model row's attempts at that task, the first one open.
    function pinTarget() {
      var found = /^g(\d+)-t(\d+)$/.exec(decodeURIComponent(window.location.hash.slice(1)));
      var task = found && data.pins ? data.pins.tasks[Number(found[2])] : null;
      if (!task) { return false; }
      state.pin = { group: Number(found[1]), suite: task[0], task: task[1] };
      update();
      if (order.length) { open(order[0]); }
      return true;
    }
    window.addEventListener("hashchange", function () { if (!pinTarget()) { update(); } });
    if (!pinTarget()) { update(); }
    document.documentElement.setAttribute("data-viewer", "ready");
  }
})();
