"""Pages of a launched session, inside the learning system's iframe.

A launch signs its person in from a cross-site iframe. Chromium keeps no third-party cookie there
(a SameSite=Lax session cookie is not even sent), so the session and CSRF cookies of a launched
session are set SameSite=None; Secure; Partitioned: CHIPS, kept per framing site, which Chromium
keeps where third-party cookies are blocked. Its pages may be framed by the platform's origins
(Content-Security-Policy frame-ancestors, in place of X-Frame-Options), and by no one else.

Placed before SessionMiddleware (settings): it sees the response after the session and CSRF
cookies are set on it.
"""

from django.conf import settings

from lti.tool import cookie_partition

# What a launch keeps in the session (lti.views.launch): its platform, class, link, role, frame origins.
SESSION_KEY = "lti"


class EmbeddedSessionMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        session = getattr(request, "session", None)
        # A request that neither had nor touched a session (static files, token API calls) costs no read.
        if session is None or not (session.accessed or settings.SESSION_COOKIE_NAME in request.COOKIES):
            return response
        launched = session.get(SESSION_KEY)
        if not isinstance(launched, dict):
            return response
        origins = [origin for origin in launched.get("frame_origins") or [] if isinstance(origin, str)]
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = "frame-ancestors " + " ".join(["'self'", *origins])
            if "X-Frame-Options" in response:
                del response["X-Frame-Options"]
        for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME):
            cookie_partition(response, name)
        return response
