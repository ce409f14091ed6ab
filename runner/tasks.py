"""Celery entry points: each takes ids, calls one service, and holds no run logic of its own."""

from celery import shared_task
from celery.signals import worker_ready

from runner import services


@shared_task(bind=True, name="runner.run_execute")
def run_execute_task(self, run_id: str) -> None:
    delivery_info = self.request.delivery_info or {}
    services.run_execute(
        run_id=run_id, worker=self.request.hostname or "", redelivered=bool(delivery_info.get("redelivered"))
    )


@shared_task(name="runner.run_sweep")
def run_sweep_task() -> None:
    services.run_sweep()


@worker_ready.connect
def _worker_started(sender=None, **_kwargs) -> None:
    services.run_worker_started(worker=getattr(sender, "hostname", "") or "")
