"""The file-system broker (no Redis): a worker polling the queue folder never takes a message that is
still being written. kombu's own channel writes under the final name, and a worker that took a
half-written message died on its JSON."""

import threading

from kombu import Connection

from ecplatform.celery import FilesystemTransport

MESSAGES = 200
BODY = "x" * 256 * 1024  # big enough that writing one takes several system calls


def connection(folder) -> Connection:
    for name in ("queue", "processed", "control"):
        (folder / name).mkdir(exist_ok=True)
    options = {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "control_folder": str(folder / "control"),
        "processed_folder": str(folder / "processed"),
        "store_processed": False,
    }
    return Connection("filesystem://localhost/", transport=FilesystemTransport, transport_options=options)


def test_a_worker_polling_without_pause_takes_every_message_whole(tmp_path):
    received, errors = [], []
    done = threading.Event()

    def consume():
        with connection(tmp_path) as conn:
            queue = conn.SimpleQueue("cpu")
            while len(received) < MESSAGES and not done.is_set():
                try:
                    message = queue.get(block=False)
                except queue.Empty:
                    continue
                except Exception as exc:  # what killed the worker's consumer
                    errors.append(exc)
                    return
                received.append(message.payload)
                message.ack()

    consumer = threading.Thread(target=consume)
    consumer.start()
    with connection(tmp_path) as conn:
        queue = conn.SimpleQueue("cpu")
        for index in range(MESSAGES):
            queue.put({"index": index, "body": BODY})
    consumer.join(timeout=120)
    done.set()
    assert errors == []
    assert sorted(m["index"] for m in received) == list(range(MESSAGES))
    assert all(m["body"] == BODY for m in received)
    assert list((tmp_path / "queue").iterdir()) == []
