// Typesets the math spans that the server's Markdown renderer marks, with our own KaTeX copy.
(function () {
  // LaTeX that the corpora use and KaTeX lacks, defined in terms of what it has.
  var macros = {
    "\\ensuremath": "\\text{$#1$}",
    "\\lcm": "\\operatorname{lcm}",
    "\\qed": "\\square",
  };
  function typeset(root) {
    if (!window.katex) return;
    root.querySelectorAll(".math:not([data-typeset])").forEach(function (el) {
      var display = el.classList.contains("block");
      try {
        window.katex.render(el.textContent, el, { displayMode: display, throwOnError: false, strict: "ignore", trust: false, macros: Object.assign({}, macros) });
      } catch (e) {
        el.classList.add("math-error");
      }
      el.setAttribute("data-typeset", "1");
    });
    root.querySelectorAll(".katex-display").forEach(function (box) {
      reachable(box);
      if (resized) resized.observe(box);
    });
  }
  // A formula wider than its column scrolls sideways: keyboard users reach it with Tab. Widths
  // change after typesetting (fonts arrive, panes open, the window resizes), so look again then.
  function reachable(box) {
    if (box.scrollWidth > box.clientWidth && !box.hasAttribute("tabindex")) box.tabIndex = 0;
  }
  var resized = window.ResizeObserver
    ? new ResizeObserver(function (entries) { entries.forEach(function (e) { reachable(e.target); }); })
    : null;
  function lookAgain() { document.querySelectorAll(".katex-display").forEach(reachable); }
  if (document.fonts && document.fonts.ready) document.fonts.ready.then(lookAgain);
  window.addEventListener("load", lookAgain);
  window.proofmarkTypeset = typeset;
  document.addEventListener("DOMContentLoaded", function () { typeset(document); });
  document.addEventListener("htmx:afterSettle", function (evt) { typeset(evt.detail.elt || document); });
})();
