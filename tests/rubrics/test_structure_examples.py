# ruff: noqa: E501  (model output has long lines; keeping them is part of the realism)
"""Realistic marking schemes in the shapes the parsers read (written for these tests, following
the formats of ProofBench's A.5 example and A.7 generation prompt, RefGrader's appendix D
rubric designs, and our own generation prompts), imported by the other structure tests; the
test at the end checks what each one reads as."""

from rubrics.structure import format_points, parse_scheme

# ProofBench A.5 (USAMO 2025 P2), the compact one-line form of the paper's example.
PB_COMPACT = r"""Marking Scheme (max 7 pts). Checkpoints (additive):
(1) [1pt] Problem reduction to $n = k + 1$ and setup. Alt: complete proof for $k = 1$.
(2) [2pts] Pigeonhole: $n$ polynomials, $n-2$ internal coefficient positions; two share a zero position.
(3) [2pts] Deduce consecutive zeros: from $[x^m]P_1 = [x^m]P_2 = 0$ and $P_i = (x + r_i)Q$, show $b_m = b_{m-1} = 0$.
(4) [2pts] Prove lemma (2pts for complete Rolle or Descartes proof; 1pt for partial).
Deductions: Cap 6/7 if no reduction justification; cap 5/7 if lemma flawed; cap 3/7 if stops after PHP; -1pt for minor gaps
(e.g., not using $r_1 \neq r_2$).
Zero credit: Unjustified WLOG; merely stating theorems; specific examples only; noting $P(0) \neq 0 \Rightarrow$ nonzero roots.
"""

# The full A.7 three-section output: two chains, shared prerequisites [max 2], a nested
# "award the larger only" group, caps and flat deductions, the boilerplate lines.
PB_CHAINS = r"""### 1. Checkpoints (max 7 pts total)

**Score exactly one chain — take the maximum subtotal among chains; do not add points across chains.**

**Shared prerequisites** [max 2] — count at most once regardless of chain.
- (1 pt) Reduces to $n = k+1$ by restricting to any $k+1$ roots of $P$. [additive]
- (1 pt) Notes that every root is nonzero since $P(0) \neq 0$, so each $P_i$ has nonzero leading and constant coefficients. [additive]

**Chain A (idea: pigeonhole on the positions of zero coefficients)** [additive]
- (2 pts) **Pigeonhole** — the $n$ polynomials $P_i$ each have a zero among $n-2$ interior coefficients, so two share a position. [additive]
- (1 pt) **Consecutive zeros** — writes $P_i = (x + r_i)Q$ and compares coefficients to get $b_m = b_{m-1} = 0$. [additive]
- **Lemma: two consecutive zero coefficients force a nonreal root** [max 2]
  - (2 pts) Complete proof (Rolle applied to $F^{(t)}$, or Descartes' rule of signs). Award the larger only.
  - (1 pt) Correct idea with a gap (the double root at $0$ asserted without justification).

**Chain B (idea: Newton's inequalities)** [additive]
- (3 pts) **Newton** — states Newton's inequalities for a real-rooted polynomial and shows that a zero interior coefficient forces both neighbours to vanish. [additive]
- (2 pts) **Contradiction** — derives a contradiction for $P_1$ and $P_2$ sharing a zero coefficient. [additive]

**Total (max 7):** Chain A: 2 + 2 + 1 + 2 = 7; Chain B: 2 + 3 + 2 = 7.

### 2. Zero-credit items
- Conjecturing from small cases that $P$ has a nonreal root.
- Restating the hypothesis on $a_0 a_1 \cdots a_k$ without using it.
- Stating Descartes' rule of signs without applying it.

### 3. Deductions
- **Cap at 5/7:** the lemma is used but its proof is missing or flawed.
- **Cap at 3/7:** the argument stops after the pigeonhole step.
- **−1:** minor gap, e.g. not using $r_1 \neq r_2$ when dividing.
- **−2:** circular use of the conclusion inside the lemma.
- Apply at most the single largest deduction; never reduce the score below 0.
"""

