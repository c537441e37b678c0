r"""Demo problems in geometry and number theory, written for Proofmark (not taken from any dataset).

Same shape as problems.demo.algebra_combinatorics: a reference solution and three proofs of
different quality per problem, each with an expert rating and a verifier analysis.
"""

from problems.demo.text import analysis

GEOMETRY_ARC_MIDPOINT = {
    "external_id": "DEMO-2024-G1",
    "contest": "Demo Olympiad",
    "year": 2024,
    "number": "3",
    "topic": "G",
    "statement": r"""Let $ABC$ be a triangle with circumcircle $\omega$. The bisector of angle $BAC$ meets
$\omega$ again at $M$. Prove that $MB = MC$.""",
    "final_answer": "",
    "guidelines": r"""- 3 points: relate $\angle BAM = \angle MAC$ to arcs or chords of $\omega$.
- 3 points: conclude $MB = MC$ (equal chords, isosceles triangle, or the law of sines).
- 1 point: any configuration fact used (e.g. which arc $M$ lies on) is justified.""",
    "solution": r"""Let $R$ be the radius of $\omega$. In a circle of radius $R$, a chord that subtends an
inscribed angle $\varphi$ has length $2R\sin\varphi$ (extended law of sines). The chord $MB$
subtends the inscribed angle $\angle BAM$ at $A$, and the chord $MC$ subtends $\angle MAC$ at
$A$. These angles are equal because $AM$ bisects angle $BAC$, so
$$MB = 2R\sin\angle BAM = 2R\sin\angle MAC = MC .$$""",
    "proofs": [
        {
            "generator": "demo-model-gamma",
            "quality": "correct",
            "rating": 7,
            "text": r"""Let $R$ be the circumradius and write $\alpha = \angle BAC$, so that
$\angle BAM = \angle MAC = \tfrac{\alpha}{2}$.

Apply the extended law of sines in triangle $ABM$, which is inscribed in $\omega$:
\[ \frac{MB}{\sin\angle BAM} = 2R, \qquad\text{so}\qquad MB = 2R\sin\tfrac{\alpha}{2}. \]
Likewise in triangle $ACM$, also inscribed in $\omega$:
\[ \frac{MC}{\sin\angle MAC} = 2R, \qquad\text{so}\qquad MC = 2R\sin\tfrac{\alpha}{2}. \]
Hence $MB = MC$. This uses only that $A$, $B$, $C$, $M$ lie on $\omega$ and that $AM$ bisects
the angle at $A$, so no case distinction on the position of $M$ is needed.""",
            "verdict": "1",
            "analysis": r"""The solution applies the extended law of sines in triangles $ABM$ and $ACM$, both
inscribed in $\omega$, to the sides opposite the equal angles at $A$.

- In triangle $ABM$ the side opposite $\angle BAM$ is $MB$, and the circumradius is $R$:
  correct.
- Likewise for $MC$ in triangle $ACM$.
- Equal angles give equal chords. The remark that no configuration argument is needed is
  accurate, since the law of sines holds in any inscribed triangle.

The proof is correct and complete.""",
        },
        {
            "generator": "demo-model-alpha",
            "quality": "gap",
            "rating": 5,
            "text": r"""Angles subtending the same arc are equal, so
$$\angle MBC = \angle MAC \quad\text{and}\quad \angle MCB = \angle MAB .$$
Since $AM$ bisects angle $A$, $\angle MAB = \angle MAC$, hence $\angle MBC = \angle MCB$.
Therefore triangle $MBC$ is isosceles with $MB = MC$.""",
            "verdict": "0.5",
            "analysis": r"""The solution uses inscribed angles on arcs $MC$ and $MB$ to show
$\angle MBC=\angle MCB$.

**Gap.** The equalities $\angle MBC = \angle MAC$ and $\angle MCB = \angle MAB$ hold only when
$A$ and $B$ (respectively $A$ and $C$) lie on the same side of the chord $MC$ (respectively
$MB$), that is, when $M$ lies on the arc $BC$ not containing $A$. This is true, because the
internal bisector from $A$ crosses segment $BC$ before meeting $\omega$ again, but the solution
does not state or justify it. If $M$ were on the other arc, the inscribed angles would be
supplementary rather than equal.

**The rest** (bisector gives $\angle MAB=\angle MAC$, base angles give $MB=MC$) is correct.

The argument is the standard one, but a configuration fact it depends on is left unproved.""",
        },
        {
            "generator": "demo-model-beta",
            "quality": "wrong",
            "rating": 0,
            "text": r"""Consider triangles $ABM$ and $ACM$. They share the side $AM$, and
$\angle BAM = \angle CAM$ since $AM$ is the angle bisector. Also $AB = AC$. By SAS the two
triangles are congruent, so $MB = MC$.""",
            "verdict": "0",
            "analysis": r"""The solution claims triangles $ABM$ and $ACM$ are congruent by SAS.

**Critical error.** The equality $AB = AC$ is not given: triangle $ABC$ is arbitrary. Without
it the SAS criterion does not apply, and indeed triangles $ABM$ and $ACM$ are not congruent
in general (they have different sides $AB \neq AC$).

Nothing else in the solution proves $MB=MC$. The argument is valid only for isosceles
triangles, which is a special case of the problem.""",
        },
    ],
}

