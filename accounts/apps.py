from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """User names: Django's User, whose username also refuses a look-alike of an existing one
    (accounts.usernames), wherever a user is made or renamed (admin forms, createsuperuser,
    full_clean)."""

    name = "accounts"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model

        from accounts.usernames import validate_not_confusable

        field = get_user_model()._meta.get_field("username")
        if validate_not_confusable not in field.validators:
            field.validators.append(validate_not_confusable)

        from django.contrib.auth.signals import user_logged_in, user_login_failed

        user_login_failed.connect(_count_failure, dispatch_uid="accounts.login_limits")
        user_logged_in.connect(_forget_failures, dispatch_uid="accounts.login_limits")

        from django.core import checks

        from accounts.checks import role_map_check

        checks.register(role_map_check, checks.Tags.security)


def _count_failure(sender, credentials, request=None, **kwargs) -> None:
    from accounts.login_limits import login_failed, no_password_tried

    if no_password_tried(request, credentials):
        return

    login_failed(request, str(credentials.get("username", "")))


def _forget_failures(sender, user, **kwargs) -> None:
    from accounts.login_limits import login_succeeded

    login_succeeded(user.get_username())
