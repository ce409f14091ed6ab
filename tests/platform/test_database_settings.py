"""The app's PostgreSQL connections plan their queries without JIT compiling (settings/base.py):
a dashboard read or an export whose cost estimate passes jit_above_cost on a large course would
otherwise spend seconds compiling before it runs."""

from django.db import connection

from tests.services import service_missing

# An estimate far past PostgreSQL's default jit_above_cost (100,000), as a large course's reads reach.
COSTLY = "SELECT COUNT(*) FROM generate_series(1, 10000000) a CROSS JOIN generate_series(1, 100) b"


def test_a_costly_query_is_planned_without_jit(db):
    if connection.vendor != "postgresql":
        service_missing("JIT is PostgreSQL's (set DATABASE_URL)")
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {COSTLY}")
        (plan,) = cursor.fetchone()[0]
    assert plan["Plan"]["Total Cost"] > 100_000
    assert "JIT" not in plan
