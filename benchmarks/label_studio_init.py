"""Run by Label Studio's own interpreter, inside its package folder (benchmarks/label_studio_round.py
does that): the first user, their organisation with API tokens enabled, and experts, each with
a token; prints them as JSON on the last line. Label Studio's own `label-studio user` does the
same for one user (server.py `_create_user`)."""

import json
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "core.settings.label_studio")
sys.path.insert(0, os.getcwd())
django.setup()

from organizations.models import Organization  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402
from users.models import User  # noqa: E402

experts = int(sys.argv[1])
owner, _ = User.objects.get_or_create(email="owner@bench.local", defaults={"is_staff": True})
owner.set_password("bench-owner-pass")
owner.save()
org = Organization.objects.first() or Organization.create_organization(
    created_by=owner, title="Bench", legacy_api_tokens_enabled=True
)
org.jwt.legacy_api_tokens_enabled = True
org.jwt.save()
tokens = []
for n in range(experts + 1):
    user = owner if n == 0 else User.objects.get_or_create(email=f"expert{n}@bench.local")[0]
    if n:
        org.add_user(user)
    user.active_organization = org
    user.save(update_fields=["active_organization"])
    tokens.append(Token.objects.get_or_create(user=user)[0].key)
print(json.dumps({"tokens": tokens}))
