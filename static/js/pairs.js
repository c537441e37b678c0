// The pair page (annotation/templates/annotation/pair.html), keyboard first: a / b / t choose
// (also while a choice has the focus), r goes to the reason (Esc leaves it, Ctrl+Enter submits
// from it), Enter submits, x skips. A choice is needed before submitting, and a second submit
// (a double click, a held Enter) is not sent.
(function () {
  var form = document.getElementById("pair-form");
  if (!form) return;
  var reason = document.getElementById("pair-reason");
  var skip = document.getElementById("pair-skip");
  var choices = { a: "left", b: "right", t: "tie" };

  function choose(value) {
    var input = form.querySelector('input[name="choice"][value="' + value + '"]');
    if (input && !input.disabled) { input.checked = true; input.focus(); }
  }

  document.addEventListener("keydown", function (evt) {
    if (evt.altKey) return;
    var inField = evt.target === reason || /^(INPUT|TEXTAREA|SELECT)$/.test(evt.target.tagName) &&
      evt.target.type !== "radio";
    if (inField) {
      if (evt.key === "Escape") evt.target.blur();
      if (evt.key === "Enter" && (evt.ctrlKey || evt.metaKey)) { evt.preventDefault(); form.requestSubmit(); }
      return;
    }
    if (evt.ctrlKey || evt.metaKey) return;
    var key = evt.key.toLowerCase();
    if (choices[key]) { evt.preventDefault(); choose(choices[key]); }
    else if (key === "r" && reason && !reason.disabled) { evt.preventDefault(); reason.focus(); }
    else if (key === "x" && skip) { evt.preventDefault(); skip.click(); }
    else if (evt.key === "Enter") { evt.preventDefault(); form.requestSubmit(); }
  });

  form.addEventListener("submit", function (evt) {
    if (form.dataset.sent === "1") { evt.preventDefault(); return; }
    form.dataset.sent = "1";
  });
  // back from the next pair: a page restored from the browser's cache may carry the flag
  window.addEventListener("pageshow", function () { form.dataset.sent = ""; });
})();
