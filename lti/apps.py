from django.apps import AppConfig


class LtiConfig(AppConfig):
    """LTI 1.3 Advantage, as a tool: learning systems (Canvas, Moodle, ...) launch courses, parts and
    exercises, place them by deep linking, receive scores and share their class rosters."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "lti"
    verbose_name = "LTI (learning systems)"

    def ready(self):
        from courses.signals import learner_progressed, quiz_answered
        from lti import receivers

        # A learner's progress may change a score a learning system keeps: noted in the progress's
        # own transaction, posted by a task after it commits (lti.services.scores).
        learner_progressed.connect(receivers.on_learner_progressed, dispatch_uid="lti.learner_progressed")
        quiz_answered.connect(receivers.on_quiz_answered, dispatch_uid="lti.quiz_answered")
