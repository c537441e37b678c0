"""Every page each demo role reaches, checked by axe-core (WCAG 2 A and AA): the demo data, set up
as after a first hour (an LLM endpoint, so the forms that need one appear; a verifier run, a
labelling loop, an export and a grader evaluation that went through it, an export still running;
a case returned to its experts), then for each role a walk that follows the links of every page it reaches, one page
per kind of address (ids and slugs set aside)."""

import re
from io import StringIO
from urllib.parse import urljoin, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings
from playwright.sync_api import Error as PlaywrightError

from adjudication.models import AdjudicationCase
from adjudication.services import case_return
from adjudication.verification.labelling import labelling_run_start
from adjudication.verification.verifier_runs import verifier_run_start
from annotation.demo import GRADING_SLUG
from annotation.models import Campaign
from exports.models import ExportJob
from exports.services.datasets import export_create
from graders.services.evaluations import evaluation_run_create
from jobs.models import JobStatus
from problems.models import Proof
from tests.e2e.conftest import AXE_SCRIPT
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
def first_hour(settings, fake_llm) -> dict[str, list[str]]:
    """The demo, an endpoint and what went through it; the pages of what was made, by the role
    that reads them (the walk finds the rest by following links)."""
    with override_settings(DEBUG=True):
        call_command("demo_setup", stdout=StringIO())
    endpoint = LLMEndpointFactory(name="local-model", base_url=fake_llm.base_url, api_key_env="")
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.LLM_BACKOFF_SECONDS = 0
    proofs = list(Proof.objects.all()[:2])
    verifier_run_start(kind="verify", endpoint=endpoint, targets=proofs, samples=1, user=None)
    loop = labelling_run_start(
        proofs=proofs, verifier=endpoint, meta_verifier=endpoint, n=1, m=1, k=1, user=None
    )
    users = {u.username: u for u in get_user_model().objects.all()}
    campaign = Campaign.objects.get(slug=GRADING_SLUG)
    job = export_create(
        user=users["researcher"], campaign=campaign, fmt="proofbench", file_type="jsonl", filters={}
    )
    evaluation = evaluation_run_create(
        user=users["researcher"], campaign=campaign, endpoint=endpoint, name="local grader"
    )
    case = AdjudicationCase.objects.get(item__campaign=campaign, resolved_at__isnull=True)
    case_return(case=case, user=users["adjudicator"], question="Which step lacks a reason?")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    # mid-way, as a worker leaves it: the list's progress bars are on the walk every time
    ExportJob.objects.create(
        campaign=campaign,
        format="dv",
        file_type="csv",
        created_by=users["researcher"],
        status=JobStatus.RUNNING,
        processed=3,
        total=8,
    )
    seeds = {
        "admin": [f"/adjudication/verification/loops/{loop.pk}/"],
        "researcher": [f"/exports/{job.pk}/", f"/exports/evaluations/{evaluation.pk}/"],
    }
    for grade in case.item.grades.select_related("expert"):
        seeds[grade.expert.username] = [f"/adjudication/cases/{case.pk}/discussion/"]
    return seeds


def walk(page, base: str, check, seeds: list[str]) -> tuple[list[str], list[str]]:
    """Visits every kind of page reachable from the home page and the seeds; the pages seen and
    what axe found on them."""
    seen_kinds, queue, visited, found = set(), ["/", *seeds], [], []
    while queue and len(visited) < MAX_PAGES:
        path = queue.pop(0)
        kind = kind_of(path)
        if kind in seen_kinds:
            continue
        seen_kinds.add(kind)
        try:
            answer = page.goto(base + path)
        except PlaywrightError as exc:  # a file sent as an attachment is no page
            if "Download is starting" in str(exc):
                continue
            raise
        if answer.status != 200 or "text/html" not in answer.headers.get("content-type", ""):
            continue
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


def test_every_page_of_every_role_passes_axe(first_hour, browser, live_server, assert_accessible):
    report, problems = {}, []
    for role in ROLES:
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        context.set_default_timeout(20_000)
        context.add_init_script(path=AXE_SCRIPT)  # on every page as it opens, not sent per check
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", role)
        page.fill("#id_password", f"{role}-demo-pass")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        visited, found = walk(page, live_server.url, assert_accessible, first_hour.get(role, []))
        report[role] = visited
        problems += found
        context.close()
    kinds = {kind_of(path) for paths in report.values() for path in paths}
    # the pages that appear only after set-up are among them
    assert {
        "/api/docs/",
        "/exports/evaluations/",
        "/adjudication/verification/",
        "/adjudication/verification/runs/*/",
        "/adjudication/verification/loops/*/",
        "/adjudication/cases/*/discussion/",
        "/exports/*/",
        "/exports/evaluations/*/",
    } <= kinds, sorted(kinds)
    assert len(report["admin"]) >= 25, report["admin"]
    assert not problems, "\n\n".join(problems)
