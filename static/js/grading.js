// The grading page: checklist, final score, error spans, step verdicts, comment. Autosave,
// submit, heartbeat, time on page and the common keys are item-page.js's; error spans are
// offsets into the proof's SOURCE text, through source-align.js's alignment.
// Nothing is graded until the expert gives a checkpoint points, ticks a deduction or chooses
// the final score (0 included); until then no score is saved and Submit is refused
// (annotation/services/grading.py holds the rule).
// The server holds the score: on a checklist the page sends the awards and deductions, and a
// final score only when the expert chose one (an override, which needs a note); the radio that
// follows the computed total is shown, never sent. So Enter after fast keys submits what the
// keys chose, whatever the drafts' latency.
// Keys: a letter per checkpoint gives its full points (again: clears it), = gives every
// checkpoint of the first approach full points, digits give the focused checkpoint (j/k, or the
// last one keyed) partial points, or with none focused choose the final score.
(function () {
  "use strict";
  var root = document.getElementById("grading");
  if (!root) return;
  var proofEl = document.getElementById("proof-text");
  var state = JSON.parse(document.getElementById("grade-state").textContent);
  var proof = new Proofmark.Aligner(proofEl, JSON.parse(document.getElementById("proof-source").textContent), { approximate: true });
  var page = new Proofmark.ItemPage(root, state.seconds_spent, {
    payload: payload,
    changed: function () { readForm(); showComputed(); },
    saved: function (data, sent) {
      // an answer counts for the checklist it was computed from, not a later one
      if (data.computed_score !== undefined && sent && checklistKey(sent) === checklistKey(state)) {
        computed = data.computed_score === null ? null : normalise(data.computed_score);
        computedFor = checklistKey(state);
      }
      showComputed();
    },
    restore: restore,
    refusal: function () { readForm(); return state.score === null && !choseChecklist() ? root.dataset.notGraded : null; },
    // the final score the page would submit, as the page shows it (null while a checklist's
    // total is being computed)
    describe: function () {
      readForm();
      if (scoreTouched || !choseChecklist()) return known(state.score) ? normalise(state.score) : null;
      return computedFor === checklistKey(state) ? derived() : null;
    }
  });
  var editable = page.editable, submitted = page.submitted;
  var scale = root.dataset.scale;
  var computed = state.computed_score === null || state.computed_score === undefined ? null : normalise(state.computed_score);
  // The awards and deductions `computed` belongs to: after a change it is unknown ("…") until
  // the server's answer for the checklist as it is now comes back.
  var computedFor = null;
  function checklistKey(body) { return JSON.stringify([body.awards || {}, body.deductions || []]); }
  function known(v) { return v !== null && v !== undefined; }
  function choseChecklist() { return Object.keys(state.awards || {}).length > 0 || (state.deductions || []).length > 0; }
  // Once a checkpoint has points or a deduction is ticked, the final score follows the computed
  // one (rounded down) until the expert chooses another; before that it stays empty. A restored
  // score is the expert's own unless it is the one a chosen checklist computes.
  var scoreTouched = known(state.score) &&
    !(choseChecklist() && known(computed) && String(parseFloat(state.score)) === String(Math.floor(parseFloat(computed))));
  var activeRow = null;
  function changed(delay) { page.changed(delay); }
  function flash(text) { page.flash(text); }

  // ---- highlighting -------------------------------------------------------------------------
  function renderHighlights() {
    var spans = state.spans;
    proof.highlight(spans, function (ids, isMath) {
      return {
        className: isMath ? "err-math" : "err" + (ids.length > 1 ? " err-multi" : ""),
        title: ids.map(function (i) { return "#" + (i + 1) + " " + categoryLabel(spans[i].category); }).join(", ")
      };
    });
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
    var found = proof.selection();
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
  // The final score a computed total gives (floored to the 0-7 integers), as the server takes it.
  function derived() { return known(computed) ? String(Math.floor(parseFloat(computed))) : null; }
  function showComputed() {
    var el = document.getElementById("computed-score");
    if (el && computedFor !== checklistKey(state)) {
      el.textContent = "\u2026";
      if (!scoreTouched) root.querySelectorAll("input[name=score]").forEach(function (r) { r.checked = false; });
      document.getElementById("score-note-box").hidden = true;
      document.getElementById("not-graded").hidden = true;
      return;
    }
    if (el) el.textContent = known(computed) ? computed : "\u2013";
    if (el && !scoreTouched && scale === "0-7") {
      if (!choseChecklist()) root.querySelectorAll("input[name=score]").forEach(function (r) { r.checked = false; });
      else if (known(computed)) setScore(derived(), false);
    }
    var score = q("input[name=score]:checked");
    var differs = scoreTouched && known(computed) && choseChecklist() && score && normalise(score.value) !== derived();
    document.getElementById("score-note-box").hidden = !differs;
    if (differs) {
      document.getElementById("override-text").textContent = "Override: computed " + derived() + ", you chose " + normalise(score.value) + ".";
    }
    document.getElementById("not-graded").hidden = !!score || choseChecklist();
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

  // ---- what is saved ---------------------------------------------------------------------------
  function payload() {
    readForm();
    return {
      score: scoreTouched || !choseChecklist() ? state.score : null, awards: state.awards, deductions: state.deductions,
      via_equivalent: state.via_equivalent, score_note: state.score_note, comment: state.comment,
      step_verdicts: state.step_verdicts, first_wrong_step: state.first_wrong_step,
      seconds_spent: page.secondsSpent(), spans: state.spans
    };
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
  // A checkpoint's key: its full points (its highest level), or nothing when it has them.
  function fullMarks(row) {
    var radios = row.querySelectorAll("input[type=radio]");
    var top = radios[radios.length - 1];
    if (!top || !editable) return;
    if (top.checked) { radios.forEach(function (r) { r.checked = false; }); } else { top.checked = true; }
    changed(250);
  }
  function allFullMarks() {
    if (!editable) return;
    root.querySelectorAll('.cp-row[data-full-marks="1"]').forEach(function (row) {
      var radios = row.querySelectorAll("input[type=radio]");
      if (radios.length) radios[radios.length - 1].checked = true;
    });
    changed(250);
  }
  // The final score typed as a number: a digit chooses its score at once, and a second digit
  // within a moment makes a two-digit score when the scale has it (1 then 5: 15 on 0-21; on
  // 0-7, where there is no 15, the 5 is chosen).
  var typed = { digits: "", at: 0 };
  function typeScore(digit) {
    var now = Date.now();
    var joined = typed.digits && now - typed.at < 900 ? typed.digits + digit : "";
    typed.at = now;
    if (joined && setScore(joined, true)) { typed.digits = ""; return true; }
    typed.digits = digit;
    return setScore(digit, true);
  }
  var keyed = {};
  rows.forEach(function (row, index) { if (row.dataset.key) keyed[row.dataset.key] = index; });
  page.keys(function (key) {
    if (Object.prototype.hasOwnProperty.call(keyed, key)) {
      focusRow(keyed[key]);
      fullMarks(rows[keyed[key]]);
      return true;
    }
    if (key === "=" && rows.some(function (r) { return r.dataset.fullMarks === "1"; })) { allFullMarks(); return true; }
    var row = activeRow === null ? null : rows[activeRow];
    if (/^[0-9]$/.test(key) || key === "h") {
      var value = key === "h" ? "0.5" : key;
      if (row && row.dataset.kind === "award" && editable) {
        var radio = row.querySelector('input[type=radio][value="' + value + '"]');
        if (radio) { radio.checked = true; changed(250); } else { flash("Checkpoint " + row.dataset.id + " takes " + row.dataset.levels.replace(/,/g, ", ")); }
      } else if (editable) {
        if (key === "h" ? setScore(value, true) : typeScore(key)) changed(250);
      }
    } else if (key === "j" || key === "ArrowDown" && activeRow !== null) { focusRow(activeRow === null ? 0 : activeRow + 1); }
    else if (key === "k" || key === "ArrowUp" && activeRow !== null) { focusRow(activeRow === null ? rows.length - 1 : activeRow - 1); }
    else if (key === "Escape") { unfocusRow(); }
    else if ((key === "v" || key === " ") && row && editable) {
      var cb = row.querySelector(row.dataset.kind === "award" ? 'input[name^="via-"]' : "input[type=checkbox]");
      if (cb) { cb.checked = !cb.checked; changed(250); }
    }
    else if (key === "e") { openPopup(); }
    else { return false; }
    return true;
  }, {
    paused: function () { return !popup.hidden; },
    panes: { p: "pane-problem", o: "pane-solution", m: "pane-scheme", g: "pane-guidelines", t: "pane-steps" }
  });
  rows.forEach(function (row, index) { row.addEventListener("click", function () { focusRow(index); }); });
  proofEl.addEventListener("mouseup", function () {
    if (!editable) return;
    setTimeout(function () { if (proof.selection()) openPopup(); }, 0);
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

  // Choices kept in this browser, never acknowledged by the server, put back into the form.
  function restore(body) {
    root.querySelectorAll("input[type=radio], input[type=checkbox]").forEach(function (i) { if (!i.closest("#span-popup")) i.checked = false; });
    Object.keys(body).forEach(function (key) { if (key !== "seconds_spent") state[key] = body[key]; });
    scoreTouched = known(state.score);
    writeForm(); readForm(); showComputed(); renderSpanList(); renderHighlights();
  }

  // ---- start: restore the draft --------------------------------------------------------------
  renderSteps();
  writeForm();
  readForm();
  computedFor = checklistKey(state);
  showComputed();
  renderSpanList();
  document.addEventListener("DOMContentLoaded", renderHighlights);
  page.resume();
})();
