"""Scheme pages: what each role sees and may do, with constant query counts."""

import re

import pytest
from django.urls import reverse

from rubrics.models import MarkingScheme, SchemeMethod, SchemeRating, SchemeStatus
from rubrics.services import scheme_approve, scheme_edit, scheme_rate, scheme_version_create
from tests.factories import UserFactory
from tests.problems.page_factories import ProblemFactory, ReferenceSolutionFactory
from tests.rubrics.factories import VALID_SCHEME

pytestmark = pytest.mark.django_db

INVALID_SCHEME = "## Checkpoints\n- (9 pts) **Everything**: all of it. [additive]\n"
CHAINS = r"""## Checkpoints (max 7 pts total)

**Shared prerequisites** [max 1]
- (1 pt) **Reduction**: reduces to the case $n$ odd. [additive]

**Chain A (induction)** [additive]
- (3 pts) **Base and step**: proves the step. [additive]
- (3 pts) **Conclusion**: concludes. [additive]

**Chain B (counting)** [additive]
- (2 pts) **Count**: counts the pairs. [additive]
- (2 pts) **Bound**: bounds the count. [additive]

## Zero-credit items
- Small cases only.

## Deductions
- Cap at 5/7 if the equality case is missing.
"""


def make_scheme(text=VALID_SCHEME, problem=None, **kwargs):
    problem = problem or ProblemFactory()
    return scheme_version_create(
        problem=problem, text=text, method=kwargs.pop("method", SchemeMethod.PROOFBENCH), **kwargs
    )


def client_for(client, user):
    client.force_login(user)
    return client


# --- list -----------------------------------------------------------------------------------


def test_list_shows_each_problems_latest_version_with_constant_queries(
    client, expert_user, admin_user, django_assert_max_num_queries
):
    client_for(client, expert_user)
    first = make_scheme()
    scheme_rate(scheme=first, rater=expert_user, score=3)
    newer = scheme_edit(scheme=first, text=INVALID_SCHEME, user=admin_user)
    with django_assert_max_num_queries(12) as few:
        response = client.get(reverse("rubrics:list"))
    baseline = len(few.captured_queries)
    for _ in range(6):
        scheme = make_scheme()
        scheme_rate(scheme=scheme, rater=expert_user, score=1)
    with django_assert_max_num_queries(baseline):
        response = client.get(reverse("rubrics:list"))
    assert response.status_code == 200
    body = response.content.decode()
    assert body.count('class="scheme-link"') == 7
    assert reverse("rubrics:detail", args=[newer.pk]) in body
    assert reverse("rubrics:detail", args=[first.pk]) not in body
    assert "has problems" in body


def test_list_filters_by_status_validity_method_and_search(client, expert_user, admin_user):
    client_for(client, expert_user)
    approved = make_scheme(problem=ProblemFactory(external_id="ALPHA-1"))
    scheme_approve(scheme=approved, user=admin_user)
    make_scheme(INVALID_SCHEME, problem=ProblemFactory(external_id="BETA-2"))
    make_scheme(problem=ProblemFactory(external_id="GAMMA-3"), method=SchemeMethod.IMPORTED)

    def shown(**params):
        body = client.get(reverse("rubrics:list"), params, HTTP_HX_REQUEST="true").content
        return [pid for pid in ("ALPHA-1", "BETA-2", "GAMMA-3") if pid in body.decode()]

    assert shown(status="approved") == ["ALPHA-1"]
    assert shown(valid="no") == ["BETA-2"]
    assert shown(method="imported") == ["GAMMA-3"]
    assert shown(q="gamma") == ["GAMMA-3"]
    assert shown() == ["ALPHA-1", "BETA-2", "GAMMA-3"]


def test_the_htmx_request_gets_the_fragment(client, expert_user):
    client_for(client, expert_user)
    make_scheme()
    response = client.get(reverse("rubrics:list"), HTTP_HX_REQUEST="true")
    assert b"<html" not in response.content and b"scheme-link" in response.content


