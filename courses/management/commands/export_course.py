"""manage.py export_course SLUG DIR: write a course back as a folder (courses/content/FORMAT.md)."""

from django.core.management.base import BaseCommand, CommandError

from courses.models import Course
from courses.services.content_io import ContentError, course_export


class Command(BaseCommand):
    help = "Write a course as a course folder: course.yaml, glossary.yaml and chapters/ are replaced."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="The course's slug.")
        parser.add_argument("directory", help="The folder to write (created if missing).")

    def handle(self, *args, slug, directory, **options):
        course = Course.objects.filter(slug=slug).first()
        if course is None:
            raise CommandError(f"no course with the slug '{slug}'")
        try:
            course_export(course=course, path=directory)
        except ContentError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Exported course '{slug}' to {directory}")
