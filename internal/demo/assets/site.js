/* The Harbour Gazette site script (demo). Loaded with defer from the origin host. */
(function () {
  "use strict";
  var doc = document.documentElement;
  doc.className += " js";
  var n = document.querySelectorAll("article.teaser").length;
  var el = document.getElementById("teaser-count");
  if (el) el.textContent = String(n);
  window.dataLayer = window.dataLayer || [];
  window.dataLayer.push({ event: "site_ready", teasers: n });
})();
