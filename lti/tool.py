"""The LTI 1.3 security of this tool, through pylti1p3: OIDC login initiation, the id_token's checks
(state, nonce, issuer, audience, deployment, signature against the platform's key set, expiry),
the signed deep linking response and the OAuth 2 client-credentials tokens of the Advantage
services. No JWT or OIDC step is written here; this module plugs the platform's own rows into the
library and tightens the three places where its defaults fall short of what we need.

Why pylti1p3 under our own models, and not django-lti (which is built on pylti1p3 too):

- django-lti writes on bad input. Its tool configuration creates an LtiDeployment row for any
  deployment id a launch names (`find_deployment_by_params` ends in `objects.create`), and its
  launch view stores the user, context, membership and resource link before it looks whether the
  deployment is active: an unknown deployment leaves rows behind. Here an unknown deployment is
  refused and nothing is written.
- It finds people by (registration, sub), where LTI makes `sub` unique per issuer; here a person is
  (issuer, subject), so two registrations of one platform (two client ids) are one person.
- Its models (LtiUser, LtiContext, LtiMembership, its Key) would stand beside accounts, cohorts
  and enrolments, which are what the dashboards read; a second set of them would have to be kept in
  step. What we keep of LTI (lti.models) is small and points at those.
- Everything it adds that we use is a thin layer: the security checks are pylti1p3's either way.

What is tightened here:

- Nonce once only. pylti1p3 checks that the nonce was issued (present in storage) but never spends
  it, and after a first launch it accepts the same state again from storage: the same id_token
  posted twice would sign in twice. MessageLaunch.validate deletes the nonce when everything else
  has passed; a second post finds it gone.
- Timeouts. pylti1p3 calls the platform (key set, token, scores, roster) with no timeout, so a
  platform that hangs would hold a web worker or a Celery worker forever.
- Cookies in the LMS's iframe. The state cookie that ties the launch to the browser that started
  the login is set SameSite=None; Secure; Partitioned (CHIPS), so Chromium keeps it inside a
  cross-site iframe where third-party cookies are blocked; lti.middleware does the same for the
  session of a launched learner. A browser that keeps no cookie in the frame gets the first-launch
  new-window fallback (views.launch) instead of a failed launch.
"""

import hashlib
from http.cookies import Morsel

import jwt
import requests
from django.conf import settings
from django.core.cache import cache
from pylti1p3.contrib.django import DjangoMessageLaunch, DjangoOIDCLogin
from pylti1p3.contrib.django.cookie import DjangoCookieService
from pylti1p3.contrib.django.launch_data_storage.cache import DjangoCacheDataStorage
from pylti1p3.contrib.django.request import DjangoRequest
from pylti1p3.deployment import Deployment as LibDeployment
from pylti1p3.exception import LtiException
from pylti1p3.registration import Registration
from pylti1p3.service_connector import ServiceConnector
from pylti1p3.tool_config import ToolConfAbstract

from lti.models import Deployment, Platform
from lti.services.keys import key_signing

# Connect, read: a platform that does not answer fails the call instead of holding a worker.
HTTP_TIMEOUT_S = (5, 15)
# How long a login's state and nonce wait for the launch (pylti1p3 keeps them a day by default).
LOGIN_LIFETIME_S = 600
# A platform's key set is fetched once and kept this long; a token signed with a key not in the
# kept set makes one fresh fetch (the platform rotated its keys).
PLATFORM_KEYS_CACHE_S = 3600
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"


class TimeoutSession(requests.Session):
    def __init__(self):
        super().__init__()
        self.headers["User-Agent"] = "EasyCompilers-LTI"

    def request(self, *args, **kwargs):
        kwargs.setdefault("timeout", HTTP_TIMEOUT_S)
        return super().request(*args, **kwargs)


def registration_for(platform: Platform) -> Registration:
    key = key_signing()
    registration = (
        Registration()
        .set_issuer(platform.issuer)
        .set_client_id(platform.client_id)
        .set_auth_login_url(platform.auth_login_url)
        .set_auth_token_url(platform.token_url)
        .set_key_set_url(platform.keyset_url)
        .set_tool_private_key(key.private_pem)
        .set_tool_public_key(key.public_pem)
    )
    if platform.token_audience:
        registration.set_auth_audience(platform.token_audience)
    return registration


