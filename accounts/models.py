from django.conf import settings
from django.db import models


class OIDCIdentity(models.Model):
    """The provider's subject (`sub`) a Proofmark user signs in as: the account is found by it
    at each single sign-on, whatever the provider's user name or address becomes."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oidc_identity"
    )
    subject = models.CharField(max_length=255, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_login_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user} ({self.subject})"
