"""What the runner tells the rest of the platform, without importing it.

`run_finished` is sent once per run, by the call that wrote its terminal status, inside the same
transaction as that write: a receiver that writes (the teaching app's summaries) commits or rolls
back with the run's end. Arguments: `run_id`, `user_id`, `exercise_id`, `status`, `check_passed`
(True, False or None), `limit`, `cause`, `created_at`, `finished_at`, `duration_ms` (None when
unknown) and `error_name` (the first error's name, or ""): what a summary needs, so a receiver
reads nothing of the run again.
"""

from django.dispatch import Signal

run_finished = Signal()
