"""Step-level verdicts of a proof: ours (correct, wrong, unclear) and MathOlympiadEval's
(seed 003 judges each step CORRECT or WRONG, in capitals), and the first wrong step that must
agree with them. Pure Python, no Django."""

from __future__ import annotations

VERDICTS = ("correct", "wrong", "unclear")
# MathOlympiadEval's step labels, as the seed writes them, onto ours.
SEED_VERDICTS = {"CORRECT": "correct", "WRONG": "wrong"}


def steps_check(
    verdicts: dict[str, str], first_wrong_step: int | None
) -> tuple[dict[str, str], int | None, list[str]]:
    """The verdicts in our words, the first wrong step and the problems, each naming its field.

    Keys are step numbers (1, 2, ...). The first wrong step is the lowest step marked wrong:
    given, it must be that step when any step is marked wrong, and otherwise a step not marked
    correct or unclear (the verdicts may leave steps unmarked); not given, it is taken from the
    verdicts."""
    problems: list[str] = []
    ours: dict[str, str] = {}
    for key, verdict in verdicts.items():
        if not key.isdigit() or int(key) < 1:
            problems.append(f"step_verdicts: {key!r} is not a step number (1, 2, ...)")
            continue
        mapped = SEED_VERDICTS.get(verdict, verdict)
        if mapped not in VERDICTS:
            problems.append(
                f"step_verdicts: step {key}: {verdict!r} is not a verdict (correct, wrong or "
                "unclear; or MathOlympiadEval's CORRECT or WRONG)"
            )
            continue
        ours[str(int(key))] = mapped
    wrong = sorted(int(key) for key, verdict in ours.items() if verdict == "wrong")
    if first_wrong_step is None:
        return ours, (wrong[0] if wrong else None), problems
    if wrong and wrong[0] < first_wrong_step:
        problems.append(
            f"first_wrong_step: step {wrong[0]} is marked wrong, before step {first_wrong_step}"
        )
    elif wrong and wrong[0] > first_wrong_step:
        problems.append(
            f"first_wrong_step: step {first_wrong_step} is not marked wrong (the first step "
            f"marked wrong is {wrong[0]})"
        )
    elif ours.get(str(first_wrong_step), "wrong") != "wrong":
        problems.append(
            f"first_wrong_step: step {first_wrong_step} is marked "
            f"{ours[str(first_wrong_step)]}, not wrong"
        )
    return ours, first_wrong_step, problems
