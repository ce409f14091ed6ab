"""Writing many rows fast: each model's rows in batches, by bulk_create, or on PostgreSQL by its
COPY, which takes the same rows several times faster (a 100,000-learner course is millions)."""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import AutoField

BATCH = 5000


class RowWriter:
    """Collects unsaved model instances per model and writes each model's rows in batches."""

    def __init__(self, batch: int = BATCH):
        self.batch = batch
        # The connection itself, not django.db.connection's per-attribute lookup (a cost per value).
        self.connection = connections[DEFAULT_DB_ALIAS]
        self.copies = self.connection.vendor == "postgresql"
        self.pending: dict[type, list] = {}
        self.written: dict[type, int] = {}

    def add(self, obj) -> None:
        rows = self.pending.setdefault(type(obj), [])
        rows.append(obj)
        if len(rows) >= self.batch:
            self.flush(type(obj))

    def add_values(self, model, values: dict) -> None:
        """A row as {attname: value}, every concrete column but an auto id given, each value as the
        database takes it (JSON as text): no model instance is made, for the biggest tables."""
        rows = self.pending.setdefault(model, [])
        rows.append(values)
        if len(rows) >= self.batch:
            self.flush(model)

    def flush(self, model=None) -> None:
        for m in [model] if model else list(self.pending):
            rows = self.pending.get(m) or []
            if rows:
                if self.copies:
                    _copy(connection=self.connection, model=m, rows=rows)
                else:
                    objs = [m(**row) if isinstance(row, dict) else row for row in rows]
                    m.objects.bulk_create(objs, batch_size=self.batch)
                self.written[m] = self.written.get(m, 0) + len(rows)
                self.pending[m] = []


def _copy(*, connection, model, rows: list) -> None:
    fields = [f for f in model._meta.concrete_fields if not isinstance(f, AutoField)]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor, cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for obj in rows:
            if isinstance(obj, dict):
                copy.write_row([obj[f.attname] for f in fields])
            else:
                copy.write_row([f.get_db_prep_save(getattr(obj, f.attname), connection) for f in fields])


def analyze(models) -> None:
    """Fresh planner statistics for tables just filled in bulk (PostgreSQL): without them the
    planner takes a table of a million rows for an empty one and reads it once per row of another."""
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {', '.join(model._meta.db_table for model in models)}")