def platform_find(*, issuer: str, client_id: str | None) -> Platform | None:
    """The active registration of (issuer, client id); without a client id (a login initiation
    may leave it out), the issuer's only active registration."""
    platforms = Platform.objects.filter(issuer=issuer, is_active=True)
    if client_id:
        return platforms.filter(client_id=client_id).first()
    found = list(platforms[:2])
    return found[0] if len(found) == 1 else None


class ToolConf(ToolConfAbstract):
    """Registrations and deployments from lti.models, looked up, never created."""

    def __init__(self):
        super().__init__()
        self.platform: Platform | None = None

    def check_iss_has_one_client(self, iss):
        return False

    def check_iss_has_many_clients(self, iss):
        return True

    def find_registration_by_issuer(self, iss, *args, **kwargs):
        return self.find_registration_by_params(iss, None)

    def find_registration_by_params(self, iss, client_id, *args, **kwargs):
        self.platform = platform_find(issuer=iss, client_id=client_id)
        return registration_for(self.platform) if self.platform else None

    def find_deployment(self, iss, deployment_id):
        return self.find_deployment_by_params(iss, deployment_id, None)

    def find_deployment_by_params(self, iss, deployment_id, client_id, *args, **kwargs):
        platform = self.platform or platform_find(issuer=iss, client_id=client_id)
        if platform is None or not Deployment.objects.filter(platform=platform, deployment_id=deployment_id).exists():
            return None
        return LibDeployment().set_deployment_id(deployment_id)


class LaunchStorage(DjangoCacheDataStorage):
    """pylti1p3's cache storage, keyed by the login's random state and nonce only. (The library
    adds a session-id cookie on HTTPS; in a cross-site iframe that cookie is the very thing a
    browser may drop, and the state cookie already ties the launch to the browser.)"""

    def get_session_cookie_name(self):
        return None

    def take_value(self, key: str) -> bool:
        """Delete the key; True for the one caller that found it (a cache's delete is atomic)."""
        return bool(self._get_cache().delete(self._prepare_key(key)))


class PartitionedMorsel(Morsel):
    """A cookie with the Partitioned attribute (CHIPS), which http.cookies before Python 3.14 cannot write."""

    def OutputString(self, attrs=None):
        return super().OutputString(attrs) + "; Partitioned"


def cookie_partition(response, name: str) -> None:
    """Make the response's cookie `name` one that Chromium keeps inside a cross-site iframe with
    third-party cookies blocked: SameSite=None, Secure, Partitioned (keyed to the framing site)."""
    morsel = response.cookies.get(name)
    if morsel is None or isinstance(morsel, PartitionedMorsel):
        return
    partitioned = PartitionedMorsel()
    partitioned.set(morsel.key, morsel.value, morsel.coded_value)
    partitioned.update({k: v for k, v in morsel.items() if v})
    partitioned["samesite"] = "None"
    partitioned["secure"] = True
    response.cookies[name] = partitioned


class CookieService(DjangoCookieService):
    def update_response(self, response):
        for name, data in self._cookie_data_to_set.items():
            response.set_cookie(name, data["value"], max_age=data["exp"], path="/", httponly=True)
            cookie_partition(response, name)


def storage() -> LaunchStorage:
    return LaunchStorage()


class OIDCLogin(DjangoOIDCLogin):
    def __init__(self, request, tool_conf):
        launch_storage = storage()
        super().__init__(
            request, tool_conf, cookie_service=CookieService(DjangoRequest(request)), launch_data_storage=launch_storage
        )
        self.set_launch_data_storage(launch_storage).set_launch_data_lifetime(LOGIN_LIFETIME_S)


