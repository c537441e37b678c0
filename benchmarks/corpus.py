#!/usr/bin/env python3
"""The benchmarks' corpus: ProofBench-shaped JSONL rows of real-shaped proofs, made here so that
the benchmarks run from any clone.

    python benchmarks/corpus.py --rows 20000 --seed 1234 --out benchmarks/out/corpus-20000.jsonl

One row a proof, in the `proofbench` import format: `problem_id`, `problem`, `reference_solution`,
`generator`, `model_solution` (and `metadata.contest`). Problems have one to four proofs, each
from a different generator, so a problem repeats on its proofs' rows as in ProofBench's files.
Proof lengths follow what real graded proofs show (the DeepSeekMath-V2 and IMO-ProofBench samples
run from under 1 KB to over 20 KB): log-normal, median about 3.5 KB, cut to 400 B - 40 KB;
Markdown with headings, lists, inline and display TeX. Same rows and seed, same bytes.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

GENERATORS = [f"bench-model-{name}" for name in "abcdefgh"]
SYMBOLS = ["a", "b", "c", "n", "m", "k", "p", "q", "x", "y", "z"]
PROSE = (
    "we claim that the bound is sharp because every term of the sum is positive and the "
    "inequality between the arithmetic and geometric means applies to each pair so the "
    "remaining case follows by the same argument after a change of variables which reduces "
    "the problem to a statement about residues modulo a prime that divides both sides hence "
    "the construction works for all sufficiently large values and small cases are checked "
    "directly by hand"
)
WORDS = PROSE.split()
HEADINGS = ["## Setting up", "## A lemma", "## The main estimate", "## Small cases", "## The end"]
OPENERS = [
    "Let $n \\ge 2$ be an integer. Show that",
    "Find all functions $f\\colon \\mathbb{R} \\to \\mathbb{R}$ such that",
    "In triangle $ABC$ the incircle touches $BC$ at $D$. Prove that",
    "Determine every pair of positive integers $(a, b)$ for which",
    "A sequence $(x_k)$ of reals satisfies $x_{k+1} = x_k^2 - 2$. Prove that",
]


def formula(rng: random.Random) -> str:
    a, b = rng.sample(SYMBOLS, 2)
    shapes = [
        f"{a}^{{{rng.randint(2, 5)}}} + {b}^{{{rng.randint(2, 5)}}} \\ge 2{a}{b}",
        f"\\sum_{{i=1}}^{{{a}}} \\frac{{1}}{{i({a}+i)}} < {rng.randint(1, 9)}",
        f"{a} \\equiv {rng.randint(0, 6)} \\pmod{{{rng.choice([3, 5, 7, 11])}}}",
        f"\\binom{{{a}+{b}}}{{{a}}} \\mid {a}!\\,{b}!",
        f"\\sqrt{{{a}^2 + {b}^2}} \\le |{a}| + |{b}|",
    ]
    return rng.choice(shapes)


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 20))]
    words.insert(rng.randrange(len(words)), f"${formula(rng)}$")
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def markdown(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        roll = rng.random()
        if roll < 0.08:
            part = f"\n\n{rng.choice(HEADINGS)}\n\n"
        elif roll < 0.2:
            part = f"\n\n$$\n{formula(rng)}\n$$\n\n"
        elif roll < 0.26:
            part = "\n" + "\n".join(f"- {sentence(rng)}" for _ in range(rng.randint(2, 4))) + "\n"
        else:
            part = sentence(rng) + " "
        parts.append(part)
        length += len(part)
    return "".join(parts).strip()


def proof_size(rng: random.Random) -> int:
    return int(min(40_000, max(400, rng.lognormvariate(math.log(3500), 0.75))))


def rows(count: int, seed: int):
    """`count` rows, problem by problem."""
    rng = random.Random(seed)
    made = 0
    problem = 0
    while made < count:
        problem += 1
        statement = f"{rng.choice(OPENERS)} ${formula(rng)}$. " + markdown(rng, 300)
        reference = markdown(rng, rng.randint(500, 2500))
        for generator in rng.sample(GENERATORS, min(rng.randint(1, 4), count - made)):
            yield {
                "problem_id": f"BENCH-{seed}-{problem:06d}",
                "problem": statement,
                "reference_solution": reference,
                "generator": generator,
                "model_solution": markdown(rng, proof_size(rng)),
                "metadata": {"contest": "Bench", "contest_year": 2025},
            }
            made += 1


def corpus_file(count: int, *, folder: Path, seed: int = 1234) -> Path:
    """The JSONL file of `count` rows in `folder`, written once and then reused."""
    path = folder / f"corpus-{count}-{seed}.jsonl"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        with partial.open("w", encoding="utf-8") as out:
            for row in rows(count, seed):
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        partial.rename(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    made = corpus_file(args.rows, folder=args.out.parent, seed=args.seed)
    made.rename(args.out)
    print(f"{args.rows} rows, {args.out.stat().st_size / 2**20:.1f} MB: {args.out}")


if __name__ == "__main__":
    main()
