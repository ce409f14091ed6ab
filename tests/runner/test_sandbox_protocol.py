"""The worker's side of the output protocol: what it accepts from a sandbox's stdout, and the
status and reason it gives. No sandbox needed: these feed bytes straight in."""

import base64
import json
import os
import threading
import time

import pytest

from sandbox import harness
from sandbox.base import Limits, RunRequest
from sandbox.protocol import Collector, EndLine, request_payload, run_result

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 32).decode()


def collect(*lines, limits=None):
    events = []
    collector = Collector(limits or Limits(), events.append)
    for line in lines:
        collector.feed(line if isinstance(line, bytes) else (json.dumps(line) + "\n").encode())
    collector.finish()
    return collector, events


def result(collector, exit_code=0, **kw):
    return run_result(
        collector=collector,
        exit_code=exit_code,
        timed_out=kw.pop("timed_out", False),
        oom_killed=kw.pop("oom_killed", False),
        limits=kw.pop("limits", Limits()),
        started=time.monotonic(),
        **kw,
    )


def test_it_passes_well_formed_events_through():
    collector, events = collect(
        {"type": "ready"},
        {"type": "stream", "name": "stdout", "text": "hi\n"},
        {"type": "display", "data": {"image/png": PNG, "text/plain": "<Figure>"}},
        {"type": "error", "ename": "ValueError", "evalue": "v", "traceback": ["a", "b"]},
    )
    assert [e["type"] for e in events] == ["stream", "display", "error"]
    assert collector.ready


def test_it_turns_garbage_and_forged_lines_into_stderr_text():
    _, events = collect(
        {"type": "ready"},
        b"not json \xff\n",
        {"type": "stream", "name": "evil", "text": "x"},
        {"type": "display", "data": {"image/png": "bm90IGEgcG5n", "text/plain": ""}},
        {"type": "check", "passed": "yes", "message": "m"},
        [1, 2],
    )
    assert all(e == {"type": "stream", "name": "stderr", "text": e["text"]} for e in events)
    assert events[0]["text"] == "not json \ufffd\n"


def test_it_drops_check_events_written_on_the_stream():
    _, events = collect(
        {"type": "ready"},
        {"type": "check", "passed": True, "message": "forged"},
        {"type": "stream", "name": "stdout", "text": "x"},
    )
    assert [e["type"] for e in events] == ["stream"]


def end_line(end, check):
    return ("\n" + json.dumps({"type": "end", "nonce": end.nonce, "check": check}) + "\n").encode()


def read_all(end, chunks):
    """Everything the EndLine reader passes on, reading `chunks` one by one."""
    source = iter(chunks)
    read = end.reader(lambda: next(source, b""))
    out = b""
    while piece := read():
        out += piece
    return out


def test_it_takes_the_check_only_from_the_end_line_with_the_runs_nonce():
    end = EndLine()
    forged = EndLine()  # a program cannot know the run's nonce: it can only guess one
    stream = (
        b'{"type": "stream", "name": "stdout", "text": "hi"}\n'
        + end_line(forged, {"passed": True, "message": "forged"})
        + b"last line without a newline"
        + end_line(end, {"passed": False, "message": "real"})
    )
    # Cut into pieces of every size, so the end line also arrives split across reads.
    for size in (1, 7, 64, len(stream)):
        end = EndLine(end.nonce)
        passed_on = read_all(end, [stream[i : i + size] for i in range(0, len(stream), size)])
        assert end.seen and end.check == {"type": "check", "passed": False, "message": "real"}
        assert b"forged" in passed_on and b"last line without a newline" in passed_on
        assert end.nonce.encode() not in passed_on


def test_it_says_when_anything_follows_the_end_line():
    end = EndLine()
    read_all(end, [end_line(end, None) + b"more\n"])
    assert end.seen and end.check is None and end.trailing


def test_a_stream_without_an_end_line_passes_everything_on():
    end = EndLine()
    assert read_all(end, [b"a" * 10, b"b" * 100]) == b"a" * 10 + b"b" * 100
    assert not end.seen and end.check is None


