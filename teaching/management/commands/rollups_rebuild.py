"""Build the dashboards' summaries from the runs and quiz answers already stored (after installing
the teaching app on a platform with history, or to check the live summaries against the rows)."""

import time

from django.core.management.base import BaseCommand, CommandError

from courses.models import Course
from teaching.services.rollups import rollups_rebuild


class Command(BaseCommand):
    help = "Rebuild the instructor dashboards' summaries of every course, or of --course."

    def add_arguments(self, parser):
        parser.add_argument("--course", help="A course's slug (default: every course).")

    def handle(self, *args, course=None, **options):
        courses = Course.objects.order_by("slug")
        if course:
            courses = courses.filter(slug=course)
            if not courses.exists():
                raise CommandError(f"No course with slug {course!r}.")
        for each in courses:
            started = time.monotonic()
            exercises, chapters = rollups_rebuild(course=each)
            self.stdout.write(
                f"{each.slug}: {exercises} exercise summaries, {chapters} chapter summaries "
                f"in {time.monotonic() - started:.1f} s"
            )
