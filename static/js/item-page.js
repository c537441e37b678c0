// What the grading and review pages share: server-side autosave (debounced), idempotent submit
// (one key a page load, so a repeated submit is not a second one), lease heartbeat, time on
// page, the status line, problems box and a refused submission's reasons (beside Submit,
// announced), and the common keys (Enter submit, x skip, n next, c comment, pane toggles).
// Enter submits only where the focus has no Enter of its own: a focused button, link or pane
// heading does what it says, and fields keep their keys.
//
// The page's root element carries data-draft-url, data-submit-url, data-heartbeat-url,
// data-editable, data-submitted and optionally data-lease-minutes.
(function () {
  "use strict";

  // "Next" leases an item: a POST, by the page's next form.
  function goNext() { document.getElementById("next-form").submit(); }
  function csrf() {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"]; } catch (e) { return ""; }
  }
  function post(url, body, keepalive) {
    return fetch(url, {
      method: "POST", credentials: "same-origin", keepalive: !!keepalive,
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify(body)
    }).then(function (resp) { return resp.json().then(function (data) { data.httpStatus = resp.status; return data; }); });
  }
  // Whether a key pressed on el is typed into it. Radios, checkboxes and buttons do not take
  // keys, so shortcuts work after clicking one.
  function typing(el) {
    if (!el) return false;
    if (el.tagName === "INPUT") return !/^(radio|checkbox|button|submit|reset|image)$/.test(el.type);
    return el.isContentEditable || /^(TEXTAREA|SELECT)$/.test(el.tagName);
  }
  // Whether el does something of its own on Enter or Space (a button, a link, a pane's heading).
  function activates(el) {
    if (!el || !el.tagName) return false;
    if (/^(BUTTON|A|SUMMARY)$/.test(el.tagName)) return true;
    if (el.tagName === "INPUT") return /^(button|submit|reset|image)$/.test(el.type);
    return /^(button|link|tab|menuitem)$/.test(el.getAttribute("role") || "");
  }
  function togglePane(id) { var p = document.getElementById(id); if (p) p.open = !p.open; }

  // options: payload() -> the body to save (seconds_spent included: see secondsSpent);
  // changed() -> re-reads the form after a change; saved(data) -> after a draft or revision is
  // saved; preview: once submitted, drafts are still sent, as previews that save nothing
  // (otherwise a change only says to press "Save revision"); refusal() -> why the page cannot
  // be submitted yet (the server's rule, mirrored), or nothing.
  function ItemPage(root, seconds, options) {
    var page = this;
    this.root = root;
    this.options = options;
    this.editable = root.dataset.editable === "1";
    this.submitted = root.dataset.submitted === "1";
    this.dirty = false;
    this.submitKey = (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Date.now()) + Math.random();
    this.statusEl = document.getElementById("save-status");
    this.refusedEl = document.getElementById("submit-refused");
    this.baseSeconds = seconds || 0;
    this.visibleMs = 0;
    this.visibleSince = document.visibilityState === "visible" ? Date.now() : null;
    this.saveTimer = null; this.saving = false; this.pendingSave = false; this.submitting = false;

    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") { page.visibleSince = Date.now(); }
      else {
        if (page.visibleSince) { page.visibleMs += Date.now() - page.visibleSince; page.visibleSince = null; }
        if (page.dirty) page.saveNow(true);
      }
    });
    var button = document.getElementById("submit-button");
    if (button) button.addEventListener("click", function () { page.submit(); });
    window.addEventListener("pagehide", function () { if (page.dirty && page.editable && !page.submitted) page.saveNow(true); });
    // Back to a page kept in the back-forward cache: it shows the state before a submission,
    // so ask the server again.
    window.addEventListener("pageshow", function (evt) { if (evt.persisted) window.location.reload(); });
    var head = root.querySelector(".item-head");
    if (head && window.ResizeObserver) {
      new ResizeObserver(function () {
        var sticky = getComputedStyle(head).position === "sticky";
        root.style.setProperty("--item-head", sticky ? head.offsetHeight + "px" : "0px");
      }).observe(head);
    }
    if (this.editable && !this.submitted) {
      // Well inside the lease: every 5 minutes, or a third of a shorter lease.
      var leaseMs = (parseInt(root.dataset.leaseMinutes, 10) || 60) * 60 * 1000;
      setInterval(function () {
        post(root.dataset.heartbeatUrl, {}).then(function (data) { if (!data.ok) page.flash(data.problems.join(" ")); }).catch(function () {});
      }, Math.min(5 * 60 * 1000, leaseMs / 3));
    }
  }
  ItemPage.prototype.secondsSpent = function () {
    var ms = this.visibleMs + (this.visibleSince ? Date.now() - this.visibleSince : 0);
    return this.baseSeconds + Math.round(ms / 1000);
  };
  ItemPage.prototype.setStatus = function (text, bad) { this.statusEl.textContent = text; this.statusEl.classList.toggle("bad", !!bad); };
  ItemPage.prototype.flash = function (text) { this.setStatus(text, true); };
  ItemPage.prototype.showProblems = function (problems) {
    var box = document.getElementById("problems");
    box.innerHTML = "";
    if (!problems || !problems.length) { box.hidden = true; return; }
    var ul = document.createElement("ul");
    problems.forEach(function (p) { var li = document.createElement("li"); li.textContent = p; ul.appendChild(li); });
    box.appendChild(ul); box.hidden = false;
  };
  // Why a submission was refused, beside the Submit button (an empty list clears it).
  ItemPage.prototype.refuse = function (problems) {
    var el = this.refusedEl;
    if (!el) return;
    el.innerHTML = "";
    if (!problems || !problems.length) return;
    if (problems.length === 1) { el.textContent = problems[0]; }
    else {
      var ul = document.createElement("ul");
      problems.forEach(function (p) { var li = document.createElement("li"); li.textContent = p; ul.appendChild(li); });
      el.appendChild(ul);
    }
    el.scrollIntoView({ block: "nearest" });
  };
  // After a change: save in `delay` ms (300 by default) unless another change comes first.
  ItemPage.prototype.changed = function (delay) {
    this.options.changed();
    this.dirty = true;
    this.refuse([]);
    if (!this.editable) return;
    if (this.submitted && !this.options.preview) { this.setStatus("Not yet saved: press \u201cSave revision\u201d"); return; }
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(this.saveNow.bind(this), delay === undefined ? 300 : delay);
  };
  ItemPage.prototype.saveNow = function (keepalive) {
    var page = this, submitted = this.submitted;
    if (!this.editable || (submitted && !this.options.preview)) return Promise.resolve();
    if (this.saving) { this.pendingSave = true; return Promise.resolve(); }
    clearTimeout(this.saveTimer);
    this.saving = true; this.dirty = false;
    var body = this.options.payload();
    if (submitted) body.preview = true;
    this.setStatus(submitted ? "Computing\u2026" : "Saving\u2026");
    return post(this.root.dataset.draftUrl, body, keepalive).then(function (data) {
      if (data.ok) {
        if (page.options.saved) page.options.saved(data);
        page.showProblems([]);
        page.setStatus(submitted ? "Not yet saved: press \u201cSave revision\u201d" : "Saved " + new Date().toLocaleTimeString());
      } else {
        page.dirty = true;
        page.setStatus("Not saved", true);
        page.showProblems(data.problems);
      }
    }).catch(function () {
      page.dirty = true;
      page.setStatus("Offline: retrying\u2026", true);
      setTimeout(page.saveNow.bind(page), 3000);
    }).then(function () {
      page.saving = false;
      if (page.pendingSave) { page.pendingSave = false; page.saveNow(); }
    });
  };
  ItemPage.prototype.submit = function () {
    var page = this, submitted = this.submitted;
    if (!this.editable || this.submitting) return;
    var refusal = this.options.refusal && this.options.refusal();
    if (refusal) { this.setStatus("Not submitted", true); this.refuse([refusal]); return; }
    this.submitting = true;
    clearTimeout(this.saveTimer);
    var body = this.options.payload();
    body.submit_key = this.submitKey;
    if (submitted) body.revise = true;
    var button = document.getElementById("submit-button");
    button.disabled = true;
    this.setStatus(submitted ? "Saving revision\u2026" : "Submitting\u2026");
    post(this.root.dataset.submitUrl, body).then(function (data) {
      if (data.ok) {
        page.dirty = false;
        if (!submitted) {
          page.setStatus("Submitted");
          // a campaign with a second opinion reveals it on the submitted item's page
          if (data.second_opinion) { window.location.replace(data.item_url); return; }
          // a calibration round stays on the item to show the gold answer (calibration app)
          if (page.root.dataset.afterSubmit === "reload") window.location.reload(); else goNext();
          return;
        }
        page.setStatus("Revision saved " + new Date().toLocaleTimeString());
        page.showProblems([]);
        if (page.options.saved) page.options.saved(data);
      } else {
        page.setStatus("Not submitted", true);
        page.refuse(data.problems);
      }
      page.submitting = false; button.disabled = false;
    }).catch(function () {
      page.setStatus("Offline: not submitted, try again", true);
      page.submitting = false; button.disabled = false;
    });
  };
  // The page's shortcuts. handle(key) answers whether it used the key; the common ones come
  // after it; panes maps keys to the ids of <details> panes they open and close. A key goes
  // to the field being typed in (Escape leaves the field), and nowhere while paused() holds.
  ItemPage.prototype.keys = function (handle, options) {
    var page = this, root = this.root;
    function common(key) {
      if (key === "Enter") page.submit();
      else if (key === "x" && page.editable && !page.submitted) {
        (page.dirty ? page.saveNow() : Promise.resolve()).then(function () { document.getElementById("skip-form").submit(); });
      }
      else if (key === "n") {
        if (page.dirty && page.editable && !page.submitted) page.saveNow().then(goNext); else goNext();
      }
      else if (key === "c") document.getElementById("comment").focus();
      else if (options.panes[key]) togglePane(options.panes[key]);
      else return false;
      return true;
    }
    document.addEventListener("keydown", function (evt) {
      if (evt.ctrlKey || evt.metaKey || evt.altKey) return;
      if ((evt.key === "Enter" || evt.key === " ") && activates(evt.target)) return;
      if (typing(evt.target)) {
        if (evt.key === "Escape") evt.target.blur();
        return;
      }
      if (options.paused && options.paused()) return;
      if (handle(evt.key) || common(evt.key)) { evt.preventDefault(); evt.stopImmediatePropagation(); }
    }, true);
  };

  window.Proofmark = window.Proofmark || {};
  window.Proofmark.ItemPage = ItemPage;
})();
