from django.contrib import admin

from accounts.models import OIDCIdentity


@admin.register(OIDCIdentity)
class OIDCIdentityAdmin(admin.ModelAdmin):
    """The accounts tied to the provider's subjects: deleting a row unlinks the account (its
    next sign-on is a first one again)."""

    list_display = ["user", "subject", "created_at", "last_login_at"]
    search_fields = ["user__username", "subject"]
    readonly_fields = ["created_at", "last_login_at"]
    raw_id_fields = ["user"]