# Another generator's formatting: bold numbered section names, '*' bullets, escaped tags,
# "2 pts:" leading points, a [max k] group of additive items, all-or-nothing, a catch-all
# chain, "(larger only)" on the parent, and a stray prose line.
PB_VARIANT = r"""1. **Checkpoints (max 7 pts total)**

Score exactly one chain | take the **maximum** subtotal among chains; do **not** add points across chains.

#### Chain A: induction on $n$ \[additive]
* 1 pt: Base case $n = 1$ verified. \[additive]
* Constructions for the inductive step \[max 2]
    * (1 pt) builds the colouring for even $n$
    * (1 pt) builds the colouring for odd $n$
    * (1 pt) checks that the colouring has no monochromatic triangle
* Key inequality (larger only)
    * 4 pts: proves $f(n+1) \ge f(n) + 2$ in general.
    * 2 pts: proves it only when $n$ is even.

#### Chain B: complete alternative proof
* (7 pts, all or nothing) A complete and correct proof by any other method.

This scheme was checked against the official solution.

**Total (max 7):** Chain A 1 + 2 + 4 = 7; Chain B 7.

2. **Zero-credit items**
* Drawing pictures for $n \le 4$ only.
* Claiming the answer without proof.

3. **Deductions**
* -1 pt: arithmetic slip that breaks a case of the induction.
* Deduct 2 points for an unjustified claim that the colouring is unique.
* cap 4/7 if the inductive step is only sketched
"""

# One path, no chains: the simplest shape.
PB_SINGLE = r"""## Checkpoints (max 7 pts total)
- (3 pts) **Key identity** — proves $a_{n+1} - a_n = 2^n$. [additive]
- (2 pts) **Bound** — shows $a_n < 2^{n+1}$ for all $n$. [additive]
- (2 pts) **Conclusion** — deduces the claim for every $n \ge 1$. [additive]

## Zero-credit items
- Checking $n \le 3$ by hand.

## Deductions
- **−1:** the final case $n = 1$ is not checked.
"""

# Broken on purpose: a chain over 7, another under 7, half-point main step, a cap of 9/7.
PB_BROKEN = r"""## Checkpoints
**Chain A**
- (4 pts) First half. [additive]
- (4 pts) Second half. [additive]

**Chain B**
- (2.5 pts) A half-point main step. [additive]
- (3 pts) The rest. [additive]

## Deductions
- Cap at 9/7: nonsense cap.
"""

# RefGrader, plain design (appendix D "Rubric Design (plain)"): main steps with integer points,
# half-point deductions for missing sub-steps, benchmark scores, the 0-point boundary.
RG_PLAIN = r"""# 7-Point Rubric

## Point Allocation

**Key Strategic Insight 1: Reduction to $n = k+1$ (1 point)**
- Full credit requires choosing any $k+1$ roots and noting the hypothesis passes to the divisor.
- 0.5 points if the reduction is stated without checking that the hypothesis is inherited.

**Key Strategic Insight 2: Pigeonhole on zero positions (2 points)**
- Sub-step 2.1: each $P_i$ has a zero interior coefficient.
- Sub-step 2.2: only $n-2$ interior positions exist, so two $P_i$ share one.
- Missing 2.2 costs 1 point; a vague count costs 0.5.

**Key Strategic Insight 3: Consecutive zero coefficients of $Q$ (2 points)**
- Compare coefficients of $(x + r_1)Q$ and $(x + r_2)Q$.

**Key Strategic Insight 4: Two consecutive zeros force a nonreal root (2 points)**
- Rolle's theorem on $F^{(t)}$, or Descartes' rule of signs.

## Benchmark Scores
- 7 points: all four insights complete.
- 6 or 6.5 points: a minor gap in insight 3 or 4.
- 5 or 5.5 points: insight 4 asserted without proof.

## 0 Points
- Restating the problem.
- Checking small examples without a general argument.
"""

