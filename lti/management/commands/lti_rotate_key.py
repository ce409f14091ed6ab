"""Rotate the tool's signing key (lti.services.keys): the new key signs from now on, the one it
replaces stays in the key set until the next rotation or `--retire-previous`."""

from django.core.management.base import BaseCommand

from lti.services.keys import key_retire_previous, key_rotate


class Command(BaseCommand):
    help = "Make a new LTI signing key; the previous one stays published until the next rotation."

    def add_arguments(self, parser):
        parser.add_argument(
            "--retire-previous",
            action="store_true",
            help="Only retire every published key but the signing one (end a rotation; no new key).",
        )

    def handle(self, *args, retire_previous=False, **options):
        if retire_previous:
            count = key_retire_previous()
            self.stdout.write(f"Retired {count} previous key(s); the key set now holds the signing key only.")
            return
        key = key_rotate()
        self.stdout.write(f"New signing key {key.kid}; the previous one stays in /lti/jwks/ until the next rotation.")
