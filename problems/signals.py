"""Events of the corpus that higher apps react to (docs/ARCHITECTURE.md: signals and receivers)."""

from django.dispatch import Signal

# Sent after an import commits (never on a dry run), with problem_ids: list[int], the
# problems the import created or changed.
corpus_imported = Signal()
