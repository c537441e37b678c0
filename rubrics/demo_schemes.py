r"""Marking schemes of the demo problems, in ProofBench's three-section Markdown, written for
Proofmark (not taken from any dataset). Keyed by the problem's external id."""

ALGEBRA_CYCLIC = r"""## Checkpoints (max 7 pts total)

**Chain A (substitution and AM-GM)** [additive]
- (3 pts) **Product one**: sets $x=\frac ab$, $y=\frac bc$, $z=\frac ca$ (or equivalent), notes they are positive and that $xyz=1$. [additive]
- **AM-GM step** [max 3]
  - (3 pts) Applies AM-GM (or power mean, or rearrangement) to three positive numbers with product $1$ and concludes $x+y+z\ge 3$. Award the larger only.
  - (1 pt) Reaches the inequality through a minimisation whose global minimum is asserted, not proved.
- (1 pt) **Equality**: equality exactly when $a=b=c$, with both directions checked. [additive]

**Total (max 7):** Chain A: 3 + 3 + 1 = 7.

## Zero-credit items
- Checking the inequality for particular values of the variables.
- Claiming that the expression is symmetric, or that its extremum is where the variables are equal, without proof.

## Deductions
- **Cap at 5/7:** the equality case is stated without any argument.
- **−1:** a computational slip that does not affect the argument.
"""

ALGEBRA_FUNCTIONAL = r"""## Checkpoints (max 7 pts total)

**Chain A (substitute and eliminate)** [additive]
- (2 pts) **Second equation**: replaces $x$ by $1-x$ to get $f(1-x)+2f(x)=(1-x)^2$. [additive]
- (2 pts) **Elimination**: solves the two linear equations for $f(x)$, obtaining $f(x)=\frac{x^2-4x+2}{3}$, with no assumption on the form of $f$. [additive]
- (2 pts) **Verification**: checks that this function satisfies the equation for every real $x$. [additive]
- (1 pt) **Conclusion**: states that it is the unique solution. [additive]

**Total (max 7):** Chain A: 2 + 2 + 2 + 1 = 7.

## Zero-credit items
- Guessing the function from a few of its values.
- Stating the answer without derivation.

## Deductions
- **Cap at 4/7:** assumes without proof that the function is a polynomial (or quadratic).
- **−1:** arithmetic error in the verification that is corrected or harmless.
"""

COMBINATORICS_COPRIME = r"""## Checkpoints (max 7 pts total)

**Chain A (pairs of consecutive numbers)** [additive]
- (2 pts) **Pairs**: partitions $\{1,\dots,2n\}$ into the $n$ pairs $\{2k-1,2k\}$. [additive]
- (2 pts) **Pigeonhole**: with $n+1$ numbers chosen, two fall in the same pair, hence are consecutive. [additive]
- (3 pts) **Coprime**: proves that consecutive integers are coprime (a common divisor divides their difference $1$). [additive]

**Total (max 7):** Chain A: 2 + 2 + 3 = 7.

## Zero-credit items
- Verifying the claim for small cases only.
- Asserting that "some two numbers must be close" without a counting argument.

## Deductions
- **Cap at 5/7:** the coprimality of consecutive integers is asserted without a reason.
"""

COMBINATORICS_PARTY = r"""## Checkpoints (max 7 pts total)

**Chain A (fix one person)** [additive]
- (2 pts) **Pigeonhole at one person**: of the five others, at least three are friends or at least three are strangers of a fixed person. [additive]
- (4 pts) **Finding the triple** [max 4]
  - (2 pts) Among the three friends, two friends give a friendly triple with the fixed person. [additive]
  - (2 pts) Otherwise the three are pairwise strangers. [additive]
- (1 pt) **Both cases**: the case of three strangers is treated, or symmetry is invoked explicitly. [additive]

**Total (max 7):** Chain A: 2 + 4 + 1 = 7.

## Zero-credit items
- Drawing one pattern of friendships and pointing at a triple.
- Quoting Ramsey's theorem without proof.

## Deductions
- **Cap at 6/7:** only one of the two cases is treated and symmetry is not mentioned.
"""

GEOMETRY_BISECTOR = r"""## Checkpoints (max 7 pts total)

**Chain A (inscribed angles and chords)** [additive]
- (3 pts) **Equal arcs**: from $\angle BAM=\angle MAC$ deduces that the arcs $MB$ and $MC$ (not containing $A$) are equal. [additive]
- (3 pts) **Equal chords**: equal arcs give equal chords, so $MB=MC$. [additive]
- (1 pt) **Configuration**: justifies that $M$ lies on the arc $BC$ not containing $A$. [additive]

**Chain B (extended law of sines)** [additive]
- (3 pts) **Chord lengths**: writes $MB=2R\sin\angle BAM$ and $MC=2R\sin\angle MAC$. [additive]
- (4 pts) **Conclusion**: the bisector gives equal angles, hence $MB=MC$. [additive]

**Total (max 7):** Chain A: 3 + 3 + 1 = 7; Chain B: 3 + 4 = 7.

## Zero-credit items
- A figure with measured lengths.
- Stating without reason that the bisector meets the circle at the midpoint of an arc.

## Deductions
- **−1:** a configuration fact used without justification.
- **Cap at 3/7:** the argument assumes that the triangle is isosceles.
"""

NUMBER_THEORY_FIFTH = r"""## Checkpoints (max 7 pts total)

**Shared prerequisites** [max 1]
- (1 pt) **Reduction**: notes that $30=2\cdot3\cdot5$ with pairwise coprime factors, so divisibility by each prime suffices. [additive]

**Chain A (factorisation)** [additive]
- (2 pts) **Two and three**: factors $n^5-n=(n-1)n(n+1)(n^2+1)$ and uses three consecutive integers for $2$ and $3$. [additive]
- **Five** [max 4]
  - (4 pts) Treats every residue class modulo $5$, including $n\equiv2,3$ through $n^2+1$. Award the larger only.
  - (2 pts) Treats some residue classes modulo $5$ but misses at least one.

**Chain B (Fermat's little theorem)** [additive]
- (6 pts) **Fermat**: applies Fermat's little theorem for $p=2,3,5$ (so $n^p\equiv n$, hence $n^5\equiv n$ modulo each). [additive]

**Total (max 7):** Chain A: 1 + 2 + 4 = 7; Chain B: 1 + 6 = 7.

## Zero-credit items
- Checking the first few values numerically.
- Stating Fermat's little theorem without applying it.

## Deductions
- **−1:** a residue computed wrongly but not used.
"""

DEMO_SCHEMES = {
    "DEMO-2024-A1": ALGEBRA_CYCLIC,
    "DEMO-2025-A2": ALGEBRA_FUNCTIONAL,
    "DEMO-2024-C1": COMBINATORICS_COPRIME,
    "DEMO-2025-C2": COMBINATORICS_PARTY,
    "DEMO-2024-G1": GEOMETRY_BISECTOR,
    "DEMO-2025-N1": NUMBER_THEORY_FIFTH,
}

# The draft that follows the approved version of one problem (shows history and the diff):
# the reviewer asks for half points on the coprimality step.
COPRIME_EDIT = (
    "DEMO-2024-C1",
    COMBINATORICS_COPRIME.replace(
        "- Asserting that",
        "- Listing the pairs without saying why two chosen numbers share one.\n- Asserting that",
    ).replace(
        "(a common divisor divides their difference $1$). [additive]",
        "(a common divisor divides their difference $1$); partial credit in steps of 0.5. "
        "[additive]",
    ),
)
