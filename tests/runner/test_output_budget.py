"""One output budget for everything a run emits: error events a program writes itself and bytes
without a newline on the protocol fd stop the run at the output cap, cold and warm, on both
backends, and what the API then answers for the run stays small."""

import json

import pytest

from runner.models import Run
from tests.runner.hostile import ERROR_FLOOD, NO_NEWLINE_FLOOD
from tests.runner.test_attack_battery_api import Learner, warm_up

pytestmark = pytest.mark.services

MIB = 1024**2
FLOODS = {"error_events": ERROR_FLOOD, "no_newline": NO_NEWLINE_FLOOD}


@pytest.mark.parametrize("flood", FLOODS)
def test_a_cold_run_that_floods_the_protocol_fd_stops_at_the_output_cap(sandbox_backend, run_code, flood):
    run = run_code(sandbox_backend, FLOODS[flood], wall_s=20)

    assert run.result.details["warm"] is False
    # Stopped by the cap, not by the 20 s wall limit.
    assert (run.status, run.reason) == ("failed", "output limit 1 MiB"), (run.status, run.reason)
    assert len(json.dumps(run.outputs)) < 1.1 * MIB
    assert "output limit 1 MiB reached" in run.text("stderr")


@pytest.mark.parametrize("flood", FLOODS)
def test_a_warm_run_that_floods_the_protocol_fd_stops_at_the_output_cap_and_its_record_stays_small(
    any_backend_worker, web_server, make_learner, make_exercise, flood
):
    exercise = make_exercise(time_limit_s=20)
    learner = Learner(web_server, make_learner())
    warm_up(learner, exercise)

    body = learner.run(exercise, FLOODS[flood])
    record = learner.get(f"/api/runs/{body['id']}/")

    assert Run.objects.get(pk=body["id"]).warm is True, "the flood ran cold"
    assert (body["status"], body["reason"]) == ("failed", "output limit 1 MiB"), body["reason"]
    # At most the cap twice: the events, and the stdout/stderr copies of their text.
    assert len(record.content) < 2.2 * MIB, f"GET /api/runs/<id>/ is {len(record.content)} bytes"
    assert "flooding" in body["stdout"]
    after = learner.run(exercise, "print('fine')")
    assert (after["status"], after["stdout"]) == ("succeeded", "fine\n"), after