class MessageLaunch(DjangoMessageLaunch):
    def __init__(self, request, tool_conf):
        super().__init__(
            request,
            tool_conf,
            cookie_service=CookieService(DjangoRequest(request, post_only=True)),
            launch_data_storage=storage(),
            requests_session=TimeoutSession(),
        )
        self.set_launch_data_lifetime(LOGIN_LIFETIME_S)
        self.set_public_key_caching(storage(), cache_lifetime=PLATFORM_KEYS_CACHE_S)

    def validate(self):
        super().validate()
        nonce = self._get_jwt_body().get("nonce")
        # pylti1p3 only checked that the nonce is there: spend it, once, now that all else passed.
        if not self._session_service.data_storage.take_value(self._session_service._get_key("nonce", nonce)):
            self._validated = False
            raise LtiException("Invalid Nonce")
        return self

    def fetch_public_key(self, key_set_url):
        """pylti1p3's fetch, which also took an error page for a key set and kept it."""
        kept_key = _key_set_key(key_set_url)
        kept = self._public_key_cache_data_storage.get_value(kept_key)
        if kept:
            return kept
        try:
            response = self._requests_session.get(key_set_url)
        except requests.RequestException as error:
            raise LtiException(f"Error during fetch URL {key_set_url}: {error}") from error
        if not response.ok:
            raise LtiException(f"Error during fetch URL {key_set_url}: HTTP {response.status_code}")
        try:
            key_set = response.json()
        except ValueError as error:
            raise LtiException(f"Invalid response from {key_set_url}. Must be JSON") from error
        if not isinstance(key_set, dict) or not isinstance(key_set.get("keys"), list):
            raise LtiException(f"Invalid response from {key_set_url}: not a key set")
        self._public_key_cache_data_storage.set_value(kept_key, key_set, self._public_key_cache_lifetime)
        return key_set

    def get_public_key(self):
        try:
            return super().get_public_key()
        except LtiException as error:
            if str(error) != "Unable to find public key":
                raise
        # A kid the kept key set lacks: the platform may have rotated its keys since it was fetched.
        self._public_key_cache_data_storage.take_value(_key_set_key(self._registration.get_key_set_url()))
        self._registration.set_key_set(None)
        return super().get_public_key()


def _key_set_key(url: str) -> str:
    return "key-set-url-" + hashlib.sha256(url.encode()).hexdigest()


class CachingServiceConnector(ServiceConnector):
    """pylti1p3's service connector (client-credentials token, then the call), with a timeout on
    every call and the access token kept between calls: a score post is then one request, not two."""

    def __init__(self, platform: Platform):
        super().__init__(registration_for(platform), TimeoutSession())
        self.platform = platform

    def _token_key(self, scopes) -> str:
        # Keyed by what the token was asked of, not only by the row: a registration edited (or a
        # database made afresh under a cache that stayed) never gets another platform's token.
        asked = "|".join([self.platform.issuer, self.platform.client_id, self.platform.token_url, *sorted(scopes)])
        return f"lti-token-{self.platform.pk}-{hashlib.sha256(asked.encode()).hexdigest()}"

    def get_access_token(self, scopes):
        key = self._token_key(scopes)
        token = cache.get(key)
        if token:
            return token
        token = super().get_access_token(scopes)
        cache.set(key, token, settings.LTI_ACCESS_TOKEN_KEEP_S)
        return token

    def forget_token(self, scopes) -> None:
        cache.delete(self._token_key(scopes))
        self._access_tokens.clear()


def unverified_claims(id_token: str) -> tuple[dict, dict]:
    """The token's header and body as they read, before any check (to name what is wrong)."""
    header = jwt.get_unverified_header(id_token)
    body = jwt.decode(id_token, options={"verify_signature": False})
    return header, body


# --- the launch's checks, named ------------------------------------------------------------------

LOGIN_PARAMS = ("iss", "login_hint", "target_link_uri", "lti_message_hint", "lti_deployment_id", "client_id")


class CookiesBlocked(Exception):
    """The launch came back without the state cookie its login set, for a state this tool issued:
    the browser keeps no cookie for the tool inside the frame. `login_url` starts the same login
    again, for a new window (where the tool is the first party)."""

    def __init__(self, login_url: str):
        super().__init__("The browser kept no cookie for this tool in the frame.")
        self.login_url = login_url


