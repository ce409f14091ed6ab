"""A worker takes many runs at once (a thread each), but starts at most RUNNER_COLD_CONCURRENCY cold
sandboxes at once: more than the machine's cores would only make every start slower."""

import threading
import time

from sandbox.base import cold_slot


def test_it_lets_no_more_cold_starts_at_once_than_the_setting(settings):
    settings.RUNNER_COLD_CONCURRENCY = 2
    inside = 0
    most = 0
    lock = threading.Lock()
    all_waiting = threading.Barrier(6)

    def cold_start():
        nonlocal inside, most
        all_waiting.wait()
        with cold_slot():
            with lock:
                inside += 1
                most = max(most, inside)
            time.sleep(0.05)  # a stand-in for a sandbox's start: others queue meanwhile
            with lock:
                inside -= 1

    threads = [threading.Thread(target=cold_start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)

    assert most == 2
    assert inside == 0
