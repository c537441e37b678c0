"""The runtime code every app shares, below every app (it imports none, nor config): who is
asking and what they may see (`authentication`, `sessions`, `roles`, `visibility`), requests
and answers (`http`, `converters`, `forms`, `context_processors`, `middleware`, `errors`,
`views`, `api`, `api_docs`, `parsers`, `throttles`, `proxies`), values (`values`), the database
(`queries`, `rows`, `postgres`), files (`files`), the services the site leans on and their
outages (`broker`, `cache`, `workers`) and structured logs (`logging`)."""
