r"""Demo problems in algebra and combinatorics, written for Proofmark (not taken from any dataset).

Each problem has a reference solution and three proofs: one correct, one with a subtle gap and
one wrong, each with an expert rating (0-7) and a verifier analysis that keeps DeepSeekMath-V2's
output contract.
"""

from problems.demo.text import analysis

ALGEBRA_CYCLIC = {
    "external_id": "DEMO-2024-A1",
    "contest": "Demo Olympiad",
    "year": 2024,
    "number": "1",
    "topic": "A",
    "statement": r"""Let $a$, $b$, $c$ be positive real numbers. Prove that
$$\frac{a}{b} + \frac{b}{c} + \frac{c}{a} \ge 3,$$
and determine when equality holds.""",
    "final_answer": r"Equality holds exactly when $a = b = c$.",
    "guidelines": r"""- 3 points: reduce to three positive numbers with product $1$.
- 3 points: apply AM-GM (or an equivalent inequality) correctly.
- 1 point: the equality case $a=b=c$, in both directions.""",
    "solution": r"""The three numbers $\frac ab$, $\frac bc$, $\frac ca$ are positive and their product is
$\frac ab\cdot\frac bc\cdot\frac ca = 1$. By the inequality between the arithmetic and geometric
means,
$$\frac{a}{b} + \frac{b}{c} + \frac{c}{a} \ge 3\sqrt[3]{\frac ab\cdot\frac bc\cdot\frac ca} = 3.$$
Equality in AM-GM holds exactly when the three numbers are equal; since their product is $1$,
each is then $1$, so $a=b$ and $b=c$. Conversely $a=b=c$ gives $1+1+1=3$. $\blacksquare$""",
    "proofs": [
        {
            "generator": "demo-model-alpha",
            "quality": "correct",
            "rating": 7,
            "text": r"""**Step 1 (product one).** Put \(x = \frac ab\), \(y = \frac bc\), \(z = \frac ca\).
All three are positive, and
\[
xyz = \frac{a}{b}\cdot\frac{b}{c}\cdot\frac{c}{a} = 1 .
\]

**Step 2 (AM-GM).** For positive reals the arithmetic mean is at least the geometric mean:
\[
\frac{x+y+z}{3} \ge \sqrt[3]{xyz} = 1 ,
\]
hence \(x+y+z \ge 3\), which is the claim.

**Step 3 (equality).** AM-GM is an equality if and only if \(x=y=z\). Together with
\(xyz=1\) this forces \(x=y=z=1\), i.e. \(a=b\) and \(b=c\). Conversely, if \(a=b=c\) the sum
is \(1+1+1=3\). So equality holds exactly when \(a=b=c\).""",
            "verdict": "1",
            "analysis": r"""The solution sets $x=a/b$, $y=b/c$, $z=c/a$, observes $xyz=1$, and applies AM-GM to
get $x+y+z\ge 3$. It then treats the equality case in both directions.

**Step 1.** The substitution is valid: all three quantities are positive because $a,b,c>0$,
and the product telescopes to $1$. Correct.

**Step 2.** AM-GM for three positive reals is applied with the right exponent:
$\frac{x+y+z}{3}\ge\sqrt[3]{xyz}$. Correct.

**Step 3.** The solution uses that AM-GM is tight exactly when all terms are equal, deduces
$x=y=z=1$ from $xyz=1$, translates back to $a=b=c$, and checks the converse. Complete.

I found no errors and no gaps. The argument is complete and rigorous.""",
        },
        {
            "generator": "demo-model-beta",
            "quality": "gap",
            "rating": 5,
            "text": r"""Write $x=\frac ab$ and $y=\frac bc$, so that $\frac ca=\frac1{xy}$ and we must show
$$x+y+\frac{1}{xy}\ge 3 .$$
By AM-GM on two terms, $x+y\ge 2\sqrt{xy}$. Put $t=\sqrt{xy}>0$; then
$$x+y+\frac1{xy}\ \ge\ 2t+\frac1{t^2} =: f(t).$$
We have $f'(t) = 2-\frac{2}{t^3}$, which vanishes only at $t=1$. Hence the minimum of $f$ is
$f(1)=2+1=3$, and therefore $\frac ab+\frac bc+\frac ca\ge 3$.

Equality needs $x=y$ and $t=1$, so $x=y=1$, that is $a=b=c$.""",
            "verdict": "0.5",
            "analysis": r"""The solution reduces the inequality to $x+y+\frac1{xy}\ge3$, bounds $x+y$ by
$2\sqrt{xy}$, and minimises $f(t)=2t+t^{-2}$ over $t>0$.

**The reduction and the two-term AM-GM** are correct.

**The minimisation has a gap.** The solution says that because $f'(t)$ vanishes only at $t=1$,
"the minimum of $f$ is $f(1)$". A unique critical point is not by itself a global minimum on
$(0,\infty)$: one must also check the sign of $f'$ (negative on $(0,1)$, positive on
$(1,\infty)$), or the second derivative $f''(t)=6t^{-4}>0$, or the behaviour as $t\to0^+$ and
$t\to\infty$. None of this is stated. The claim is true and easy to repair, but as written the
key inequality $f(t)\ge3$ is asserted rather than proved.

**Equality case.** Stated only in one direction, and it relies on the unproved minimum.

The overall approach is sound, but the central step is justified only by the location of the
critical point, so the proof is incomplete.""",
        },
        {
            "generator": "demo-model-gamma",
            "quality": "wrong",
            "rating": 0,
            "text": r"""The expression $E=\frac ab+\frac bc+\frac ca$ is symmetric in $a,b,c$. A symmetric
expression attains its extreme values when all the variables are equal. At $a=b=c$ we get
$E=3$, so the minimum of $E$ is $3$ and therefore $E\ge3$ for all positive $a,b,c$, with equality
only at $a=b=c$.""",
            "verdict": "0",
            "analysis": r"""The solution claims that $E$ is symmetric and that symmetric expressions are
extremal when all variables are equal.

**First error.** $E$ is cyclic, not symmetric: swapping $a$ and $b$ gives
$\frac ba+\frac ac+\frac cb$, which differs from $E$ in general (e.g. $a=1,b=2,c=4$ gives
$\frac12+\frac12+4=5$ against $2+\frac14+2=4.25$).

**Second error.** Even for symmetric expressions, "the extremum is attained when all variables
are equal" is false in general; it is a heuristic, not a theorem. The solution gives no
argument that $E\ge 3$ anywhere except at $a=b=c$.

The proof establishes only the value at one point and contains no valid argument for the
inequality.""",
        },
    ],
}

