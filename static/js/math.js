// Typesets the math spans that the server's Markdown renderer marks, with our own KaTeX copy.
(function () {
  // LaTeX that the corpora use and KaTeX lacks, defined in terms of what it has.
  var macros = {
    "\\ensuremath": "\\text{$#1$}",
    "\\lcm": "\\operatorname{lcm}",
    "\\qed": "\\square",
  };
  // KaTeX's bounds: macro expansions per formula (a macro that expands without end is an error
  // in its formula), and the largest size a formula may ask for, in em.
  var limits = { maxExpand: 1000, maxSize: 50 };
  // A text that defines macros (the server marks its math with data-tex-scope) has a table of
  // its own, which its definitions fill in the order they are written (KaTeX reads them, with
  // globalGroup so that a definition lasts to the end of the text); no other text sees it.
  var scopes = {};
  function scopeOf(el) {
    var id = el.getAttribute("data-tex-scope");
    if (!id) return null;
    if (!Object.prototype.hasOwnProperty.call(scopes, id)) scopes[id] = Object.assign({}, macros);
    return scopes[id];
  }
  function options(display, scope) {
    return Object.assign({ displayMode: display, throwOnError: false, strict: "ignore", trust: false,
      macros: scope || Object.assign({}, macros), globalGroup: !!scope }, limits);
  }
  function typeset(root) {
    if (!window.katex) return;
    root.querySelectorAll(".math:not([data-typeset])").forEach(function (el) {
      var display = el.classList.contains("block");
      var scope = scopeOf(el);
      try {
        if (el.classList.contains("define")) {
          if (scope) window.katex.renderToString(el.textContent, options(false, scope));
          el.textContent = "";
        } else {
          window.katex.render(el.textContent, el, options(display, scope));
        }
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
