// Keyboard shortcuts: an element with data-key="x" is activated by pressing x (links and
// buttons are clicked, fields focused), except while typing in a field; Escape leaves a field.
(function () {
  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  document.addEventListener("keydown", function (evt) {
    if (evt.ctrlKey || evt.metaKey || evt.altKey) return;
    if (typing(evt.target)) {
      if (evt.key === "Escape") evt.target.blur();
      return;
    }
    var target = document.querySelector('[data-key="' + CSS.escape(evt.key) + '"]');
    if (!target) return;
    evt.preventDefault();
    if (typing(target)) { target.focus(); target.select && target.select(); }
    else { target.click(); }
  });
})();