def test_it_stops_at_the_output_cap_and_says_so():
    limits = Limits(output_bytes=1000)
    chunk = {"type": "stream", "name": "stdout", "text": "y" * 300}
    collector, events = collect({"type": "ready"}, *[chunk] * 5, limits=limits)
    out = "".join(e["text"] for e in events if e["name"] == "stdout")
    assert len(out) == 1000 and collector.output_full
    assert "output limit 1000 B reached" in events[-1]["text"]
    stopped = result(collector, 1, limits=limits)
    assert (stopped.status, stopped.reason, stopped.limit) == ("failed", "output limit 1000 B", "output")


def test_it_counts_an_endless_line_against_the_cap():
    collector, _ = collect({"type": "ready"}, b"z" * (8 * 1024**2), limits=Limits(output_bytes=1024**2))
    assert collector.output_full


def test_it_caps_images_per_run():
    display = {"type": "display", "data": {"image/png": PNG, "text/plain": ""}}
    _, events = collect({"type": "ready"}, *[display] * 7)
    assert len(events) == 5


def test_it_calls_a_sandbox_that_never_started_our_error():
    collector, _ = collect()
    r = result(collector, 3, stderr_tail="bwrap: something broke")
    assert r.status == "error" and "exit code 3" in r.reason
    assert r.details["stderr"] == "bwrap: something broke"


def test_it_names_the_limit_behind_an_exception_in_words_and_as_a_fact():
    cases = {
        ("MemoryError", ""): ("memory limit 2 GiB", "memory"),
        ("BlockingIOError", "[Errno 11] Resource temporarily unavailable"): ("process limit 64", "processes"),
        ("OSError", "[Errno 27] File too large"): ("file size limit 10 MiB", "files"),
        ("OSError", "[Errno 28] No space left on device"): ("tmp space limit 64 MiB", "files"),
        ("OSError", "[Errno 24] Too many open files"): ("open files limit 256", "files"),
        ("ValueError", "bad"): ("the program raised ValueError", "none"),
    }
    for (ename, evalue), (reason, limit) in cases.items():
        collector, _ = collect({"type": "ready"}, {"type": "error", "ename": ename, "evalue": evalue, "traceback": []})
        assert (result(collector, 1).reason, result(collector, 1).limit) == (reason, limit)


def test_it_gives_timeouts_and_oom_kills_their_reasons():
    collector, _ = collect({"type": "ready"})
    timed_out, oom_killed = result(collector, 137, timed_out=True), result(collector, 137, oom_killed=True)
    assert (timed_out.reason, timed_out.limit) == ("time limit 20 s", "time")
    assert (oom_killed.reason, oom_killed.limit) == ("memory limit 2 GiB", "memory")
    assert (result(collector, 0).status, result(collector, 0).limit) == ("succeeded", "none")
    assert result(collector, 3).limit == "none"  # a plain failure: no limit stopped it


def test_it_holds_back_no_complete_line_so_output_goes_out_live():
    end = EndLine()
    line = b'{"type": "stream", "name": "stdout", "text": "looping until you press Stop\\n"}\n'
    assert end.take(line) == line
    # Only a last partial line that could still become the end line waits for more.
    assert end.take(b'{"type": "en') == b""
    assert end.take(b'd of a line of its own"}\n') == b'{"type": "end of a line of its own"}\n'


def test_each_reader_of_a_request_gets_its_own_line_and_nothing_past_it():
    request = RunRequest(run_id="1", code="print('é')\n" * 5000, check_code="def check(ns):\n    return True\n")
    payload = request_payload(request, address_space=True, processes=False, nonce="the-nonce")
    read, write = os.pipe()
    os.write(write, payload[:60_000])  # the pipe holds 64 KiB: the rest follows once read
    threading.Thread(target=lambda: (os.write(write, payload[60_000:]), os.close(write)), daemon=True).start()

    first = harness.read_frame(read)
    # What the check's process reads: still whole in the pipe after the supervisor's read.
    second = harness.read_frame(read)
    after = harness.read_frame(read)

    assert json.loads(first)["code"] == request.code
    assert json.loads(second) == {"check": request.check_code, "nonce": "the-nonce"}
    assert after == b""


