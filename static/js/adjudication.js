// Case page: the adjudicator selects text in the proof source and adds it as an error span.
// Offsets count characters of #proof-source's text, which is exactly Proof.text.
(function () {
  "use strict";
  function offsetIn(container, node, offset) {
    var range = document.createRange();
    range.selectNodeContents(container);
    range.setEnd(node, offset);
    return range.toString().length;
  }
  document.addEventListener("DOMContentLoaded", function () {
    var source = document.getElementById("proof-source");
    var add = document.getElementById("add-span");
    var field = document.getElementById("spans-json");
    var list = document.getElementById("new-spans");
    if (!source || !add || !field || !list) return;
    var spans = [];
    var pending = null;
    document.addEventListener("selectionchange", function () {
      var sel = window.getSelection();
      if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return;
      var range = sel.getRangeAt(0);
      if (!source.contains(range.startContainer) || !source.contains(range.endContainer)) return;
      var start = offsetIn(source, range.startContainer, range.startOffset);
      var end = offsetIn(source, range.endContainer, range.endOffset);
      if (end > start) pending = { start: start, end: end, quote: source.textContent.slice(start, end) };
    });
    function render() {
      field.value = JSON.stringify(spans);
      list.innerHTML = "";
      spans.forEach(function (s, i) {
        var li = document.createElement("li");
        li.textContent = s.category + ": \u201c" + s.quote.slice(0, 60) + "\u201d " + (s.note || "");
        var rm = document.createElement("button");
        rm.type = "button";
        rm.textContent = "remove";
        rm.addEventListener("click", function () { spans.splice(i, 1); render(); });
        li.appendChild(document.createTextNode(" "));
        li.appendChild(rm);
        list.appendChild(li);
      });
    }
    add.addEventListener("click", function () {
      if (!pending) { alert("Select some text in the proof first."); return; }
      spans.push({
        start: pending.start, end: pending.end, quote: pending.quote,
        category: document.getElementById("span-category").value,
        note: document.getElementById("span-note").value,
      });
      pending = null;
      document.getElementById("span-note").value = "";
      render();
    });
  });
})();
