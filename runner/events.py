"""Live run events over Redis pub/sub, one channel per run.

The Run row stays the record; a message here only tells listeners that the row has news (and
carries the event itself, so a listener that is up to date needs no database read). Where no
Redis is configured, publishing does nothing and listeners poll the row instead.

A message is JSON: {"seq": <index in Run.outputs>, "event": {...}} for an output event,
{"seq": <len(outputs)>, "event": {"type": "status", ...}} once the run has ended, and
{"seq": null, "event": {"type": "running"}} when a worker has claimed the run (before any output).
"""

import json
import logging
import threading
import uuid
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
    # A blocking pool: when many threads of a web process talk to Redis at once (hundreds of event
    # streams closing together), a thread waits for a free connection instead of failing.
    pool = redis.BlockingConnectionPool.from_url(
        url, max_connections=50, timeout=5, socket_connect_timeout=2, socket_timeout=5, driver_info=None
    )
    return redis.Redis(connection_pool=pool)


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


RUNNING_EVENT = {"type": "running"}


def run_running_publish(*, run_id) -> None:
    """A worker claimed the run: listeners can show it running before its first output. Best
    effort, like every message here: a stream that misses it finds the status on the row."""
    if not pubsub_enabled():
        return
    try:
        _client(settings.REDIS_URL).publish(run_channel(run_id), json.dumps({"seq": None, "event": RUNNING_EVENT}))
    except redis.RedisError:
        log.warning("could not publish that run %s is running", run_id, exc_info=True)


class RunEventSubscription:
    """An async listener on one run's channel; `next_message` returns None on timeout."""

    def __init__(self, run_id):
        # driver_info=None: no CLIENT SETINFO round trips on connecting (one connection a stream).
        self._client = redis.asyncio.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, driver_info=None)
        self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        self._channel = run_channel(run_id)

    async def open(self) -> "RunEventSubscription":
        try:
            await self._pubsub.subscribe(self._channel)
        except redis.RedisError:
            await self.close()
            raise
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


# --- Open event streams per learner ----------------------------------------------------------------
# Each open stream holds a slot: a member of a sorted set per learner whose score is when the slot
# expires. A stream renews its slot while it stays open, so slots of a web process that died expire
# on their own instead of locking the learner out for good.

_SLOT_ACQUIRE = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
return 1
"""
_SLOT_RENEW = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[1])) + 1)
return 1
"""


def stream_slots_key(user_id) -> str:
    return f"runner:streams:user:{user_id}"


# Without Redis (the embedded set-up: one web process) the slots are counted in the process.
_local_slots: dict[object, set[str]] = {}
_local_lock = threading.Lock()


class StreamSlot:
    """One open event stream of a learner. `acquire` answers False when the learner already holds
    RUNNER_MAX_STREAMS_PER_LEARNER streams; `release` is idempotent."""

    def __init__(self, user_id):
        self.user_id = user_id
        self.member = uuid.uuid4().hex
        self.held = False

    @property
    def ttl_s(self) -> float:
        return float(settings.RUNNER_STREAM_SLOT_TTL_S)

    def acquire(self) -> bool:
        limit = settings.RUNNER_MAX_STREAMS_PER_LEARNER
        if pubsub_enabled():
            try:
                client = _client(settings.REDIS_URL)
                got = client.eval(_SLOT_ACQUIRE, 1, stream_slots_key(self.user_id), limit, self.ttl_s, self.member)
            except redis.RedisError:
                # Streams still work without Redis (they poll the row); a count that cannot be
                # kept must not lock every learner out.
                log.warning("could not count open event streams", exc_info=True)
                return True
            self.held = bool(got)
            return self.held
        with _local_lock:
            members = _local_slots.setdefault(self.user_id, set())
            if len(members) >= limit:
                return False
            members.add(self.member)
        self.held = True
        return True

    def renew(self) -> None:
        if not (self.held and pubsub_enabled()):
            return
        try:
            _client(settings.REDIS_URL).eval(_SLOT_RENEW, 1, stream_slots_key(self.user_id), self.ttl_s, self.member)
        except redis.RedisError:
            log.debug("could not renew an event stream slot", exc_info=True)

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        if pubsub_enabled():
            try:
                _client(settings.REDIS_URL).zrem(stream_slots_key(self.user_id), self.member)
            except redis.RedisError:
                log.warning("could not release an event stream slot (it expires)", exc_info=True)
            return
        with _local_lock:
            members = _local_slots.get(self.user_id, set())
            members.discard(self.member)
            if not members:
                _local_slots.pop(self.user_id, None)
