import os

from django.core.wsgi import get_wsgi_application

# Production unless asked otherwise: a server started without settings must not run with DEBUG.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ecplatform.settings.production")

application = get_wsgi_application()
