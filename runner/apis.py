"""The runs API (DESIGN.md, "Public API contract"): one thin view per operation.

Errors answer JSON with a `detail` that says why: 400 for bad input, 404 for a run or exercise
the user may not see, 429 with Retry-After when a learner's caps are reached, 503 when the queue
is down (the run is then stored as `error`, reason "broker unavailable", never left queued).
"""

import asyncio
import json
import logging
import time

import redis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connections
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from courses.selectors import exercise_get_for_user
from ecplatform.api import CodeField, request_code_data
from runner import events, selectors, services
from runner.models import Run


class RunCapReachedError(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "run_cap_reached"

    def __init__(self, detail: str, wait: int):
        super().__init__(detail)
        # DRF's exception handler turns `wait` into the Retry-After header.
        self.wait = wait


class BrokerUnavailableError(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "broker_unavailable"


class RunOutputSerializer(serializers.ModelSerializer):
    exercise = serializers.IntegerField(source="exercise_id")
    outputs = serializers.JSONField(help_text="Output events in order (DESIGN.md, output protocol).")

    class Meta:
        model = Run
        fields = [
            "id",
            "exercise",
            "status",
            "exit_code",
            "outputs",
            "stdout",
            "stderr",
            "duration_ms",
            "reason",
            "limit",
            "cause",
            "check_passed",
            "passed",
            "backend",
            "created_at",
            "started_at",
            "finished_at",
        ]


class RunCreateApi(APIView):
    class InputSerializer(serializers.Serializer):
        exercise = serializers.IntegerField(help_text="An exercise id from GET /api/exercises/.")
        code = CodeField()

    @extend_schema(
        request=InputSerializer,
        responses={
            201: RunOutputSerializer,
            400: OpenApiResponse(
                description="Unknown or hidden exercise, code over RUNNER_MAX_CODE_BYTES (64 KiB by default), "
                "malformed JSON."
            ),
            403: OpenApiResponse(description="The exercise's course is by invitation and the learner has not joined."),
            429: OpenApiResponse(description="Too many runs queued, running or started this minute; see Retry-After."),
            503: OpenApiResponse(
                description="The run queue is unreachable (the run is stored as error), or a GPU exercise has no "
                "live GPU worker (nothing is stored)."
            ),
        },
        summary="Run code for an exercise",
    )
    def post(self, request):
        data = self.InputSerializer(data=request_code_data(request))
        data.is_valid(raise_exception=True)
        try:
            exercise = exercise_get_for_user(user=request.user, exercise_id=data.validated_data["exercise"])
        except Http404:
            detail = "No such exercise."
            raise exceptions.ValidationError({"detail": detail, "exercise": [detail]}) from None
        try:
            run = services.run_submit(user=request.user, exercise=exercise, code=data.validated_data["code"])
        except ValidationError as exc:
            raise exceptions.ValidationError({"detail": exc.messages[0], "code": exc.messages}) from exc
        except services.RunCapReached as exc:
            raise RunCapReachedError(str(exc), wait=exc.retry_after_s) from exc
        except services.RunBrokerUnavailable as exc:
            detail = "The run queue is unavailable; try again shortly."
            raise BrokerUnavailableError({"detail": detail, "reason": str(exc), "id": str(exc.run.pk)}) from exc
        return Response(RunOutputSerializer(run).data, status=status.HTTP_201_CREATED)


class RunDetailApi(APIView):
    @extend_schema(responses={200: RunOutputSerializer, 404: OpenApiResponse(description="No such run.")})
    def get(self, request, run_id):
        run = selectors.run_get_for_user(user=request.user, run_id=run_id)
        return Response(RunOutputSerializer(run).data)


class RunStopApi(APIView):
    @extend_schema(
        request=None,
        responses={200: RunOutputSerializer, 404: OpenApiResponse(description="No such run.")},
        summary="Stop a run",
        description="A queued run ends at once; a running one ends within a few seconds (status failed, "
        'cause "learner", limit "none", reason "stopped by learner"). A finished run is left as it is.',
    )
    def post(self, request, run_id):
        run = selectors.run_get_for_user(user=request.user, run_id=run_id)
        run = services.run_request_stop(run=run)
        return Response(RunOutputSerializer(run).data)


class EventStreamRenderer(BaseRenderer):
    """Lets a client ask for text/event-stream; errors before the stream starts are sent as JSON."""

    media_type = "text/event-stream"
    format = "sse"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return json.dumps(data).encode()


# Without Redis the stream re-reads the Run row this often. With Redis it reads the row once, then
# waits on the run's channel and reads again only for a gap in the sequence, or after a quiet spell
# of QUIET_RECHECK_S (a status message lost with a Redis hiccup must not leave the stream open for
# good). A comment line every KEEPALIVE_S keeps proxies from closing a quiet connection.
POLL_INTERVAL_S = 0.25
QUIET_RECHECK_S = 30.0
KEEPALIVE_S = 15.0

log = logging.getLogger(__name__)


def _sse(index: int, event: dict, name: str | None = None) -> str:
    head = f"id: {index}\n" + (f"event: {name}\n" if name else "")
    return f"{head}data: {json.dumps(event)}\n\n"


# No `id:` line: the running event is not one of the run's outputs, so it leaves the index a
# reconnecting browser resumes from (Last-Event-ID) as it was.
RUNNING_FRAME = f"event: running\ndata: {json.dumps(events.RUNNING_EVENT)}\n\n"


def _run_snapshot_released(run_id) -> Run | None:
    """Reads the row, then hands the connection back (to the pool, under PostgreSQL) in the thread
    that used it: a stream waits far longer than it reads, and a connection held per open stream
    lets one learner's tabs take the whole pool from everyone else."""
    try:
        return selectors.run_snapshot(run_id=run_id)
    finally:
        connections.close_all()


class _StreamState:
    """Where one run's event stream stands: the index of the last output event sent, whether the
    `running` frame went out, and when the stream last wrote, read the row and renewed its slot.
    Each method turns what came in (the row, a published message) into the frames to send."""

    def __init__(self, *, after: int, announce_running: bool):
        self.sent = after
        self.running_told = not announce_running
        self.last_write = self.last_read = self.last_renew = time.monotonic()

    def from_row(self, run: Run) -> tuple[list[str], bool]:
        """The frames for what the row holds beyond what was sent, and whether the stream is done."""
        self.last_read = time.monotonic()
        frames = []
        if not self.running_told and run.status == Run.Status.RUNNING:
            frames.append(RUNNING_FRAME)
            self.running_told = True
        for index in range(self.sent + 1, len(run.outputs)):
            frames.append(_sse(index, run.outputs[index]))
            self.sent = index
            self.last_write = time.monotonic()
        if run.is_finished:
            frames.append(_sse(len(run.outputs), run.status_event(), name="status"))
            return frames, True
        return frames, False

    def from_message(self, message: dict | None) -> tuple[list[str], bool, bool]:
        """The frames for one published message (None: none came in time), whether the stream is
        done, and whether the row must be read: after a gap, or after QUIET_RECHECK_S of quiet."""
        seq = (message or {}).get("seq")
        event = (message or {}).get("event") or {}
        if event.get("type") == "running" and seq is None:
            if self.running_told:
                return [], False, False
            self.running_told = True
            self.last_write = time.monotonic()
            return [RUNNING_FRAME], False, False
        if message is None or not isinstance(seq, int):
            return [], False, time.monotonic() - self.last_read >= QUIET_RECHECK_S
        if seq == self.sent + 1 and event.get("type") == "status":
            # The status is published after the row is written, with every event before it
            # already sent: the stream is complete without reading the row again.
            return [_sse(seq, event, name="status")], True, False
        if seq == self.sent + 1:
            self.sent = seq
            self.last_write = time.monotonic()
            return [_sse(seq, event)], False, False
        return [], False, seq > self.sent + 1  # a gap: the row has what was missed

    def keepalive(self) -> list[str]:
        """A comment line when the stream has been quiet for KEEPALIVE_S."""
        now = time.monotonic()
        if now - self.last_write < KEEPALIVE_S:
            return []
        self.last_write = now
        return [": keepalive\n\n"]

    def renew_due(self, every_s: float) -> bool:
        now = time.monotonic()
        if now - self.last_renew < every_s:
            return False
        self.last_renew = now
        return True


async def run_event_stream(
    *, run_id, after: int = -1, slot: events.StreamSlot | None = None, announce_running: bool = False
):
    """Yields SSE frames: every output event after index `after`, live as they come, then the
    status event (`event: status`), then ends. Holds no database connection while it waits.

    With `announce_running`, also one `event: running` frame once the run is seen running (a
    worker claimed it), so a client needs no status poll to tell a queued run from a running one.
    Only clients that ask get it: the stream without it is DESIGN.md's, output events and status."""
    snapshot = sync_to_async(_run_snapshot_released, thread_sensitive=False)
    renew = sync_to_async(slot.renew, thread_sensitive=False) if slot is not None else None
    subscription = None
    if events.pubsub_enabled():
        try:
            # Subscribed before the first read, so nothing published after that read is missed.
            subscription = await events.RunEventSubscription(run_id).open()
        except redis.RedisError:
            log.warning("run events: Redis unavailable, polling run %s", run_id, exc_info=True)
    state = _StreamState(after=after, announce_running=announce_running)
    renew_every_s = float(settings.RUNNER_STREAM_SLOT_TTL_S) / 3
    try:
        need_read = True
        while True:
            if need_read:
                run = await snapshot(run_id)
                if run is None:
                    return
                frames, done = state.from_row(run)
                for frame in frames:
                    yield frame
                if done:
                    return
                need_read = False
            if subscription is None:
                await asyncio.sleep(POLL_INTERVAL_S)
                need_read = True
            else:
                try:
                    message = await subscription.next_message(timeout=min(KEEPALIVE_S, renew_every_s))
                except redis.RedisError:
                    log.warning("run events: lost Redis, polling run %s", run_id, exc_info=True)
                    await subscription.close()
                    subscription, need_read = None, True
                    continue
                frames, done, need_read = state.from_message(message)
                for frame in frames:
                    yield frame
                if done:
                    return
            for frame in state.keepalive():
                yield frame
            if renew is not None and state.renew_due(renew_every_s):
                await renew()
    finally:
        if subscription is not None:
            await subscription.close()


class RunEventStream:
    """The response body: iterates the stream; Django calls close() when the response ends (the
    client left, or the stream finished), even if iteration never started, and the slot goes back."""

    def __init__(self, *, run_id, after: int, slot: events.StreamSlot, announce_running: bool = False):
        self.slot = slot
        self._events = run_event_stream(run_id=run_id, after=after, slot=slot, announce_running=announce_running)

    def __aiter__(self):
        return self._events

    def close(self) -> None:
        self.slot.release()


class StreamLimitReachedError(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "stream_limit_reached"

    def __init__(self, detail: str, wait: int):
        super().__init__(detail)
        self.wait = wait


class RunEventsApi(APIView):
    renderer_classes = [JSONRenderer, EventStreamRenderer]

    def handle_exception(self, exc):
        response = super().handle_exception(exc)
        # An error comes before any event: answer it as JSON whatever the client asked for.
        self.request.accepted_renderer, self.request.accepted_media_type = JSONRenderer(), "application/json"
        return response

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "Last-Event-ID",
                OpenApiTypes.INT,
                OpenApiParameter.HEADER,
                required=False,
                description="Resume after this event index (sent by browsers on reconnect).",
            ),
            OpenApiParameter(
                "running",
                OpenApiTypes.INT,
                OpenApiParameter.QUERY,
                required=False,
                description='1: also send one `event: running` frame (data {"type": "running"}, no id) '
                "when a worker has claimed the run, before its first output.",
            ),
        ],
        responses={
            (200, "text/event-stream"): OpenApiTypes.STR,
            404: OpenApiResponse(description="No such run."),
            429: OpenApiResponse(description="The learner has too many event streams open; see Retry-After."),
        },
        summary="Stream a run's events",
        description="Server-sent events: each output event as `data: <json>` with `id: <index in outputs>`, "
        'then one `event: status` whose data is {"type": "status", "status", "exit_code", "reason", '
        '"duration_ms", "limit", "cause", "check_passed", "passed"}, then the stream ends.',
    )
    def get(self, request, run_id):
        run = selectors.run_get_for_user(user=request.user, run_id=run_id)
        try:
            after = int(request.headers.get("Last-Event-ID", "-1"))
        except ValueError:
            after = -1
        slot = events.StreamSlot(request.user.pk)
        if not slot.acquire():
            limit = settings.RUNNER_MAX_STREAMS_PER_LEARNER
            raise StreamLimitReachedError(
                f"You have {limit} event streams open already; close one (another tab) and try again.", wait=5
            )
        # The stream reads the row itself; the connection this request used goes back to the pool
        # now, not when the stream ends.
        connections.close_all()
        announce_running = request.query_params.get("running") == "1"
        body = RunEventStream(run_id=run.pk, after=after, slot=slot, announce_running=announce_running)
        response = StreamingHttpResponse(body, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx: pass events through as they come
        return response
