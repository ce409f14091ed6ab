"""Creates (or resets) the demo accounts that `make run` prints, one per role, the instructor
teaching the demo course (teaching's: it stands on both accounts and courses)."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from courses.models import Course

DEMO_ACCOUNTS = [
    ("learner", "learner-demo-pass", User.Role.LEARNER),
    ("instructor", "instructor-demo-pass", User.Role.INSTRUCTOR),
    ("admin", "admin-demo-pass", User.Role.ADMIN),
]


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

        for username, password, role in DEMO_ACCOUNTS:
            user, _ = User.objects.get_or_create(username=username, defaults={"role": role})
            user.role = role
            user.set_password(password)
            user.save()
            if role == User.Role.INSTRUCTOR:
                for taught in Course.objects.filter(slug=course):
                    taught.instructors.add(user)
        self.stdout.write("Demo accounts (local use only):")
        for username, password, role in DEMO_ACCOUNTS:
            self.stdout.write(f"  {role.label:<11} {username:<11} password: {password}")
