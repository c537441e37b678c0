"""Demo corpus and accounts for `make run` (manage.py demo_setup): our own problems, reference
solutions, proofs of three qualities and verifier analyses, written for Proofmark."""
