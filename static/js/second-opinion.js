// The AI second opinion panel of the grading page (annotation/_second_opinion.html): a refused
// revision (400 no reason, 409 already revised or final, 403 not yours) comes back as the panel
// with the reason in it, so let htmx show it instead of dropping it.
(function () {
  "use strict";
  document.addEventListener("htmx:beforeSwap", function (evt) {
    var target = evt.detail.target, code = evt.detail.xhr.status;
    if (target && target.id === "second-opinion" && code >= 400 && code < 500) {
      evt.detail.shouldSwap = true;
      evt.detail.isError = false;
    }
  });
  document.addEventListener("htmx:afterSwap", function (evt) {
    var target = evt.detail.target;
    if (!target || target.id !== "second-opinion") return;
    var error = document.getElementById("second-opinion-error");
    if (error && evt.detail.requestConfig && evt.detail.requestConfig.verb === "post") {
      var reason = document.getElementById("revise-reason");
      if (reason) reason.focus();
    }
  });
})();
