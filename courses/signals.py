"""What courses tells the rest of the platform, without importing it.

`quiz_answered` is sent once per recorded quiz answer, inside the transaction that saved it: a
receiver that writes (the teaching app's summaries) commits or rolls back with the answer.
Arguments: `answer_id`, `user_id`, `question_id`, `chapter_id`, `course_id`, `choice_id`,
`attempt`, `is_correct`, `answered_at`.

`learner_progressed` is sent when a learner first passes an exercise or completes a chapter,
inside the transaction that wrote it. Arguments: `user_id`, `course_id`, `at`, `chapter_completed`
(true for a completed chapter).
"""

from django.dispatch import Signal

quiz_answered = Signal()
learner_progressed = Signal()
