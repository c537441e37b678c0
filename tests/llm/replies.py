# ruff: noqa: E501  (model output has long lines; keeping them is part of the realism)
"""Realistic model replies for each generation step (written for these tests in the shapes our
prompts ask for, with the habits of real models: reasoning blocks, a sentence before the answer,
code fences), and `script_*` helpers that teach the fake server to answer a whole workflow."""

from tests.llm.fake_openai import FakeOpenAI, text

# Needles: a phrase of each prompt template (llm/prompts/templates) that names its step.
PROOFBENCH = "Write the marking scheme for the problem below"
CLUSTER = "Reply with a JSON array only, one object per group"
STEPS = "Take the solution below apart into its main steps"
RUBRIC = "Design "

SOLUTION_A = r"""Let $P_i(x) = P(x)/(x + r_i)$. By pigeonhole two of the $P_i$ share a zero coefficient in the same inner position $m$. Writing $P_1 = (x + r_1)Q$ and $P_2 = (x + r_2)Q$ and comparing coefficients gives $b_m = b_{m-1} = 0$. A real-rooted polynomial cannot have two consecutive zero coefficients (Rolle), a contradiction."""

SOLUTION_B = r"""By Newton's inequalities $a_i^2 \ge a_{i-1} a_{i+1} \cdot c_i$ for a real-rooted polynomial, a zero inner coefficient forces its neighbours to vanish, and propagating this reaches $P(0) = 0$, contradicting $P(0) \neq 0$."""

SOLUTION_A2 = r"""Another write-up: divide $P$ by each linear factor; two quotients share a vanishing coefficient by pigeonhole; then Rolle on consecutive zeros."""

PROOFBENCH_SCHEME = r"""Here is the marking scheme.

## 1. Checkpoints (max 7 pts total)

**Score exactly one chain: take the maximum subtotal among chains; do not add points across chains.**

**Chain A (idea: pigeonhole, then Rolle)**
- [1 pt] Set-up. Writes $P_i(x) = P(x)/(x + r_i)$ and notes its coefficients. [additive]
- [2 pts] Pigeonhole. Two of the $P_i$ have a zero coefficient in the same inner position. [additive]
- [2 pts] Consecutive zeros. From the shared position, $b_m = b_{m-1} = 0$ for $Q$. [additive]
- Lemma. Two consecutive zero coefficients forbid $n$ distinct real roots. [max 2]
  - [2 pts] A complete proof (Rolle, or Descartes' rule of signs).
  - [1 pt] The right idea with a gap.
  - award the larger only

**Chain B (idea: Newton's inequalities)**
- [7 pts] Newton. A complete proof through Newton's inequalities. [additive]

**Total (max 7)**: Chain A 1 + 2 + 2 + 2 = 7; Chain B 7.

## 2. Zero-credit items
- Restating the problem, or noting that every root is nonzero.
- Checking $n = 2$ without a general argument.

## 3. Deductions
Only the single largest deduction applies, and a score never goes below 0.
- [cap 5/7] The lemma is used without proof.
- [-1] Not using that the roots are distinct.
- Several different proofs: graded on the best one only.
- [cap 5/7] The proof asserts contradictory claims.
"""

CLUSTERS_JSON = """I compared the main steps of the three solutions.

```json
[
  {"cluster": "C1", "main_steps": ["Pigeonhole on the zero positions of the quotients", "Consecutive zeros and Rolle"], "members": [1, 3], "representative": 1},
  {"cluster": "C2", "main_steps": ["Newton's inequalities", "Propagation to P(0) = 0"], "members": [2], "representative": 2},
]
```
"""

