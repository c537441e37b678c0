// Case and discussion pages: the experts' error spans laid over the rendered proof (one copy;
// its source, with the same spans, on demand), the adjudicator's own spans picked from either,
// and the case page's keys: a letter accepts that expert's judgement (Enter then records it),
// s goes to the new score, n to the next case (keys.js, data-key). A decision is sent once: a
// second click of the same button is ignored, and a page restored by Back is loaded afresh.
(function () {
  "use strict";
  var typeset = document.getElementById("proof-typeset");
  var sourceData = document.getElementById("proof-text-source");
  var aligner = null;
  if (typeset && sourceData && window.Proofmark) {
    // built before math.js typesets (deferred scripts run before DOMContentLoaded)
    aligner = new Proofmark.Aligner(typeset, JSON.parse(sourceData.textContent), { approximate: true });
    var marks = JSON.parse(document.getElementById("proof-marks").textContent);
    aligner.highlight(marks, function (ids) {
      var layers = [];
      ids.forEach(function (i) { if (layers.indexOf("layer-" + marks[i].layer) < 0) layers.push("layer-" + marks[i].layer); });
      return { className: layers.join(" "), title: ids.map(function (i) { return marks[i].title; }).join("; ") };
    });
  }

  function offsetIn(container, node, offset) {
    var range = document.createRange();
    range.selectNodeContents(container);
    range.setEnd(node, offset);
    return range.toString().length;
  }
  // The selection as {start, end, quote} of the proof's source: from the rendered proof through
  // the alignment, or from the source text itself.
  function picked() {
    var source = document.getElementById("proof-source");
    var sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    var range = sel.getRangeAt(0);
    if (aligner && typeset.contains(range.commonAncestorContainer)) return aligner.selection();
    if (!source || !source.contains(range.startContainer) || !source.contains(range.endContainer)) return null;
    var start = offsetIn(source, range.startContainer, range.startOffset);
    var end = offsetIn(source, range.endContainer, range.endOffset);
    return end > start ? { start: start, end: end, quote: source.textContent.slice(start, end) } : null;
  }

  function typing(el) {
    if (!el || !el.tagName) return false;
    if (el.tagName === "INPUT") return !/^(radio|checkbox|button|submit|reset|image)$/.test(el.type);
    return el.isContentEditable || /^(TEXTAREA|SELECT)$/.test(el.tagName);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var add = document.getElementById("add-span");
    var field = document.getElementById("spans-json");
    var list = document.getElementById("new-spans");
    var hint = document.getElementById("span-hint");
    var spans = [];
    var pending = null;
    document.addEventListener("selectionchange", function () {
      var found = picked();
      if (found) pending = found;
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
    if (add && field && list) {
      add.addEventListener("click", function () {
        if (!pending) { hint.textContent = "Select some text in the proof first."; return; }
        hint.textContent = "";
        spans.push({
          start: pending.start, end: pending.end, quote: pending.quote,
          category: document.getElementById("span-category").value,
          note: document.getElementById("span-note").value,
        });
        pending = null;
        document.getElementById("span-note").value = "";
        render();
      });
    }

    var acceptButton = document.getElementById("accept-button");
    document.addEventListener("keydown", function (evt) {
      if (evt.ctrlKey || evt.metaKey || evt.altKey || typing(evt.target)) return;
      var radio = acceptButton && document.querySelector('#accept-form input[data-accept="' + CSS.escape(evt.key) + '"]');
      if (radio) {
        evt.preventDefault();
        radio.checked = true;
        acceptButton.classList.add("armed");
        acceptButton.focus();
      } else if (evt.key === "s" && document.getElementById("new-score")) {
        evt.preventDefault();
        document.getElementById("new-score").focus();
      }
    });
    if (acceptButton) acceptButton.addEventListener("blur", function () { acceptButton.classList.remove("armed"); });

    document.querySelectorAll("#decide form").forEach(function (form) {
      form.addEventListener("submit", function (evt) {
        if (form.dataset.sent) { evt.preventDefault(); return; }
        form.dataset.sent = "1";
      });
    });
  });
  window.addEventListener("pageshow", function (evt) {
    if (evt.persisted && document.getElementById("decide")) window.location.reload();
  });
})();
