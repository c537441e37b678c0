"""Markdown with LaTeX math to safe HTML, for statements, solutions, proofs and analyses.

`render_markdown(text)` parses Markdown (CommonMark plus tables and strikethrough) with raw HTML
disabled, keeps math in all four delimiter styles (`$..$`, `$$..$$`, `\\(..\\)`, `\\[..\\]`) and
bare LaTeX environments as escaped TeX in `<span class="math inline">` / `<div class="math
block">` (`<span class="math block">` for display math inside a paragraph) for KaTeX in the
browser (static/js/math.js), then cleans the HTML with an allow-list (nh3): no raw HTML, no
script, no event attributes, no style, links only to http(s), mailto and relative URLs, and
images only of pictures stored with the corpus (`![alt](picture:<sha256>)`, problems.pictures),
served by this site: an image at any other address is shown as a link, never loaded. The result is cached per text and renderer version,
in the shared cache and in the process's own ("rendered", settings.CACHES: a text's HTML never
changes under one RENDERER_VERSION, so a process keeps what it read; the grading page's template
then asks Redis nothing more); `texts_rendered` also stores it in the database (RenderedText),
where every web process finds it, and `problems.services.texts_prerender` renders a campaign's
texts ahead, on the worker.
"""

import hashlib
import re
from collections.abc import Iterable

import nh3
from django.core.cache import cache, caches
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from mdit_py_plugins.dollarmath import dollarmath_plugin

from problems.latex import display_fixups, latex_plugin, normalise_source
from problems.models import RenderedText
from problems.tex_macros import (
    definitions_normalised,
    definitions_split,
    has_definitions,
    tex_macros_plugin,
)

RENDERER_VERSION = "5"
CACHE_SECONDS = 7 * 24 * 3600

ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s", "code",
    "pre", "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "a",
    "span", "div", "sup", "sub", "img",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "ol": {"start"},
    "img": {"src", "alt", "title", "loading"},
    "span": {"data-tex-scope"},
    "div": {"data-tex-scope"},
}
ALLOWED_CLASSES = {
    "span": {"math", "inline", "block", "define"},
    "div": {"math", "block"},
    "img": {"picture"},
}
PICTURE_PATH = "/problems/pictures/"  # problems.urls: picture_show
ALLOWED_URL_SCHEMES = {"http", "https", "mailto"}
SAFE_LINK_PREFIXES = ("http://", "https://", "mailto:", "/", "#", "./", "../")


def _validate_link(url: str) -> bool:
    """Markdown links: web, mail and relative addresses only (nh3 checks again)."""
    lowered = url.strip().lower()
    if lowered.startswith("picture:"):
        return STORED_PICTURE.fullmatch(lowered) is not None
    return lowered.startswith(SAFE_LINK_PREFIXES) or ":" not in lowered.split("/")[0]


def _math(tag: str, kind: str, tex: str, env) -> str:
    """A math element; in a text that defines macros, marked with the text's scope (its
    formulas and definitions share one table of macros in the browser, no other text's)."""
    scope = env.get("tex_scope") if env else None
    if not scope:
        return f'<{tag} class="math {kind}">{escapeHtml(tex)}</{tag}>'
    tex = definitions_normalised(tex)
    return f'<{tag} class="math {kind}" data-tex-scope="{scope}">{escapeHtml(tex)}</{tag}>'


def _math_inline(self, tokens, idx, options, env) -> str:
    return _math("span", "inline", tokens[idx].content, env)


def _math_inline_display(self, tokens, idx, options, env) -> str:
    return _math("span", "block", display_fixups(tokens[idx].content), env)


def _math_block(self, tokens, idx, options, env) -> str:
    return _math("div", "block", display_fixups(tokens[idx].content.strip()), env) + "\n"


def _tex_definition(self, tokens, idx, options, env) -> str:
    return _math("span", "define", tokens[idx].content, env)


def _image_as_link(self, tokens, idx, options, env) -> str:
    """A stored picture inline; any other image would load from outside: the alt text links
    to its address instead."""
    token = tokens[idx]
    alt = escapeHtml(self.renderInlineAsText(token.children or [], options, env) or "image")
    src = token.attrGet("src") or ""
    stored = STORED_PICTURE.fullmatch(src)
    if stored:
        return (
            f'<img class="picture" src="{PICTURE_PATH}{stored.group(1)}/" alt="{alt}"'
            ' loading="lazy">'
        )
    if not src:
        return f"[image: {alt}]"
    return f'<a href="{escapeHtml(src)}">[image: {alt}]</a>'


STORED_PICTURE = re.compile(r"picture:([0-9a-f]{64})")


