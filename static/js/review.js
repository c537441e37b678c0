// The analysis review page (meta-verification): claimed defects split out of the analysis by
// selecting text, each judged (exists? accurate? note, linked proof passage), expression and
// score questions, the rubric's rating derived live, an override with its reason. Autosave,
// submit, heartbeat, time on page, the common keys and the choices kept in this browser until
// the server has them (restored after a reload) are item-page.js's.
//
// Selections become offsets into the SOURCE texts (analysis and proof) through
// source-align.js's alignment, as on the grading page; the server re-anchors quotes.
// Drafts carry versions like grade drafts: when another page (tab, device) saved the review
// since this one loaded it, the server refuses this page's draft (409 with the stored review)
// and this page offers to merge the two (the defects marked on both, and every answer given on
// either), to keep its own, or to keep the other; nothing is overwritten unseen.
(function () {
  "use strict";
  var root = document.getElementById("review");
  if (!root) return;
  function json(id) { return JSON.parse(document.getElementById(id).textContent); }
  var state = json("review-state");
  var suggestions = json("defect-suggestions");
  var page = new Proofmark.ItemPage(root, state.seconds_spent, {
    payload: payload,
    changed: function () { readForm(); showRating(); },
    restore: restore,
    describe: function () { readForm(); var d = derive(); var v = state.override || d.rating; return v === null || v === undefined || v === "" ? null : String(parseFloat(v)); },
    conflict: offerMerge
  });
  var editable = page.editable;
  var active = null;
  function changed(delay) { page.changed(delay); }
  function flash(text) { page.flash(text); }

  var analysis = new Proofmark.Aligner(document.getElementById("analysis-text"), json("analysis-source"));
  var proof = new Proofmark.Aligner(document.getElementById("proof-text"), json("proof-source"));
  // A highlight's classes and title are those of the spans it covers.
  function look(spans) {
    return function (ids) {
      var classes = [], titles = [];
      ids.forEach(function (i) {
        if (classes.indexOf(spans[i].cls) < 0) classes.push(spans[i].cls);
        if (spans[i].title) titles.push(spans[i].title);
      });
      return { className: classes.join(" "), title: titles.join(", ") };
    };
  }

  // ---- the rubric (mirror of annotation/meta_rubric.py; the server decides on submit) ------
  function judged(d) { return d.exists === false || (d.exists === true && d.accurate !== null && d.accurate !== undefined); }
  function reasonable(d) { return d.exists === true && d.accurate === true; }
  function derive() {
    var defects = state.defects;
    for (var i = 0; i < defects.length; i++) if (!judged(defects[i])) return { rating: null, reason: "judge defect " + (i + 1) };
    var bad = defects.filter(function (d) { return !reasonable(d); }).length;
    if (bad) {
      if (bad === defects.length) return { rating: "0", reason: "every defect the analysis claims is unreasonable", moot: true };
      return { rating: "0.5", reason: bad + " of the " + defects.length + " claimed defects are unreasonable", moot: true };
    }
    if (state.expression_error === null || state.expression_error === undefined || state.score_fits === null || state.score_fits === undefined) {
      return { rating: null, reason: "answer the expression and score questions" };
    }
    var found = defects.length ? "every claimed defect is reasonable" : "no defect claimed";
    var slips = [];
    if (state.expression_error) slips.push("an expression error");
    if (!state.score_fits) slips.push("a wrong score");
    if (slips.length) return { rating: "0.5", reason: found + ", but the analysis has " + slips.join(" and ") };
    return { rating: "1", reason: found + ", no expression error and the score fits" };
  }
  function showRating() {
    var d = derive();
    document.getElementById("derived-rating").textContent = d.rating === null ? "\u2013" : d.rating;
    document.getElementById("derived-reason").textContent = d.reason;
    document.getElementById("aspects-moot").hidden = !d.moot;
    var override = document.getElementById("override").value;
    document.getElementById("override-reason-box").hidden = !override;
    var final = override || d.rating;
    document.getElementById("final-rating").textContent = final === null || final === "" ? "\u2013" : final + (override ? " (override)" : "");
  }

  // ---- defects ------------------------------------------------------------------------------
  function yesno(name, value, labelYes, labelNo, disabled) {
    var wrap = document.createElement("span");
    [[true, labelYes], [false, labelNo]].forEach(function (pair) {
      var label = document.createElement("label");
      var input = document.createElement("input");
      input.type = "radio"; input.name = name; input.value = String(pair[0]);
      input.checked = value === pair[0]; input.disabled = !editable || !!disabled;
      label.appendChild(input); label.appendChild(document.createTextNode(" " + pair[1]));
      wrap.appendChild(label);
    });
    return wrap;
  }
  function renderDefects() {
    var list = document.getElementById("defect-list");
    list.innerHTML = "";
    state.defects.forEach(function (d, idx) {
      var li = document.createElement("li");
      li.className = "defect" + (idx === active ? " active" : "") + (judged(d) ? (reasonable(d) ? " reasonable" : " unreasonable") : "");
      li.dataset.index = idx;
      var quote = document.createElement("q");
      quote.textContent = d.quote.length > 160 ? d.quote.slice(0, 159) + "\u2026" : d.quote;
      li.appendChild(quote);
      if (d.from_suggestion) { var tag = document.createElement("span"); tag.className = "tag"; tag.textContent = "from suggestion"; li.appendChild(tag); }
      var answers = document.createElement("div");
      answers.className = "answers";
      var e = document.createElement("span"); e.textContent = "Exists? ";
      e.appendChild(yesno("exists-" + idx, d.exists, "yes", "no"));
      var a = document.createElement("span"); a.textContent = "Accurate? ";
      a.appendChild(yesno("accurate-" + idx, d.accurate, "yes", "no", d.exists === false));
      answers.appendChild(e); answers.appendChild(a);
      li.appendChild(answers);
      var note = document.createElement("input");
      note.type = "text"; note.placeholder = "note"; note.value = d.note || ""; note.disabled = !editable;
      note.setAttribute("aria-label", "Note on defect " + (idx + 1));
      note.addEventListener("input", function () { d.note = note.value; changed(800); });
      li.appendChild(note);
      var passage = document.createElement("div");
      passage.className = "passage muted";
      passage.textContent = d.proof_quote ? "Proof passage: \u201c" + (d.proof_quote.length > 100 ? d.proof_quote.slice(0, 99) + "\u2026" : d.proof_quote) + "\u201d" : "No proof passage linked (select one in the proof, then l).";
      li.appendChild(passage);
      if (editable) {
        var link = document.createElement("button");
        link.type = "button"; link.className = "linkish"; link.textContent = "link proof selection";
        link.addEventListener("mousedown", function (evt) { evt.preventDefault(); });
        link.addEventListener("click", function () { active = idx; linkPassage(); });
        var del = document.createElement("button");
        del.type = "button"; del.className = "linkish"; del.textContent = "remove";
        del.addEventListener("click", function () { state.defects.splice(idx, 1); active = null; defectsChanged(); });
        li.appendChild(link); li.appendChild(document.createTextNode(" ")); li.appendChild(del);
      }
      li.addEventListener("change", function (evt) {
        var t = evt.target;
        if (t.name === "exists-" + idx) { d.exists = t.value === "true"; if (d.exists === false) d.accurate = null; }
        if (t.name === "accurate-" + idx) d.accurate = t.value === "true";
        active = idx;
        defectsChanged();
      });
      li.addEventListener("click", function (evt) { if (evt.target.tagName !== "INPUT" && evt.target.tagName !== "BUTTON") { active = idx; markActive(); } });
      list.appendChild(li);
    });
    document.getElementById("defect-count").textContent = state.defects.length;
    document.getElementById("defect-empty").hidden = state.defects.length > 0;
    renderSuggestions();
  }
  function markActive() {
    document.querySelectorAll("#defect-list .defect").forEach(function (li) { li.classList.toggle("active", Number(li.dataset.index) === active); });
    var el = document.querySelector("#defect-list .defect.active");
    if (el) el.scrollIntoView({ block: "nearest" });
  }
  function overlaps(a, b) { return a.start < b.end && b.start < a.end; }
  function renderSuggestions() {
    var open = suggestions.filter(function (s) { return !state.defects.some(function (d) { return overlaps(d, s); }); });
    var box = document.getElementById("suggestion-box");
    box.hidden = !open.length;
    var list = document.getElementById("suggestion-list");
    list.innerHTML = "";
    open.forEach(function (s) {
      var li = document.createElement("li");
      var q = document.createElement("q"); q.textContent = s.quote.length > 120 ? s.quote.slice(0, 119) + "\u2026" : s.quote;
      li.appendChild(q);
      if (editable) {
        var accept = document.createElement("button");
        accept.type = "button"; accept.className = "linkish"; accept.textContent = "accept as a defect";
        accept.addEventListener("click", function () { addDefect({ start: s.start, end: s.end, quote: s.quote }, true); });
        li.appendChild(document.createTextNode(" ")); li.appendChild(accept);
      }
      list.appendChild(li);
    });
    return open;
  }
  function renderHighlights() {
    var spans = state.defects.map(function (d, i) { return { start: d.start, end: d.end, cls: "claim", title: "Defect " + (i + 1) }; });
    renderSuggestions();
    suggestions.forEach(function (s) {
      if (!state.defects.some(function (d) { return overlaps(d, s); })) spans.push({ start: s.start, end: s.end, cls: "claim-suggested", title: "Suggested defect" });
    });
    analysis.highlight(spans, look(spans));
    var passages = state.defects.filter(function (d) { return d.proof_start !== null && d.proof_start !== undefined; }).map(function (d) {
      return { start: d.proof_start, end: d.proof_end, cls: "passage", title: "Defect " + (state.defects.indexOf(d) + 1) };
    });
    proof.highlight(passages, look(passages));
  }
  function addDefect(found, fromSuggestion) {
    if (!editable) return;
    if (state.defects.some(function (d) { return overlaps(d, found); })) { flash("That text overlaps a defect already split out."); return; }
    state.defects.push({ start: found.start, end: found.end, quote: found.quote, exists: null, accurate: null, note: "", proof_start: null, proof_end: null, proof_quote: "", from_suggestion: !!fromSuggestion });
    state.defects.sort(function (a, b) { return a.start - b.start; });
    active = state.defects.findIndex(function (d) { return d.start === found.start; });
    window.getSelection().removeAllRanges();
    defectsChanged();
  }
  function splitSelection() {
    var found = analysis.selection();
    if (!found) { flash("Select the text of a claimed defect in the analysis first."); return; }
    addDefect(found, false);
  }
  function linkPassage() {
    if (!editable) return;
    if (active === null || !state.defects[active]) { flash("Focus a defect first (j/k)."); return; }
    var found = proof.selection();
    if (!found) { flash("Select the passage in the proof first."); return; }
    var d = state.defects[active];
    d.proof_start = found.start; d.proof_end = found.end; d.proof_quote = found.quote;
    window.getSelection().removeAllRanges();
    defectsChanged();
  }
  function defectsChanged() { renderDefects(); renderHighlights(); changed(250); }

  // ---- form <-> state -----------------------------------------------------------------------
  function radio(name) { var r = root.querySelector('input[name="' + name + '"]:checked'); return r ? r.value === "true" : null; }
  function readForm() {
    state.expression_error = radio("expression_error");
    state.score_fits = radio("score_fits");
    state.expression_note = document.getElementById("expression-note").value;
    state.score_note = document.getElementById("score-note").value;
    state.override = document.getElementById("override").value || null;
    state.override_reason = document.getElementById("override-reason").value;
    state.comment = document.getElementById("comment").value;
  }
  function setRadio(name, value) {
    if (value === null || value === undefined) return;
    var r = root.querySelector('input[name="' + name + '"][value="' + String(value) + '"]');
    if (r) r.checked = true;
  }
  function writeForm() {
    setRadio("expression_error", state.expression_error);
    setRadio("score_fits", state.score_fits);
    document.getElementById("expression-note").value = state.expression_note || "";
    document.getElementById("score-note").value = state.score_note || "";
    document.getElementById("override").value = state.override === null || state.override === undefined ? "" : String(parseFloat(state.override));
    document.getElementById("override-reason").value = state.override_reason || "";
    document.getElementById("comment").value = state.comment || "";
  }
  document.getElementById("aspects").addEventListener("change", function () { changed(250); });
  document.getElementById("override").addEventListener("change", function () { changed(250); });
  ["expression-note", "score-note", "override-reason", "comment"].forEach(function (id) {
    document.getElementById(id).addEventListener("input", function () { changed(900); });
  });

  // ---- what is saved ---------------------------------------------------------------------------
  function payload() {
    readForm();
    return {
      defects: state.defects, expression_error: state.expression_error, expression_note: state.expression_note,
      score_fits: state.score_fits, score_note: state.score_note, override: state.override,
      override_reason: state.override_reason, comment: state.comment, seconds_spent: page.secondsSpent()
    };
  }

  // ---- keyboard -----------------------------------------------------------------------------
  function judge(field, value) {
    if (active === null || !state.defects[active] || !editable) { flash("Focus a defect first (j/k)."); return; }
    var d = state.defects[active];
    if (field === "accurate" && d.exists === false) { flash("A defect that does not exist is unreasonable already."); return; }
    d[field] = value;
    if (field === "exists" && value === false) d.accurate = null;
    defectsChanged();
  }
  page.keys(function (key) {
    var count = state.defects.length;
    if (key === "d") splitSelection();
    else if (key === "l") linkPassage();
    else if (key === "j" && count) { active = active === null ? 0 : (active + 1) % count; markActive(); }
    else if (key === "k" && count) { active = active === null ? count - 1 : (active - 1 + count) % count; markActive(); }
    else if (key === "1") judge("exists", true);
    else if (key === "2") judge("exists", false);
    else if (key === "3") judge("accurate", true);
    else if (key === "4") judge("accurate", false);
    else return false;
    return true;
  }, { panes: { p: "pane-problem", s: "pane-scope" } });

  // Choices kept in this browser, never acknowledged by the server (a session that ended, a
  // lost connection), put back into the form: item-page.js's resume() calls this.
  function restore(body) {
    root.querySelectorAll("#aspects input[type=radio]").forEach(function (r) { r.checked = false; });
    Object.keys(body).forEach(function (key) { if (key !== "seconds_spent") state[key] = body[key]; });
    state.defects = state.defects || [];
    active = null;
    writeForm(); readForm(); renderDefects(); showRating(); renderHighlights();
  }

  // ---- another page saved the review since this one loaded it: merge, or keep one ----------------
  function count(defects) { var n = (defects || []).length; return n + (n === 1 ? " defect" : " defects"); }
  // The defects marked on either page (where both marked the same text, a judged one over an
  // unjudged one, else this page's), and each answer this page left open taken from the other.
  function merge(stored) {
    readForm();
    var merged = state.defects.slice();
    (stored.defects || []).forEach(function (theirs) {
      var i = merged.findIndex(function (d) { return overlaps(d, theirs); });
      if (i < 0) merged.push(theirs);
      else if (!judged(merged[i]) && judged(theirs)) merged[i] = theirs;
    });
    merged.sort(function (a, b) { return a.start - b.start; });
    state.defects = merged;
    ["expression_error", "score_fits", "override"].forEach(function (key) {
      if (state[key] === null || state[key] === undefined) state[key] = stored[key];
    });
    ["expression_note", "score_note", "override_reason", "comment"].forEach(function (key) {
      if (!state[key]) state[key] = stored[key] || "";
    });
    active = null;
    writeForm(); readForm(); renderDefects(); showRating(); renderHighlights();
  }
  function offerMerge(data, what) {
    var stored = data.review;
    if (!stored || stored.status === "submitted") return false; // a submitted review: the page asks to revise
    readForm();
    var where = Proofmark.conflictWhere(data.cause);
    page.setStatus(what === "submit" ? "Not submitted" : "Not saved", true);
    function based() { page.version = stored.version; page.notice(""); }
    page.notice("This review was saved " + where + " since this page loaded it: " + count(stored.defects) + " marked there, " + count(state.defects) + " here. Merge them (keep the defects of both), keep yours, or keep the other?", [
      Proofmark.button("Merge both", "merge-reviews", function () {
        based(); merge(stored);
        page.changed(0);
      }),
      Proofmark.button("Keep mine", "keep-mine", function () {
        based();
        if (what === "submit") page.submit(); else page.saveNow();
      }),
      Proofmark.button("Keep the other", "keep-other", function () {
        based(); page.forget(); page.dirty = false;
        restore(stored);
        page.setStatus("Showing the review saved " + where);
      })]);
    return true;
  }

  // ---- start: restore the draft, then what this browser kept ---------------------------------
  state.defects = state.defects || [];
  writeForm();
  readForm();
  renderDefects();
  showRating();
  document.addEventListener("DOMContentLoaded", renderHighlights);
  page.resume();
})();
