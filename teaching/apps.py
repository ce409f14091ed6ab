from django.apps import AppConfig


class TeachingConfig(AppConfig):
    """Instructor dashboards, cohorts, exports and the summaries they read."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "teaching"

    def ready(self):
        from celery.signals import task_postrun, task_prerun
        from django.core.signals import request_finished, request_started
        from django.db.models.signals import m2m_changed, post_save, pre_delete, pre_save

        from courses.models import ChapterProgress, Enrolment
        from courses.signals import learner_progressed, quiz_answered
        from runner.models import Run
        from runner.signals import run_ended, run_finished
        from teaching import later, receivers
        from teaching.models import Cohort, CohortMembership

        # What the dashboards count of a request or a task waits for its end (teaching.later).
        request_started.connect(later.begin_request, dispatch_uid="teaching.later.request_begin")
        request_finished.connect(later.finish, dispatch_uid="teaching.later.request_finish")
        task_prerun.connect(later.begin_task, dispatch_uid="teaching.later.task_begin")
        task_postrun.connect(later.finish, dispatch_uid="teaching.later.task_finish")

        run_finished.connect(receivers.on_run_finished, sender=Run, dispatch_uid="teaching.run_finished")
        run_ended.connect(receivers.on_run_ended, sender=Run, dispatch_uid="teaching.run_ended")
        quiz_answered.connect(receivers.on_quiz_answered, dispatch_uid="teaching.quiz_answered")
        learner_progressed.connect(receivers.on_learner_progressed, dispatch_uid="teaching.learner_progressed")
        post_save.connect(receivers.on_enrolment_saved, sender=Enrolment, dispatch_uid="teaching.enrolment_saved")
        pre_delete.connect(
            receivers.on_enrolment_deleting, sender=Enrolment, dispatch_uid="teaching.enrolment_deleting"
        )
        post_save.connect(
            receivers.on_membership_saved, sender=CohortMembership, dispatch_uid="teaching.membership_saved"
        )
        pre_delete.connect(
            receivers.on_membership_deleting, sender=CohortMembership, dispatch_uid="teaching.membership_deleting"
        )
        m2m_changed.connect(
            receivers.on_members_added, sender=Cohort.members.through, dispatch_uid="teaching.members_added"
        )
        pre_save.connect(receivers.on_progress_saving, sender=ChapterProgress, dispatch_uid="teaching.progress_saving")
        post_save.connect(receivers.on_progress_saved, sender=ChapterProgress, dispatch_uid="teaching.progress_saved")
        pre_delete.connect(
            receivers.on_progress_deleting, sender=ChapterProgress, dispatch_uid="teaching.progress_deleting"
        )
