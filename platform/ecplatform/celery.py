"""The Celery app. Workers start with `python -m celery -A ecplatform worker` from the repo root."""

import os
import uuid
from time import monotonic

from celery import Celery
from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

# Production unless asked otherwise: a server started without settings must not run with DEBUG.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ecplatform.settings.production")


class FilesystemChannel(filesystem.Channel):
    """kombu's file-system channel, but a message appears in the queue folder only when it is whole.

    kombu writes a message into the queue folder under its final name, and a worker polling that
    folder may take and read it before it is written: the worker's consumer then dies on the JSON it
    cannot parse (seen with a 20 ms polling interval). Written under a name no queue matches and
    renamed, a message is whole or absent (a rename within a folder is atomic). The same holds for
    an exchange's table of queues (`_queue_bind`)."""

    def _put(self, queue, payload, **kwargs):
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f"{name}.partial")  # ends not in .<queue>.msg
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.rename(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc

    def _queue_bind(self, exchange, routing_key, pattern, queue):
        # kombu creates an exchange's table empty, then locks and writes it; a publisher reading it
        # in between finds "" and fails on the JSON (a worker and the web process both declare their
        # queues at start). Created whole, as an empty table, the file is then only ever updated
        # under kombu's lock.
        table = self._exchange_file(exchange)
        if not table.exists():
            self.control_folder.mkdir(exist_ok=True)
            partial = table.with_name(f"{table.name}.{uuid.uuid4()}.partial")
            partial.write_bytes(str_to_bytes(dumps([])))
            try:
                os.link(partial, table)  # never over a table another process made meanwhile
            except FileExistsError:
                pass
            finally:
                partial.unlink()
        super()._queue_bind(exchange, routing_key, pattern, queue)

    def get_table(self, exchange):
        # kombu keeps one binding state per process and writes a binding to the file only the first
        # time the process declares it: a second connection of the same process (the web's
        # publisher beside a thread's consumer) skips the write and may publish before the first
        # has finished it, to a table without the queue (the message then goes to no queue). The
        # process's own bindings therefore count as well as the file's.
        table = super().get_table(exchange)
        own = self.state.exchanges.get(exchange, {}).get("table", [])
        for routing_key, pattern, queue in own:
            binding = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
            if binding not in table:
                table.append(binding)
        return table


class FilesystemTransport(filesystem.Transport):
    Channel = FilesystemChannel


app = Celery("ecplatform")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
