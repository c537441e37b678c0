// The AI second opinion panel of the grading page (annotation/_second_opinion.html, loaded by
// htmx): its one revision goes through the API's operation (POST items/<id>/second-opinion/
// revise/, with the session and its CSRF token, item-page.js's apiCall), then the panel is
// loaded again. A refused revision (400 no reason, 409 already revised or final, 403 not yours)
// is shown in the panel, and the focus goes to the reason.
(function () {
  "use strict";
  // The reason in the panel: above the form, or (the panel loaded again without one) under its
  // title.
  function showError(form, problems) {
    var box = document.getElementById("second-opinion-error");
    if (!box) {
      box = document.createElement("p");
      box.id = "second-opinion-error"; box.className = "problems-box"; box.setAttribute("role", "alert");
      var place = document.body.contains(form) ? form : document.getElementById("second-opinion-title").nextSibling;
      place.parentNode.insertBefore(box, place);
    }
    box.textContent = problems.join(" ");
    var reason = document.getElementById("revise-reason");
    if (reason) reason.focus();
  }
  document.addEventListener("submit", function (evt) {
    var form = evt.target;
    if (!form || form.id !== "second-opinion-form") return;
    evt.preventDefault();
    if (form.dataset.sending) return; // a double click revises once
    form.dataset.sending = "1";
    var button = form.querySelector("button[type=submit]");
    button.disabled = true;
    var chosen = form.querySelector("input[name=revised_score]:checked");
    var body = { score: chosen ? chosen.value : null, reason: form.querySelector("[name=reason]").value };
    function again() { delete form.dataset.sending; button.disabled = false; }
    Proofmark.apiCall("POST", form.dataset.apiUrl, body).then(function (answer) {
      if (answer.sessionEnded) { again(); showError(form, ["Your session ended: log in again in a new tab, then revise."]); return; }
      if (answer.ok) {
        htmx.ajax("GET", form.dataset.panelUrl, { target: "#second-opinion", swap: "innerHTML" });
        return;
      }
      again();
      var problems = answer.problems;
      if (answer.data && answer.data.score && !chosen) problems = ["score: choose your revised score"];
      if (answer.status === 400) { showError(form, problems); return; }
      // refused for what changed meanwhile (revised, final, closed): the panel as it is now
      htmx.ajax("GET", form.dataset.panelUrl, { target: "#second-opinion", swap: "innerHTML" })
        .then(function () { showError(form, problems); });
    }).catch(function () { again(); showError(form, ["The server does not answer: try again."]); });
  });
})();
