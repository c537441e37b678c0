// A form the browser refuses (a required field left empty, a number out of range) says why on
// the page, beside the field, and not only in the browser's passing bubble; the note goes once
// the field is valid.
(function () {
  "use strict";
  function anchorOf(field) {
    return field.type === "radio" ? (field.closest("fieldset") || field.closest("label") || field) : field;
  }
  function nameOf(field) {
    if (field.type === "radio") {
      var legend = field.closest("fieldset") && field.closest("fieldset").querySelector("legend");
      if (legend) return legend.textContent.trim();
    }
    if (field.labels && field.labels.length) return field.labels[0].textContent.trim().replace(/:$/, "");
    return field.name;
  }
  function noteId(field) { return "refusal-" + (field.form ? field.form.id || "form" : "page") + "-" + field.name; }
  document.addEventListener("invalid", function (evt) {
    var field = evt.target;
    var id = noteId(field);
    var note = document.getElementById(id);
    if (!note) {
      note = document.createElement("p");
      note.id = id;
      note.className = "field-refusal";
      note.setAttribute("role", "alert");
      var anchor = anchorOf(field);
      if (anchor.tagName === "FIELDSET") anchor.appendChild(note);
      else anchor.insertAdjacentElement("afterend", note);
      field.setAttribute("aria-describedby", ((field.getAttribute("aria-describedby") || "") + " " + id).trim());
    }
    note.textContent = nameOf(field) + ": " + field.validationMessage;
  }, true);
  function settled(evt) {
    var field = evt.target;
    if (!field.name || !field.validity || !field.validity.valid) return;
    var note = document.getElementById(noteId(field));
    if (note) note.remove();
  }
  document.addEventListener("input", settled, true);
  document.addEventListener("change", settled, true);
})();
