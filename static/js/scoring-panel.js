/* The grading page's scoring pane on a phone: a panel over the proof that opens and closes
   (the Score button at the bottom of the screen shows the current score). Wider screens show
   the pane beside or under the proof and never see these buttons (CSS). */
(function () {
  "use strict";
  var pane = document.getElementById("scoring-pane");
  var toggle = document.getElementById("scoring-toggle");
  if (!pane || !toggle) return;
  var shown = document.getElementById("scoring-toggle-score");
  var computed = document.getElementById("computed-score");  // the score follows the checklist

  function setOpen(open) {
    pane.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    document.body.classList.toggle("scoring-open", open);
    if (open) document.getElementById("scoring-close").focus({ preventScroll: true });
  }
  function score() {  // the final score once there is one (a fresh checklist computes 0: not a grade)
    var chosen = pane.querySelector("input[name=score]:checked");
    shown.textContent = chosen ? chosen.value : "";
  }
  toggle.addEventListener("click", function () { setOpen(!pane.classList.contains("open")); });
  document.getElementById("scoring-close").addEventListener("click", function () {
    setOpen(false);
    toggle.focus({ preventScroll: true });
  });
  document.getElementById("scoring-submit").addEventListener("click", function () {
    setOpen(false);  // the answer (or why it was refused) shows in the page's head
    var submit = document.getElementById("submit-button");
    if (submit) submit.click();
  });
  pane.addEventListener("keydown", function (evt) {
    if (evt.key === "Escape" && pane.classList.contains("open")) { setOpen(false); toggle.focus(); }
  });
  pane.addEventListener("change", score);
  if (computed) new MutationObserver(score).observe(computed, { childList: true, characterData: true, subtree: true });
  score();
})();
