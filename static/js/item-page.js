// What the grading and review pages share: autosave (debounced) and submit through the API's
// operations (the session and its CSRF token: the same door, rules and error bodies as token
// clients), lease renewal, time on page, the status line, problems box and a refused
// submission's reasons (beside Submit, announced), and the common keys (Enter submit, x skip,
// n next, c comment, pane toggles). Enter submits only where the focus has no Enter of its own:
// a focused button, link or pane heading does what it says, and fields keep their keys.
//
// Versions: both pages send the version of the judgement they were based on (base_version)
// and name themselves (origin_page: this page load; origin_browser: this browser, the same in
// all its tabs), so that a 409 says who wrote the stored version (an earlier submission from
// this page, another tab, another device); the page says what happened and offers the way on
// (revise, keep the stored one and go on, keep mine, load the other, or what options.conflict
// offers: the review page merges). A submission key stands for one content: the same choices
// sent again carry the same key, other choices a new one.
// An answer lost on the way back (the server may have stored the submission): the page sends
// nothing more until it has asked the server what it stored (GET data-item-url); its own
// submission stored and nothing changed since, it goes on; changed since, it asks ("Your
// submission of 5 was stored; you now chose 6: revise to 6?"). Changes made while a submission
// is on its way wait for its answer, and are asked about the same way.
// A session that ended loses nothing, on the grading and the review page alike: every change
// is kept in this browser (localStorage, by user and item) until the server has acknowledged
// it, and a reload puts it back (options.restore, then resume()); the page says the session
// ended, offers log-in in a new tab, and sends again (with the fresh CSRF token of the cookie)
// once the expert is back.
//
// The page's root element carries data-draft-url (PUT), data-submit-url (POST, ?revise=true
// for a revision), data-item-url (GET: what the server stored), data-lease-url,
// data-editable, data-submitted, data-store-key, data-grade-version and optionally
// data-score-url (the checklist's score preview while revising) and data-lease-minutes.
(function () {
  "use strict";

  // "Next" leases an item: a POST, by the page's next form (with the CSRF token of now: a
  // log-in in another tab renews it).
  function post(form) {
    var field = form.querySelector("input[name=csrfmiddlewaretoken]");
    if (field && cookie("csrftoken")) field.value = cookie("csrftoken");
    form.submit();
  }
  function goNext() { post(document.getElementById("next-form")); }
  function cookie(name) {
    var found = document.cookie.split(";").map(function (c) { return c.trim(); })
      .filter(function (c) { return c.indexOf(name + "=") === 0; })[0];
    return found ? decodeURIComponent(found.slice(name.length + 1)) : "";
  }
  // The CSRF token of the cookie (renewed by a log-in in another tab), else the page's.
  function csrf() {
    var token = cookie("csrftoken");
    if (token) return token;
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"]; } catch (e) { return ""; }
  }
  // An API error body as lines: {"problems": [...]}, {"detail": "..."} or DRF's field errors
  // ({"score_note": ["..."]} -> "score_note: ...").
  function lines(body, prefix) {
    if (body === null || body === undefined) return [];
    if (typeof body === "string") return [prefix ? prefix + ": " + body : body];
    if (Array.isArray(body)) {
      return body.reduce(function (all, part, i) {
        return all.concat(lines(part, typeof part === "object" && part !== null ? (prefix ? prefix + "." : "") + (i + 1) : prefix));
      }, []);
    }
    return Object.keys(body).reduce(function (all, key) {
      var inner = key === "problems" || key === "detail" || key === "non_field_errors" ? prefix : (prefix ? prefix + "." + key : key);
      // a message that already names its field ("reason: say why") is not named twice
      var named = typeof body[key] === "object" && [].concat(body[key]).every(function (m) { return typeof m === "string" && m.indexOf(key + ":") === 0; });
      return all.concat(lines(body[key], named ? prefix : inner));
    }, []);
  }
  // One API call: {ok, status, data} on an answer, {sessionEnded} when the session is gone
  // (401, 403 for credentials or CSRF, or a log-in page instead of JSON); a rejected promise
  // when the server cannot be reached.
  function call(method, url, body, keepalive) {
    return fetch(url, {
      method: method, credentials: "same-origin", keepalive: !!keepalive, redirect: "manual",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrf() },
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (resp) {
      if (resp.type === "opaqueredirect" || resp.status === 401) return { sessionEnded: true, status: resp.status };
      return resp.json().catch(function () { return {}; }).then(function (data) {
        var detail = String(data.detail || "");
        if (resp.status === 403 && /credentials|CSRF/i.test(detail)) return { sessionEnded: true, status: 403 };
        return { ok: resp.ok, status: resp.status, data: data, problems: resp.ok ? [] : (lines(data).length ? lines(data) : ["The server answered " + resp.status + "."]) };
      });
    });
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
  function button(text, id, onclick) {
    var b = document.createElement("button");
    b.type = "button"; b.id = id; b.textContent = text;
    b.addEventListener("click", onclick);
    return b;
  }
  function randomId() {
    return (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Date.now()) + String(Math.random()).slice(2);
  }
  // This browser's name for itself, the same in all its tabs (kept in localStorage); a browser
  // that keeps nothing gets one per page, and the server tells its tabs apart by the session.
  function browserId() {
    try {
      var id = localStorage.getItem("proofmark:browser");
      if (!id) { id = randomId(); localStorage.setItem("proofmark:browser", id); }
      return id;
    } catch (e) { return randomId(); }
  }
  // Who wrote a stored version, as a 409 names it (its `cause`).
  var WHERE = {
    this_page: "from this page", another_tab: "in another tab", another_device: "on another device",
    unknown: "in another tab or on another device"
  };
  function shownScore(stored) {
    return stored.score === null || stored.score === undefined ? "no score" : String(parseFloat(stored.score));
  }

  // options: payload() -> the body to save (seconds_spent included: see secondsSpent);
  // changed() -> re-reads the form after a change; saved(data, sent) -> after a draft, preview
  // or revision answer, with the body it answers; restore(body) -> puts a body kept in this browser back into the form;
  // refusal() -> why the page cannot be submitted yet (the server's rule, mirrored), or nothing.
  function ItemPage(root, seconds, options) {
    var page = this;
    this.root = root;
    this.options = options;
    this.editable = root.dataset.editable === "1";
    this.submitted = root.dataset.submitted === "1";
    this.version = parseInt(root.dataset.gradeVersion || "0", 10);
    this.storeKey = root.dataset.storeKey;
    this.dirty = false;
    this.origin = { origin_page: randomId(), origin_browser: browserId() };
    // submission keys this page sent, each with the choices it stood for
    this.sentKeys = {}; this.submitKey = null;
    this.unsure = null; // an answer was lost: what the page was doing ("save" or "submit")
    this.asking = null; // the question on screen about a stored submission: {stored, cause}
    this.statusEl = document.getElementById("save-status");
    this.refusedEl = document.getElementById("submit-refused");
    this.baseSeconds = seconds || 0;
    this.visibleMs = 0;
    this.visibleSince = document.visibilityState === "visible" ? Date.now() : null;
    this.saveTimer = null; this.saving = null; this.pendingSave = false; this.submitting = false;
    this.failures = 0; this.waiting = null; // what to send again: "save", "submit" or "check"
    this.checking = null; // the question to the server after a lost answer, on its way

    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") { page.visibleSince = Date.now(); page.again(); }
      else {
        if (page.visibleSince) { page.visibleMs += Date.now() - page.visibleSince; page.visibleSince = null; }
        if (page.dirty) page.saveNow(true);
      }
    });
    window.addEventListener("focus", function () { page.again(); });
    window.addEventListener("online", function () { page.again(); });
    var submitButton = document.getElementById("submit-button");
    if (submitButton) submitButton.addEventListener("click", function () { page.submit(); });
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
        call("POST", root.dataset.leaseUrl).then(function (answer) {
          if (answer.sessionEnded) page.sessionEnded("save");
          else if (!answer.ok) page.flash(answer.problems.join(" "));
        }).catch(function () {});
      }, Math.min(5 * 60 * 1000, leaseMs / 3));
    }
  }
  // Once the page's script has drawn the form: choices kept in this browser that the server
  // never acknowledged come back into it (options.restore), and are sent. Kept choices based on
  // another version of the grade (it moved on since) are dropped.
  ItemPage.prototype.resume = function () {
    var kept = this.kept();
    if (!kept || !this.options.restore || this.afterLostAnswer(kept)) return;
    if (!this.editable) return;
    if (kept.submitted !== this.submitted || kept.version !== this.version) { this.forget(); return; }
    this.options.restore(kept.body);
    this.setStatus("Restored from this browser: not yet on the server");
    this.dirty = true;
    if (!this.submitted) this.saveNow();
  };
  // The page was reloaded after a submission whose answer was lost, and the expert had chosen
  // something else meanwhile: the server holds the submission (under the key kept here), not
  // the later choice. Kept, and asked again: on the read-only page, revise to it (the revise
  // page) or keep the stored one; on the revise page, the question of a stored submission.
  ItemPage.prototype.afterLostAnswer = function (kept) {
    var page = this, storedKey = this.root.dataset.storedKey;
    if (!this.submitted || !storedKey || kept.submitKey !== storedKey) return false;
    if (kept.submitted && kept.version !== this.version) return false;
    var later = Object.assign({}, kept.body);
    delete later.seconds_spent;
    if (kept.sent === JSON.stringify(later)) { this.forget(); return true; } // nothing changed since
    var stored = { score: this.root.dataset.storedScore, version: this.version, status: "submitted" };
    var shown = shownScore(stored);
    if (this.editable) {
      this.options.restore(kept.body);
      this.dirty = true;
      this.askRevise(stored, "this_page");
      return true;
    }
    var mine = later.score === null || later.score === undefined ? null : String(parseFloat(later.score));
    var revise = document.createElement("a");
    revise.href = window.location.pathname + "?revise=1"; revise.id = "revise-to-mine";
    revise.textContent = mine !== null && mine !== shown ? "Revise to " + mine : "Revise to mine";
    this.setStatus("Submitted as " + shown + ", not as you chose after it", true);
    this.notice("Your submission of " + shown + " was stored; " +
      (mine !== null && mine !== shown ? "you then chose " + mine : "you then changed your choices") +
      " before the page reloaded (kept in this browser, not sent): revise to " + (mine !== null && mine !== shown ? mine : "them") + "?",
      [revise, button("Keep " + shown, "keep-stored", function () { page.forget(); page.notice(""); page.setStatus(""); })]);
    return true;
  };
  ItemPage.prototype.kept = function () {
    try { return this.storeKey ? JSON.parse(localStorage.getItem(this.storeKey) || "null") : null; } catch (e) { return null; }
  };
  // Keeps the current choices in this browser until the server has them.
  ItemPage.prototype.keep = function () {
    if (!this.storeKey || !this.editable) return;
    try {
      // with the key of this page's last submission and what it said: after a lost answer and
      // a reload, a later choice is told from the stored submission (afterLostAnswer)
      var sent = this.submitKey ? this.sentKeys[this.submitKey] : null;
      localStorage.setItem(this.storeKey, JSON.stringify({ body: this.options.payload(), version: this.version, submitted: this.submitted, submitKey: this.submitKey, sent: sent, at: Date.now() }));
    } catch (e) { /* storage full or refused: the server copy is all there is */ }
  };
  // What the expert chose, as text (the time on page left out): whether a change came since.
  ItemPage.prototype.choices = function () {
    var body = this.options.payload();
    delete body.seconds_spent;
    return JSON.stringify(body);
  };
  ItemPage.prototype.forget = function () {
    try { if (this.storeKey) localStorage.removeItem(this.storeKey); } catch (e) { /* nothing kept */ }
  };
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
  // The notice above the page's work (session ended, conflict): text and buttons; none clears it.
  ItemPage.prototype.notice = function (text, parts) {
    var box = document.getElementById("item-notice");
    if (!box) {
      box = document.createElement("div");
      box.id = "item-notice"; box.className = "notice warn"; box.setAttribute("role", "alert");
      var head = this.root.querySelector(".item-head");
      head.parentNode.insertBefore(box, head.nextSibling);
    }
    box.innerHTML = "";
    if (!text) { box.hidden = true; return; }
    var p = document.createElement("span"); p.textContent = text + " "; box.appendChild(p);
    (parts || []).forEach(function (part) { box.appendChild(part); box.appendChild(document.createTextNode(" ")); });
    box.hidden = false;
  };
  // The session ended: nothing is lost (the choices are kept in this browser); log in in a new
  // tab, then this page sends again (on coming back to it, or by its button).
  ItemPage.prototype.sessionEnded = function (what) {
    var page = this;
    this.waiting = what === "submit" || this.waiting === "submit" ? "submit" : "save";
    this.setStatus("Not saved: your session ended", true);
    var login = document.createElement("a");
    login.href = "/accounts/login/?next=/"; login.target = "_blank"; login.rel = "noopener"; login.id = "login-again";
    login.textContent = "Log in again (new tab)";
    this.notice("Your session ended, so this page cannot save. Your choices are kept in this browser: log in again, then come back here and they are sent.",
      [login, button("Send again", "send-again", function () { page.again(); })]);
  };
  // A 409: the judgement as stored is submitted (by an earlier submission from this page,
  // another tab, another device), or moved on since this page based its change on it.
  ItemPage.prototype.conflict = function (data, what) {
    var page = this, stored = data.grade || {};
    if (stored.status === "submitted" && !this.submitted) { this.askRevise(stored, data.cause); return; }
    if (this.options.conflict && this.options.conflict(data, what)) return;
    this.setStatus(what === "submit" ? "Not submitted" : "Not saved", true);
    var now = stored.score === null || stored.score === undefined ? "" : " (now " + shownScore(stored) + ")";
    var reload = button("Load the other", "load-stored", function () { page.forget(); window.location.reload(); });
    this.notice("This " + this.noun() + " changed " + (WHERE[data.cause] || WHERE.unknown) + now + ": keep your choice, or load the other?", [
      button("Keep my choice", "keep-mine", function () {
        page.version = stored.version; page.notice("");
        if (what === "submit") page.submit(); else page.saveNow();
      }), reload]);
  };
  ItemPage.prototype.noun = function () { return this.root.dataset.noun || "grade"; };
  // A submission is stored, and this page's choices differ from it: say so plainly and ask
  // (revise to this page's choice, or keep the stored one and go on). Nothing is sent until
  // the expert answers; Enter meanwhile goes to the question.
  ItemPage.prototype.askRevise = function (stored, cause) {
    var page = this, shown = shownScore(stored);
    var mine = this.options.describe ? this.options.describe() : null;
    this.asking = { stored: stored, cause: cause };
    this.submitted = true; this.version = stored.version;
    var skip = document.getElementById("skip-button");
    if (skip) skip.hidden = true; // a submitted item is not skipped
    this.setStatus(cause === "this_page" ? "Submitted as " + shown + ", not as you now chose" : "Not submitted", true);
    var head = cause === "this_page" ? "Your submission of " + shown + " was stored"
      : "Already submitted as " + shown + " " + (WHERE[cause] || WHERE.unknown);
    if (mine === null && this.root.dataset.scoreUrl && this.previewFor !== this.choices()) {
      // a checklist's total not known yet: ask the server for it (nothing saved); its answer
      // words the question again
      this.previewFor = this.choices();
      clearTimeout(this.saveTimer);
      this.saveTimer = setTimeout(this.saveNow.bind(this), 0);
    }
    var changed = mine !== null && mine !== shown;
    var question = changed ? "; you now chose " + mine + ": revise to " + mine + "?"
      : "; your choices here differ from it" + (mine === shown ? " (the score is " + shown + " in both)" : "") + ": revise it to yours?";
    this.notice(head + question, [
      button(changed ? "Revise to " + mine : "Revise to mine", "revise-to-mine", function () {
        page.asking = null; page.notice(""); page.submit();
      }),
      button("Keep " + shown + " and go on", "keep-stored", function () {
        page.asking = null; page.dirty = false; page.forget(); page.notice(""); goNext();
      })]);
  };
  // After a change: keep it here, save in `delay` ms (300 by default) unless another change
  // comes first.
  ItemPage.prototype.changed = function (delay) {
    this.options.changed();
    this.dirty = true;
    this.refuse([]);
    if (!this.editable) return;
    this.keep();
    if (this.asking) this.askRevise(this.asking.stored, this.asking.cause); // the question follows the choice
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(this.saveNow.bind(this), delay === undefined ? 300 : delay);
  };
  // Where and what a save sends: a draft, or while revising the checklist's score preview
  // (nothing saved until "Save revision"); null when there is nothing to send.
  ItemPage.prototype.saveRequest = function () {
    var body = this.options.payload();
    if (!this.submitted) {
      body.base_version = this.version;
      Object.assign(body, this.origin);
      return { method: "PUT", url: this.root.dataset.draftUrl, body: body };
    }
    if (!this.root.dataset.scoreUrl) return null;
    return { method: "POST", url: this.root.dataset.scoreUrl, body: { awards: body.awards, deductions: body.deductions } };
  };
  // The server does not answer: say so, keep the choices here, try again with a growing pause.
  ItemPage.prototype.unreachable = function (what) {
    var page = this;
    this.failures += 1;
    var wait = Math.min(30, 3 * Math.pow(2, this.failures - 1));
    this.setStatus("Not saved: the server does not answer (tried " + this.failures + " time" + (this.failures > 1 ? "s" : "") + "). Your choices are kept in this browser; trying again in " + wait + " s.", true);
    this.waiting = this.waiting || what;
    setTimeout(function () { page.again(); }, wait * 1000);
  };
  ItemPage.prototype.saveNow = function (keepalive) {
    var page = this, submitted = this.submitted;
    if (!this.editable) return Promise.resolve();
    // nothing is sent while a submission is on its way, while the page does not know whether
    // its last one was stored, or while it asks about a stored one
    if (this.submitting) { this.pendingSave = true; return Promise.resolve(); }
    if (this.unsure) { if (!keepalive) this.ask("save"); return Promise.resolve(); }
    if (this.saving) { this.pendingSave = true; return this.saving; }
    clearTimeout(this.saveTimer);
    var request = this.saveRequest();
    if (!request) {
      if (!this.asking) this.setStatus("Not yet saved: press \u201cSave revision\u201d");
      return Promise.resolve();
    }
    this.dirty = false;
    var sent = this.choices();
    this.setStatus(submitted ? "Computing\u2026" : "Saving\u2026");
    this.saving = call(request.method, request.url, request.body, keepalive).then(function (answer) {
      page.failures = 0;
      if (answer.sessionEnded) { page.dirty = true; page.sessionEnded("save"); return; }
      if (answer.ok) {
        if (!submitted) {
          if (answer.data.version !== undefined) page.version = answer.data.version;
          if (!page.dirty && page.choices() === sent) page.forget();
          else page.keep();
        }
        if (page.options.saved) page.options.saved(answer.data, request.body);
        page.showProblems([]);
        // while the page asks about a stored submission, a preview only updates the question
        if (page.asking) { page.askRevise(page.asking.stored, page.asking.cause); return; }
        page.notice("");
        page.setStatus(submitted ? "Not yet saved: press \u201cSave revision\u201d" : "Saved " + new Date().toLocaleTimeString());
      } else if (answer.status === 409) {
        page.dirty = true;
        page.conflict(answer.data, "save");
      } else {
        page.dirty = true;
        page.setStatus("Not saved", true);
        page.showProblems(answer.problems);
      }
    }).catch(function () {
      page.dirty = true;
      page.unreachable("save");
    }).then(function () {
      page.saving = null;
      if (page.pendingSave) { page.pendingSave = false; return page.saveNow(); }
    });
    return this.saving;
  };
  // An answer was lost: asks the server what it stored before sending anything (`what`: the
  // action that waits, "save" or "submit"). Its own submission stored, unchanged since: done,
  // as if the answer had come (sent again, the same key and choices are a repeat); changed
  // since: the question. Another submission stored: this one is sent, and the server says
  // whether it repeats it (200) or differs (409, naming who stored it). Nothing stored: the
  // action goes on.
  ItemPage.prototype.ask = function (what) {
    var page = this;
    if (this.checking) { this.unsure = what === "submit" ? "submit" : this.unsure; return this.checking; }
    this.setStatus("Asking the server what it stored\u2026");
    this.checking = call("GET", this.root.dataset.itemUrl).then(function (answer) {
      if (answer.sessionEnded) { page.sessionEnded(what); return; }
      if (!answer.ok) { page.setStatus("Not sure the submission was stored", true); page.showProblems(answer.problems); return; }
      var action = page.unsure === "submit" || what === "submit" ? "submit" : "save";
      page.unsure = null; page.failures = 0;
      var stored = answer.data.grade;
      if (!stored || stored.status !== "submitted") {
        if (action === "submit") page.submit(); else page.saveNow();
        return;
      }
      var ours = Object.prototype.hasOwnProperty.call(page.sentKeys, stored.submit_key);
      if (ours && page.sentKeys[stored.submit_key] !== page.choices()) page.askRevise(stored, "this_page");
      else page.submit(); // a repeat (200, the page goes on) or another's submission (409)
    }).catch(function () {
      page.unsure = page.unsure || what;
      page.unreachable("check");
    }).then(function () { page.checking = null; });
    return this.checking;
  };
  // Sends again what waits (after a log-in, a lost connection).
  ItemPage.prototype.again = function () {
    var what = this.waiting;
    if (!what) return;
    this.waiting = null;
    if (what === "check") this.ask(this.unsure || "save");
    else if (what === "submit") this.submit(); else this.saveNow();
  };
  ItemPage.prototype.submit = function () {
    var page = this;
    if (!this.editable || this.submitting) return;
    if (this.asking) { // the question waits for an answer: Enter goes to it
      var first = document.getElementById("revise-to-mine");
      if (first) first.focus();
      return;
    }
    if (this.unsure) { this.ask("submit"); return; }
    var refusal = this.options.refusal && this.options.refusal();
    if (refusal) { this.setStatus("Not submitted", true); this.refuse([refusal]); return; }
    this.submitting = true;
    clearTimeout(this.saveTimer);
    this.keep();
    var submitButton = document.getElementById("submit-button");
    submitButton.disabled = true;
    // A draft on its way first (its answer names the version this submission is based on);
    // the submission itself carries the form as it is now, whatever that draft said.
    (this.saving || Promise.resolve()).then(function () { return page.send(submitButton); });
  };
  ItemPage.prototype.send = function (submitButton) {
    var page = this, submitted = this.submitted;
    this.pendingSave = false;
    var body = this.options.payload();
    var sent = this.choices();
    // one key per content: the same choices again are a repeat, other choices another submission
    if (!this.submitKey || this.sentKeys[this.submitKey] !== sent) { this.submitKey = randomId(); this.sentKeys[this.submitKey] = sent; }
    body.submit_key = this.submitKey;
    body.base_version = this.version;
    Object.assign(body, this.origin);
    this.setStatus(submitted ? "Saving revision\u2026" : "Submitting\u2026");
    var url = this.root.dataset.submitUrl + (submitted ? "?revise=true" : "");
    call("POST", url, body).then(function (answer) {
      page.failures = 0;
      page.submitting = false; submitButton.disabled = false;
      if (answer.sessionEnded) { page.sessionEnded("submit"); }
      else if (answer.ok && page.choices() !== sent) {
        // changed while the submission was on its way: stored as sent, asked about now
        page.askRevise(answer.data, "this_page");
      } else if (answer.ok) {
        page.dirty = false;
        page.forget(); page.notice("");
        if (answer.data.version !== undefined) page.version = answer.data.version;
        if (!submitted) {
          page.setStatus("Submitted");
          // a campaign with a second opinion reveals it on the submitted item's page
          if (answer.data.second_opinion) { window.location.replace(window.location.pathname); return; }
          // a calibration round stays on the item to show the gold answer (calibration app)
          if (page.root.dataset.afterSubmit === "reload") window.location.reload(); else goNext();
          return;
        }
        page.setStatus("Revision saved " + new Date().toLocaleTimeString());
        page.showProblems([]);
        if (page.options.saved) page.options.saved(answer.data, body);
      } else if (answer.status === 409) {
        page.conflict(answer.data, "submit");
      } else {
        page.setStatus("Not submitted", true);
        page.refuse(answer.problems);
        if (page.options.refused) page.options.refused(answer.data);
        if (page.pendingSave) { page.pendingSave = false; page.saveNow(); }
      }
    }).catch(function () {
      // the answer is lost: the server may or may not have stored the submission
      page.unsure = "submit";
      page.submitting = false; submitButton.disabled = false;
      page.setStatus("No answer from the server: your submission may or may not be stored. Your choices are kept in this browser; before sending anything more, this page asks the server what it stored (on your next change, or press Submit again).", true);
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
        (page.dirty ? page.saveNow() : Promise.resolve()).then(function () { post(document.getElementById("skip-form")); });
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
  window.Proofmark.apiCall = call;
  window.Proofmark.conflictWhere = function (cause) { return WHERE[cause] || WHERE.unknown; };
  window.Proofmark.button = button;
})();
