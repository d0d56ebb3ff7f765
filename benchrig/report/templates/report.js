(function () {
  "use strict";
  // Marks that the page's own script runs (the browser tests read it); the sample browser
  // (viewer.js) renders the drill-downs, the heat map's links included.
  document.documentElement.setAttribute("data-report-script", "ran");
})();
