// Typesets the math spans that the server's Markdown renderer marks, with our own KaTeX copy.
(function () {
  function typeset(root) {
    if (!window.katex) return;
    root.querySelectorAll(".math:not([data-typeset])").forEach(function (el) {
      var display = el.classList.contains("block");
      try {
        window.katex.render(el.textContent, el, { displayMode: display, throwOnError: false, strict: "ignore", trust: false });
      } catch (e) {
        el.classList.add("math-error");
      }
      el.setAttribute("data-typeset", "1");
    });
  }
  window.proofmarkTypeset = typeset;
  document.addEventListener("DOMContentLoaded", function () { typeset(document); });
  document.addEventListener("htmx:afterSettle", function (evt) { typeset(evt.detail.elt || document); });
})();
