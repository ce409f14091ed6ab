from django.apps import AppConfig


class RunnerConfig(AppConfig):
    name = "runner"
    default_auto_field = "django.db.models.BigAutoField"
