"""Rubrics seen from the other apps: the bulk "approved else frozen" selector used when items
are pinned, a version's generator configuration, the list filtered on one problem, and the
links between problem, scheme and generation pages."""

import pytest
from django.urls import reverse

from rubrics.models import SchemeMethod, SchemeStatus
from rubrics.selectors import (
    scheme_approved_for_problem,
    scheme_generator_config_id,
    schemes_approved_for_problems,
)
from rubrics.services import scheme_approve, scheme_edit, scheme_freeze, scheme_version_create
from tests.problems.page_factories import ProblemFactory
from tests.rubrics.factories import VALID_SCHEME

pytestmark = pytest.mark.django_db


def make_scheme(problem, **kwargs):
    return scheme_version_create(
        problem=problem, text=VALID_SCHEME, method=SchemeMethod.PROOFBENCH, **kwargs
    )


def test_bulk_selector_agrees_with_the_single_one(admin_user, django_assert_num_queries):
    drafts_only = ProblemFactory()
    make_scheme(drafts_only)
    approved = ProblemFactory()
    approved_v1 = scheme_approve(scheme=make_scheme(approved), user=admin_user)
    frozen = ProblemFactory()
    frozen_v1 = scheme_freeze(scheme=scheme_approve(scheme=make_scheme(frozen), user=admin_user))
    frozen_v2 = scheme_freeze(
        scheme=scheme_approve(
            scheme=scheme_edit(scheme=frozen_v1, text=VALID_SCHEME + "\n", user=admin_user),
            user=admin_user,
        )
    )
    both = ProblemFactory()
    old = scheme_freeze(scheme=scheme_approve(scheme=make_scheme(both), user=admin_user))
    new = scheme_approve(
        scheme=scheme_edit(scheme=old, text=VALID_SCHEME + "\n", user=admin_user),
        user=admin_user,
    )
    old.refresh_from_db()
    assert old.status == SchemeStatus.FROZEN  # approving a newer version leaves it alone
    ids = [drafts_only.pk, approved.pk, frozen.pk, both.pk]
    with django_assert_num_queries(1):
        chosen = schemes_approved_for_problems(ids)
    assert {pid: s.pk for pid, s in chosen.items()} == {
        approved.pk: approved_v1.pk,
        frozen.pk: frozen_v2.pk,
        both.pk: new.pk,
    }
    for pid in ids:
        single = scheme_approved_for_problem(pid)
        assert (single.pk if single else None) == (chosen[pid].pk if pid in chosen else None)


def test_generator_config_id_comes_from_the_provenance():
    problem = ProblemFactory()
    generated = make_scheme(problem, provenance={"config": {"id": 42, "name": "c", "frozen": 1}})
    assert scheme_generator_config_id(generated) == 42
    assert scheme_generator_config_id(make_scheme(problem)) is None
    assert scheme_generator_config_id(make_scheme(problem, provenance={"config": "x"})) is None


def test_list_filters_on_one_problem_exactly(client, expert_user):
    make_scheme(ProblemFactory(external_id="LINK-P1"))
    make_scheme(ProblemFactory(external_id="LINK-P10"))
    client.force_login(expert_user)
    html = client.get(reverse("rubrics:list"), {"problem": "LINK-P1"}).content.decode()
    assert ">LINK-P1<" in html and "LINK-P10" not in html
    assert 'id="problem-filter"' in html and 'name="problem" value="LINK-P1"' in html
    fragment = client.get(
        reverse("rubrics:list"), {"problem": "LINK-P10"}, headers={"HX-Request": "true"}
    ).content.decode()
    assert "LINK-P10" in fragment and ">LINK-P1<" not in fragment
    everything = client.get(reverse("rubrics:list")).content.decode()
    assert "LINK-P1" in everything and "LINK-P10" in everything


def test_problem_page_links_to_its_marking_schemes(client, expert_user):
    problem = ProblemFactory(external_id="LINK-Q1")
    make_scheme(problem)
    client.force_login(expert_user)
    html = client.get(reverse("problems:detail", args=[problem.external_id])).content.decode()
    link = f"{reverse('rubrics:list')}?problem=LINK-Q1"
    assert f'href="{link}">Marking schemes</a>' in html
    assert ">LINK-Q1<" in client.get(link).content.decode()


def test_scheme_page_offers_generation_to_admins_only(client, admin_user, expert_user):
    problem = ProblemFactory(external_id="LINK-G1")
    scheme = make_scheme(problem)
    url = reverse("rubrics:detail", args=[scheme.pk])
    client.force_login(expert_user)
    assert "Generate with a model" not in client.get(url).content.decode()
    client.force_login(admin_user)
    html = client.get(url).content.decode()
    target = f"{reverse('rubrics:generate')}?problems={problem.pk}&amp;q=LINK-G1"
    assert f'href="{target}">Generate with a model</a>' in html
    page = client.get(target.replace("&amp;", "&")).content.decode()
    assert f'value="{problem.pk}" id="problem-{problem.pk}" form="generation-form" checked' in page
