"""A campaign made the way users make one, for the benchmarks (after benchdb.setup_django).

The corpus (benchmarks/corpus.py) goes in through the import service; the campaign through
`campaign_create` with the project's defaults (40% of items double-scored, tolerance 1); its items
through `items_create_from_selection`; its experts through `campaign_member_add`, each with an
API token and a logged-in session. `campaign_grade` then grades it through the services as experts
would (`assignment_next`, `grade_submit`: two experts on every double-scored item, varied
scores), so labels and adjudication cases come from the project's own rules.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path


@dataclass
class Built:
    slug: str
    items: int
    double_scored: int
    experts: list  # User objects
    tokens: list[str]
    cookies: list[str]  # "sessionid=...; csrftoken=..." of each expert


def _session_cookie(user) -> str:
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from django.middleware.csrf import CSRF_ALLOWED_CHARS
    from django.utils.crypto import get_random_string

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[-1]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    # and the CSRF cookie a browser keeps from its first page, so a page load masks the secret
    # it holds, as in the browser, instead of making a new one and setting the cookie each time
    csrf = get_random_string(32, allowed_chars=CSRF_ALLOWED_CHARS)
    return (
        f"{settings.SESSION_COOKIE_NAME}={session.session_key}; {settings.CSRF_COOKIE_NAME}={csrf}"
    )


def bench_admin():
    """The benchmarks' admin (a superuser): makes the campaigns, uploads and exports."""
    from django.contrib.auth.models import User

    return User.objects.get_or_create(
        username="bench-admin", defaults={"is_superuser": True, "is_staff": True}
    )[0]


def admin_token() -> str:
    from rest_framework.authtoken.models import Token

    return Token.objects.get_or_create(user=bench_admin())[0].key


def campaign_build(*, slug: str, corpus: Path, items: int, experts: int) -> Built:
    """Imports `corpus`, then makes campaign `slug` (replacing one of that slug) of its first
    `items` proofs, with `experts` experts."""
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from annotation.models import Campaign
    from annotation.services import (
        campaign_create,
        campaign_member_add,
        items_create_from_selection,
    )
    from problems.models import Proof
    from problems.services import corpus_import

    report = corpus_import(path=corpus)
    if not report.ok:
        raise SystemExit(f"the corpus import failed: {report}")
    Campaign.objects.filter(slug=slug).delete()
    campaign = campaign_create(name=f"Benchmark {slug}", created_by=bench_admin(), slug=slug)
    prefix = "BENCH-"
    proofs = Proof.objects.filter(problem__external_id__startswith=prefix).order_by("pk")
    made = items_create_from_selection(
        campaign=campaign, proofs=proofs.select_related("problem")[:items]
    )
    group = Group.objects.get_or_create(name="expert")[0]
    users = []
    for index in range(experts):
        user, _ = User.objects.get_or_create(username=f"bench-expert-{index}")
        user.groups.add(group)
        campaign_member_add(campaign=campaign, user=user)
        users.append(user)
    tokens = [
        Token.objects.get_or_create(user=u, defaults={"key": secrets.token_hex(20)})[0].key
        for u in users
    ]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return Built(
        slug=slug,
        # `created_count` since issue 40; a list of the items made in the code before it, which
        # `make bench BASE=...` runs this script against
        items=made.created_count if hasattr(made, "created_count") else len(made.created),
        double_scored=made.double_scored,
        experts=users,
        tokens=tokens,
        cookies=[_session_cookie(u) for u in users],
    )


def judgement(rng: random.Random, truth: int) -> int:
    """An expert's score of a proof whose merit is `truth` (0-7): mostly exact, often one off,
    now and then far off (the pairs that go to adjudication)."""
    roll = rng.random()
    if roll < 0.6:
        return truth
    if roll < 0.93:
        return min(7, max(0, truth + rng.choice((-1, 1))))
    return rng.randint(0, 7)


def truth_of(rng: random.Random) -> int:
    """Merits as graded proofs show them: many zeros and sevens, the rest between."""
    return rng.choices(range(8), weights=(30, 8, 6, 5, 5, 6, 8, 32))[0]


def campaign_grade(built: Built, *, seed: int = 7) -> int:
    """Grades every item through the services, the experts taking turns; returns judgements."""
    from annotation.models import Campaign
    from annotation.services import GradeInput, assignment_next, grade_submit

    campaign = Campaign.objects.get(slug=built.slug)
    rng = random.Random(seed)
    truths: dict[int, int] = {}
    done = 0
    idle = 0
    turn = 0
    while idle < len(built.experts):
        expert = built.experts[turn % len(built.experts)]
        turn += 1
        assignment = assignment_next(campaign=campaign, expert=expert)
        if assignment is None:
            idle += 1
            continue
        idle = 0
        truth = truths.setdefault(assignment.item_id, truth_of(rng))
        grade_submit(
            item=assignment.item,
            expert=expert,
            data=GradeInput(score=Decimal(judgement(rng, truth)), seconds_spent=240),
        )
        done += 1
    return done
