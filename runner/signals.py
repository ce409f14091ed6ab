"""What the runner tells the rest of the platform, without importing it.

`run_finished` is sent once per run, by the call that wrote its terminal status, inside the same
transaction as that write: a receiver that writes (the teaching app's summaries) commits or rolls
back with the run's end. Arguments: `run_id`, `user_id`, `exercise_id`, `status`, `check_passed`
(True, False or None), `limit`, `cause`, `finished_at`.
"""

from django.dispatch import Signal

run_finished = Signal()