# --- detail ---------------------------------------------------------------------------------


def test_detail_shows_scheme_problem_solution_checklist_totals_and_diff(
    client, admin_user, django_assert_max_num_queries
):
    client_for(client, admin_user)
    problem = ProblemFactory(statement="Show that $n^2 \\ge 0$.")
    ReferenceSolutionFactory(problem=problem, text="Official: squares are <b>nonnegative</b>.")
    first = make_scheme(problem=problem)
    edited = scheme_edit(scheme=first, text=CHAINS, user=admin_user)
    response = client.get(reverse("rubrics:detail", args=[edited.pk]))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Official solution" in body and "<b>nonnegative" not in body
    assert "Chain A" in body and "Chain B" in body and "Shared prerequisites" in body
    assert "7 / 7 with shared" in body and "5 / 7 with shared" in body
    assert "Changes from version 1" in body
    assert '<span class="diff-add">+ **Chain A (induction)** [additive]</span>' in body
    assert '<span class="diff-remove">- - (3 pts) **Key identity**' in body
    assert 'id="approve-scheme"' in body and 'id="edit-scheme"' in body


def test_detail_query_count_does_not_grow_with_versions_ratings_or_checkpoints(
    client, admin_user, django_assert_max_num_queries
):
    client_for(client, admin_user)
    scheme = make_scheme()
    with django_assert_max_num_queries(20) as few:
        client.get(reverse("rubrics:detail", args=[scheme.pk]))
    baseline = len(few.captured_queries)
    for index in range(5):
        scheme = scheme_edit(scheme=scheme, text=CHAINS + "\n" * (index + 1), user=admin_user)
        ReferenceSolutionFactory(problem=scheme.problem)
    for index in range(6):
        scheme_rate(scheme=scheme, rater=UserFactory(roles=["expert"]), score=index % 4)
    with django_assert_max_num_queries(baseline):
        response = client.get(reverse("rubrics:detail", args=[scheme.pk]))
    assert response.content.decode().count('class="tag status-draft"') >= 6


def test_validation_problems_are_shown_in_words(client, admin_user):
    client_for(client, admin_user)
    scheme = make_scheme(INVALID_SCHEME)
    body = client.get(reverse("rubrics:detail", args=[scheme.pk])).content.decode()
    assert "Problems to fix before approval" in body
    message = next(m["text"] for m in scheme.validation if m["level"] == "error")
    assert message.replace("'", "&#x27;") in body


def test_imobench_guidelines_are_shown_as_grade_bands(client, expert_user):
    client_for(client, expert_user)
    scheme = make_scheme(
        "(Partial)\n 1. Found the invariant.\n(Almost)\n 1. Small gap in the end.",
        fmt="imobench_guidelines",
        method=SchemeMethod.IMPORTED,
    )
    assert scheme.is_valid
    body = client.get(reverse("rubrics:detail", args=[scheme.pk])).content.decode()
    points = re.findall(r'id="band-(\w+)">\s*<div class="cp-head">.*?"cp-points">([^<]*)<', body)
    assert points == [
        ("correct", "7 pts"),
        ("almost", "6 pts"),
        ("partial", "1 pt"),
        ("incorrect", "0 pts"),
    ]
    partial = body[body.index('id="band-partial"') : body.index('id="band-incorrect"')]
    assert "Found the invariant." in partial


def test_text_that_reads_as_nothing_is_kept_as_guidelines(client, expert_user):
    client_for(client, expert_user)
    scheme = make_scheme(
        "Credit the invariant.", fmt="imobench_guidelines", method=SchemeMethod.IMPORTED
    )
    body = client.get(reverse("rubrics:detail", args=[scheme.pk])).content.decode()
    assert "Its text is kept as grading guidelines." in body


