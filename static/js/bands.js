// The band picker of the grading page (a band scheme: IMO-ProofBench's guidelines). Each band
// is a .cp-row award row whose radio (name "band") holds the band's points, so grading.js reads
// the pick as the awards {band id: points} and saves it. Picking a band also chooses the final
// score: its points. A band's key (its points as a digit) picks it; this listener is added
// before grading.js's, so the digit picks the band instead of only setting the score.
(function () {
  "use strict";
  var root = document.getElementById("grading");
  if (!root || !root.querySelector(".cp-row.band")) return;
  var editable = root.dataset.editable === "1";
  var rows = Array.prototype.slice.call(root.querySelectorAll(".cp-row.band"));

  function showPicked() {
    rows.forEach(function (row) {
      row.classList.toggle("picked", !!row.querySelector("input[name=band]:checked"));
    });
  }
  // The band's points become the final score as if the expert had chosen it (a change of the
  // score radio), so that grading.js keeps it rather than the computed score of the last save.
  function setScore(points) {
    root.querySelectorAll("input[name=score]").forEach(function (radio) {
      if (parseFloat(radio.value) !== parseFloat(points)) return;
      radio.checked = true;
      radio.dispatchEvent(new Event("change", { bubbles: true }));
    });
  }
  function pick(row) {
    var radio = row.querySelector("input[name=band]");
    if (!radio || radio.disabled) return;
    radio.checked = true;
    // the change listener below sets the score; grading.js saves on a change in the page
    radio.dispatchEvent(new Event("change", { bubbles: true }));
  }
  root.addEventListener("change", function (evt) {
    if (evt.target.name !== "band") return;
    setScore(evt.target.value);
    showPicked();
  });
  function typing(el) {
    if (!el) return false;
    if (el.tagName === "INPUT") return !/^(radio|checkbox|button|submit)$/.test(el.type);
    return el.isContentEditable || /^(TEXTAREA|SELECT)$/.test(el.tagName);
  }
  document.addEventListener("keydown", function (evt) {
    if (!editable || evt.ctrlKey || evt.metaKey || evt.altKey || typing(evt.target)) return;
    var popup = document.getElementById("span-popup");
    if (popup && !popup.hidden) return;
    var row = rows.filter(function (r) { return r.dataset.bandKey && r.dataset.bandKey === evt.key; })[0];
    if (!row) return;
    evt.preventDefault();
    evt.stopImmediatePropagation();
    pick(row);
  }, true);
  document.addEventListener("DOMContentLoaded", showPicked);
})();
