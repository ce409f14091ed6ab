"""A learner's progress, heard from courses' signals (connected in LtiConfig.ready()): inside the
progress's transaction, a note that their scores in the course are to be worked out, which commits
with the progress or not at all; the work is a task's, after the commit (lti.services.scores)."""

from lti.services.scores import scores_note


def on_learner_progressed(sender, *, user_id, course_id, **kwargs):
    """A first pass of an exercise, or a completed part."""
    scores_note(user_id=user_id, course_id=course_id)


def on_quiz_answered(sender, *, user_id, course_id, **kwargs):
    """An answer, which may finish the part's quiz (its score is known once the answer commits)."""
    scores_note(user_id=user_id, course_id=course_id)