ALGEBRA_FUNCTIONAL = {
    "external_id": "DEMO-2025-A2",
    "contest": "Demo Team Contest",
    "year": 2025,
    "number": "2",
    "topic": "A",
    "statement": r"""Find all functions $f:\mathbb{R}\to\mathbb{R}$ such that
$$f(x) + 2f(1-x) = x^2 \quad\text{for all real } x.$$""",
    "final_answer": r"$f(x) = \dfrac{x^2-4x+2}{3}$",
    "guidelines": r"""- 4 points: derive $f(x)=\frac{x^2-4x+2}{3}$ from the equation (no assumption on $f$).
- 2 points: verify that this function satisfies the equation.
- Assuming $f$ is a polynomial without proof earns at most 4 points.""",
    "solution": r"""Substituting $1-x$ for $x$ gives $f(1-x)+2f(x)=(1-x)^2$. Subtracting the original
equation from twice this one eliminates $f(1-x)$:
\begin{align*}
3f(x) &= 2(1-x)^2 - x^2 = x^2 - 4x + 2.
\end{align*}
So any solution is $f(x)=\frac{x^2-4x+2}{3}$. Conversely, for this $f$,
$f(1-x)=\frac{x^2+2x-1}{3}$ and $f(x)+2f(1-x)=\frac{x^2-4x+2+2x^2+4x-2}{3}=x^2$.
So this is the unique solution.""",
    "proofs": [
        {
            "generator": "demo-model-gamma",
            "quality": "correct",
            "rating": 7,
            "text": r"""Let $f$ be any solution. Replacing $x$ by $1-x$ (allowed, since the equation holds
for every real number) gives

$$f(1-x) + 2f(x) = (1-x)^2. \tag{2}$$

Multiply (2) by $2$ and subtract the original equation (1):
\begin{align*}
4f(x) + 2f(1-x) - f(x) - 2f(1-x) &= 2(1-x)^2 - x^2 \\
3f(x) &= x^2 - 4x + 2 .
\end{align*}
Hence necessarily $f(x) = \frac{x^2-4x+2}{3}$ for every $x$.

*Check.* For this $f$ we have $f(1-x) = \frac{(1-x)^2 - 4(1-x) + 2}{3} = \frac{x^2+2x-1}{3}$, so
$$f(x) + 2f(1-x) = \frac{(x^2-4x+2) + (2x^2+4x-2)}{3} = x^2 .$$
Therefore the unique solution is $f(x)=\dfrac{x^2-4x+2}{3}$.""",
            "verdict": "1",
            "analysis": r"""The solution substitutes $x\mapsto 1-x$, eliminates $f(1-x)$ to obtain
$3f(x)=x^2-4x+2$, and verifies the candidate.

**Derivation.** The substitution is legitimate for every real $x$. The linear combination
$2\cdot(2)-(1)$ is computed correctly: $2(1-x)^2-x^2 = x^2-4x+2$. This shows any solution must
equal the candidate, with no extra assumption on $f$.

**Verification.** $f(1-x)=\frac{x^2+2x-1}{3}$ is correct, and the sum simplifies to $x^2$.

The answer is correct and both necessity and sufficiency are proved. No issues found.""",
        },
        {
            "generator": "demo-model-alpha",
            "quality": "gap",
            "rating": 4,
            "text": r"""Since the right-hand side is a quadratic polynomial, $f$ must be a polynomial of
degree $2$; write $f(x)=ax^2+bx+c$. Then
\[
f(x)+2f(1-x) = ax^2+bx+c + 2\bigl(a(1-x)^2+b(1-x)+c\bigr) = 3ax^2 - (4a+b)x + (2a+2b+3c).
\]
Comparing coefficients with $x^2$:
\begin{itemize}
\item $3a = 1$, so $a=\frac13$;
\item $4a+b=0$, so $b=-\frac43$;
\item $2a+2b+3c=0$, so $c=\frac23$.
\end{itemize}
Hence $f(x)=\frac{x^2-4x+2}{3}$, which indeed satisfies the equation.""",
            "verdict": "0.5",
            "analysis": r"""The solution assumes $f$ is a quadratic polynomial, matches coefficients, and arrives
at $f(x)=\frac{x^2-4x+2}{3}$.

**Unjustified assumption.** The opening sentence, "since the right-hand side is a quadratic
polynomial, $f$ must be a polynomial of degree $2$", is not proved and does not follow from the
equation as stated; nothing excludes a priori a non-polynomial solution. The answer happens to
be the unique solution, but uniqueness is exactly what this assumption skips. The standard
substitution $x\mapsto1-x$ would have proved it.

**The computation** under that assumption is right: $a=\frac13$, $b=-\frac43$, $c=\frac23$, and
the final function does satisfy the equation.

The final answer is correct and verified, but the proof that no other function works is missing.""",
        },
        {
            "generator": "demo-model-beta",
            "quality": "wrong",
            "rating": 0,
            "text": r"""Put $x\to1-x$: $f(1-x)+2f(x)=(1-x)^2$. Subtracting twice the original equation from
this one,
$$f(1-x)+2f(x)-2f(x)-4f(1-x) = (1-x)^2-2x^2,$$
so $-3f(1-x) = 1-2x-x^2$ and $f(1-x)=\frac{x^2+2x-1}{3}$. Replacing $1-x$ by $x$,
$f(x)=\frac{(1-x)^2+2(1-x)-1}{3}=\frac{x^2-4x+2}{3}\cdot(-1)$, so
$$f(x)=\frac{-x^2+4x-2}{3}.$$
This is the only solution.""",
            "verdict": "0",
            "analysis": r"""The solution eliminates $f(x)$ instead of $f(1-x)$, which is a valid plan, but the
algebra then goes wrong.

**The elimination is fine**: $-3f(1-x)=(1-x)^2-2x^2=1-2x-x^2$ gives
$f(1-x)=\frac{x^2+2x-1}{3}$. So far correct.

**Error in the back-substitution.** Replacing $1-x$ by $x$ means replacing $x$ by $1-x$ in
$\frac{x^2+2x-1}{3}$, which gives $\frac{(1-x)^2+2(1-x)-1}{3}=\frac{x^2-4x+2}{3}$. The solution
multiplies this by $-1$ for no reason and concludes $f(x)=\frac{-x^2+4x-2}{3}$.

**The final answer is false**: for $f(x)=\frac{-x^2+4x-2}{3}$ we get $f(0)+2f(1)=-\frac23+\frac23=0$,
which is $0^2$, but $f(1)+2f(0)=\frac13-\frac43=-1\ne1$. No verification was attempted.

The claimed answer does not satisfy the equation.""",
        },
    ],
}

