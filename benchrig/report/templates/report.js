(function () {
  "use strict";
  // A link from the heat map opens the drill-down it points at (and its parents).
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    if (target) { target.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  document.documentElement.setAttribute("data-report-script", "ran");
})();
