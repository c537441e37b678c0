"""The annotation API, by token or by the grading page's session (with its CSRF token): next
item, read an item (blindness kept), save a draft, preview a checklist's score, submit, renew
the lease, list one's own grades; admin endpoints to create campaigns and items and to assign.
One APIView per operation with input and output serializers. The grading page calls these same
operations: one door, one set of rules.

One module per operation group: `campaigns`, `items`, `assignment`, `grading`, `review`,
`second_opinion`, `pairs` (`annotation/api_urls.py` routes to each); the permissions they share are here."""

from core.roles import ALL_ROLES, Role, api_permission

Anyone = api_permission(*ALL_ROLES)
Admin = api_permission(Role.ADMIN)
