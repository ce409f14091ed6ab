"""Celery entry points: each takes ids, calls one service, and holds no run logic of its own."""

from celery import shared_task
from celery.signals import celeryd_after_setup, worker_ready, worker_shutdown

from runner import routing, services


@shared_task(bind=True, name=routing.RUN_EXECUTE)
def run_execute_task(self, run_id: str) -> None:
    delivery_info = self.request.delivery_info or {}
    services.run_execute(
        run_id=run_id, worker=self.request.hostname or "", redelivered=bool(delivery_info.get("redelivered"))
    )


@shared_task(name="runner.run_sweep")
def run_sweep_task() -> None:
    services.run_sweep()


# The shared queues this worker consumes, each with its host queue (routing.py).
_host_queues: list[str] = []
_keeper: list[routing.HostKeeper] = []


@celeryd_after_setup.connect
def _host_queues_add(sender=None, instance=None, **_kwargs) -> None:
    """A worker on `cpu` also consumes `cpu@<host>`, where the runs of learners whose warm
    sandbox this host holds are sent."""
    queues = instance.app.amqp.queues
    consumed = set(queues.consume_from or queues)
    host = routing.this_host()
    for shared in routing.SHARED_QUEUES:
        if shared in consumed:
            queues.select_add(routing.host_queue(shared, host))
            _host_queues.append(shared)


@worker_ready.connect
def _worker_started(sender=None, **_kwargs) -> None:
    services.run_worker_started(worker=getattr(sender, "hostname", "") or "")
    if routing.enabled() and _host_queues:
        _keeper.append(
            routing.HostKeeper(
                queues=list(_host_queues), host=routing.this_host(), cleanup=services.run_sandboxes_cleanup
            ).start()
        )


@worker_shutdown.connect
def _worker_stopping(**_kwargs) -> None:
    while _keeper:
        _keeper.pop().stop()
