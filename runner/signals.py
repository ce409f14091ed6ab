"""What the runner tells the rest of the platform, without importing it.

A run's end is told twice, both times by the call that wrote its terminal status:

- `run_finished`, inside the transaction of that write: a receiver writes only what must commit
  with the run's end or not at all (the dashboards' note that the run is still to count), and
  nothing slow, since the learner's result waits for this commit. Arguments: `run_id`, `status`,
  `finished_at`.
- `run_ended`, after the commit and after the result was published to the learner: a receiver
  does here what may wait (the dashboards count the run). Arguments: `run_id`. A process that dies
  in between never sends it; the receiver of `run_finished` leaves a durable note for that.
"""

from django.dispatch import Signal

run_finished = Signal()
run_ended = Signal()