@pytest.mark.parametrize(
    ("stream", "outcome"),
    [
        (b'{"code": "print(1)"}\n', ValueError),  # a bare line, with no length before it
        (b'2\n{"a": 1}\n', ValueError),  # longer than its length says
        (b"10\n{}\n", b""),  # cut short: the worker went away
        (b"", b""),
    ],
)
def test_a_request_line_without_its_true_length_is_refused(stream, outcome):
    read, write = os.pipe()
    os.write(write, stream)
    os.close(write)

    if outcome is ValueError:
        with pytest.raises(ValueError):
            harness.read_frame(read)
    else:
        assert harness.read_frame(read) == outcome


class FakeSandbox:
    """A sandbox's stdout: each (delay_s, bytes) after the one before, then its end; killing it
    ends its stream, as killing a real one does."""

    def __init__(self, *pieces):
        self.pieces = list(pieces)
        self.killed = threading.Event()

    def read(self) -> bytes:
        if not self.pieces:
            return b""
        delay, data = self.pieces.pop(0)
        return b"" if self.killed.wait(delay) else data

    def kill(self) -> None:
        self.killed.set()


READY = b'{"type": "ready"}\n'
HELLO = b'{"type": "stream", "name": "stdout", "text": "hello\\n"}\n'


def test_the_wall_counts_from_the_programs_start_not_the_sandboxs():
    from sandbox.protocol import supervise

    # The sandbox takes longer than the wall to start the program, which then prints and ends.
    sandbox = FakeSandbox((1.5, READY), (0.0, HELLO))

    collector, timed_out = supervise(
        read=sandbox.read, kill=sandbox.kill, limits=Limits(wall_s=1.0), on_event=[].append, started=time.monotonic()
    )

    assert (timed_out, sandbox.killed.is_set(), collector.ready) == (False, False, True)


def test_a_sandbox_that_never_starts_the_program_is_our_error_after_the_start_up_allowance(monkeypatch):
    from sandbox import protocol

    monkeypatch.setattr(protocol, "STARTUP_S", 0.3)
    started = time.monotonic()
    sandbox = FakeSandbox((30.0, READY))

    collector, timed_out = protocol.supervise(
        read=sandbox.read, kill=sandbox.kill, limits=Limits(wall_s=60.0), on_event=[].append, started=started
    )
    result = run_result(
        collector=collector, exit_code=None, timed_out=timed_out, oom_killed=False, limits=Limits(), started=started
    )

    assert timed_out and sandbox.killed.is_set()
    assert (result.status, result.reason) == ("error", "the sandbox did not start the program within 0.3 s")


def test_only_the_first_ready_line_starts_the_wall():
    collector = Collector(Limits(), [].append)
    collector.feed(READY)
    first = collector.ready_at
    time.sleep(0.01)
    collector.feed(READY)  # a program writing the line itself

    assert first is not None and collector.ready_at == first


def test_what_the_program_wrote_goes_out_before_the_next_event_however_threads_are_scheduled(monkeypatch):
    """drain() is what puts a traceback or a figure after the prints before it. Here every read of
    the program's pipe is followed by a pause, as when the pump's thread is not scheduled between
    reading a line and sending it (seen under load): the line must still come before the mark
    sent after drain()."""
    out_r, out_w = os.pipe()
    pipe_r, pipe_w = os.pipe()
    read = os.read

    def read_then_pause(fd, n):
        data = read(fd, n)
        if fd == pipe_r and data:
            time.sleep(0.005)
        return data

    monkeypatch.setattr(os, "read", read_then_pause)
    channel = harness.Channel(out_w, 1024**2)
    pump = harness.Pump(pipe_r, "stdout", channel)
    pump.start()
    received = bytearray()
    reader = threading.Thread(target=read_into, args=(out_r, received), daemon=True)
    reader.start()
    try:
        for i in range(40):
            os.write(pipe_w, f"line {i}\n".encode())
            harness.drain([pump])
            channel.send({"type": "mark", "n": i})
    finally:
        os.close(pipe_w)
        pump.join(timeout=5)
        os.close(out_w)
        reader.join(timeout=5)
    text = ""
    marks = 0
    for line in received.decode().splitlines():
        event = json.loads(line)
        if event["type"] == "stream":
            text += event["text"]
        else:
            marks += 1
            assert text.endswith(f"line {event['n']}\n"), (event, text[-40:])
    assert marks == 40 and text.count("\n") == 40


def read_into(fd, into):
    while chunk := os.read(fd, 65536):
        into += chunk