def test_an_admin_sees_every_rating_an_expert_only_their_own(
    client, admin_user, expert_user, expert2_user
):
    scheme = make_scheme()
    scheme_rate(scheme=scheme, rater=expert_user, score=3, comment="Faithful to the solution.")
    scheme_rate(scheme=scheme, rater=expert2_user, score=1, comment="Misses the bound.")
    admin_body = client_for(client, admin_user).get(reverse("rubrics:detail", args=[scheme.pk]))
    assert b"Faithful to the solution." in admin_body.content
    assert b"Misses the bound." in admin_body.content
    expert_body = client_for(client, expert_user).get(reverse("rubrics:detail", args=[scheme.pk]))
    assert b"Faithful to the solution." in expert_body.content
    assert b"Misses the bound." not in expert_body.content
    assert b"expert2" not in expert_body.content
    assert b'id="edit-scheme"' not in expert_body.content
    assert b"2.0 (2)" in admin_body.content and b"2.0 (2)" not in expert_body.content
    expert_list = client.get(reverse("rubrics:list")).content
    assert b"Mean rating" not in expert_list
    assert b'id="approve-scheme"' not in expert_body.content


# --- rate, edit, approve ----------------------------------------------------------------------


def test_rating_by_htmx_returns_the_ratings_fragment_and_updates(client, expert_user):
    client_for(client, expert_user)
    scheme = make_scheme()
    url = reverse("rubrics:rate", args=[scheme.pk])
    response = client.post(url, {"score": "1", "comment": "weak"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and b"Your rating is saved." in response.content
    client.post(url, {"score": "3", "comment": "fixed"})
    rating = SchemeRating.objects.get()
    assert (rating.score, rating.comment) == (3, "fixed")


def test_a_rating_outside_the_scale_is_refused_with_the_form(client, expert_user):
    client_for(client, expert_user)
    scheme = make_scheme()
    response = client.post(
        reverse("rubrics:rate", args=[scheme.pk]), {"score": "5"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 422
    assert b"Choose a rating from 0 to 3." in response.content
    assert not SchemeRating.objects.exists()


def test_edit_saves_a_new_version_even_when_invalid(client, admin_user):
    client_for(client, admin_user)
    scheme = make_scheme()
    response = client.post(
        reverse("rubrics:edit", args=[scheme.pk]),
        {"text": INVALID_SCHEME, "fmt": "proofbench_markdown"},
    )
    newer = MarkingScheme.objects.get(problem=scheme.problem, version=2)
    assert response.status_code == 302
    assert response.url == reverse("rubrics:detail", args=[newer.pk])
    assert newer.previous == scheme and not newer.is_valid
    page = client.get(response.url).content.decode()
    assert "Saved as draft version 2, which cannot be approved yet" in page


def test_edit_with_an_unchanged_text_says_so(client, admin_user):
    client_for(client, admin_user)
    scheme = make_scheme()
    response = client.post(
        reverse("rubrics:edit", args=[scheme.pk]),
        {"text": VALID_SCHEME, "fmt": "proofbench_markdown"},
    )
    assert response.status_code == 200
    assert b"Nothing changed" in response.content
    assert MarkingScheme.objects.count() == 1


def test_approving_an_invalid_version_is_refused_with_a_clear_message(client, admin_user):
    client_for(client, admin_user)
    scheme = make_scheme(INVALID_SCHEME)
    response = client.post(reverse("rubrics:approve", args=[scheme.pk]), follow=True)
    assert b"cannot be approved while it has problems" in response.content
    scheme.refresh_from_db()
    assert scheme.status == SchemeStatus.DRAFT


def test_approve_then_the_list_shows_it(client, admin_user):
    client_for(client, admin_user)
    scheme = make_scheme()
    response = client.post(reverse("rubrics:approve", args=[scheme.pk]), follow=True)
    assert b"is now the approved scheme" in response.content
    scheme.refresh_from_db()
    assert scheme.status == SchemeStatus.APPROVED


def test_an_admin_writes_a_first_scheme_for_a_problem(client, admin_user):
    client_for(client, admin_user)
    problem = ProblemFactory(external_id="NEW-1")
    response = client.post(
        reverse("rubrics:new", args=["NEW-1"]), {"text": VALID_SCHEME, "fmt": "proofbench_markdown"}
    )
    scheme = problem.marking_schemes.get()
    assert response.url == reverse("rubrics:detail", args=[scheme.pk])
    assert scheme.method == SchemeMethod.MANUAL and scheme.created_by == admin_user


def test_ratings_dashboard_counts_shares_per_method_and_prompt_version(client, admin_user):
    client_for(client, admin_user)
    raters = [UserFactory(roles=["expert"]) for _ in range(2)]
    for scores, prompt in (((3, 2), "pb-v1"), ((2, 1), "pb-v1"), ((0, 0), "pb-v2")):
        scheme = make_scheme(provenance={"prompt_version": prompt})
        for rater, score in zip(raters, scores, strict=True):
            scheme_rate(scheme=scheme, rater=rater, score=score)
    make_scheme(provenance={"prompt_version": "pb-v2"})
    body = client.get(reverse("rubrics:ratings")).content.decode()
    assert "pb-v1" in body and "pb-v2" in body
    # pb-v1: two rated, means 2.5 and 1.5 -> 50% mean >= 2; every rating >= 2 only the first.
    assert "50.0% <span" in body
    # pb-v2: two versions, one rated, mean 0.
    assert "0.0% <span" in body


# --- roles ----------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["researcher", "adjudicator", "expert"])
def test_only_admins_edit_approve_and_see_the_dashboard(client, role):
    client_for(client, UserFactory(roles=[role]))
    scheme = make_scheme()
    assert client.get(reverse("rubrics:edit", args=[scheme.pk])).status_code == 403
    assert client.post(reverse("rubrics:edit", args=[scheme.pk]), {"text": "x"}).status_code == 403
    assert client.post(reverse("rubrics:approve", args=[scheme.pk])).status_code == 403
    assert client.get(reverse("rubrics:ratings")).status_code == 403
    assert client.get(reverse("rubrics:new-pick"), {"problem": "x"}).status_code == 403
    assert client.get(reverse("rubrics:new", args=[scheme.problem.external_id])).status_code == 403
    scheme.refresh_from_db()
    assert scheme.status == SchemeStatus.DRAFT


@pytest.mark.parametrize("role", ["researcher", "adjudicator"])
def test_researchers_and_adjudicators_read_but_do_not_rate(client, role):
    client_for(client, UserFactory(roles=[role]))
    scheme = make_scheme()
    page = client.get(reverse("rubrics:detail", args=[scheme.pk]))
    assert page.status_code == 200 and b"rate-form" not in page.content
    response = client.post(reverse("rubrics:rate", args=[scheme.pk]), {"score": "2"})
    assert response.status_code == 403
    assert not SchemeRating.objects.exists()


def test_a_user_without_a_role_is_refused(client):
    client_for(client, UserFactory(roles=[]))
    scheme = make_scheme()
    assert client.get(reverse("rubrics:list")).status_code == 403
    assert client.get(reverse("rubrics:detail", args=[scheme.pk])).status_code == 403


def test_anonymous_is_sent_to_log_in(client):
    scheme = make_scheme()
    response = client.get(reverse("rubrics:detail", args=[scheme.pk]))
    assert response.status_code == 302 and "/accounts/login/" in response.url


def test_the_write_a_scheme_box_goes_to_the_problems_form_or_says_why_not(client, admin_user):
    client_for(client, admin_user)
    ProblemFactory(external_id="BOX-1")
    response = client.get(reverse("rubrics:new-pick"), {"problem": " BOX-1 "})
    assert response.url == reverse("rubrics:new", args=["BOX-1"])
    missing = client.get(reverse("rubrics:new-pick"), {"problem": "NOPE-9"}, follow=True)
    assert b"No problem has the id &#x27;NOPE-9&#x27;" in missing.content
