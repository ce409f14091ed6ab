"""The tool's endpoints for learning systems: the key set, OIDC login initiation, the launch (resource
and deep linking), the deep linking page, and instructors' LMS classes with the roster sync.

The login and the launch are cross-site requests from the platform, inside its iframe: neither
carries a CSRF token (the launch's id_token is its proof), and both may be framed. Every refusal is
a page that says which check failed, with a 4xx status when the caller is at fault (5xx when the
platform's key set or roster cannot be read), and a log line saying the same; nothing is written.
"""

import logging
from urllib.parse import urlencode

from django.contrib.auth import login as session_login
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from lti import selectors
from lti.middleware import SESSION_KEY
from lti.models import Context, Deployment
from lti.services.deep_linking import DeepLinkRequest, deep_link_answer
from lti.services.keys import tool_jwks
from lti.services.launch import (
    DEPLOYMENT,
    LaunchRefused,
    deep_link_accept,
    launch_accept,
    placement_parse,
    target_from_params,
)
from lti.services.roster import roster_sync
from lti.tool import (
    CookiesBlocked,
    OIDCLogin,
    ToolConf,
    launch_validate,
    login_params_keep,
    platform_find,
)

log = logging.getLogger(__name__)

DEEP_LINK_KEY = "lti_deep_link"
MESSAGE_TYPE = "https://purl.imsglobal.org/spec/lti/claim/message_type"
DL_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"


def _refused(request, refusal: LaunchRefused, *, what: str):
    log.warning("LTI %s refused (%s): %s", what, refusal.status, refusal.reason)
    response = render(request, "lti/refused.html", {"reason": refusal.reason, "what": what}, status=refusal.status)
    response.xframe_options_exempt = True
    return response


def _absolute(request, name: str) -> str:
    return request.build_absolute_uri(reverse(name))


@require_GET
def jwks(request):
    """The tool's public keys (every live one: two during a rotation), at a URL that never changes."""
    response = JsonResponse(tool_jwks())
    response["Cache-Control"] = "public, max-age=300"
    return response


@csrf_exempt
@xframe_options_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def login(request):
    """OIDC third-party login initiation: the platform names itself (iss) and the person
    (login_hint); the tool answers with the redirect to the platform's authorization endpoint,
    setting the state cookie (partitioned, so it holds in the iframe) and keeping the nonce."""
    params = request.POST if request.method == "POST" else request.GET
    issuer, client_id = params.get("iss", ""), params.get("client_id") or None
    try:
        if not issuer or not params.get("login_hint"):
            raise LaunchRefused("This login initiation lacks its issuer (iss) or its login_hint.", status=400)
        platform = platform_find(issuer=issuer, client_id=client_id)
        if platform is None:
            raise LaunchRefused(
                f"No learning system is registered with this tool as the issuer {issuer!r}"
                + (f" and the client id {client_id!r}." if client_id else ".")
            )
        deployment_id = params.get("lti_deployment_id")
        if deployment_id and not Deployment.objects.filter(platform=platform, deployment_id=deployment_id).exists():
            raise LaunchRefused(
                f"The deployment {deployment_id!r} of {issuer!r} is not registered with this tool: an admin adds it "
                "to the learning system's registration."
            )
    except LaunchRefused as refusal:
        return _refused(request, refusal, what="login")
    oidc = OIDCLogin(request, ToolConf())
    login_params_keep(oidc, params)
    return oidc.get_redirect_object(_absolute(request, "lti:launch")).do_redirect()


