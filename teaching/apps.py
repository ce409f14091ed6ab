from django.apps import AppConfig


class TeachingConfig(AppConfig):
    """Instructor dashboards, cohorts, exports and the summaries they read."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "teaching"

    def ready(self):
        from courses.signals import quiz_answered
        from runner.models import Run
        from runner.signals import run_finished
        from teaching import receivers

        run_finished.connect(receivers.on_run_finished, sender=Run, dispatch_uid="teaching.run_finished")
        quiz_answered.connect(receivers.on_quiz_answered, dispatch_uid="teaching.quiz_answered")
