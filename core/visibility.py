"""Blind grading, field by field: the one rule for what a user sees of a proof's evaluations.

An expert grades blind. Before committing to an item (until its label is final, or a case is
returned to them: annotation's item page decides that, see `annotation.selectors`) an expert
sees none of what would anchor the judgement: verifier analyses or their scores, imported
ratings (human or automatic) and annotated errors, gold labels, or the model that wrote the
proof. The corpus cannot know which proofs an expert will hold next, so a user who holds the
expert role (and is not an admin) sees none of these on any corpus page, list, API answer or
search filter. Admins, adjudicators and researchers who are not experts see everything.

Pages and API operations that show a proof call `blind_to_evaluations` once and drop the fields
named here (templates test `blind`, serializers pass through `proof_data_for`).
"""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from core.roles import Role, user_roles

# What a blind reader never gets of a proof: its generator (model), its imported metadata
# (ratings, annotated error spans, original grades) and the verifier analyses of it.
BLIND_PROOF_FIELDS = frozenset({"generator", "metadata", "analyses"})
HIDDEN_GENERATOR = "hidden while you grade blind"


def blind_to_evaluations(user: AbstractBaseUser | AnonymousUser) -> bool:
    """True for a user who grades blind: holds the expert role and is not an admin."""
    roles = user_roles(user)
    return Role.EXPERT in roles and Role.ADMIN not in roles


def proof_data_for(user: AbstractBaseUser | AnonymousUser, data: dict) -> dict:
    """A proof's serialized fields, without those a blind reader never gets."""
    if not blind_to_evaluations(user):
        return data
    return {key: value for key, value in data.items() if key not in BLIND_PROOF_FIELDS}
