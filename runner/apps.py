from django.apps import AppConfig


class RunnerConfig(AppConfig):
    name = "runner"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from django.conf import settings

        from runner import routing
        from sandbox.base import settings_from
        from sandbox.pool import learner_bound_listen

        # The sandbox package reads its RUNNER_* settings through this hook, at each use (tests
        # override them).
        settings_from(lambda name, default: getattr(settings, name, default))

        # A learner's warm sandbox in this process: their next run is routed here.
        learner_bound_listen(routing.routing_learner_bound)
