"""Creates (or resets) the demo accounts that `make run` prints (teaching.services.demo)."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from teaching.services.demo import DEMO_ACCOUNTS, demo_accounts_reset


class Command(BaseCommand):
    help = "Create the demo learner, instructor and admin accounts (local use only)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--course", default="transformers-from-the-ground-up", help="Course the instructor teaches."
        )

    def handle(self, *args, course, **options):
        if not settings.DEBUG:
            # Its passwords are published (README, `make run`): anywhere but a developer's machine
            # they would be an open door, with an admin among them.
            raise CommandError(
                "demo_accounts creates accounts with published passwords, an admin among them; it runs only "
                "with DEBUG on (DJANGO_SETTINGS_MODULE=ecplatform.settings.dev, as `make run` sets)."
            )

        demo_accounts_reset(course_slug=course)
        self.stdout.write("Demo accounts (local use only):")
        for username, password, role in DEMO_ACCOUNTS:
            self.stdout.write(f"  {role.label:<11} {username:<11} password: {password}")
