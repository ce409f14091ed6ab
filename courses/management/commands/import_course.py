"""manage.py import_course DIR: create or update a course from its folder (courses/content/FORMAT.md)."""

from django.core.management.base import BaseCommand, CommandError

from courses.services.authoring import PublishRefusedError, course_import_published
from courses.services.content_io import ContentError


class Command(BaseCommand):
    help = (
        "Create or update a course from a course folder. A broken file, or an exercise of a published chapter "
        "that fails validation in the sandbox, stops it with nothing written."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", help="The course folder (holds course.yaml).")
        parser.add_argument(
            "--backend",
            choices=("local", "docker"),
            default=None,
            help="Validate the exercises in this process, on this sandbox. Default: as the admin does, in a "
            "runner worker where Redis is configured, else in this process on RUNNER_BACKEND.",
        )

    def handle(self, *args, directory, backend, **options):
        try:
            report = course_import_published(path=directory, backend=backend)
        except ContentError as error:
            raise CommandError(str(error)) from None
        except PublishRefusedError as refused:
            raise CommandError("Nothing was imported: " + "\n".join(refused.problems)) from None
        self.stdout.write(report.summary())