COMBINATORICS_COPRIME = {
    "external_id": "DEMO-2024-C1",
    "contest": "Demo Olympiad",
    "year": 2024,
    "number": "2",
    "topic": "C",
    "statement": r"""Let $n$ be a positive integer. Prove that among any $n+1$ distinct numbers chosen from
$\{1,2,\dots,2n\}$ there are two that are coprime.""",
    "final_answer": "",
    "guidelines": r"""- 4 points: the pigeonhole argument giving two consecutive chosen numbers.
- 3 points: consecutive integers are coprime, with a reason.""",
    "solution": r"""Split $\{1,\dots,2n\}$ into the $n$ pairs $\{1,2\},\{3,4\},\dots,\{2n-1,2n\}$. Since
$n+1$ numbers are chosen, by the pigeonhole principle two of them lie in the same pair, so they
are consecutive integers $k$ and $k+1$. Any common divisor of $k$ and $k+1$ divides
$(k+1)-k=1$, so $\gcd(k,k+1)=1$.""",
    "proofs": [
        {
            "generator": "demo-model-beta",
            "quality": "correct",
            "rating": 7,
            "text": r"""Consider the $n$ boxes
$$B_i=\{2i-1,\,2i\}\qquad (i=1,\dots,n),$$
which partition $\{1,2,\dots,2n\}$. We place each chosen number into its box. There are $n+1$
numbers and only $n$ boxes, so by the pigeonhole principle some box $B_i$ receives two chosen
numbers, which must be $2i-1$ and $2i$.

If $d$ divides both $2i-1$ and $2i$, then $d$ divides their difference $1$, so $d=1$. Hence
$\gcd(2i-1,2i)=1$: these two chosen numbers are coprime. $\blacksquare$""",
            "verdict": "1",
            "analysis": r"""The solution partitions $\{1,\dots,2n\}$ into $n$ pairs of consecutive integers,
applies pigeonhole to $n+1$ chosen numbers, and shows consecutive integers are coprime.

- The boxes $B_i$ do partition the set, and there are exactly $n$ of them.
- Pigeonhole is applied correctly; two distinct numbers in one box must be its two elements.
- The coprimality argument (a common divisor divides the difference $1$) is complete.

The proof is correct and complete.""",
        },
        {
            "generator": "demo-model-gamma",
            "quality": "gap",
            "rating": 5,
            "text": r"""We choose $n+1$ of the $2n$ numbers, that is, more than half of them. When more than
half of the numbers $1,2,\dots,2n$ are chosen, two of the chosen numbers must be consecutive.
Let them be $k$ and $k+1$.

Now $\gcd(k,k+1)$ divides $(k+1)-k=1$, so $\gcd(k,k+1)=1$ and $k$, $k+1$ are coprime.""",
            "verdict": "0.5",
            "analysis": r"""The solution argues that choosing more than half of $\{1,\dots,2n\}$ forces two
consecutive chosen numbers, which are then coprime.

**Gap.** The statement "when more than half of the numbers are chosen, two of the chosen
numbers must be consecutive" is the heart of the problem, and it is asserted without proof. It
is true (pair up $\{2i-1,2i\}$ and use pigeonhole, or note that $n+1$ pairwise non-consecutive
numbers in $\{1,\dots,2n\}$ would need at least $2n+1$ numbers), but the solution gives neither
argument.

**The coprimality step** is correct and complete.

The proof is incomplete: its main combinatorial claim is stated, not justified.""",
        },
        {
            "generator": "demo-model-alpha",
            "quality": "wrong",
            "rating": 0,
            "text": r"""Among the numbers $1,\dots,2n$ exactly $n$ are even. Since we choose $n+1$ numbers,
at least one chosen number is odd; in fact, if all but one were even, the odd one would be
coprime to... Let us instead argue that at least two chosen numbers are odd when $n\ge2$.
Two odd numbers have no common factor $2$, so they are coprime. Hence two chosen numbers are
coprime.""",
            "verdict": "0",
            "analysis": r"""The solution claims that two odd numbers are coprime.

**Critical error.** Two odd numbers need not be coprime: $3$ and $9$ are both odd and share the
factor $3$. Having no common factor $2$ says nothing about other primes.

**Further issues.** The claim that at least two chosen numbers are odd is also unproved (with
$n$ even numbers available, $n+1$ numbers contain at least one odd number, but not necessarily
two), and the text abandons an argument midway.

The proof rests on a false statement and does not prove the claim.""",
        },
    ],
}

