"""Writes the demo corpus and the demo accounts: plain ORM upserts on the natural keys, so
running it again changes nothing, and editing a demo text updates exactly that row."""

import hashlib
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import Group, User
from django.db import transaction

from core.roles import Role, ensure_role_groups
from problems.demo import algebra_combinatorics, geometry_number_theory
from problems.models import Problem, Proof, ReferenceSolution, VerifierAnalysis

DEMO_SOURCE = "proofmark-demo"
DEMO_VERIFIER = "demo-verifier"
DEMO_PROBLEMS = algebra_combinatorics.PROBLEMS + geometry_number_theory.PROBLEMS


@dataclass(frozen=True)
class DemoAccount:
    username: str
    password: str
    role: Role


DEMO_ACCOUNTS = (
    DemoAccount("admin", "admin-demo-pass", Role.ADMIN),
    DemoAccount("expert1", "expert1-demo-pass", Role.EXPERT),
    DemoAccount("expert2", "expert2-demo-pass", Role.EXPERT),
    DemoAccount("adjudicator", "adjudicator-demo-pass", Role.ADJUDICATOR),
    DemoAccount("researcher", "researcher-demo-pass", Role.RESEARCHER),
)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _upsert(model, defaults: dict, **lookup):
    """update_or_create that leaves an unchanged row alone (its updated_at included)."""
    row = model.objects.filter(**lookup).first()
    if row is None:
        return model.objects.create(**lookup, **defaults)
    changed = [name for name, value in defaults.items() if getattr(row, name) != value]
    if changed:
        for name in changed:
            setattr(row, name, defaults[name])
        row.save()
    return row


@transaction.atomic
def demo_corpus_load() -> dict[str, int]:
    """Upserts the demo problems, reference solutions, proofs and analyses; returns counts."""
    counts = {"problems": 0, "reference_solutions": 0, "proofs": 0, "analyses": 0}
    for spec in DEMO_PROBLEMS:
        problem = _upsert(
            Problem,
            external_id=spec["external_id"],
            defaults={
                "contest": spec["contest"],
                "year": spec["year"],
                "number": spec["number"],
                "topic": spec["topic"],
                "statement": spec["statement"],
                "final_answer": spec["final_answer"],
                "source": DEMO_SOURCE,
                "metadata": {"grading_guidelines": spec["guidelines"]},
            },
        )
        counts["problems"] += 1
        solution_hash = _hash(spec["solution"])
        _upsert(
            ReferenceSolution,
            problem=problem,
            text_hash=solution_hash,
            defaults={"text": spec["solution"], "source": DEMO_SOURCE},
        )
        ReferenceSolution.objects.filter(problem=problem, source=DEMO_SOURCE).exclude(
            text_hash=solution_hash
        ).delete()
        counts["reference_solutions"] += 1
        for proof_spec in spec["proofs"]:
            proof = _upsert(
                Proof,
                problem=problem,
                generator=proof_spec["generator"],
                sample_key="0",
                defaults={
                    "sample_index": 0,
                    "text": proof_spec["text"],
                    "text_hash": _hash(proof_spec["text"]),
                    "source": DEMO_SOURCE,
                    "metadata": {
                        "demo_quality": proof_spec["quality"],
                        "ratings": [
                            {
                                "kind": "human",
                                "value": proof_spec["rating"],
                                "max": 7,
                                "source": "proofmark demo expert",
                            }
                        ],
                    },
                },
            )
            counts["proofs"] += 1
            _upsert(
                VerifierAnalysis,
                proof=proof,
                verifier=DEMO_VERIFIER,
                sample_key="0",
                defaults={
                    "text": proof_spec["analysis"],
                    "text_hash": _hash(proof_spec["analysis"]),
                    "score": Decimal(proof_spec["verdict"]),
                    "kept_contract": True,
                    "score_problem": "",
                    "source": DEMO_SOURCE,
                },
            )
            counts["analyses"] += 1
    return counts


def demo_accounts_loaded() -> list[DemoAccount]:
    """The demo accounts that `demo_setup` made and that are still there (one query)."""
    present = set(
        User.objects.filter(
            username__in=[a.username for a in DEMO_ACCOUNTS], email__endswith="@proofmark.invalid"
        ).values_list("username", flat=True)
    )
    return [account for account in DEMO_ACCOUNTS if account.username in present]


@transaction.atomic
def demo_accounts_ensure() -> tuple[DemoAccount, ...]:
    """Creates the role groups and one account per demo role, resetting their passwords to
    the documented ones; the admin may use Django's admin site."""
    ensure_role_groups()
    for account in DEMO_ACCOUNTS:
        user, created = User.objects.get_or_create(username=account.username)
        is_admin = account.role == Role.ADMIN
        user.is_staff = is_admin
        user.is_superuser = is_admin
        user.email = f"{account.username}@proofmark.invalid"
        # a new account has no password to check (each hash costs a quarter of a second)
        if created or not user.check_password(account.password):
            user.set_password(account.password)
        user.save()
        user.groups.add(Group.objects.get(name=account.role.value))
    return DEMO_ACCOUNTS
