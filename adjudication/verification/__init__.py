"""Verifier runs and the automated labelling loop: their pages, forms, API and reads."""
