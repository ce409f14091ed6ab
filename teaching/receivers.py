"""Keeping the dashboards' summaries, counts and standings in step: connected in
TeachingConfig.ready().

What is on a learner's path (a run's end, a quiz answer, a chapter's progress) is counted just
after the learner has it, from a note written in its own transaction (teaching.services.outbox,
teaching.later). Every other signal here (an enrolment, a cohort membership, a first pass or a
completed chapter for the learner's standing) is handled inside the transaction that wrote what
it tells of, so what the dashboards read of it commits with it."""

from functools import partial

from django.db.models import QuerySet

from courses.models import Chapter, ChapterProgress, Course
from teaching.later import later
from teaching.models import CohortMembership
from teaching.outbox_models import ProgressToCount
from teaching.services import course_counts, outbox, standings


def on_run_finished(sender, *, run_id, **kwargs):
    """In the run's terminal transaction: only the note that it is still to count."""
    outbox.run_count_note(run_id=run_id)


def on_run_ended(sender, *, run_id, **kwargs):
    """The learner has the result: count the run now."""
    outbox.run_count(run_id=run_id)


def on_quiz_answered(sender, *, answer_id, **kwargs):
    """In the answer's transaction: the note; the count once the learner has the verdict."""
    outbox.answer_count_note(answer_id=answer_id)
    later(partial(outbox.answer_count, answer_id=answer_id))


def on_learner_progressed(sender, *, user_id, course_id, at, chapter_completed, **kwargs):
    standings.standing_progressed(user_id=user_id, course_id=course_id, at=at, chapter_completed=chapter_completed)


# A learner's shares of the exercise counts follow their enrolment and cohort memberships (both
# written as rows: Enrolment.objects, CohortMembership.objects, the admin's inlines).


def on_enrolment_saved(sender, *, instance, created, raw=False, **kwargs):
    if created and not raw:
        course_counts.course_counts_enrolled(user_id=instance.user_id, course_id=instance.course_id)
        standings.standing_enrolled(enrolment=instance)


def _deleting(origin):
    """The model whose delete() takes this row: itself, or one whose delete cascades to it."""
    return origin.model if isinstance(origin, QuerySet) else type(origin)


def on_enrolment_deleting(sender, *, instance, origin=None, **kwargs):
    """Before the delete takes the enrolment (and the learner's summaries, when the learner goes
    too): their shares leave the course and its cohorts. A deleted course takes its counts along."""
    if _deleting(origin) is not Course:
        course_counts.course_counts_unenrolling(user_id=instance.user_id, course_id=instance.course_id)


def on_membership_saved(sender, *, instance, created, raw=False, **kwargs):
    if created and not raw:
        course_counts.course_counts_joined(
            user_id=instance.user_id, course_id=instance.cohort.course_id, cohort_id=instance.cohort_id
        )


def on_members_added(sender, *, instance, action, reverse, pk_set, **kwargs):
    """Cohort.members.add() (or user.cohorts.add()) writes its memberships in one bulk insert, with
    no post_save: each membership it made (pk_set holds only the new ones) joins as
    on_membership_saved's would. Removing and clearing delete the rows one by one through the
    delete signals (on_membership_deleting)."""
    if action != "post_add" or not pk_set:
        return
    pairs = {(instance.pk, pk) for pk in pk_set} if reverse else {(pk, instance.pk) for pk in pk_set}
    for membership in CohortMembership.objects.filter(
        user_id__in={user_id for user_id, _ in pairs}, cohort_id__in={cohort_id for _, cohort_id in pairs}
    ).select_related("cohort"):
        if (membership.user_id, membership.cohort_id) in pairs:
            on_membership_saved(CohortMembership, instance=membership, created=True)


def on_membership_deleting(sender, *, instance, origin=None, **kwargs):
    """Only a membership deleted for itself: a deleted cohort or course takes its counts along, and
    a deleted learner's enrolment takes their shares from every cohort (on_enrolment_deleting)."""
    if _deleting(origin) in (CohortMembership, type(None)):
        course_counts.course_counts_leaving(
            user_id=instance.user_id, course_id=instance.cohort.course_id, cohort_id=instance.cohort_id
        )


def on_progress_saving(sender, *, instance, raw=False, **kwargs):
    """A learner's chapter progress is about to change: keep how it stood (one read), for the
    note on_progress_saved writes."""
    if not raw:
        absent = instance._state.adding or instance.pk is None
        instance._counted_before = (
            ProgressToCount(existed=False) if absent else outbox.progress_as_counted(progress_id=instance.pk)
        )


def on_progress_saved(sender, *, instance, raw=False, **kwargs):
    """In the change's transaction: the note; the count once the learner has what they asked for."""
    before = instance.__dict__.pop("_counted_before", None)
    if before is not None:
        outbox.progress_count_note(progress_id=instance.pk, before=before)
        later(partial(outbox.progress_count, progress_id=instance.pk))


def on_progress_deleting(sender, *, instance, origin=None, **kwargs):
    """Only a progress row deleted for itself: a learner's, chapter's or course's delete takes the
    share along (their enrolment's receiver, or the counts' own cascade)."""
    if _deleting(origin) in (ChapterProgress, type(None)):
        course_id = Chapter.objects.values_list("course_id", flat=True).get(pk=instance.chapter_id)
        course_counts.course_counts_progress_deleting(
            user_id=instance.user_id, course_id=course_id, progress_id=instance.pk
        )
