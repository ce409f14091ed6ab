"""Live run events over Redis pub/sub, one channel per run.

The Run row stays the record; a message here only tells listeners that the row has news (and
carries the event itself, so a listener that is up to date needs no database read). Where no
Redis is configured, publishing does nothing and listeners poll the row instead.

A message is JSON: {"seq": <index in Run.outputs>, "event": {...}} for an output event, and
{"seq": <len(outputs)>, "event": {"type": "status", ...}} once the run has ended.
"""

import json
import logging
from functools import cache

import redis
import redis.asyncio
from django.conf import settings

log = logging.getLogger(__name__)


def run_channel(run_id) -> str:
    return f"runner:run:{run_id}:events"


def pubsub_enabled() -> bool:
    return bool(settings.REDIS_URL)


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5, driver_info=None)


def run_events_publish(*, run_id, events: list[tuple[int, dict]]) -> None:
    """Publishes (seq, event) pairs in order, in one round trip. Best effort: a listener that
    misses a message catches up from the Run row."""
    if not pubsub_enabled() or not events:
        return
    try:
        pipe = _client(settings.REDIS_URL).pipeline(transaction=False)
        channel = run_channel(run_id)
        for seq, event in events:
            pipe.publish(channel, json.dumps({"seq": seq, "event": event}))
        pipe.execute()
    except redis.RedisError:
        log.warning("could not publish an event of run %s", run_id, exc_info=True)


class RunEventSubscription:
    """An async listener on one run's channel; `next_message` returns None on timeout."""

    def __init__(self, run_id):
        # driver_info=None: no CLIENT SETINFO round trips on connecting (one connection a stream).
        self._client = redis.asyncio.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, driver_info=None)
        self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        self._channel = run_channel(run_id)

    async def open(self) -> "RunEventSubscription":
        await self._pubsub.subscribe(self._channel)
        return self

    async def next_message(self, timeout: float) -> dict | None:
        message = await self._pubsub.get_message(timeout=timeout)
        if message is None or message.get("type") != "message":
            return None
        try:
            return json.loads(message["data"])
        except (TypeError, ValueError):
            return None

    async def close(self) -> None:
        try:
            await self._pubsub.unsubscribe(self._channel)
            await self._pubsub.aclose()
            await self._client.aclose()
        except redis.RedisError:
            log.debug("closing a run event subscription failed", exc_info=True)
