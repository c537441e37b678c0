// A form with data-confirm asks before it is sent (the site's CSP allows no inline handler, so
// an onsubmit="return confirm(...)" would never run and the form would go unasked).
(function () {
  "use strict";
  document.addEventListener("submit", function (evt) {
    var question = evt.target.getAttribute && evt.target.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      evt.preventDefault();
      evt.stopImmediatePropagation();
    }
  }, true);
})();