COMBINATORICS_PARTY = {
    "external_id": "DEMO-2025-C2",
    "contest": "Demo Team Contest",
    "year": 2025,
    "number": "3",
    "topic": "C",
    "statement": r"""At a party of six people, every two people are either friends or strangers. Prove that
there are three people who are pairwise friends, or three people who are pairwise strangers.""",
    "final_answer": "",
    "guidelines": r"""- 2 points: a fixed person has at least three friends or at least three strangers.
- 4 points: in each case, find the required triple.
- 1 point: both cases treated (symmetry may be invoked explicitly).""",
    "solution": r"""Fix a person $P$. Of the other five people, by pigeonhole at least three are friends
of $P$ or at least three are strangers to $P$. By symmetry (swap the words "friend" and
"stranger") assume $A$, $B$, $C$ are friends of $P$. If two of $A,B,C$ are friends, they form a
friendly triple with $P$. Otherwise $A,B,C$ are pairwise strangers.""",
    "proofs": [
        {
            "generator": "demo-model-alpha",
            "quality": "correct",
            "rating": 7,
            "text": r"""Colour each pair of people red if they are friends and blue if they are strangers. We
need a triangle of one colour.

Fix a person $P$. The five pairs joining $P$ to the others are coloured with two colours, so
by pigeonhole at least $\lceil 5/2\rceil = 3$ of them have the same colour, say colour $X$, with
people $A$, $B$, $C$. Let $Y$ be the other colour.

1. If some pair among $A,B,C$, say $AB$, has colour $X$, then $P,A,B$ form a triangle of
   colour $X$.
2. Otherwise $AB$, $BC$, $CA$ all have colour $Y$, and $A,B,C$ form a triangle of colour $Y$.

Either way there is a one-coloured triangle, that is, three pairwise friends or three pairwise
strangers. Since $X$ was either colour, both cases of the pigeonhole step are covered.""",
            "verdict": "1",
            "analysis": r"""The solution fixes $P$, finds three people joined to $P$ by the same colour $X$, and
splits on whether a pair among them has colour $X$.

- The pigeonhole step is correct: $5$ edges, $2$ colours, so $3$ share a colour.
- Working with an arbitrary colour $X$ covers the friends and strangers cases together; no
  case is missing.
- Both sub-cases give a monochromatic triangle.

The proof is complete and rigorous.""",
        },
        {
            "generator": "demo-model-beta",
            "quality": "gap",
            "rating": 4,
            "text": r"""Pick a person $P$. Among the other five people, $P$ has at least three friends; call
three of them $A$, $B$, $C$.

- If any two of $A$, $B$, $C$ are friends, say $A$ and $B$, then $P$, $A$, $B$ are three
  pairwise friends.
- If no two of them are friends, then $A$, $B$, $C$ are three pairwise strangers.

In both cases we are done.""",
            "verdict": "0.5",
            "analysis": r"""The solution fixes $P$ and treats three friends $A,B,C$ of $P$ correctly.

**Gap.** The claim "$P$ has at least three friends" is false in general: $P$ may have only
two, one, or no friends. The correct statement is that $P$ has at least three friends *or* at
least three strangers (pigeonhole on five people), and the second case must be handled, either
explicitly or by a stated symmetry between friends and strangers. The solution neither proves
its claim nor mentions the other case.

**The case that is treated** is argued correctly.

The argument is right in one of two cases; the other case is silently assumed away.""",
        },
        {
            "generator": "demo-model-gamma",
            "quality": "wrong",
            "rating": 0,
            "text": r"""With five people it is possible to avoid both kinds of triple: seat them around a
table and let neighbours be friends and non-neighbours strangers. The friends form a
$5$-cycle, which has no triangle, and so do the strangers.

With six people there is no room for such an arrangement, since adding a sixth person to the
pentagon must create a triangle: the new person is connected to all five others. Therefore
among six people there is always a friendly or a hostile triple.""",
            "verdict": "0",
            "analysis": r"""The solution shows that five people can avoid a monochromatic triple and then claims
that six cannot.

**The five-person example is correct** but irrelevant to the claim to be proved.

**Critical error.** The step for six people only considers adding a person to the one pentagon
configuration; an arbitrary six-person party need not contain that pentagon. Moreover, the
sentence "the new person is connected to all five others, so a triangle appears" is not an
argument: it does not say which triangle, or of which kind, appears.

No valid proof is given for six people.""",
        },
    ],
}

PROBLEMS = [ALGEBRA_CYCLIC, ALGEBRA_FUNCTIONAL, COMBINATORICS_COPRIME, COMBINATORICS_PARTY]

for _problem in PROBLEMS:
    for _proof in _problem["proofs"]:
        _proof["analysis"] = analysis(_proof["analysis"], _proof["verdict"])
