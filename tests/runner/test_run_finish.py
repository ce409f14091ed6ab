"""Finishing a run cannot fail on what the run printed, and a finish that fails anyway ends the run
at once as the platform's fault, with the learner's place freed (through the API, real worker)."""

import uuid

import pytest
from django.db import connection

from runner import services
from runner.models import Run
from tests.runner.hostile import NUL_NAME
from tests.runner.test_attack_battery_api import Learner

pytestmark = pytest.mark.services

# The sweeper is not running here: a run whose end is not written would stay `running`.
WAIT_S = 90


def test_a_nul_in_an_error_events_name_ends_the_run_with_its_output_saved(
    any_backend_worker, web_server, make_learner, make_exercise
):
    learner = Learner(web_server, make_learner())
    exercise = make_exercise(time_limit_s=10)
    created = learner.submit(exercise, NUL_NAME)
    assert created.status_code == 201, created.text
    body = learner.wait(created.json()["id"], timeout_s=WAIT_S)

    assert (body["status"], body["reason"]) == ("failed", "the program raised Bad\ufffdName"), body["reason"]
    assert body["stdout"] == "before the error\n"
    errors = [e for e in body["outputs"] if e["type"] == "error"]
    assert errors[0]["ename"] == "Bad\ufffdName"
    assert "\x00" not in errors[0]["evalue"] + "".join(errors[0]["traceback"])
    assert Run.objects.get(pk=body["id"]).error_name == "Bad\ufffdName"


@pytest.fixture
def refused_final_write(transactional_db):
    """A fault at a real seam: PostgreSQL refuses the final write of a run whose code holds the
    marker (the write that ends it as anything but error), as it refused a NUL before."""
    if connection.vendor != "postgresql":
        pytest.skip("the fault is a PostgreSQL trigger")
    marker = f"refuse-{uuid.uuid4().hex[:8]}"
    name = marker.replace("-", "_")
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE FUNCTION {name}() RETURNS trigger AS $$ BEGIN "
            f"RAISE EXCEPTION 'the final write is refused'; END $$ LANGUAGE plpgsql"
        )
        cursor.execute(
            f"CREATE TRIGGER {name} BEFORE UPDATE ON runner_run FOR EACH ROW "
            f"WHEN (NEW.status IN ('succeeded', 'failed', 'timed_out') AND NEW.code LIKE '%{marker}%') "
            f"EXECUTE FUNCTION {name}()"
        )
    yield marker
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER IF EXISTS {name} ON runner_run")
        cursor.execute(f"DROP FUNCTION IF EXISTS {name}()")


def test_a_finish_that_fails_ends_the_run_as_the_platforms_fault_and_frees_the_place(
    run_worker, web_server, make_learner, make_exercise, refused_final_write
):
    learner = Learner(web_server, make_learner())
    exercise = make_exercise(time_limit_s=10)

    created = learner.submit(exercise, f"print('{refused_final_write}')")
    assert created.status_code == 201, created.text
    body = learner.wait(created.json()["id"], timeout_s=WAIT_S)

    assert (body["status"], body["reason"]) == ("error", services.REASON_PLATFORM_FAULT)
    assert body["finished_at"]
    # Both of the learner's places are free again (at most 2 active runs): two runs at once.
    again = [learner.submit(exercise, "import time\ntime.sleep(1)\nprint('again')") for _ in range(2)]
    assert [r.status_code for r in again] == [201, 201], [r.text for r in again]
    for response in again:
        assert learner.wait(response.json()["id"])["stdout"] == "again\n"
