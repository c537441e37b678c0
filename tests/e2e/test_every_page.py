"""Every page each demo role reaches, checked by axe-core (WCAG 2 A and AA): the demo data, set up
as after a first hour (an LLM endpoint, so the forms that need one appear, and a verifier run
that went through it), then for each role a walk that follows the links of every page it
reaches, one page per kind of address (ids and slugs set aside)."""

import re
from io import StringIO
from urllib.parse import urljoin, urlsplit

import pytest
from django.core.management import call_command
from django.test import override_settings

from adjudication.verifier_runs import verifier_run_start
from problems.models import Proof
from tests.rubrics.generation_factories import LLMEndpointFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ROLES = ("admin", "expert1", "expert2", "adjudicator", "researcher")
# not pages of ours, or not pages: Django's admin, log-out, the API, files
SKIP = re.compile(r"^/(admin/|accounts/logout|api/v1/|api/schema|static/|media/)|download|\.csv$")
MAX_PAGES = 80  # per role: far more kinds of page than the site has


def kind_of(path: str) -> str:
    """/problems/DEMO-2024-C1/ and /problems/DEMO-2023-A2/ are one kind of page."""
    return "/".join("*" if re.search(r"\d", part) else part for part in path.split("/"))


@pytest.fixture
def first_hour(settings, fake_llm):
    with override_settings(DEBUG=True):
        call_command("demo_setup", stdout=StringIO())
    endpoint = LLMEndpointFactory(name="local-model", base_url=fake_llm.base_url, api_key_env="")
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.LLM_BACKOFF_SECONDS = 0
    verifier_run_start(
        kind="verify",
        endpoint=endpoint,
        targets=list(Proof.objects.all()[:2]),
        samples=1,
        user=None,
    )
    settings.CELERY_TASK_ALWAYS_EAGER = False


def walk(page, base: str, check) -> tuple[list[str], list[str]]:
    """Visits every kind of page reachable from the home page; the pages seen and what axe
    found on them."""
    seen_kinds, queue, visited, found = set(), ["/"], [], []
    while queue and len(visited) < MAX_PAGES:
        path = queue.pop(0)
        kind = kind_of(path)
        if kind in seen_kinds:
            continue
        seen_kinds.add(kind)
        answer = page.context.request.get(base + path)
        if answer.status != 200 or "text/html" not in answer.headers.get("content-type", ""):
            continue
        page.goto(base + path)
        visited.append(path)
        try:
            check(page)
        except AssertionError as exc:
            found.append(str(exc))
        for href in page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)"):
            parts = urlsplit(urljoin(page.url, href))
            if parts.netloc == urlsplit(base).netloc and not SKIP.search(parts.path):
                queue.append(parts.path)
    return visited, found


def test_every_page_of_every_role_passes_axe(
    first_hour, browser, live_server, assert_accessible, screenshot_dir
):
    report, problems = {}, []
    for role in ROLES:
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        context.set_default_timeout(20_000)
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", role)
        page.fill("#id_password", f"{role}-demo-pass")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        visited, found = walk(page, live_server.url, assert_accessible)
        report[role] = visited
        problems += found
        context.close()
    kinds = {kind_of(path) for paths in report.values() for path in paths}
    # the pages that appear only after set-up are among them
    assert {"/exports/evaluations/", "/adjudication/verification/", "/api/docs/"} <= kinds
    assert "/adjudication/verification/runs/*/" in kinds
    assert len(report["admin"]) >= 25, report["admin"]
    assert not problems, "\n\n".join(problems)
