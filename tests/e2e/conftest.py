"""Browser tests: Playwright for Python driving Debian's Chromium against the live server."""

import os
import shutil

import pytest
from django.conf import settings
from playwright.sync_api import Locator, Page, expect

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
AXE_SCRIPT = settings.BASE_DIR / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa"]  # WCAG 2 level A and AA rules


expect.set_options(timeout=15_000)  # as long as the contexts' default


def _refuse_wait_for_function(*args, **kwargs):
    raise AssertionError(
        "wait_for_function gives up at its predicate's first throw (an element not there yet) "
        "and polls with eval, which the site's policy blocks: use expect(locator), which retries"
    )


Page.wait_for_function = _refuse_wait_for_function  # every page, whichever context made it


def _then_load(wait, page_of):
    """`wait` (for an element), then the document's load event: an element is there as soon as
    it is parsed, before the page's deferred scripts bind its keys and forms (keys pressed in
    between are lost, as a CI run found after "Grade next"). At once when the page has loaded."""

    def waited(self, *args, **kwargs):
        found = wait(self, *args, **kwargs)
        page_of(self).wait_for_load_state("load")
        return found

    return waited


Page.wait_for_selector = _then_load(Page.wait_for_selector, lambda page: page)
Locator.wait_for = _then_load(Locator.wait_for, lambda locator: locator.page)


# The network as a flaky connection makes it, in the page (an init script wrapping fetch, so
# the test keeps driving the page meanwhile): `window.__network.lose(method, pattern)` lets the
# next matching request reach the server, which stores what it says, and turns its answer into
# a network error (the answer lost on the way back); `hold(method, pattern, ms)` lets its answer
# reach the page only `ms` later (a server held back). Both apply once unless `times` says.
FLAKY_NETWORK = """
(() => {
  const fetch = window.fetch;
  const rules = [];
  const rule = (kind) => (method, pattern, ms, times) =>
    rules.push({ kind, method, pattern: new RegExp(pattern), ms: ms || 0, times: times || 1 });
  window.__network = { lose: (m, p, times) => rule("lose")(m, p, 0, times), hold: rule("hold"), rules };
  window.fetch = (url, options) => {
    const method = ((options && options.method) || "GET").toUpperCase();
    const found = rules.find((r) => r.times > 0 && r.method === method && r.pattern.test(String(url)));
    const answer = fetch(url, options);
    if (!found) return answer;
    found.times -= 1;
    if (found.kind === "lose") {
      return answer.then(() => { throw new TypeError("Failed to fetch: the answer was lost"); });
    }
    return answer.then((resp) => new Promise((done) => setTimeout(() => done(resp), found.ms)));
  };
})();
"""


@pytest.fixture
def flaky_network():
    """flaky_network(page): installs FLAKY_NETWORK on every document the page opens; then
    `page.evaluate("__network.lose('POST', '/submit/$')")` loses the next submission's answer,
    `page.evaluate("__network.hold('POST', '/submit/$', 1500)")` holds it back."""

    def install(page):
        page.add_init_script(FLAKY_NETWORK)
        return page

    return install


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is absent: `make test` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def context(browser):
    # Flows run with the site's Content-Security-Policy bypassed; strict_page and
    # tests/e2e/test_csp.py open the pages under the policy.
    context = browser.new_context(viewport={"width": 1366, "height": 900}, bypass_csp=True)
    context.set_default_timeout(15_000)
    yield context
    context.close()


@pytest.fixture
def strict_page(browser):
    """A page under the site's Content-Security-Policy; `strict_page.csp_errors` collects the
    console's reports of what the policy blocked."""
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.csp_errors = []
    page.on(
        "console",
        lambda msg: "Content Security Policy" in msg.text and page.csp_errors.append(msg.text),
    )
    yield page
    context.close()


@pytest.fixture
def page(context):
    return context.new_page()


@pytest.fixture
def login(live_server, context):
    """login(page, user): logs the user in through the real log-in form."""

    def do_login(page, user, password: str = "pass-word-123"):
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", user.username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        return page

    return do_login


@pytest.fixture
def screenshot_dir():
    path = settings.BASE_DIR / ".run" / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


# Ids that more than one element of the page carries (a label's `for` would point at the first).
DUPLICATE_IDS = """() => {
  const seen = {};
  for (const el of document.querySelectorAll('[id]')) seen[el.id] = (seen[el.id] || 0) + 1;
  return Object.entries(seen).filter(([, n]) => n > 1).map(([id, n]) => `${id} x${n}`);
}"""


@pytest.fixture
def assert_accessible():
    """assert_accessible(page): axe-core (npm) finds no WCAG 2 A or AA violation on the page as
    it is now, and no element id is used twice. The script is evaluated through the DevTools protocol, which a Content Security
    Policy does not block, unlike an inline <script> tag."""

    def check(page):
        # as a person sees it: fonts in, the page's own reactions to them (a frame) done
        page.evaluate(
            "() => document.fonts.ready.then(() => new Promise(r => requestAnimationFrame(r)))"
        )
        if not page.evaluate("() => typeof window.axe !== 'undefined'"):
            page.evaluate(AXE_SCRIPT.read_text(encoding="utf-8"))
        result = page.evaluate(
            # violations only: axe then skips gathering the nodes that pass (most of its time
            # on a long page)
            "tags => axe.run(document, {runOnly: {type: 'tag', values: tags},"
            " resultTypes: ['violations']})",
            AXE_TAGS,
        )
        found = [
            f"{v['id']} ({v['impact']}): {v['help']} at "
            + "; ".join(" ".join(node["target"]) for node in v["nodes"][:5])
            for v in result["violations"]
        ]
        assert not found, f"{page.url}: " + "\n".join(found)
        repeated = page.evaluate(DUPLICATE_IDS)
        assert not repeated, f"{page.url}: element ids used more than once: {repeated}"

    return check
