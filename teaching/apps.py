from django.apps import AppConfig


class TeachingConfig(AppConfig):
    """Instructor dashboards, cohorts, exports and the summaries they read."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "teaching"
