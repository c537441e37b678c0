// The grading page: checklist, final score, error spans, step verdicts, comment; server-side
// autosave (debounced), idempotent submit, lease heartbeat, time on page, keyboard shortcuts.
//
// Error spans are offsets into the proof's SOURCE text. The rendered proof is aligned to its
// source once (and again after highlighting): text nodes and typeset formulas are walked in
// document order and each one's text (for a formula, its TeX, captured below before KaTeX
// replaces it) is found in the source by a forward-moving search. A selection's ends are read
// through that alignment (an end inside a formula snaps to the whole formula with its
// delimiters); highlighting runs it the other way. See annotation/spans.py.
(function () {
  "use strict";
  var root = document.getElementById("grading");
  if (!root) return;
  var proofEl = document.getElementById("proof-text");
  // Before math.js typesets (deferred scripts run before DOMContentLoaded): keep each TeX.
  proofEl.querySelectorAll(".math").forEach(function (el) { el.dataset.tex = el.textContent; });

  var source = JSON.parse(document.getElementById("proof-source").textContent);
  var state = JSON.parse(document.getElementById("grade-state").textContent);
  var editable = root.dataset.editable === "1";
  var submitted = root.dataset.submitted === "1";
  var scale = root.dataset.scale;
  var submitKey = (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Date.now()) + Math.random();
  var baseSeconds = state.seconds_spent || 0;
  var visibleMs = 0, visibleSince = document.visibilityState === "visible" ? Date.now() : null;
  var computed = state.computed_score;
  // The final score follows the computed one until the expert chooses another; a restored
  // score equal to the computed one (rounded down) is still following.
  var scoreTouched = state.score !== null && state.score !== undefined &&
    !(computed !== null && computed !== undefined && String(parseFloat(state.score)) === String(Math.floor(parseFloat(computed))));
  var activeRow = null;
  var saveTimer = null, saving = false, pendingSave = false, dirty = false;
  var segments = [];
  var statusEl = document.getElementById("save-status");

  function csrf() {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"]; } catch (e) { return ""; }
  }
  function secondsSpent() {
    var ms = visibleMs + (visibleSince ? Date.now() - visibleSince : 0);
    return baseSeconds + Math.round(ms / 1000);
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") { visibleSince = Date.now(); }
    else {
      if (visibleSince) { visibleMs += Date.now() - visibleSince; visibleSince = null; }
      if (dirty) saveNow(true);
    }
  });

  // ---- alignment of the rendered proof to its source --------------------------------------
  var DELIMS = [["$$", "$$"], ["\\[", "\\]"], ["\\(", "\\)"], ["$", "$"]];
  function buildSegments() {
    segments = [];
    var cursor = 0;
    var walker = document.createTreeWalker(proofEl, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        if (node.nodeType === 1) {
          if (node.classList.contains("math")) return NodeFilter.FILTER_ACCEPT;
          if (node.closest(".math")) return NodeFilter.FILTER_REJECT;
          return NodeFilter.FILTER_SKIP;
        }
        return node.parentElement.closest(".math") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
      }
    });
    var node;
    while ((node = walker.nextNode())) {
      var isMath = node.nodeType === 1;
      var key = isMath ? (node.dataset.tex || "") : node.data;
      if (!key.trim()) continue;
      var seg = { node: node, math: isMath, start: -1, end: -1 };
      var pos = source.indexOf(key, cursor);
      if (pos >= 0 && pos - cursor <= 4000) {
        seg.start = pos; seg.end = pos + key.length;
      } else if (!isMath) {
        var head = key.trim().slice(0, 12);
        pos = head ? source.indexOf(head, cursor) : -1;
        if (pos >= 0 && pos - cursor <= 4000) { seg.start = pos; seg.end = Math.min(source.length, pos + key.trim().length); seg.approx = true; }
      }
      if (seg.start < 0) { segments.push(seg); continue; }
      if (isMath) {
        for (var i = 0; i < DELIMS.length; i++) {
          var open = DELIMS[i][0], close = DELIMS[i][1];
          if (source.slice(seg.start - open.length, seg.start) === open && source.slice(seg.end, seg.end + close.length) === close) {
            seg.start -= open.length; seg.end += close.length; break;
          }
        }
      }
      cursor = seg.end;
      segments.push(seg);
    }
  }
  function segmentOf(node) {
    for (var i = 0; i < segments.length; i++) if (segments[i].node === node) return segments[i];
    return null;
  }
  function pointToSource(node, offset, side) {
    var mathEl = (node.nodeType === 1 ? node : node.parentElement).closest(".math");
    if (mathEl && proofEl.contains(mathEl)) {
      var ms = segmentOf(mathEl);
      if (ms && ms.start >= 0) return side === "start" ? ms.start : ms.end;
    }
    if (node.nodeType === 3) {
      var ts = segmentOf(node);
      if (ts && ts.start >= 0) return Math.min(ts.start + offset, ts.end);
    }
    var probe = document.createRange();
    probe.setStart(node, offset);
    var best = null;
    for (var i = 0; i < segments.length; i++) {
      var s = segments[i];
      if (s.start < 0) continue;
      var cmp = probe.comparePoint(s.node, 0);
      if (side === "start" && cmp >= 0) return s.start;
      if (side === "end" && cmp < 0) best = s.end;
    }
    return side === "end" ? best : null;
  }
  function selectionToSource() {
    var sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    var range = sel.getRangeAt(0);
    if (!proofEl.contains(range.commonAncestorContainer)) return null;
    var start = pointToSource(range.startContainer, range.startOffset, "start");
    var end = pointToSource(range.endContainer, range.endOffset, "end");
    if (start === null || end === null) return null;
    while (start < end && /\s/.test(source[start])) start++;
    while (end > start && /\s/.test(source[end - 1])) end--;
    if (end <= start) return null;
    return { start: start, end: end, quote: source.slice(start, end) };
  }

  // ---- highlighting -------------------------------------------------------------------------
  function clearHighlights() {
    proofEl.querySelectorAll("mark.err").forEach(function (mark) {
      var parent = mark.parentNode;
      while (mark.firstChild) parent.insertBefore(mark.firstChild, mark);
      parent.removeChild(mark);
    });
    proofEl.querySelectorAll(".math.err-math").forEach(function (el) { el.classList.remove("err-math"); el.removeAttribute("title"); });
    proofEl.normalize();
  }
  function renderHighlights() {
    clearHighlights();
    buildSegments();
    var spans = state.spans;
    segments.forEach(function (seg) {
      if (seg.start < 0) return;
      var covering = [];
      spans.forEach(function (sp, idx) { if (sp.start < seg.end && sp.end > seg.start) covering.push(idx); });
      if (!covering.length) return;
      if (seg.math) {
        seg.node.classList.add("err-math");
        seg.node.title = covering.map(function (i) { return "#" + (i + 1) + " " + categoryLabel(spans[i].category); }).join(", ");
        return;
      }
      var len = seg.node.data.length;
      var cuts = [0, len];
      covering.forEach(function (i) {
        cuts.push(Math.max(0, Math.min(len, spans[i].start - seg.start)));
        cuts.push(Math.max(0, Math.min(len, spans[i].end - seg.start)));
      });
      cuts = cuts.filter(function (v, i, a) { return a.indexOf(v) === i; }).sort(function (a, b) { return a - b; });
      var node = seg.node;
      var pieces = [];
      for (var c = cuts.length - 2; c >= 0; c--) {
        var from = cuts[c], to = cuts[c + 1];
        if (to <= from) continue;
        var absFrom = seg.start + from, absTo = seg.start + to;
        var ids = covering.filter(function (i) { return spans[i].start < absTo && spans[i].end > absFrom; });
        pieces.push({ from: from, to: to, ids: ids });
      }
      pieces.forEach(function (p) {
        if (!p.ids.length) return;
        var tail = node.splitText(p.from);
        tail.splitText(p.to - p.from);
        var mark = document.createElement("mark");
        mark.className = "err" + (p.ids.length > 1 ? " err-multi" : "");
        mark.dataset.spans = p.ids.join(",");
        mark.title = p.ids.map(function (i) { return "#" + (i + 1) + " " + categoryLabel(spans[i].category); }).join(", ");
        tail.parentNode.insertBefore(mark, tail);
        mark.appendChild(tail);
      });
    });
    buildSegments();
  }

  // ---- error span list and popup ------------------------------------------------------------
  var categories = Array.prototype.map.call(document.querySelectorAll("#span-category option"), function (o) { return { key: o.value, label: o.textContent }; });
  function categoryLabel(key) {
    for (var i = 0; i < categories.length; i++) if (categories[i].key === key) return categories[i].label;
    return key;
  }
  function renderSpanList() {
    var list = document.getElementById("span-list");
    list.innerHTML = "";
    state.spans.forEach(function (sp, idx) {
      var li = document.createElement("li");
      li.className = "span-item";
      var quote = document.createElement("q");
      quote.textContent = sp.quote.length > 120 ? sp.quote.slice(0, 119) + "\u2026" : sp.quote;
      var select = document.createElement("select");
      select.setAttribute("aria-label", "Category of error " + (idx + 1));
      categories.forEach(function (c) {
        var opt = document.createElement("option"); opt.value = c.key; opt.textContent = c.label;
        if (c.key === sp.category) opt.selected = true; select.appendChild(opt);
      });
      select.disabled = !editable;
      select.addEventListener("change", function () { sp.category = select.value; changed(); renderHighlights(); });
      var note = document.createElement("input");
      note.type = "text"; note.value = sp.note || ""; note.placeholder = "note"; note.disabled = !editable;
      note.setAttribute("aria-label", "Note on error " + (idx + 1));
      note.addEventListener("input", function () { sp.note = note.value; changed(800); });
      li.appendChild(quote); li.appendChild(select); li.appendChild(note);
      if (editable) {
        var del = document.createElement("button");
        del.type = "button"; del.className = "linkish"; del.textContent = "remove";
        del.addEventListener("click", function () { state.spans.splice(idx, 1); spansChanged(); });
        li.appendChild(del);
      }
      list.appendChild(li);
    });
    document.getElementById("span-count").textContent = state.spans.length;
    document.getElementById("span-empty").hidden = state.spans.length > 0;
  }
  function spansChanged() { renderSpanList(); renderHighlights(); changed(); }

  var popup = document.getElementById("span-popup");
  var pendingSpan = null;
  function openPopup() {
    if (!editable) return;
    var found = selectionToSource();
    if (!found) { flash("Select some text of the proof first."); return; }
    pendingSpan = found;
    var rect = window.getSelection().getRangeAt(0).getBoundingClientRect();
    var card = proofEl.parentElement.getBoundingClientRect();
    popup.style.top = (rect.bottom - card.top + 6) + "px";
    popup.style.left = Math.max(0, Math.min(rect.left - card.left, card.width - 320)) + "px";
    popup.hidden = false;
    document.getElementById("span-note").value = "";
    document.getElementById("span-category").focus();
  }
  function closePopup() { popup.hidden = true; pendingSpan = null; }
  document.getElementById("span-save").addEventListener("click", function () {
    if (!pendingSpan) return;
    pendingSpan.category = document.getElementById("span-category").value;
    pendingSpan.note = document.getElementById("span-note").value;
    state.spans.push(pendingSpan);
    state.spans.sort(function (a, b) { return a.start - b.start || a.end - b.end; });
    closePopup();
    window.getSelection().removeAllRanges();
    spansChanged();
  });
  document.getElementById("span-cancel").addEventListener("click", closePopup);
  popup.addEventListener("keydown", function (evt) {
    if (evt.key === "Escape") { evt.stopPropagation(); closePopup(); }
    if (evt.key === "Enter" && evt.target.tagName !== "TEXTAREA") { evt.preventDefault(); document.getElementById("span-save").click(); }
    if (evt.key === "Enter" && evt.target.tagName === "TEXTAREA" && (evt.ctrlKey || evt.metaKey)) { evt.preventDefault(); document.getElementById("span-save").click(); }
  });

  // ---- checklist, score, steps, comment ------------------------------------------------------
  function q(sel) { return root.querySelector(sel); }
  function readForm() {
    var awards = {}, via = [], deductions = [];
    root.querySelectorAll('.cp-row[data-kind="award"]').forEach(function (row) {
      var checked = row.querySelector('input[type=radio]:checked');
      if (checked) awards[row.dataset.id] = checked.value;
      var v = row.querySelector('input[name^="via-"]');
      if (v && v.checked) via.push(row.dataset.id);
    });
    root.querySelectorAll('input[name^="deduction-"]:checked').forEach(function (cb) { deductions.push(cb.value); });
    var score = q('input[name=score]:checked');
    var steps = {}, firstWrong = null;
    root.querySelectorAll(".step-row").forEach(function (row) {
      var v = row.querySelector("input:checked");
      if (v) {
        steps[row.dataset.step] = v.value;
        if (v.value === "wrong" && firstWrong === null) firstWrong = parseInt(row.dataset.step, 10);
      }
    });
    state.awards = awards; state.via_equivalent = via; state.deductions = deductions;
    state.score = score ? score.value : null;
    state.step_verdicts = steps; state.first_wrong_step = firstWrong;
    state.comment = document.getElementById("comment").value;
    state.score_note = document.getElementById("score-note").value;
    document.getElementById("first-wrong").textContent = firstWrong === null ? "none" : "step " + firstWrong;
  }
  function writeForm() {
    Object.keys(state.awards || {}).forEach(function (id) {
      var input = root.querySelector('.cp-row[data-id="' + CSS.escape(id) + '"] input[value="' + CSS.escape(String(state.awards[id])) + '"]');
      if (input) input.checked = true;
    });
    (state.via_equivalent || []).forEach(function (id) { var cb = q('input[name="via-' + CSS.escape(id) + '"]'); if (cb) cb.checked = true; });
    (state.deductions || []).forEach(function (id) { var cb = q('input[name="deduction-' + CSS.escape(id) + '"]'); if (cb) cb.checked = true; });
    if (state.score !== null && state.score !== undefined) setScore(state.score, false);
    Object.keys(state.step_verdicts || {}).forEach(function (n) {
      var r = q('input[name="step-' + n + '"][value="' + state.step_verdicts[n] + '"]'); if (r) r.checked = true;
    });
    document.getElementById("comment").value = state.comment || "";
    document.getElementById("score-note").value = state.score_note || "";
  }
  function normalise(v) { return v === null || v === undefined ? null : String(parseFloat(v)); }
  function setScore(value, touched) {
    var wanted = normalise(value);
    var found = false;
    root.querySelectorAll("input[name=score]").forEach(function (r) {
      if (normalise(r.value) === wanted) { r.checked = true; found = true; }
    });
    if (found && touched) scoreTouched = true;
    return found;
  }
  function showComputed() {
    var el = document.getElementById("computed-score");
    if (el) el.textContent = computed === null || computed === undefined ? "\u2013" : computed;
    if (!scoreTouched && computed !== null && computed !== undefined && scale === "0-7") {
      var before = q("input[name=score]:checked");
      setScore(Math.floor(parseFloat(computed)), false);
      // The score moved with the checklist: save it too.
      if (before !== q("input[name=score]:checked") && editable && !submitted) changed(300);
    }
    var score = q("input[name=score]:checked");
    var differs = computed !== null && computed !== undefined && score && normalise(score.value) !== normalise(computed);
    document.getElementById("score-note-box").hidden = !differs;
  }
  root.addEventListener("change", function (evt) {
    var t = evt.target;
    if (t.closest("#span-popup") || t.closest("#span-list")) return;
    if (t.name === "score") scoreTouched = true;
    changed(t.type === "radio" || t.type === "checkbox" ? 250 : 800);
  });
  ["comment", "score-note"].forEach(function (id) {
    document.getElementById(id).addEventListener("input", function () { changed(900); });
  });

  // ---- autosave, submit, heartbeat -------------------------------------------------------------
  function payload() {
    readForm();
    return {
      score: state.score, awards: state.awards, deductions: state.deductions,
      via_equivalent: state.via_equivalent, score_note: state.score_note, comment: state.comment,
      step_verdicts: state.step_verdicts, first_wrong_step: state.first_wrong_step,
      seconds_spent: secondsSpent(), spans: state.spans
    };
  }
  function setStatus(text, bad) { statusEl.textContent = text; statusEl.classList.toggle("bad", !!bad); }
  function flash(text) { setStatus(text, true); }
  function showProblems(problems) {
    var box = document.getElementById("problems");
    box.innerHTML = "";
    if (!problems || !problems.length) { box.hidden = true; return; }
    var ul = document.createElement("ul");
    problems.forEach(function (p) { var li = document.createElement("li"); li.textContent = p; ul.appendChild(li); });
    box.appendChild(ul); box.hidden = false;
  }
  function post(url, body, keepalive) {
    return fetch(url, {
      method: "POST", credentials: "same-origin", keepalive: !!keepalive,
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify(body)
    }).then(function (resp) { return resp.json().then(function (data) { data.httpStatus = resp.status; return data; }); });
  }
  function changed(delay) {
    readForm();
    dirty = true;
    showComputed();
    if (!editable) return;
    clearTimeout(saveTimer);
    saveTimer = setTimeout(saveNow, delay === undefined ? 300 : delay);
  }
  function saveNow(keepalive) {
    if (!editable) return Promise.resolve();
    if (saving) { pendingSave = true; return Promise.resolve(); }
    clearTimeout(saveTimer);
    saving = true; dirty = false;
    var body = payload();
    if (submitted) body.preview = true;
    setStatus(submitted ? "Computing\u2026" : "Saving\u2026");
    return post(root.dataset.draftUrl, body, keepalive).then(function (data) {
      if (data.ok) {
        if (data.computed_score !== undefined) computed = data.computed_score;
        showComputed();
        showProblems([]);
        var when = new Date().toLocaleTimeString();
        setStatus(submitted ? "Not yet saved: press \u201cSave revision\u201d" : "Saved " + when);
      } else {
        dirty = true;
        setStatus("Not saved", true);
        showProblems(data.problems);
      }
    }).catch(function () {
      dirty = true;
      setStatus("Offline: retrying\u2026", true);
      setTimeout(saveNow, 3000);
    }).then(function () {
      saving = false;
      if (pendingSave) { pendingSave = false; saveNow(); }
    });
  }
  var submitting = false;
  function submit() {
    if (!editable || submitting) return;
    submitting = true;
    clearTimeout(saveTimer);
    var body = payload();
    body.submit_key = submitKey;
    if (submitted) body.revise = true;
    var button = document.getElementById("submit-button");
    button.disabled = true;
    setStatus(submitted ? "Saving revision\u2026" : "Submitting\u2026");
    post(root.dataset.submitUrl, body).then(function (data) {
      if (data.ok) {
        dirty = false;
        if (submitted) { setStatus("Revision saved " + new Date().toLocaleTimeString()); showProblems([]); computed = data.computed_score; showComputed(); }
        else { setStatus("Submitted"); window.location.assign(data.next_url || root.dataset.nextUrl); return; }
      } else {
        setStatus("Not submitted", true);
        showProblems(data.problems);
      }
      submitting = false; button.disabled = false;
    }).catch(function () {
      setStatus("Offline: not submitted, try again", true);
      submitting = false; button.disabled = false;
    });
  }
  var submitButton = document.getElementById("submit-button");
  if (submitButton) submitButton.addEventListener("click", submit);
  window.addEventListener("pagehide", function () { if (dirty && editable && !submitted) saveNow(true); });
  if (editable && !submitted) {
    var beat = function () { post(root.dataset.heartbeatUrl, {}).then(function (data) { if (!data.ok) flash(data.problems.join(" ")); }).catch(function () {}); };
    // Well inside the lease: every 5 minutes, or a third of a shorter lease.
    var leaseMs = (parseInt(root.dataset.leaseMinutes, 10) || 60) * 60 * 1000;
    setInterval(beat, Math.min(5 * 60 * 1000, leaseMs / 3));
  }

  // ---- keyboard ---------------------------------------------------------------------------------
  var rows = Array.prototype.slice.call(root.querySelectorAll(".kb-row"));
  function focusRow(index) {
    if (!rows.length) return;
    if (activeRow !== null) rows[activeRow].classList.remove("active");
    activeRow = (index + rows.length) % rows.length;
    rows[activeRow].classList.add("active");
    rows[activeRow].scrollIntoView({ block: "nearest" });
  }
  function unfocusRow() { if (activeRow !== null) rows[activeRow].classList.remove("active"); activeRow = null; }
  function togglePane(id) { var p = document.getElementById(id); if (p) p.open = !p.open; }
  function typing(el) {
    if (!el) return false;
    if (el.tagName === "INPUT") return !/^(radio|checkbox|button|submit)$/.test(el.type);
    return el.isContentEditable || /^(TEXTAREA|SELECT)$/.test(el.tagName);
  }
  document.addEventListener("keydown", function (evt) {
    if (evt.ctrlKey || evt.metaKey || evt.altKey) return;
    if (typing(evt.target)) {
      if (evt.key === "Escape") evt.target.blur();
      return;
    }
    if (!popup.hidden) return;
    var key = evt.key, handled = true;
    var row = activeRow === null ? null : rows[activeRow];
    if (/^[0-9]$/.test(key) || key === "h") {
      var value = key === "h" ? "0.5" : key;
      if (row && row.dataset.kind === "award" && editable) {
        var radio = row.querySelector('input[type=radio][value="' + value + '"]');
        if (radio) { radio.checked = true; changed(250); } else { flash("Checkpoint " + row.dataset.id + " takes " + row.dataset.levels.replace(/,/g, ", ")); }
      } else if (editable) {
        if (setScore(value, true)) changed(250);
      }
    } else if (key === "j" || key === "ArrowDown" && activeRow !== null) { focusRow(activeRow === null ? 0 : activeRow + 1); }
    else if (key === "k" || key === "ArrowUp" && activeRow !== null) { focusRow(activeRow === null ? rows.length - 1 : activeRow - 1); }
    else if (key === "Escape") { unfocusRow(); }
    else if ((key === "v" || key === " ") && row && editable) {
      var cb = row.querySelector(row.dataset.kind === "award" ? 'input[name^="via-"]' : "input[type=checkbox]");
      if (cb) { cb.checked = !cb.checked; changed(250); }
    }
    else if (key === "e") { openPopup(); }
    else if (key === "Enter") { submit(); }
    else if (key === "x" && editable && !submitted) { saveNow().then(function () { document.getElementById("skip-form").submit(); }); }
    else if (key === "n") { var go = function () { window.location.assign(root.dataset.nextUrl); }; if (dirty && editable && !submitted) saveNow().then(go); else go(); }
    else if (key === "p") { togglePane("pane-problem"); }
    else if (key === "o") { togglePane("pane-solution"); }
    else if (key === "m") { togglePane("pane-scheme"); }
    else if (key === "g") { togglePane("pane-guidelines"); }
    else if (key === "t") { togglePane("pane-steps"); }
    else if (key === "c") { document.getElementById("comment").focus(); }
    else { handled = false; }
    if (handled) { evt.preventDefault(); evt.stopImmediatePropagation(); }
  }, true);
  rows.forEach(function (row, index) { row.addEventListener("click", function () { focusRow(index); }); });
  proofEl.addEventListener("mouseup", function () {
    if (!editable) return;
    setTimeout(function () { if (selectionToSource()) openPopup(); }, 0);
  });

  // ---- step verdicts: one line per paragraph of the source ---------------------------------------
  function renderSteps() {
    var list = document.getElementById("steps");
    var steps = JSON.parse(document.getElementById("proof-steps").textContent);
    var fragment = document.createDocumentFragment();
    steps.forEach(function (step) {
      var li = document.createElement("li");
      li.className = "step-row"; li.dataset.step = step.number;
      var preview = document.createElement("span");
      preview.className = "step-preview"; preview.textContent = step.preview;
      var verdicts = document.createElement("span");
      verdicts.className = "verdicts";
      ["correct", "wrong", "unclear"].forEach(function (v) {
        var label = document.createElement("label");
        var input = document.createElement("input");
        input.type = "radio"; input.name = "step-" + step.number; input.value = v; input.disabled = !editable;
        label.appendChild(input); label.appendChild(document.createTextNode(" " + v));
        verdicts.appendChild(label);
      });
      li.appendChild(preview); li.appendChild(verdicts);
      fragment.appendChild(li);
    });
    list.appendChild(fragment);
  }

  // ---- start: restore the draft --------------------------------------------------------------
  renderSteps();
  writeForm();
  readForm();
  showComputed();
  renderSpanList();
  document.addEventListener("DOMContentLoaded", function () {
    renderHighlights();
    if (editable && (computed === null || computed === undefined) && root.querySelector(".cp-row")) saveNow();
  });
})();