# RefGrader, approachability design: the approachability score rides with each insight.
RG_APPROACHABILITY = r"""### Rubric (7 points)

1. **Key Strategic Insight 1** [Overall Approachability: 4] — Setting up $P_i = P/(x + r_i)$ (1 point).
   - Partial credit in 0.5 steps for an incomplete setup.
2. **Key Strategic Insight 2** [Overall Approachability: 2] — Pigeonhole argument (2 points).
3. **Key Strategic Insight 3** [Overall Approachability: 1] — Consecutive zeros lemma (4 points).
   - Full 4 points require the comparison of coefficients and the Rolle argument.
   - Only the comparison: 2 points; the comparison with a gap in Rolle: 3.5 points.

### Zero Points
- Restating the problem or testing $n = 2$ only.
"""

# RefGrader, milestone design: solution-agnostic milestones, final score rounded down.
RG_MILESTONES = r"""## Milestone-Based Rubric (7 points)

- **Milestone 1 (2 points):** Show that two of the quotients $P_i$ have a zero coefficient in the same position.
- **Milestone 2 (3 points):** Establish that some real-rooted polynomial has two consecutive zero coefficients.
- **Milestone 3 (2 points):** Prove that such a polynomial cannot have only real roots.

Partial credit within a milestone may be given in steps of 0.5; round down any fractional result to an integer final score.

## Benchmark Scores
- 7: all three milestones.
- 5: milestones 1 and 2 with a flawed milestone 3.

## Zero Points Criteria
- No meaningful progress toward any milestone.
"""

# A second reference-solution cluster's milestone rubric (for Scheme.from_chains).
RG_MILESTONES_B = r"""## Milestone-Based Rubric (7 points)

- **Milestone 1 (3 points):** Derive Newton's inequalities for the coefficients of $P$.
- **Milestone 2 (4 points):** Show that a zero interior coefficient contradicts them.

Round down any fractional result.

## Zero Points Criteria
- No meaningful progress toward any milestone.
- Stating Newton's inequalities without proof.
"""

# Gemini-style output: chains as bullets, "CPn (k pts):" labels, a [max 4] step whose nested
# alternatives say "award the larger only", a bulleted Total line, an italic rule line.
PB_BULLETED = r"""### Marking Scheme: USAMO 2025 Problem 4

#### 1. Checkpoints (max 7 pts total)

**Score exactly one chain | take the maximum subtotal among chains; do not add points across chains.**

*   **Chain A (Synthetic: spiral similarity)**
    *   **CP1 (1 pt):** Defines the point $X$ as the second intersection of circles $(ABH)$ and $(CDH)$. [additive]
    *   **CP2 (4 pts):** Proves that $X$ lies on line $BC$. [max 4]
        *   (4 pts) Full proof via spiral similarity centred at $X$.
        *   (2 pts) Proves the angle equality but not the concyclicity. (award the larger only)
    *   **CP3 (2 pts):** Concludes that $XH = XC$. [additive]
*   **Chain B (Complex numbers / coordinates)**
    *   (2 pts) Sets up coordinates with the circumcircle as the unit circle. [additive]
    *   (5 pts) Completes the computation and verifies the identity. [additive]
*   **Total (max 7)**: Chain A = 1 + 4 + 2 = 7; Chain B = 2 + 5 = 7.

#### 2. Zero-credit items
*   Drawing a diagram and conjecturing the result.
*   Stating the radical axis theorem without application.

#### 3. Deductions
*   **−1:** Minor computational error that does not affect the logic.
*   **Cap at 5/7:** Assumes the configuration (e.g., $H$ inside the triangle) without justification.
*   **Cap at 3/7:** Only the coordinate setup and partial computations.
*   *Apply only the single largest deduction.*
"""

