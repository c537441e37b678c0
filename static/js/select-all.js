// A checkbox with data-select-all="SELECTOR" ticks or clears every box SELECTOR finds.
document.addEventListener("change", function (event) {
  var selector = event.target.dataset && event.target.dataset.selectAll;
  if (!selector) return;
  document.querySelectorAll(selector).forEach(function (box) { box.checked = event.target.checked; });
});
