#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys
from pathlib import Path

# The project core lives in platform/, a source folder (not a package) so the standard
# library's `platform` module is never shadowed; its packages import as `ecplatform`, `accounts`.
sys.path.insert(1, str(Path(__file__).resolve().parent / "platform"))


def main():
    # Production unless the development settings are asked for (the Makefile does, for `make run`):
    # a command run by hand on a server must never pick DEBUG settings by default.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ecplatform.settings.production")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
