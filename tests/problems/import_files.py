"""Small corpus files written by the import tests (our own words, never copied real data)."""

import json
from pathlib import Path

STATEMENT = "Prove that $a^2 + b^2 \\ge 2ab$ for all real $a, b$."
REFERENCE = "Since $(a-b)^2 \\ge 0$, expanding gives $a^2 - 2ab + b^2 \\ge 0$."


def proofbench_row(index: int, **overrides) -> dict:
    row = {
        "problem_id": f"T-{index:03d}",
        "problem": f"{STATEMENT} (variant {index})",
        "reference_solution": REFERENCE,
        "marking_scheme": "## Checkpoints\n- Square is nonnegative (7 pts)",
        "generator": "model-a",
        "model_solution": f"Proof {index}. We have $(a-b)^2 \\ge 0$, hence the claim.",
        "expert_rating": 7,
        "metadata": {"contest": "Test MO", "contest_year": 2024},
        "response_number": 0,
    }
    row.update(overrides)
    return row


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def generic_problem(external_id: str = "G-1", **overrides) -> dict:
    record = {
        "kind": "problem",
        "id": external_id,
        "statement": STATEMENT,
        "contest": "Generic",
        "year": 2023,
        "number": "1",
        "topic": "A",
        "reference_solutions": [REFERENCE],
        "schemes": [{"format": "proofbench_markdown", "content": "- Square (7 pts)"}],
    }
    record.update(overrides)
    return record


def generic_proof(problem: str = "G-1", sample: str = "0", **overrides) -> dict:
    record = {
        "kind": "proof",
        "problem": problem,
        "generator": "model-b",
        "sample": sample,
        "text": "By AM-GM, $a^2 + b^2 \\ge 2|ab| \\ge 2ab$.",
        "ratings": [{"source": "grader-x", "kind": "expert", "value": 6, "max": 7}],
    }
    record.update(overrides)
    return record


def analysis_text(score: str, *, phrase: str = "final overall score should be") -> str:
    return (
        "Here is my evaluation of the solution:\n"
        "The proof quotes the target bound $\\boxed{2ab}$ and then argues correctly.\n"
        f"Based on my evaluation, the {phrase}: \\boxed{{{score}}}"
    )
