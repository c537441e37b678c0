"""Blind grading, field by field: the one rule for what a user sees of a proof's evaluations.

An expert grades blind. Before committing to an item (submitting a grade on it) an expert sees
none of what would anchor the judgement: verifier analyses or their scores, imported ratings
(human or automatic) and annotated errors, gold labels, final labels (of any campaign, the
closed campaign of imported ratings included), or the model that wrote the proof and its
provenance (the generator, the import's source and file name, metadata, an order by model).

Blindness goes by the work a user holds, not by their roles:
- a user whose only role is expert is blind to every proof: the corpus cannot know which
  proofs they will hold next, and no role of theirs needs these fields;
- any other user (adjudicator, researcher, admin) is blind to the proofs they hold as an
  expert: the proofs of the items of every open campaign where they are an expert member and
  have not submitted a grade on that item (`blind_proofs`, annotation's answer, registered
  from `AnnotationConfig.ready`; core imports no app). Once they submit, the proof is theirs
  to see again as their roles allow; a campaign that closes ends its blindness.

Every door that shows a proof's hidden fields asks here once: pages and serializers of one
proof call `blind_to_proof` (or `proof_data_for`), lists drop the rows of blind proofs
(`without_blind_proofs`), and pages of a whole campaign or a dataset (agreement, scores,
exports) refuse a user blind to any of its proofs with `BlindWork`, whose message names why.
"""

from collections.abc import Callable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet

from core.queries import of_ids
from core.roles import Role, user_roles

# What a blind reader never gets of a proof: its generator (model), the import's source (which
# names the model's file), its imported metadata (ratings, annotated error spans, original
# grades) and the verifier analyses of it.
BLIND_PROOF_FIELDS = frozenset({"generator", "source", "metadata", "analyses"})
HIDDEN_GENERATOR = "hidden while you grade blind"
HIDDEN_HELD = "hidden: you are grading this proof"

_reader: list[Callable[[AbstractBaseUser], QuerySet]] = []


class BlindWork(PermissionDenied):
    """A page or an operation that would show hidden fields of proofs the user grades."""


def blind_proofs_register(reader: Callable[[AbstractBaseUser], QuerySet]) -> None:
    """Annotation's answer: `reader(user)` is a query of the ids of the proofs the user holds
    as an expert and has not submitted a grade on (a subquery, `values("proof_id")`)."""
    _reader[:] = [reader]


def blind_to_everything(user: AbstractBaseUser | AnonymousUser) -> bool:
    """True for a user whose only role is expert: blind to every proof's hidden fields."""
    return user_roles(user) == {Role.EXPERT}


# The name the pages have always asked: a reader blind on every corpus page.
blind_to_evaluations = blind_to_everything


def blind_proofs(user: AbstractBaseUser | AnonymousUser) -> QuerySet | None:
    """The ids of the proofs `user` holds blind (a subquery), or None when they hold none
    (not authenticated, or no reader registered)."""
    if not user.is_authenticated or not _reader:
        return None
    return _reader[0](user)


def holds_blind_work(user: AbstractBaseUser | AnonymousUser) -> bool:
    """True when `user` is blind to some proof: an expert alone, or anyone holding ungraded
    work as an expert. Read once per request (kept on the user object)."""
    if blind_to_everything(user):
        return True
    cached = getattr(user, "_proofmark_blind_work", None)
    if cached is None:
        held = blind_proofs(user)
        cached = held is not None and held.exists()
        user._proofmark_blind_work = cached
    return cached


def blind_to_proof(user: AbstractBaseUser | AnonymousUser, proof_id: int) -> bool:
    """True when `user` may not see the hidden fields of proof `proof_id`."""
    if blind_to_everything(user):
        return True
    if not holds_blind_work(user):
        return False
    return blind_proofs(user).filter(proof_id=proof_id).exists()


def blind_among(user: AbstractBaseUser | AnonymousUser, proof_ids) -> set[int]:
    """Those of `proof_ids` whose hidden fields `user` may not see."""
    ids = set(proof_ids)
    if blind_to_everything(user):
        return ids
    if not ids or not holds_blind_work(user):
        return set()
    return set(of_ids(blind_proofs(user), "proof_id", ids).values_list("proof_id", flat=True))