# The shape our ProofBench prompt (llm/prompts proofbench_scheme) asks for: "[P pts] Title. What
# to show. [additive]", "award the larger only" as its own nested bullet, bracketed deductions
# "[-1]" / "[cap 5/7]" first, the best-proof and contradiction bullets, a shared group.
PB_PROMPT_SHAPE = r"""## 1. Checkpoints (max 7 pts total)

**Score exactly one chain: take the maximum subtotal among chains; do not add points across chains.**

**Shared prerequisites** [max 1] (count at most once regardless of chain)
- [1 pt] Setup. Writes $P_i(x) = P(x)/(x + r_i)$ and notes its leading and constant coefficients are nonzero. [additive]

**Chain A (idea: pigeonhole, then Rolle)**
- [2 pts] Pigeonhole. Two of the $P_i$ have a zero coefficient in the same inner position. [additive]
- [2 pts] Consecutive zeros. From the shared position, $b_m = b_{m-1} = 0$ for $Q$. [additive]
- Lemma. Two consecutive zero coefficients forbid $n$ distinct real roots. [max 2]
  - [2 pts] A complete proof (Rolle, or Descartes' rule of signs).
  - [1 pt] The right idea, e.g. a double root at $0$, with a gap.
  - award the larger only

**Chain B (idea: Newton's inequalities)**
- [6 pts] Newton. Newton's inequalities forbid a zero inner coefficient of a real-rooted polynomial with $P(0) \neq 0$. [additive] (all or nothing)

**Total (max 7)**: Shared 1 + Chain A (2 + 2 + 2) = 7; Shared 1 + Chain B 6 = 7.

## 2. Zero-credit items
- Restating the problem, or noting that every root is nonzero.
- Checking $n = 2$ or $n = 3$ without a general argument.

## 3. Deductions
Only the single largest deduction applies, and a score never goes below 0.
- [cap 5/7] The lemma is used without proof.
- [-1] Not using that the roots are distinct.
- Several different proofs: graded on the best one only; credit never stacks.
- [cap 5/7] The proof asserts contradictory claims.
"""

# The shape our RefGrader rubric prompts ask for: ProofBench's sections with one chain,
# "(partial credit in steps of 0.5)", "Partial:" sub-bullets, "- None." deductions, notes.
RG_PROMPT_SHAPE = r"""## 1. Checkpoints (max 7 pts total)

**Score exactly one chain: take the maximum subtotal among chains; do not add points across chains.**
**The final score is rounded down to a whole number.**

**Chain A (idea: pigeonhole then Rolle)**

- [3 pts] Reduction and pigeonhole. Reduce to $n=k+1$ and find two $P_i$ sharing a zero coefficient. [additive] (partial credit in steps of 0.5)
  - Partial: 1.5 pts for the reduction alone.
- [4 pts] Consecutive zeros and the lemma. Show $b_m = b_{m-1} = 0$ and that this forbids distinct real roots. [additive] (partial credit in steps of 0.5)
  - Partial: 2 pts for the consecutive zeros without the lemma; 3.5 pts if the lemma's proof has a small gap.

**Total (max 7)**: 3 + 4 = 7

## 2. Zero-credit items

- Restating the problem.

## 3. Deductions

- None.

## 4. Notes

A 7 completes both steps; a 5 misses the lemma's proof.
"""


EXAMPLES = [
    # (text, format, chain totals, errors)
    (PB_COMPACT, "proofbench_markdown", {"A": "7"}, 0),
    (PB_CHAINS, "proofbench_markdown", {"A": "7", "B": "7"}, 0),
    (PB_VARIANT, "proofbench_markdown", {"A": "7", "B": "7"}, 0),
    (PB_SINGLE, "proofbench_markdown", {"A": "7"}, 0),
    (PB_BROKEN, "proofbench_markdown", {"A": "8", "B": "5.5"}, 4),
    (PB_BULLETED, "proofbench_markdown", {"A": "7", "B": "7"}, 0),
    (PB_PROMPT_SHAPE, "proofbench_markdown", {"A": "7", "B": "7"}, 0),
    (RG_PLAIN, "refgrader_plain", {"A": "7"}, 0),
    (RG_APPROACHABILITY, "refgrader_approachability", {"A": "7"}, 0),
    (RG_MILESTONES, "refgrader_milestones", {"A": "7"}, 0),
    (RG_MILESTONES_B, "refgrader_milestones", {"A": "7"}, 0),
    (RG_PROMPT_SHAPE, "refgrader_hybrid", {"A": "7"}, 0),
]


def test_every_example_reads_as_intended():
    for text, fmt, totals, errors in EXAMPLES:
        result = parse_scheme(text, fmt)
        got = {key: format_points(value) for key, value in result.scheme.chain_totals().items()}
        assert got == totals, text[:40]
        assert sum(m.is_error for m in result.messages) == errors, text[:40]
