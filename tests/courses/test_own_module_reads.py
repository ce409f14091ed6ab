"""What a worker reads for a run before its sandbox starts, which is on the learner's path: the run
with its exercise, part, course and learner in one read, then the modules the run installs, made
for that learner (their own pieces, the parts they passed)."""

import pytest

from accounts.models import User
from courses.models import Exercise
from runner.models import Run
from runner.services import run_request_read
from tests.learning.own_module_support import two_part_course


@pytest.mark.django_db
def test_a_worker_reads_a_run_and_its_learners_modules_in_five_statements(make_user, django_assert_num_queries):
    course = two_part_course()
    learner = make_user(User.Role.LEARNER)
    use_it = Exercise.objects.get(chapter__course=course, slug="use-it")
    run = Run.objects.create(user=learner, exercise=use_it, code=use_it.starter_code)

    with django_assert_num_queries(5):
        read, request = run_request_read(run_id=run.pk)

    assert read.pk == run.pk and request.code == use_it.starter_code and request.owner == str(learner.pk)
    [(name, source)] = request.modules
    # Part 1 is not passed yet: its pieces are left out of the learner's module, and say why.
    assert name == "groundup" and "def quadruple(x):" in source and "def double(x):" not in source
    # The check imports the course's module as written.
    assert request.check_modules == (("groundup", course.modules.get().source),)
