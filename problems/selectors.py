from problems.models import Problem, Proof, VerifierAnalysis


def corpus_counts() -> dict[str, int]:
    return {
        "problems": Problem.objects.count(),
        "proofs": Proof.objects.count(),
        "analyses": VerifierAnalysis.objects.count(),
    }
