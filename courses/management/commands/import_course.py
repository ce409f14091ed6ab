"""manage.py import_course DIR: create or update a course from its folder (courses/content/FORMAT.md)."""

from django.core.management.base import BaseCommand, CommandError

from courses.services.content_io import ContentError, course_import


class Command(BaseCommand):
    help = "Create or update a course from a course folder; a broken file stops it with nothing written."

    def add_arguments(self, parser):
        parser.add_argument("directory", help="The course folder (holds course.yaml).")

    def handle(self, *args, directory, **options):
        try:
            report = course_import(path=directory)
        except ContentError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(report.summary())
