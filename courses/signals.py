"""What courses tells the rest of the platform, without importing it.

`quiz_answered` is sent once per recorded quiz answer, inside the transaction that saved it: a
receiver that writes (the teaching app's summaries) commits or rolls back with the answer.
Arguments: `answer_id`, `user_id`, `question_id`, `chapter_id`, `course_id`, `choice_id`,
`attempt`, `is_correct`, `answered_at`.
"""

from django.dispatch import Signal

quiz_answered = Signal()
