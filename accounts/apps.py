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
