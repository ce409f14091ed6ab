"""Fills `limit` and `cause` of runs that finished before the fields existed, from their `reason`.

This is the one reader of the English reason besides the code that writes it: the sentences below
are copied here as they were written (sandbox/protocol.py limit_reason, runner/services.py
REASON_*), so later changes to that wording do not change what this migration did.
"""

from django.db import migrations

TERMINAL = ("succeeded", "failed", "timed_out", "error")
# The start of each limit's reason -> the limit.
LIMIT_PREFIXES = (
    ("time limit", "time"),
    ("memory limit", "memory"),
    ("output limit", "output"),
    ("process limit", "processes"),
    ("file size limit", "files"),
    ("tmp space limit", "files"),
    ("open files limit", "files"),
)
STOPPED_BY_LEARNER = "stopped by learner"


def backfill(apps, schema_editor):
    Run = apps.get_model("runner", "Run")
    unfilled = Run.objects.filter(status__in=TERMINAL, limit="")
    # Most specific first: each pass fills only the rows no earlier pass filled.
    unfilled.filter(reason=STOPPED_BY_LEARNER).update(limit="none", cause="learner")
    unfilled.filter(status="error").update(limit="none", cause="platform")
    for prefix, limit in LIMIT_PREFIXES:
        unfilled.filter(reason__startswith=prefix).update(limit=limit, cause="program")
    unfilled.update(limit="none", cause="program")


def unfill(apps, schema_editor):
    apps.get_model("runner", "Run").objects.update(limit="", cause="")


class Migration(migrations.Migration):
    dependencies = [("runner", "0004_run_limit_cause")]

    operations = [migrations.RunPython(backfill, unfill, elidable=True)]
