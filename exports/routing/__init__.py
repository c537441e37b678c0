"""Routing expert effort by uncertainty: `services` (ranking, budget, automatic labels), the
queue page (`views`) and the API (`apis`)."""
