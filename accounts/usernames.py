"""User names that read alike are refused: a name is compared with the existing ones by its
skeleton (NFKC, case folded, Cyrillic and Greek look-alikes of Latin letters replaced), so that
"аdmin" with a Cyrillic а cannot pass for "admin" in a list of graders or in an export."""

import unicodedata

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

# Cyrillic and Greek letters drawn like a Latin one (lower case; names are case folded first).
LOOKALIKES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j", "к": "k",
        "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "ѕ": "s", "т": "t", "у": "y", "х": "x",
        "ԁ": "d", "ԛ": "q", "ԝ": "w", "ү": "y", "ӏ": "l",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "μ": "u", "ν": "v", "ο": "o",
        "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ζ": "z",
    }
)  # fmt: skip


def username_skeleton(name: str) -> str:
    """What a name looks like: equal skeletons read alike."""
    return unicodedata.normalize("NFKC", name).casefold().translate(LOOKALIKES)


def validate_not_confusable(name: str) -> None:
    """Refuses a name that reads like an existing user's other name (the same name is the
    unique check's business, and a user keeps their own)."""
    name = unicodedata.normalize("NFKC", name)
    skeleton = username_skeleton(name)
    for existing in (
        get_user_model().objects.exclude(username=name).values_list("username", flat=True)
    ):
        if username_skeleton(existing) == skeleton:
            raise ValidationError(
                f"This user name reads like the existing {existing!r}: choose one that does not.",
                code="confusable",
            )