NUMBER_THEORY_FIFTH_POWERS = {
    "external_id": "DEMO-2025-N1",
    "contest": "Demo Team Contest",
    "year": 2025,
    "number": "4",
    "topic": "N",
    "statement": r"""Prove that $n^5 - n$ is divisible by $30$ for every integer $n$.""",
    "final_answer": "",
    "guidelines": r"""- 2 points: divisibility by $2$ and by $3$.
- 4 points: divisibility by $5$, with every residue class treated.
- 1 point: combining the three (they are pairwise coprime).""",
    "solution": r"""Factor $n^5-n = (n-1)\,n\,(n+1)\,(n^2+1)$. The product $(n-1)n(n+1)$ of three
consecutive integers is divisible by $2$ and by $3$. For $5$: if $n\equiv 0,1,4 \pmod 5$ one of
$n$, $n-1$, $n+1$ is divisible by $5$; if $n\equiv 2$ or $3\pmod 5$ then
$n^2+1\equiv 4+1\equiv 0\pmod 5$. Since $2$, $3$, $5$ are pairwise coprime, $30 \mid n^5-n$.""",
    "proofs": [
        {
            "generator": "demo-model-beta",
            "quality": "correct",
            "rating": 7,
            "text": r"""Since $30 = 2\cdot3\cdot5$ with pairwise coprime factors, it suffices to show that
$2$, $3$ and $5$ each divide $n^5-n$.

By Fermat's little theorem, for a prime $p$ and any integer $n$ we have $n^p \equiv n \pmod p$.

* $p=5$: directly, $n^5 \equiv n \pmod 5$.
* $p=3$: $n^3\equiv n$, hence $n^5 = n^3\cdot n^2 \equiv n\cdot n^2 = n^3 \equiv n \pmod 3$.
* $p=2$: $n^2\equiv n$, hence $n^5 = (n^2)^2\cdot n \equiv n^2\cdot n = n^3 = n^2\cdot n \equiv n\cdot n = n^2 \equiv n \pmod 2$.

Thus $2$, $3$, $5$ all divide $n^5-n$, and so does their product $30$.""",
            "verdict": "1",
            "analysis": r"""The solution reduces to the primes $2,3,5$ and uses Fermat's little theorem in the
form $n^p\equiv n\pmod p$, valid for all integers $n$.

- Mod $5$: immediate. Correct.
- Mod $3$: $n^5=n^3n^2\equiv n^3\equiv n$. Correct.
- Mod $2$: the chain of reductions is correct, if longer than needed.
- Combining: pairwise coprime factors, so their product divides. Stated.

The proof is correct and complete.""",
        },
        {
            "generator": "demo-model-gamma",
            "quality": "gap",
            "rating": 5,
            "text": r"""We have $n^5-n = n(n^4-1) = (n-1)n(n+1)(n^2+1)$.

**Divisibility by 6.** Among the three consecutive integers $n-1$, $n$, $n+1$ one is even and one
is a multiple of $3$, so $6 \mid n^5-n$.

**Divisibility by 5.** We check residues modulo $5$:

| $n \bmod 5$ | factor divisible by $5$ |
|---|---|
| $0$ | $n$ |
| $1$ | $n-1$ |
| $4$ | $n+1$ |
| $2$ | $n^2+1 = 5$ (mod $5$: $4+1$) |

This covers all cases, so $5 \mid n^5-n$, and with $\gcd(5,6)=1$ we get $30 \mid n^5-n$.""",
            "verdict": "0.5",
            "analysis": r"""The solution factors $n^5-n=(n-1)n(n+1)(n^2+1)$, gets $6$ from three consecutive
integers, and checks residues modulo $5$ in a table.

**Gap.** The table lists the residues $0,1,4,2$ and then claims "this covers all cases", but
the residue $n\equiv 3 \pmod 5$ is missing. The missing case does hold ($3^2+1=10\equiv0$), yet
the solution neither treats it nor invokes a symmetry such as $n\mapsto -n$ that would reduce
it to $n\equiv2$.

**The rest** is correct: the factorisation, divisibility by $6$, and the combination using
$\gcd(5,6)=1$.

One of the five residue classes is silently skipped, so the proof of divisibility by $5$ is
incomplete.""",
        },
        {
            "generator": "demo-model-alpha",
            "quality": "wrong",
            "rating": 0,
            "text": r"""We use induction on $n$. For $n=1,2,3,4$ the values $0, 30, 240, 1020$ are all multiples
of $30$.

Assume $30 \mid k^5-k$. By the binomial theorem,
$$(k+1)^5-(k+1) = (k^5-k) + 5k^4+10k^3+10k^2+5k .$$
The added term $5k^4+10k^3+10k^2+5k = 5k(k^3+2k^2+2k+1)$ is a multiple of $5$, hence the whole
expression is a multiple of $30$. This completes the induction, and the claim holds for every
integer $n$.""",
            "verdict": "0",
            "analysis": r"""The solution proceeds by induction on $n$.

**Critical error in the inductive step.** From $30\mid k^5-k$ and $5 \mid 5k^4+10k^3+10k^2+5k$
it concludes $30 \mid (k+1)^5-(k+1)$. This does not follow: adding a multiple of $5$ to a
multiple of $30$ gives a multiple of $5$, not necessarily of $30$. The solution would need the
added term to be divisible by $30$ (it is, since
$5k^4+10k^3+10k^2+5k=5k(k+1)(k^2+k+1)$ and $k(k+1)(k^2+k+1)$ is divisible by $6$), but it proves
nothing of the kind.

**Scope.** Induction from $n=1$ covers positive integers only, yet the solution claims every
integer; $n\le 0$ is never treated.

The key step is invalid, so the proof fails.""",
        },
    ],
}

PROBLEMS = [GEOMETRY_ARC_MIDPOINT, NUMBER_THEORY_FIFTH_POWERS]

for _problem in PROBLEMS:
    for _proof in _problem["proofs"]:
        _proof["analysis"] = analysis(_proof["analysis"], _proof["verdict"])
