"""Routing expert effort by uncertainty: `services` (ranking, budget, automatic labels),
`uncertainty` (the formula), the queue page (`views`, `selectors`) and the API (`apis`)."""