@csrf_exempt
@xframe_options_exempt
@never_cache
@require_POST
def launch(request):
    """The id_token post: checked (lti.tool), then the person is signed in and lands on what the
    link opens (a resource launch) or on the deep linking page (an instructor placing content)."""
    try:
        platform, claims = launch_validate(request, login_url=_absolute(request, "lti:login"))
        message_type = claims.get(MESSAGE_TYPE)
        if message_type == "LtiResourceLinkRequest":
            accepted = launch_accept(platform=platform, claims=claims)
        elif message_type == "LtiDeepLinkingRequest":
            accepted = deep_link_accept(platform=platform, claims=claims)
        else:
            raise LaunchRefused(f"This tool does not take {message_type!r} messages.", status=400)
    except CookiesBlocked as blocked:
        log.info("LTI launch without its state cookie: offering a new window")
        response = render(request, "lti/new_window.html", {"login_url": blocked.login_url})
        response.xframe_options_exempt = True
        return response
    except LaunchRefused as refusal:
        return _refused(request, refusal, what="launch")
    session_login(request, accepted.user, backend="django.contrib.auth.backends.ModelBackend")
    request.session[SESSION_KEY] = {
        "platform": platform.pk,
        "context": accepted.context.pk if accepted.context else None,
        "link": accepted.link.pk if accepted.link else None,
        "role": accepted.role,
        "frame_origins": accepted.frame_origins,
    }
    if message_type == "LtiDeepLinkingRequest":
        request.session[DEEP_LINK_KEY] = DeepLinkRequest(
            platform_id=platform.pk,
            deployment_id=str(claims[DEPLOYMENT]),
            context_id=accepted.context.pk,
            user_id=accepted.user.pk,
            settings=dict(claims.get(DL_SETTINGS) or {}),
        ).as_session()
    log.info("LTI %s launch of %s from %s lands on %s", accepted.role, accepted.user, platform, accepted.landing_url)
    return redirect(accepted.landing_url)


def _deep_link_request(request) -> DeepLinkRequest:
    found = DeepLinkRequest.from_session(request.session.get(DEEP_LINK_KEY))
    if found is None or found.user_id != request.user.pk:
        raise LaunchRefused(
            "No deep linking request of yours is open: placing content starts from the learning system, by an "
            "instructor of the class."
        )
    return found


@never_cache
@require_http_methods(["GET", "POST"])
def deep_link(request):
    """The deep linking page: the courses this platform may place, their parts and exercises. The
    choice is answered to the platform with a signed content item; nothing is signed for anyone
    but the instructor whose deep linking launch is open in this session."""
    try:
        if not request.user.is_authenticated:
            raise LaunchRefused("Placing content starts from the learning system, by an instructor of the class.")
        pending = _deep_link_request(request)
        platform = selectors.platform_get(pk=pending.platform_id)
        if request.method == "GET":
            courses = selectors.placeable_courses(platform=platform)
            context = {"courses": courses, "platform": platform, "takes_lineitems": pending.takes_lineitems()}
            return render(request, "lti/deep_link.html", context)
        placement = placement_parse(request.POST.get("placement"))
        target = target_from_params(platform=platform, params=placement, staff=True)
        answer = deep_link_answer(
            request=pending,
            user=request.user,
            target=target,
            graded=request.POST.get("graded") == "on",
            launch_url=_absolute(request, "lti:launch"),
        )
    except LaunchRefused as refusal:
        return _refused(request, refusal, what="deep linking")
    del request.session[DEEP_LINK_KEY]
    log.info("LTI deep link by %s places %s (graded: %s)", request.user, answer.title, answer.graded)
    return render(request, "lti/deep_link_return.html", {"answer": answer})


@login_required
@require_GET
def classes(request):
    """An instructor's LMS classes: each class's cohorts (to the dashboards) and its roster sync."""
    contexts = selectors.classes_for(user=request.user)
    if not contexts and not request.user.is_staff:
        raise Http404("No LMS class of yours.")
    return render(request, "lti/classes.html", {"contexts": contexts})


@login_required
@require_POST
def class_sync(request, context_id: int):
    context = Context.objects.select_related("platform").filter(pk=context_id).first()
    if context is None or not selectors.class_taught_by(context=context, user=request.user):
        raise Http404("No such LMS class of yours.")
    try:
        result = roster_sync(context=context)
    except LaunchRefused as refusal:
        log.warning("LTI roster sync of %s failed (%s): %s", context, refusal.status, refusal.reason)
        page = {"contexts": selectors.classes_for(user=request.user), "error": refusal.reason, "synced": context}
        return render(request, "lti/classes.html", page, status=refusal.status)
    query = urlencode({"synced": context.pk, "added": result.added, "removed": result.removed})
    return redirect(f"{reverse('lti:classes')}?{query}")
