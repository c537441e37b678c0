// Aligns a rendered text (Markdown with typeset formulas) to its SOURCE text, for the grading
// and review pages: a selection becomes offsets into the source, and spans of the source are
// highlighted in the rendered text. See annotation/spans.py.
//
// The rendered text is aligned once (and again after highlighting): text nodes and formulas are
// walked in document order and each one's text (for a formula, its TeX, kept by the constructor
// before math.js typesets it) is found in the source by a forward-moving search. A selection's
// ends are read through that alignment (an end inside a formula snaps to the whole formula with
// its delimiters); highlighting runs it the other way.
(function () {
  "use strict";
  var DELIMS = [["$$", "$$"], ["\\[", "\\]"], ["\\(", "\\)"], ["$", "$"]];
  var REACH = 4000;  // how far past the last aligned piece the next one is looked for

  // Build it before math.js typesets (deferred scripts run before DOMContentLoaded).
  // options.approximate: a text node not found as is is placed by its first 12 characters.
  function Aligner(el, source, options) {
    el.querySelectorAll(".math").forEach(function (m) { m.dataset.tex = m.textContent; });
    this.el = el; this.source = source; this.segments = [];
    this.approximate = !!(options && options.approximate);
  }
  Aligner.prototype.build = function () {
    var el = this.el, source = this.source, approximate = this.approximate, segments = [], cursor = 0;
    var walker = document.createTreeWalker(el, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        if (node.nodeType === 1) {
          if (node.classList.contains("math")) return NodeFilter.FILTER_ACCEPT;
          return node.closest(".math") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
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
      if (pos >= 0 && pos - cursor <= REACH) {
        seg.start = pos; seg.end = pos + key.length;
      } else if (!isMath && approximate) {
        var head = key.trim().slice(0, 12);
        pos = head ? source.indexOf(head, cursor) : -1;
        if (pos >= 0 && pos - cursor <= REACH) { seg.start = pos; seg.end = Math.min(source.length, pos + key.trim().length); }
      }
      if (seg.start >= 0 && isMath) {
        for (var i = 0; i < DELIMS.length; i++) {
          var open = DELIMS[i][0], close = DELIMS[i][1];
          if (source.slice(seg.start - open.length, seg.start) === open && source.slice(seg.end, seg.end + close.length) === close) {
            seg.start -= open.length; seg.end += close.length; break;
          }
        }
      }
      if (seg.start >= 0) cursor = seg.end;
      segments.push(seg);
    }
    this.segments = segments;
  };
  // The source offset of a DOM point; side "start" or "end" says which way a formula snaps.
  Aligner.prototype.point = function (node, offset, side) {
    var segs = this.segments;
    var mathEl = (node.nodeType === 1 ? node : node.parentElement).closest(".math");
    for (var i = 0; i < segs.length; i++) {
      var s = segs[i];
      if (s.start < 0) continue;
      if (mathEl && s.node === mathEl) return side === "start" ? s.start : s.end;
      if (!mathEl && s.node === node && node.nodeType === 3) return Math.min(s.start + offset, s.end);
    }
    var probe = document.createRange();
    probe.setStart(node, offset);
    var best = null;
    for (var j = 0; j < segs.length; j++) {
      var t = segs[j];
      if (t.start < 0) continue;
      var cmp = probe.comparePoint(t.node, 0);
      if (side === "start" && cmp >= 0) return t.start;
      if (side === "end" && cmp < 0) best = t.end;
    }
    return side === "end" ? best : null;
  };
  // The window's selection inside this text as {start, end, quote} of the source (white space
  // trimmed), or null.
  Aligner.prototype.selection = function () {
    var sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    var range = sel.getRangeAt(0);
    if (!this.el.contains(range.commonAncestorContainer)) return null;
    var start = this.point(range.startContainer, range.startOffset, "start");
    var end = this.point(range.endContainer, range.endOffset, "end");
    if (start === null || end === null) return null;
    var src = this.source;
    while (start < end && /\s/.test(src[start])) start++;
    while (end > start && /\s/.test(src[end - 1])) end--;
    if (end <= start) return null;
    return { start: start, end: end, quote: src.slice(start, end) };
  };
  Aligner.prototype.clear = function () {
    var el = this.el;
    el.querySelectorAll("mark.hl").forEach(function (mark) {
      var parent = mark.parentNode;
      while (mark.firstChild) parent.insertBefore(mark.firstChild, mark);
      parent.removeChild(mark);
    });
    el.querySelectorAll(".math.hl-math").forEach(function (m) {
      m.classList.remove("hl-math");
      (m.dataset.hl || "").split(" ").forEach(function (cls) { if (cls) m.classList.remove(cls); });
      delete m.dataset.hl;
      m.removeAttribute("title");
    });
    el.normalize();
  };
  // Highlights spans ({start, end} of the source): each run of text covered by the same spans
  // becomes a <mark class="hl ..."> (data-spans: their indexes), a covered formula gets the
  // class hl-math. look(indexes, isMath) gives the {className, title} of what those spans cover.
  Aligner.prototype.highlight = function (spans, look) {
    this.clear();
    this.build();
    this.segments.forEach(function (seg) {
      if (seg.start < 0) return;
      var covering = [];
      spans.forEach(function (sp, idx) { if (sp.start < seg.end && sp.end > seg.start) covering.push(idx); });
      if (!covering.length) return;
      if (seg.math) {
        var mathStyle = look(covering, true);
        seg.node.classList.add("hl-math");
        mathStyle.className.split(" ").forEach(function (cls) { if (cls) seg.node.classList.add(cls); });
        seg.node.dataset.hl = mathStyle.className;
        if (mathStyle.title) seg.node.title = mathStyle.title;
        return;
      }
      var len = seg.node.data.length, node = seg.node;
      var cuts = [0, len];
      covering.forEach(function (i) {
        cuts.push(Math.max(0, Math.min(len, spans[i].start - seg.start)));
        cuts.push(Math.max(0, Math.min(len, spans[i].end - seg.start)));
      });
      cuts = cuts.filter(function (v, i, a) { return a.indexOf(v) === i; }).sort(function (a, b) { return a - b; });
      // from the end backwards, so that `node` keeps the text before each piece
      for (var c = cuts.length - 2; c >= 0; c--) {
        var from = cuts[c], to = cuts[c + 1];
        var absFrom = seg.start + from, absTo = seg.start + to;
        var ids = covering.filter(function (i) { return spans[i].start < absTo && spans[i].end > absFrom; });
        if (to <= from || !ids.length) continue;
        var tail = node.splitText(from);
        tail.splitText(to - from);
        var style = look(ids, false);
        var mark = document.createElement("mark");
        mark.className = "hl " + style.className;
        mark.dataset.spans = ids.join(",");
        if (style.title) mark.title = style.title;
        tail.parentNode.insertBefore(mark, tail);
        mark.appendChild(tail);
      }
    });
    this.build();
  };

  window.Proofmark = window.Proofmark || {};
  window.Proofmark.Aligner = Aligner;
})();
