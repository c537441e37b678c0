from django.apps import AppConfig


class ProblemsConfig(AppConfig):
    name = "problems"
    default_auto_field = "django.db.models.BigAutoField"