def login_params_keep(oidc: OIDCLogin, params) -> None:
    oidc.pass_params_to_launch({"login": {name: params[name] for name in LOGIN_PARAMS if params.get(name)}})


def _login_params_of(state: str) -> dict | None:
    kept = storage().get_value(f"lti1p3-{state}")
    return kept.get("login") if isinstance(kept, dict) else None


def _refusal(error: LtiException, *, state: str, body: dict, login_url: str):
    """What a pylti1p3 refusal means, for the page and the log: (LaunchRefused or CookiesBlocked)."""
    from urllib.parse import urlencode

    from lti.services.launch import LaunchRefused

    message = str(error)
    if message == "State not found":
        params = _login_params_of(state)
        if params is not None:
            return CookiesBlocked(f"{login_url}?{urlencode({**params, 'lti1p3_new_window': '1'})}")
        return LaunchRefused(
            "This launch did not start with a login at this tool in this browser, or its login is more than "
            "five minutes old (state not found): start it again from the learning system."
        )
    if message in ("Invalid Nonce", '"nonce" is empty'):
        return LaunchRefused(
            "This launch's token was used already (replayed), or its login expired (nonce not found): start it "
            "again from the learning system."
        )
    if "Signature has expired" in message:
        return LaunchRefused("The launch's token has expired: start it again from the learning system.")
    if message.startswith("Can't decode id_token") or message in (
        "Unable to find public key",
        "JWT KID not found",
        "JWT ALG not found",
        "Can't convert JWT key to PEM format",
    ):
        return LaunchRefused(
            f"The launch's token is not signed by {body.get('iss')!r} (forged: its signature does not match the "
            f"platform's key set): {message}."
        )
    if message.startswith(("Error during fetch URL", "Invalid response from")):
        return LaunchRefused(
            f"The platform's key set could not be read, so its launches cannot be checked ({message}).", status=502
        )
    if message == "Unable to find deployment":
        deployment = body.get("https://purl.imsglobal.org/spec/lti/claim/deployment_id")
        return LaunchRefused(
            f"The deployment {deployment!r} of {body.get('iss')!r} is not registered with this tool: an admin adds it "
            "to the learning system's registration."
        )
    if message in ("Registration not found.", "Client id not registered for this issuer"):
        return LaunchRefused(f"No registration of this tool matches the token's issuer and audience ({message}).")
    return LaunchRefused(f"The launch message is not valid: {message}.", status=400)


def launch_validate(request, *, login_url: str) -> tuple[Platform, dict]:
    """The launch's id_token, checked by pylti1p3 (and its nonce spent): the platform and the
    token's claims. LaunchRefused says which check failed; CookiesBlocked asks for a new window."""
    from lti.services.launch import LaunchRefused

    id_token, state = request.POST.get("id_token", ""), request.POST.get("state", "")
    if not id_token or not state:
        raise LaunchRefused("This is not an LTI launch: it carries no id_token and state.", status=400)
    try:
        _header, body = unverified_claims(id_token)
    except jwt.PyJWTError as error:
        raise LaunchRefused(f"The launch's id_token is not a JWT: {error}.", status=400) from None
    issuer = body.get("iss")
    platforms = Platform.objects.filter(issuer=issuer) if isinstance(issuer, str) else Platform.objects.none()
    if not platforms.exists():
        raise LaunchRefused(f"No learning system is registered with this tool as the issuer {issuer!r}.")
    if not platforms.filter(is_active=True).exists():
        raise LaunchRefused(f"The registration of {issuer!r} is switched off.")
    audience = body.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    client_ids = sorted(platforms.filter(is_active=True).values_list("client_id", flat=True))
    if not set(client_ids).intersection(audiences):
        raise LaunchRefused(
            f"The launch's token is for {audiences!r} (its audience), not for this tool, registered at {issuer!r} as "
            f"{client_ids!r}: wrong audience."
        )
    tool_conf = ToolConf()
    launch = MessageLaunch(request, tool_conf)
    try:
        launch.validate()
    except LtiException as error:
        raise _refusal(error, state=state, body=body, login_url=login_url) from None
    return tool_conf.platform, dict(launch.get_launch_data())
