"""The Markdown/LaTeX texts of the real sample corpora in ../shared/fixtures/real, read in place
(never copied), for the rendering and browser tests."""

import csv
import json
from pathlib import Path


def corpus_texts(root: Path) -> list[tuple[str, str]]:
    """(label, text) for statements, solutions, guidelines, proofs and attempts."""
    texts = []
    with open(root / "imobench" / "proofbench_v2.csv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            for column in ("Problem", "Solution", "Grading guidelines"):
                texts.append((f"{row['Problem ID']} {column}", row[column]))
    for path in sorted((root / "matharena_usamo2025").glob("*/*.tex")):
        texts.append((str(path), path.read_text(encoding="utf-8")))
    for path in sorted((root / "deepseek_math_v2").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            texts.append((f"{path.name} proof", record["model_prediction"]["proof"]))
    solved = json.loads((root / "opc" / "solved_USAMO_1997_5.json").read_text(encoding="utf-8"))
    for attempt in solved["attempts"]:
        texts.append(("opc attempt", attempt.get("solution") or ""))
    return texts
