"""The ASGI application (uvicorn serves it), so that run event streams stay open without holding a
thread each."""

import os

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler

# Production unless asked otherwise: a server started without settings must not run with DEBUG.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ecplatform.settings.production")


class SyncChainASGIHandler(ASGIHandler):
    """Runs the middleware chain and the view in one worker thread, as WSGI does.

    Django's stock handler builds an async chain: its own middleware then runs in async mode, where
    each process_request/process_response hook hops to a thread and back, and a sync-only
    middleware (WhiteNoise) and the sync views (DRF's) add hops of their own: about ten a request,
    several milliseconds. Every view here is sync; the event stream's async iterator is still
    consumed on the event loop, after the view has returned its response."""

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)

    async def get_response_async(self, request):
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application() does
application = SyncChainASGIHandler()
