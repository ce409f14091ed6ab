"""Make a large made-up course to try the instructor dashboards on (and to benchmark them)."""

import time

from django.core.management.base import BaseCommand, CommandError

from courses.models import Course
from courses.services.content_io import ContentError, course_read
from teaching.services.course_data import INSTRUCTOR_PASSWORD, course_data_generate

DEMO_COURSE = "courses/content/transformers"


class Command(BaseCommand):
    help = (
        "Generate a course with learners, quiz answers, runs and their dashboard summaries "
        "(default 10,000 learners, 20 runs each)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--slug", default="generated", help="The new course's slug (must be free).")
        parser.add_argument("--learners", type=int, default=10_000)
        parser.add_argument(
            "--like",
            default=DEMO_COURSE,
            help="A course folder whose published parts, exercises and questions the course copies "
            "(default: the demo course); empty for --chapters made-up parts.",
        )
        parser.add_argument("--chapters", type=int, default=10, help="Made-up parts, with --like ''.")
        parser.add_argument("--runs", type=int, default=None, help="Runs in all (default: 20 per learner).")
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args, slug, learners, like, chapters, runs, seed, **options):
        if Course.objects.filter(slug=slug).exists():
            raise CommandError(f"A course with slug {slug!r} exists; pick another --slug.")
        if min(learners, chapters, runs or 0) < 0 or chapters < 1:
            raise CommandError("Sizes must be positive (at least one chapter).")
        try:
            spec = course_read(path=like) if like else None
        except ContentError as e:
            raise CommandError(str(e)) from e
        started = time.monotonic()
        made = course_data_generate(
            slug=slug, learners=learners, chapters=chapters, runs=runs, seed=seed, like=spec, log=self.stdout.write
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"Course {made.course.slug!r}: {made.learners} learners, {made.answers} quiz answers, "
                f"{made.runs} runs in {time.monotonic() - started:.1f} s. "
                f"Instructor {made.instructor.username!r}, password {INSTRUCTOR_PASSWORD!r}: /teach/{made.course.slug}/"
            )
        )
