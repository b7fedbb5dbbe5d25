// train-audit report: filter the claims by status and rule, sort them, and open a collapsed claim that a link
// points to. Optional: without JavaScript the page is complete (the controls stay hidden). Allowed by its
// SHA-256 hash in the page's Content-Security-Policy; it only moves, hides and opens existing elements (no HTML
// is ever parsed from text).
(function () {
  "use strict";
  var controls = document.getElementById("controls");
  var table = document.getElementById("claims-table");
  var details = document.getElementById("claim-details");
  if (!controls || !table || !details) { return; }
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var articles = {};
  Array.prototype.forEach.call(details.querySelectorAll("article.claim"), function (a) { articles[a.id] = a; });
  var ruleSelect = document.getElementById("filter-rule");
  var sortSelect = document.getElementById("sort-by");
  var count = document.getElementById("shown-count");

  function selectedStatus() {
    var checked = controls.querySelector('input[name="status"]:checked');
    return checked ? checked.value : "all";
  }

  function matches(tr, status, rule) {
    if (status !== "all" && tr.getAttribute("data-status") !== status) { return false; }
    var rules = tr.getAttribute("data-rules");
    if (rule === "-") { return rules === ""; }
    if (rule !== "") { return (" " + rules + " ").indexOf(" " + rule + " ") >= 0; }
    return true;
  }

  function filter() {
    var status = selectedStatus();
    var rule = ruleSelect.value;
    var shown = 0;
    rows.forEach(function (tr) {
      var ok = matches(tr, status, rule);
      tr.hidden = !ok;
      var article = articles[tr.getAttribute("data-anchor")];
      if (article) { article.hidden = !ok; }
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " claims shown";
  }

  function number(tr, name) {
    var v = tr.getAttribute(name);
    return v === "" ? NaN : parseFloat(v);
  }

  function compare(key) {
    if (key === "id") {
      return function (a, b) {
        var x = a.getAttribute("data-id"), y = b.getAttribute("data-id");
        return x < y ? -1 : x > y ? 1 : number(a, "data-row") - number(b, "data-row");
      };
    }
    if (key === "mfu-desc" || key === "mfu-asc") {
      var sign = key === "mfu-desc" ? -1 : 1;
      return function (a, b) {
        var x = number(a, "data-mfu"), y = number(b, "data-mfu");
        if (isNaN(x) !== isNaN(y)) { return isNaN(x) ? 1 : -1; }
        if (!isNaN(x) && x !== y) { return sign * (x - y); }
        return number(a, "data-rank") - number(b, "data-rank");
      };
    }
    if (key === "rule") {
      // Claims with problems first, grouped by their rule codes; then worst first.
      return function (a, b) {
        var x = a.getAttribute("data-rules"), y = b.getAttribute("data-rules");
        if ((x === "") !== (y === "")) { return x === "" ? 1 : -1; }
        if (x !== y) { return x < y ? -1 : 1; }
        return number(a, "data-rank") - number(b, "data-rank");
      };
    }
    var attr = key === "row" ? "data-row" : "data-rank";
    return function (a, b) { return number(a, attr) - number(b, attr); };
  }

  function sort() {
    rows.sort(compare(sortSelect.value));
    rows.forEach(function (tr) {
      tbody.appendChild(tr);
      var article = articles[tr.getAttribute("data-anchor")];
      if (article) { details.appendChild(article); }
    });
  }

  // A link to a claim the filter hides (from the summary or a chart) clears the filter first; a link to a
  // collapsed (passing) claim opens it.
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (!target) { return; }
    var moved = false;
    if (target.hidden) {
      controls.querySelector('input[name="status"][value="all"]').checked = true;
      ruleSelect.value = "";
      filter();
      moved = true;
    }
    var body = target.querySelector("details.claim-body");
    if (body && !body.open) { body.open = true; moved = true; }
    if (moved) { target.scrollIntoView(); }
  }

  // Printing shows every claim in full (the print style does it too, where the browser allows).
  var opened = [];
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(details.querySelectorAll("details.claim-body:not([open])"), function (d) {
      d.open = true;
      opened.push(d);
    });
  });
  window.addEventListener("afterprint", function () {
    opened.forEach(function (d) { d.open = false; });
    opened = [];
  });

  controls.addEventListener("change", function (event) {
    if (event.target === sortSelect) { sort(); } else { filter(); }
  });
  window.addEventListener("hashchange", reveal);
  controls.hidden = false;
  filter();
  reveal();
})();