def without_blind_proofs(
    user: AbstractBaseUser | AnonymousUser, queryset: QuerySet, proof: str = "proof"
) -> QuerySet:
    """`queryset` without the rows of proofs `user` is blind to (`proof` names the path from a
    row to its proof: "proof", "item__proof", "pk" for proofs themselves)."""
    if blind_to_everything(user):
        return queryset.none()
    held = blind_proofs(user)
    if held is None or getattr(user, "_proofmark_blind_work", None) is False:
        return queryset
    # one subquery in the list's own statement: no round trip of its own
    key = "pk" if proof == "pk" else f"{proof}_id"
    return queryset.exclude(**{f"{key}__in": held})


def blind_count(
    user: AbstractBaseUser | AnonymousUser, rows: QuerySet, proof: str = "proof"
) -> int:
    """How many of `rows` show a proof `user` is blind to (`proof` as in `without_blind_proofs`)."""
    if not holds_blind_work(user):
        return 0
    if blind_to_everything(user):
        return rows.count()
    key = "pk" if proof == "pk" else f"{proof}_id"
    return rows.filter(**{f"{key}__in": blind_proofs(user)}).count()


def ensure_not_blind(
    user: AbstractBaseUser | AnonymousUser, rows: QuerySet, what: str, proof: str = "proof"
) -> None:
    """Refuse (403, `BlindWork`) a page or operation showing `what` of `rows` when `user` is
    blind to one of their proofs; the message says why and how it opens."""
    count = blind_count(user, rows, proof)
    if count:
        raise BlindWork(
            f"You grade blind: {what} shows the verifier analyses, ratings, labels or models "
            f"of {count} proof{'s' if count != 1 else ''} you hold as an expert and have not "
            "graded. It opens once you have submitted your grades."
        )


def held_blind_ids(user: AbstractBaseUser | AnonymousUser) -> frozenset[int] | None:
    """The ids of the proofs `user` holds blind, read once per request for a list (None: blind
    to every proof)."""
    if blind_to_everything(user):
        return None
    cached = getattr(user, "_proofmark_held_ids", None)
    if cached is None:
        held = blind_proofs(user) if holds_blind_work(user) else None
        cached = (
            frozenset(held.values_list("proof_id", flat=True)) if held is not None else frozenset()
        )
        user._proofmark_held_ids = cached
    return cached


def proof_data_for(user: AbstractBaseUser | AnonymousUser, data: dict) -> dict:
    """A proof's serialized fields, without those a blind reader never gets (`data["id"]`)."""
    held = held_blind_ids(user)
    if held is not None and data["id"] not in held:
        return data
    return {key: value for key, value in data.items() if key not in BLIND_PROOF_FIELDS}


class BlindAdminMixin:
    """A Django admin page of rows that show proofs (`blind_proof_path`: the path from a row to
    its proof, as in `without_blind_proofs`): an admin who holds some of these proofs blind as an
    expert gets the list without their rows, told how many are left out and why, and a 403
    naming why on such a row's own page."""

    blind_proof_path = "proof"

    def get_queryset(self, request):
        return without_blind_proofs(
            request.user, super().get_queryset(request), proof=self.blind_proof_path
        )

    def changelist_view(self, request, extra_context=None):
        count = blind_count(
            request.user, self.model._default_manager.all(), proof=self.blind_proof_path
        )
        if count:
            from django.contrib import messages

            messages.info(
                request,
                f"{count} row{'s' if count != 1 else ''} left out: hidden because you are "
                "grading their proofs blind as an expert (they show once you have submitted).",
            )
        return super().changelist_view(request, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        rows = self.model._default_manager.filter(pk=object_id) if object_id.isdigit() else None
        if rows is not None:
            ensure_not_blind(request.user, rows, "this page", proof=self.blind_proof_path)
        return super().change_view(request, object_id, form_url, extra_context)