def _only_stored_pictures(tag: str, attribute: str, value: str) -> str | None:
    """An image's source must be a picture this site serves (nh3 checks every attribute)."""
    if tag == "img" and attribute == "src" and not value.startswith(PICTURE_PATH):
        return None
    return value


def _build_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = _validate_link
    dollarmath_plugin(md, allow_labels=False, allow_blank_lines=False, double_inline=True)
    latex_plugin(md)
    tex_macros_plugin(md)
    md.add_render_rule("tex_definition", _tex_definition)
    md.add_render_rule("math_inline", _math_inline)
    md.add_render_rule("math_inline_double", _math_inline_display)
    md.add_render_rule("math_block", _math_block)
    md.add_render_rule("image", _image_as_link)
    return md


_PARSER = _build_parser()


def sanitise_html(html: str) -> str:
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        allowed_classes=ALLOWED_CLASSES,
        url_schemes=ALLOWED_URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
        attribute_filter=_only_stored_pictures,
    )


def render_markdown_uncached(text: str) -> str:
    env = {"tex_scope": _digest(text)[:16]} if has_definitions(text) else {}
    try:
        html = _PARSER.render(normalise_source(text), env)
    except RecursionError:
        html = f"<pre>{escapeHtml(text)}</pre>"
    return sanitise_html(html)


_UNBALANCED = (
    (re.compile(r"(?<!\\)\$"), None),
    (re.compile(r"\\\("), re.compile(r"\\\)")),
    (re.compile(r"\\\["), re.compile(r"\\\]")),
    (re.compile(r"\\begin\{"), re.compile(r"\\end\{")),
)


def preview_text(text: str, limit: int = 160) -> str:
    """The start of `text` on one line, cut at a space before `limit` characters and before any
    math it would cut in half, with an ellipsis when something was cut; the text's macro
    definitions are left out (`preview_markdown` renders them, hidden)."""
    flat = " ".join(definitions_split(text)[1].replace("$$", "$").split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    for opener, closer in _UNBALANCED:
        openings = [m.start() for m in opener.finditer(cut)]
        if closer is None:
            unbalanced = len(openings) % 2 == 1
        else:
            unbalanced = len(openings) > len(closer.findall(cut))
        if unbalanced:
            cut = cut[: openings[-1]]
    return cut.rstrip() + " \u2026"


def preview_markdown(text: str, limit: int = 160) -> str:
    """The HTML of `preview_text`, its math typeset with the macros the whole text defines."""
    definitions = definitions_split(text)[0]
    return render_markdown(" ".join([*definitions, preview_text(text, limit)]))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _cache_key(digest: str) -> str:
    return f"proofmark:md:{RENDERER_VERSION}:{digest}"


def render_markdown(text: str) -> str:
    """Safe HTML for Markdown + LaTeX `text`, from the process's cache or the shared one when
    this text was seen before."""
    if not text:
        return ""
    key = _cache_key(_digest(text))
    local = caches["rendered"]
    html = local.get(key)
    if html is None:
        html = cache.get(key)
        if html is None:
            html = render_markdown_uncached(text)
            cache.set(key, html, CACHE_SECONDS)
        local.set(key, html, CACHE_SECONDS)
    return html


def texts_rendered(texts: Iterable[str]) -> None:
    """Makes the HTML of each text ready for render_markdown: from the cache, else from the
    stored renderings (RenderedText, one query for all of them), else rendered now and stored.
    A page calls it with its long texts before its template renders them; a proof read again
    (the second expert, a reload, another web process) is then never rendered twice. Storing
    is a cache's write: a text stored twice at once keeps the first row (the same HTML)."""
    local = caches["rendered"]
    digests = {_digest(text): text for text in set(texts) if text}
    held = local.get_many([_cache_key(d) for d in digests])
    digests = {d: t for d, t in digests.items() if _cache_key(d) not in held}
    if not digests:
        return
    cached = cache.get_many([_cache_key(d) for d in digests])
    local.set_many(cached, CACHE_SECONDS)
    missing = {d: t for d, t in digests.items() if _cache_key(d) not in cached}
    if not missing:
        return
    found = dict(
        RenderedText.objects.filter(
            key__in=[f"{RENDERER_VERSION}:{d}" for d in missing]
        ).values_list("key", "html")
    )
    ready, fresh = {}, []
    for digest, text in missing.items():
        key = f"{RENDERER_VERSION}:{digest}"
        html = found.get(key)
        if html is None:
            html = render_markdown_uncached(text)
            fresh.append(RenderedText(key=key, html=html))
        ready[_cache_key(digest)] = html
    if fresh:
        RenderedText.objects.bulk_create(fresh, ignore_conflicts=True)
    cache.set_many(ready, CACHE_SECONDS)
    local.set_many(ready, CACHE_SECONDS)
