from django.apps import AppConfig


class RunnerConfig(AppConfig):
    name = "runner"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from runner import routing
        from runner.sandbox.pool import learner_bound_listen

        # A learner's warm sandbox in this process: their next run is routed here.
        learner_bound_listen(routing.routing_learner_bound)