ANALYSIS_A = r"""### Main step 1: Pigeonhole on the zero positions
- Why it matters: it turns a statement about all roots into two quotients with a common zero coefficient.
- Technique: pigeonhole principle.
- Sub-steps:
  - 1.1 Define $P_i = P/(x + r_i)$.
  - 1.2 Count the $n - 2$ inner positions.

### Main step 2: Consecutive zeros and Rolle
- Why it matters: it produces a real-rooted polynomial with two consecutive zero coefficients.
- Technique: comparing coefficients, Rolle's theorem.
- Sub-steps:
  - 2.1 Compare the coefficients of $(x + r_1)Q$ and $(x + r_2)Q$.
  - 2.2 Apply Rolle to the derivatives.
"""

ANALYSIS_B = r"""### Main step 1: Newton's inequalities
- Why it matters: it ties neighbouring coefficients of a real-rooted polynomial together.
- Technique: Newton's inequalities.
- Sub-steps:
  - 1.1 State the inequalities for $P$.

### Main step 2: Propagation
- Why it matters: a single zero spreads to the constant term.
- Technique: induction on the position.
- Sub-steps:
  - 2.1 Show both neighbours of a zero vanish.
  - 2.2 Reach $P(0) = 0$.
"""


def with_approachability(analysis: str, ratings: tuple[int, ...]) -> str:
    """The analysis with an approachability line under each main step."""
    parts = analysis.split("### Main step ")
    out = [parts[0]]
    for part, rating in zip(parts[1:], ratings, strict=True):
        head, _, rest = part.partition("\n")
        out.append(f"{head}\n- Approachability: {rating}\n{rest}")
    return "### Main step ".join(out)


def rubric(design: str, title: str, steps: tuple[tuple[int, str], ...]) -> str:
    """A one-chain rubric in the sections our RefGrader rubric prompts ask for."""
    rounding = (
        "**The final score is rounded down to a whole number.**\n\n"
        if design in ("milestones", "hybrid")
        else ""
    )
    tag = "[approachability 2] " if design in ("approachability", "hybrid") else ""
    bullets = "\n".join(
        f"- [{points} pts] {name}. Establishes {name.lower()}. {tag}[additive] (partial credit in steps of 0.5)\n"
        f"  - Partial: {points / 2:g} pts for a correct start."
        for points, name in steps
    )
    total = " + ".join(str(points) for points, _ in steps)
    return f"""## 1. Checkpoints (max 7 pts total)

{rounding}**Chain A (idea: {title})**

{bullets}

**Total (max 7)**: {total} = 7

## 2. Zero-credit items

- Restating the problem.

## 3. Deductions

- None.

## 4. Notes

A 7 completes every step.
"""


RUBRIC_A_STEPS = ((3, "Pigeonhole"), (4, "Consecutive zeros and Rolle"))
RUBRIC_B_STEPS = ((3, "Newton's inequalities"), (4, "Propagation"))


def script_proofbench(fake: FakeOpenAI, *replies) -> None:
    fake.on(PROOFBENCH, *(replies or (text(PROOFBENCH_SCHEME, think="Let me plan the points."),)))


def script_refgrader(fake: FakeOpenAI, design: str = "plain") -> None:
    """Answers clustering (3 solutions -> 2 clusters), the analysis of each representative and
    the rubric of each cluster. Representatives are told apart by their text."""
    approach = design in ("approachability", "hybrid")
    fake.on(CLUSTER, text(CLUSTERS_JSON, think="Solutions 1 and 3 share the route."))
    analysis_a = with_approachability(ANALYSIS_A, (3, 2)) if approach else ANALYSIS_A
    analysis_b = with_approachability(ANALYSIS_B, (2, 4)) if approach else ANALYSIS_B
    fake.on((STEPS, "By pigeonhole two of"), text(analysis_a))
    fake.on((STEPS, "By Newton's inequalities"), text(analysis_b))
    fake.on(
        (RUBRIC, "By pigeonhole two of"),
        text(f"```markdown\n{rubric(design, 'pigeonhole then Rolle', RUBRIC_A_STEPS)}```"),
    )
    fake.on(
        (RUBRIC, "By Newton's inequalities"),
        text(rubric(design, "Newton's inequalities", RUBRIC_B_STEPS)),
    )
