"""Learner affinity across worker hosts, on Celery's own queues.

Every worker host consumes the shared queue (`cpu`, `gpu`) and a queue of its own next to it
(`cpu@<host>`, `gpu@<host>`, added when the worker starts). A learner's warm sandbox lives in one
host's pool, so their next run should go to that host:

- when a host's pool binds a warm sandbox to a learner, it records learner -> host in Redis with
  the pool's idle time as TTL (`routing_learner_bound`);
- `run_submit` sends the run to that host's queue when the host is alive (`route_for`), with a
  short expiry, and notes it as routed with a deadline;
- every live host, a few times a second, moves routed runs still queued past their deadline to
  the shared queue (`routed_runs_fall_back`): a host that died or is busy strands nothing. A run
  that meets two messages still runs once (run_execute claims it with a conditional update).

Each host says it is alive by renewing its score in a sorted set per queue (`hosts_alive_renew`),
so "is any GPU worker alive?" and "is this learner's host alive?" are one Redis read each. Without
Redis (the embedded broker of `make run`) there is one worker and nothing here does anything.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from functools import cache
from typing import cast

import redis
from django.conf import settings

log = logging.getLogger(__name__)

SHARED_QUEUES = ("cpu", "gpu")
ROUTED_KEY = "runner:routed"  # sorted set: run id -> deadline (epoch seconds)


def this_host() -> str:
    """The worker host's name: RUNNER_HOST, or the machine's (a container's id under Compose)."""
    return settings.RUNNER_HOST or socket.gethostname()


def host_queue(queue: str, host: str) -> str:
    return f"{queue}@{host}"


def _affinity_key(queue: str, owner: str) -> str:
    return f"runner:affinity:{queue}:{owner}"


def _hosts_key(queue: str) -> str:
    return f"runner:hosts:{queue}"


def enabled() -> bool:
    return bool(settings.REDIS_URL)


# decode_responses: every reply is text. redis-py's types do not follow that option (a reply is
# `bytes | str` to them), so the reads below that use a reply as text cast it to str.
@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5, decode_responses=True)


def _redis() -> redis.Redis:
    return _client(settings.REDIS_URL)


# --- the pool's side ---------------------------------------------------------------------------------


def routing_learner_bound(*, owner: str, gpu: bool, idle_s: float) -> None:
    """A warm sandbox of this host now waits for `owner`'s next run: route it here while the
    sandbox may live. Best effort: without the record the run takes the shared queue."""
    if not enabled() or not owner:
        return
    try:
        _redis().set(_affinity_key("gpu" if gpu else "cpu", owner), this_host(), ex=max(1, int(idle_s)))
    except redis.RedisError:
        log.warning("could not record the host of learner %s", owner, exc_info=True)


# --- the submitting side -------------------------------------------------------------------------------


def route_for(*, run_id, owner: str, queue: str) -> dict:
    """apply_async's routing options for a run: the learner's host queue while that host is alive,
    else the shared queue."""
    if not enabled():
        return {"queue": queue}
    wait_s = settings.RUNNER_AFFINITY_WAIT_S
    try:
        client = _redis()
        host = cast("str | None", client.get(_affinity_key(queue, owner)))
        if not host or not host_alive(queue=queue, host=host, client=client):
            return {"queue": queue}
        # Noted before the message goes out, so a fallback can never miss it.
        client.zadd(ROUTED_KEY, {str(run_id): time.time() + wait_s})
    except redis.RedisError:
        log.warning("affinity lookup failed for run %s; shared queue", run_id, exc_info=True)
        return {"queue": queue}
    # A message its host takes later than this is dropped there: by then the fallback has moved it.
    return {"queue": host_queue(queue, host), "expires": wait_s * 2}


def host_alive(*, queue: str, host: str, client: redis.Redis | None = None) -> bool:
    score = (client or _redis()).zscore(_hosts_key(queue), host)
    return score is not None and score > time.time()


def any_host_alive(*, queue: str) -> bool:
    """Whether some worker renewed its place on `queue` lately (False when unknown: no Redis)."""
    if not enabled():
        return False
    try:
        return bool(_redis().zrangebyscore(_hosts_key(queue), time.time(), "+inf", start=0, num=1))
    except redis.RedisError:
        log.warning("could not read the live hosts of queue %s", queue, exc_info=True)
        return False


# --- the worker host's side ------------------------------------------------------------------------------


def hosts_alive_renew(*, queues: list[str], host: str, ttl_s: float) -> None:
    client = _redis()
    pipe = client.pipeline(transaction=False)
    now = time.time()
    for queue in queues:
        pipe.zadd(_hosts_key(queue), {host: now + ttl_s})
        # Hosts gone for an hour leave the set.
        pipe.zremrangebyscore(_hosts_key(queue), "-inf", now - 3600)
    pipe.execute()


def hosts_alive_forget(*, queues: list[str], host: str) -> None:
    client = _redis()
    for queue in queues:
        client.zrem(_hosts_key(queue), host)


# runner.tasks.run_execute_task's name: a run is sent by it (run_send), so that routing and the
# services, which the tasks module imports, never import the tasks module back.
RUN_EXECUTE = "runner.run_execute"


def run_send(*, run_id, **options) -> None:
    """Queue a run's execution (`options`: Celery's, a queue or a route_for route), retrying the
    publish as the settings say."""
    from ecplatform.celery import app

    app.send_task(RUN_EXECUTE, args=[str(run_id)], retry=True, **options)


def routed_runs_fall_back() -> int:
    """Sends routed runs still queued past their deadline to their shared queue. Any live host
    may call it; ZREM decides which one moves each run. Returns how many it moved."""
    from runner.models import Run

    client = _redis()
    due = cast("list[str]", client.zrangebyscore(ROUTED_KEY, "-inf", time.time()))  # run ids, no scores
    mine = [run_id for run_id in due if client.zrem(ROUTED_KEY, run_id)]
    if not mine:
        return 0
    moved = 0
    for run_id, queue in Run.objects.filter(pk__in=mine, status=Run.Status.QUEUED).values_list("pk", "queue"):
        run_send(run_id=run_id, queue=queue)
        moved += 1
    if moved:
        log.info("moved %d runs from their learners' hosts to the shared queue", moved)
    return moved


class HostKeeper:
    """A worker host's background thread: says the host is alive on each queue it consumes, moves
    routed runs whose host did not take them, and sweeps this host's own sandbox engine."""

    def __init__(self, *, queues: list[str], host: str, cleanup):
        self.queues = queues
        self.host = host
        self.cleanup = cleanup
        self.tick_s = max(0.2, settings.RUNNER_AFFINITY_WAIT_S / 5)
        self.ttl_s = max(3.0, self.tick_s * 5)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="runner-host-keeper", daemon=True)

    def start(self) -> HostKeeper:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        try:
            hosts_alive_forget(queues=self.queues, host=self.host)
        except redis.RedisError:
            log.warning("could not take host %s off the live hosts", self.host, exc_info=True)

    def _loop(self) -> None:
        from django.db import close_old_connections

        next_sweep = time.monotonic() + settings.RUNNER_SWEEP_INTERVAL_S
        while not self._stop.is_set():
            try:
                hosts_alive_renew(queues=self.queues, host=self.host, ttl_s=self.ttl_s)
                close_old_connections()
                routed_runs_fall_back()
            except Exception:
                log.exception("host keeper of %s", self.host)
            if time.monotonic() >= next_sweep:
                next_sweep = time.monotonic() + settings.RUNNER_SWEEP_INTERVAL_S
                self.cleanup()
            self._stop.wait(self.tick_s)
