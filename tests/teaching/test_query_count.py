"""The dashboard page costs the same number of queries whatever the number of learners."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from runner.models import Run
from teaching.services.course_data import course_data_generate

pytestmark = pytest.mark.django_db

# Session and user, the course, then the page: counts, cohorts, stuck learners, funnel, question figures and
# questions, exercise figures and exercises, the spaced review's figures; with a cohort, the cohort; with a
# start date, the course's first day of runs and answers (a range from no later than that to at least today
# reads the counts).
DASHBOARD_QUERIES = {"": 12, "?cohort={cohort}&start=2000-01-01&end=2100-12-31": 14}


def _queries(client, url) -> int:
    client.get(url)  # warm: the session and per-process caches
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


@pytest.mark.parametrize("query_string", DASHBOARD_QUERIES)
def test_it_runs_the_same_queries_for_10_or_200_learners(client, query_string, django_assert_num_queries):
    small = course_data_generate(slug="small", learners=10, chapters=3, runs=100)
    large = course_data_generate(slug="large", learners=200, chapters=3, runs=2000, seed=2)
    counts = []
    for made in (small, large):
        client.force_login(made.instructor)
        url = f"/teach/{made.course.slug}/" + query_string.format(cohort=made.course.cohorts.first().pk)
        counts.append(_queries(client, url))
    assert counts[0] == counts[1]
    url = f"/teach/{large.course.slug}/" + query_string.format(cohort=large.course.cohorts.first().pk)
    with django_assert_num_queries(DASHBOARD_QUERIES[query_string]):
        client.get(url)


def test_it_pages_the_learner_drill_down_in_fixed_queries(client):
    made = course_data_generate(slug="drill", learners=20, chapters=3, runs=400)
    client.force_login(made.instructor)
    with_runs = Run.objects.filter(exercise__chapter__course=made.course).values_list("user_id", flat=True)
    learners = sorted(set(with_runs), key=lambda pk: Run.objects.filter(user_id=pk).count())
    assert Run.objects.filter(user_id=learners[0]).count() < Run.objects.filter(user_id=learners[-1]).count()
    counts = [_queries(client, f"/teach/drill/learners/{learner}/") for learner in (learners[0], learners[-1])]
    assert len(set(counts)) == 1
