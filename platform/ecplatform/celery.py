"""The Celery app. Workers start with `python -m celery -A ecplatform worker` from the repo root."""

import os

from celery import Celery

# Production unless asked otherwise: a server started without settings must not run with DEBUG.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ecplatform.settings.production")

app = Celery("ecplatform")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
