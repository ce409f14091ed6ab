"""A real LTI 1.3 platform for the tests: lti1p3platform (PyPI; this project did not write it) behind
a small HTTP server on a free port of the loopback, in a thread of the test process. The tool
talks to it over HTTP as it would to Canvas or Moodle: its key set, its OIDC authorization
endpoint, its token endpoint, its line items and scores (AGS), its memberships (NRPS), and its deep
linking return.

lti1p3platform does the LTI work: it validates the tool's preflight (the OIDC auth request),
builds and signs the id_token (resource link and deep linking launches, with the AGS and NRPS
claims), issues access tokens for the tool's signed client assertion (checked against the tool's
key set, fetched from the tool), checks the bearer token and scopes of every service call, and
validates the deep linking response's signature. Where it falls short, this module adds only
what a platform keeps or routes, never a check of the tool's own:

- It serves nothing: the HTTP routing is here (`Handler`), on the standard library's server.
- It stores nothing: users, classes, placed links, line items and scores are the dicts of
  `TestPlatform`, filled through its abstract storage hooks (find_lineitem, update_score,
  get_member_data_page, ...).
- Its launch form template module imports pkg_resources, which setuptools 81 removed: the same
  template file (lti1p3platform/framework/templates/launch.html) is rendered here with Jinja2.
- Its services let a bad bearer token's JWT error escape (an exception, not a 401): the handler
  answers 401 for it, as a platform does.
- It does not check the preflight's redirect_uri against the registered launch URL; a real
  platform does, so `auth` does too (a tool cannot send the token elsewhere).
- It does not say what a deep linking response's content items become: here an ltiResourceLink
  becomes a placed link, and its lineItem a line item, as Canvas and Moodle do.
- It has no platform side of LTI platform storage (the postMessage `lti.put_data` / `lti.get_data`
  of LTI Client Side postMessages); the tool keeps its state in a partitioned cookie instead
  (lti/tool.py), so none is added here.

Knobs for the bad-input tests (each a plain attribute): `id_token_expiration` (negative: expired
tokens), `forging_key` (tokens signed with a key the platform's key set does not publish), `token_audience` and `token_deployment_id` (what the token says, whatever was
registered), `jwks_status` (the key set answers this instead), `score_status` (the score endpoint
answers this) and `score_hang` (an Event the score endpoint waits on before answering).
"""

from __future__ import annotations

import functools
import html
import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from jwcrypto.jwk import JWK
from lti1p3platform.exceptions import LtiServiceException
from lti1p3platform.registration import Registration

from tests.lti.platform_lib import Grades, HttpRequest, Launch, PlatformConf, Preflight, Roster

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
LEARNER = f"{MEMBERSHIP}#Learner"
INSTRUCTOR = f"{MEMBERSHIP}#Instructor"
TEACHING_ASSISTANT = f"{MEMBERSHIP}/Instructor#TeachingAssistant"
FORM_FIELD = re.compile(r'name="(?P<name>[^"]+)" value="(?P<value>[^"]*)"')
FORM_ACTION = re.compile(r'action="(?P<action>[^"]+)"')


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def new_private_key() -> str:
    return JWK.generate(kty="RSA", size=2048).export_to_pem(private_key=True, password=None).decode()


@functools.lru_cache(maxsize=16)
def public_of(private_pem: str) -> str:
    return JWK.from_pem(private_pem.encode()).export_to_pem().decode()


@functools.lru_cache(maxsize=16)
def _loaded(private_pem: str):
    return serialization.load_pem_private_key(private_pem.encode(), password=None)


@functools.lru_cache(maxsize=16)
def _kid_of(private_pem: str) -> str:
    return Registration.get_jwk(private_pem)["kid"]


class KeptKeys(Registration):
    """lti1p3platform's registration with its keys loaded once, as a running platform keeps them
    (the library loads its private key from PEM for every message it signs: 30 ms each here, which
    the benchmark would otherwise count as the tool's)."""

    def get_kid(self):
        return _kid_of(self.get_platform_private_key())

    def platform_encode_and_sign(self, payload, expiration=None):
        if expiration:
            payload.update({"iat": int(time.time()), "exp": int(time.time()) + expiration})
        key = _loaded(self.get_platform_private_key())
        return jwt.encode(payload, key, algorithm="RS256", headers={"kid": self.get_kid()})


@dataclass
class Person:
    user_id: str
    name: str
    roles: list[str]
    email: str = ""
    status: str = "Active"

    def member(self) -> dict:
        given, _, family = self.name.partition(" ")
        return {
            "user_id": self.user_id,
            "name": self.name,
            "given_name": given,
            "family_name": family,
            "email": self.email,
            "roles": self.roles,
            "status": self.status,
        }


@dataclass
class PlacedLink:
    link_id: str
    context_id: str
    title: str
    custom: dict = field(default_factory=dict)
    lineitem_id: str | None = None


@dataclass
class LineItem:
    id: str
    label: str
    score_maximum: float
    resource_link_id: str
    scores: dict[str, dict] = field(default_factory=dict)  # the latest score of each user


class TestPlatform:
    """The platform's state and its registration of the tool. Start it with `start()`."""

    __test__ = False  # not a test class, whatever pytest thinks of the name

    def __init__(self, *, client_id: str = "easycompilers-tool", deployment_id: str = "deployment-1"):
        self.port = free_port()
        self.url = f"http://localhost:{self.port}"
        self.client_id = client_id
        self.deployment_id = deployment_id
        self.private_key = new_private_key()
        self.tool_url = ""
        self.tool_key_set: dict | None = None
        self.people: dict[str, Person] = {}
        self.classes: dict[str, list[str]] = {}
        self.class_titles: dict[str, str] = {}
        self.links: dict[str, PlacedLink] = {}
        self.lineitems: dict[str, LineItem] = {}
        self.score_posts: list[dict] = []
        self.token_requests = 0
        self.placed: list[dict] = []
        self.lock = threading.Lock()
        self._ids = itertools.count(1)
        # Knobs for the bad-input tests.
        self.id_token_expiration = 300
        self.forging_key: str | None = None
        self.token_audience: str | None = None
        self.token_deployment_id: str | None = None
        self.jwks_status: int | None = None
        self.score_status: int | None = None
        self.score_hang: threading.Event | None = None
        self.server: ThreadingHTTPServer | None = None

    # --- set-up ----------------------------------------------------------------------------------

    def start(self) -> TestPlatform:
        platform = self

        class Bound(Handler):
            owner = platform

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Bound)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name="lti-platform", daemon=True).start()
        return self

    def stop(self) -> None:
        if self.score_hang is not None:
            self.score_hang.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def tool(self, url: str, *, key_set: dict | None = None) -> None:
        """Where the tool is (its login, launch and key set URLs follow), or its key set itself where
        the tool serves no HTTP (Django's test client)."""
        self.tool_url = url.rstrip("/")
        self.tool_key_set = key_set

    def registration(self) -> Registration:
        registration = (
            KeptKeys()
            .set_iss(self.url)
            .set_client_id(self.client_id)
            .set_deployment_id(self.deployment_id)
            .set_oidc_login_url(f"{self.tool_url}/lti/login/")
            .set_launch_url(f"{self.tool_url}/lti/launch/")
            .set_deeplink_launch_url(f"{self.tool_url}/lti/launch/")
            .set_tool_key_set_url(f"{self.tool_url}/lti/jwks/")
            .set_platform_private_key(self.forging_key or self.private_key)
            .set_platform_public_key(public_of(self.private_key))
        )
        if self.tool_key_set is not None:
            registration.set_tool_key_set(self.tool_key_set)
        return registration

    def person(self, user_id: str, name: str, roles: list[str] | str = LEARNER, context_id: str = "class-1") -> Person:
        person = Person(user_id=user_id, name=name, roles=[roles] if isinstance(roles, str) else roles)
        person.email = f"{user_id}@school.example"
        self.people[user_id] = person
        self.class_add(context_id)
        if user_id not in self.classes[context_id]:
            self.classes[context_id].append(user_id)
        return person

    def class_add(self, context_id: str, title: str | None = None) -> None:
        self.classes.setdefault(context_id, [])
        self.class_titles.setdefault(context_id, title or f"Class {context_id}")

    def link_add(
        self, *, link_id: str, context_id: str = "class-1", custom: dict | None = None, graded: bool = False
    ) -> PlacedLink:
        """A link an admin of the platform made by hand (no deep linking), with custom parameters."""
        self.class_add(context_id)
        link = PlacedLink(link_id=link_id, context_id=context_id, title=f"Link {link_id}", custom=custom or {})
        if graded:
            link.lineitem_id = self.lineitem_add(label=link.title, score_maximum=1, resource_link_id=link_id).id
        self.links[link_id] = link
        return link

    def lineitem_add(self, *, label: str, score_maximum: float, resource_link_id: str) -> LineItem:
        item = LineItem(
            id=str(next(self._ids)), label=label, score_maximum=score_maximum, resource_link_id=resource_link_id
        )
        self.lineitems[item.id] = item
        return item

    # --- what a test drives ----------------------------------------------------------------------

    def start_url(self, *, user_id: str, link_id: str | None = None, deep_link_context: str | None = None) -> str:
        """The platform's own page that starts a launch (the iframe's src in the LMS)."""
        query = {"user": user_id, **({"link": link_id} if link_id else {"deep_link": deep_link_context or ""})}
        return f"{self.url}/start?{urlencode(query)}"

    def login_url(self, *, user_id: str, link_id: str | None = None, deep_link_context: str | None = None) -> str:
        """The tool's login initiation URL the platform sends a browser to (lti1p3platform's preflight)."""
        hint = f"link:{link_id}" if link_id else f"deep_link:{deep_link_context}"
        preflight = Preflight(None, PlatformConf(platform=self))
        preflight.set_lti_message_hint(hint=hint)
        return preflight.initiate_login(user_id)

    def frame_page_url(self, *, user_id: str, link_id: str) -> str:
        """A page of this platform (another origin than the tool's) that frames the launch."""
        return f"{self.url}/course?{urlencode({'user': user_id, 'link': link_id})}"

    def scores_for(self, link_id: str) -> dict[str, dict]:
        link = self.links[link_id]
        return dict(self.lineitems[link.lineitem_id].scores) if link.lineitem_id else {}

    def posts_for(self, link_id: str, user_id: str) -> list[dict]:
        lineitem = self.links[link_id].lineitem_id
        return [post for post in self.score_posts if post["lineitem"] == lineitem and post.get("userId") == user_id]

    # --- the endpoints ---------------------------------------------------------------------------

    def auth(self, query: dict) -> tuple[int, str]:
        """The OIDC authorization endpoint: the tool's preflight comes back here with its state and
        nonce; the answer is the auto-posting form with the signed id_token."""
        if query.get("redirect_uri") != f"{self.tool_url}/lti/launch/":
            return 400, "redirect_uri is not the registered launch URL"
        person = self.people.get(query.get("login_hint", ""))
        if person is None:
            return 400, "unknown login_hint"
        kind, _, ident = query.get("lti_message_hint", "").partition(":")
        launch = Launch(HttpRequest({"get_data": query, "form_data": {}}), PlatformConf(platform=self))
        launch.set_user_data(person.user_id, person.roles, full_name=person.name, email_address=person.email)
        launch.set_launch_presentation_claim("iframe", return_url=f"{self.url}/return")
        if kind == "link":
            link = self.links[ident]
            launch.set_resource_link_claim(link.link_id, title=link.title)
            context_id = link.context_id
            if link.custom:
                launch.set_custom_parameters_claim(link.custom)
            if link.lineitem_id:
                launch.set_ags(
                    lineitems_url=f"{self.url}/lineitems", lineitem_url=f"{self.url}/lineitems/{link.lineitem_id}"
                )
        else:
            context_id = ident
            launch.set_dl(f"{self.url}/deep-link-return?{urlencode({'context': context_id})}", title="Add content")
        launch.set_launch_context_claim(context_id, context_title=self.class_titles.get(context_id, context_id))
        launch.set_nrps(f"{self.url}/memberships/{context_id}")
        if self.token_audience is not None:
            launch.set_extra_claims({"aud": self.token_audience, "azp": self.token_audience})
        if self.token_deployment_id is not None:
            launch.set_extra_claims(
                {"https://purl.imsglobal.org/spec/lti/claim/deployment_id": self.token_deployment_id}
            )
        launch.set_id_token_expiration(self.id_token_expiration)
        return 200, launch.lti_launch()

    def deep_link_return(self, form: dict, query: dict) -> tuple[int, str]:
        items = PlatformConf(platform=self).validate_deeplinking_resp({"JWT": form.get("JWT", "")})
        context_id = query.get("context", "class-1")
        placed = []
        for item in items:
            if item.get("type") != "ltiResourceLink":
                continue
            link_id = f"placed-{next(self._ids)}"
            link = PlacedLink(link_id=link_id, context_id=context_id, title=item.get("title") or link_id)
            link.custom = dict(item.get("custom") or {})
            if item.get("lineItem"):
                line = item["lineItem"]
                link.lineitem_id = self.lineitem_add(
                    label=line.get("label", link.title), score_maximum=line["scoreMaximum"], resource_link_id=link_id
                ).id
            self.links[link_id] = link
            placed.append({"link_id": link_id, **item})
        self.placed.extend(placed)
        titles = "".join(f"<li data-placed='{p['link_id']}'>{html.escape(p.get('title') or '')}</li>" for p in placed)
        return 200, f"<!doctype html><title>Placed</title><h1>Placed in the class</h1><ul>{titles}</ul>"

    def frame_page(self, query: dict) -> str:
        # As platforms do: the frame opens the tool's login initiation URL itself.
        start = self.login_url(user_id=query["user"], link_id=query["link"])
        return (
            "<!doctype html><html><head><title>Course in the LMS</title></head><body>"
            "<h1>A course page of the learning system</h1>"
            f'<iframe id="tool" title="EasyCompilers" src="{html.escape(start)}" '
            'style="width:1200px;height:1600px;border:1px solid #888" allow="clipboard-write"></iframe>'
            "</body></html>"
        )


class Handler(BaseHTTPRequestHandler):
    owner: TestPlatform

    def log_message(self, format, *args):  # the tests' output stays readable
        pass

    # --- plumbing --------------------------------------------------------------------------------

    def _query(self) -> dict:
        return {k: v[-1] for k, v in parse_qs(urlsplit(self.path).query).items()}

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _request(self, method: str, body: bytes) -> HttpRequest:
        content_type = self.headers.get("Content-Type", "")
        form = {k: v[-1] for k, v in parse_qs(body.decode()).items()} if "form" in content_type else {}
        data = json.loads(body) if body and "json" in content_type else None
        return HttpRequest(
            {
                "method": method,
                "form_data": form,
                "get_data": self._query(),
                "headers": {"Authorization": self.headers.get("Authorization", "")},
                "content_type": content_type,
                "path": urlsplit(self.path).path,
                "json": data,
            }
        )

    def _send(self, status: int, body: str | dict | list, content_type: str = "text/html; charset=utf-8", **headers):
        if not isinstance(body, str):
            body, content_type = json.dumps(body), content_type if "json" in content_type else "application/json"
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(data)

    def _service(self, response) -> None:
        payload = response.result.get("content", response.result) if isinstance(response.result, dict) else None
        if 200 <= response.code < 300:
            self._send(
                response.code, payload if payload is not None else {"status": response.message}, response.media_type
            )
        else:
            self._send(response.code, {"error": response.message}, "application/json")

    # --- routes ----------------------------------------------------------------------------------

    def do_GET(self):
        platform, path, query = self.owner, urlsplit(self.path).path, self._query()
        if path == "/jwks":
            if platform.jwks_status is not None:
                return self._send(platform.jwks_status, "<h1>Service unavailable</h1>")
            return self._send(200, {"keys": platform.registration().get_jwks()})
        if path == "/start":
            url = platform.login_url(
                user_id=query["user"], link_id=query.get("link"), deep_link_context=query.get("deep_link")
            )
            self.send_response(302)
            self.send_header("Location", url)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if path == "/auth":
            status, body = platform.auth(query)
            return self._send(status, body)
        if path == "/course":
            return self._send(200, platform.frame_page(query))
        if path.startswith("/memberships/"):
            context_id = path.removeprefix("/memberships/")
            if context_id not in platform.classes:
                return self._send(404, {"error": "no such class"})
            roster = Roster(self._request("GET", b""), platform, context_id)
            try:
                return self._service(roster.handle_resp(roster.handle_get_members))
            except jwt.PyJWTError as error:
                return self._send(401, {"error": f"invalid token: {error}"})
        match = re.fullmatch(r"/lineitems/(?P<id>[^/]+)", path)
        if match:
            grades = Grades(self._request("GET", b""), platform, match["id"])
            return self._service(grades.handle_resp(grades.handle_get_lineitem, line_item_id=match["id"]))
        return self._send(404, "not here")

    def do_POST(self):
        platform, path = self.owner, urlsplit(self.path).path
        body = self._body()
        if path == "/auth":  # response_mode form_post platforms also take the preflight as a POST
            status, page = platform.auth({k: v[-1] for k, v in parse_qs(body.decode()).items()})
            return self._send(status, page)
        if path == "/token":
            form = {k: v[-1] for k, v in parse_qs(body.decode()).items()}
            with platform.lock:
                platform.token_requests += 1
            try:
                token = PlatformConf(platform=platform).get_access_token(form)
            except Exception as error:  # the library's refusals are plain exceptions
                return self._send(400, {"error": "invalid_client", "error_description": str(error)})
            return self._send(200, token, "application/json")
        if path == "/deep-link-return":
            form = {k: v[-1] for k, v in parse_qs(body.decode()).items()}
            try:
                status, page = platform.deep_link_return(form, self._query())
            except Exception as error:
                return self._send(400, f"<h1>Deep linking response refused</h1><p>{html.escape(str(error))}</p>")
            return self._send(status, page)
        match = re.fullmatch(r"/lineitems/(?P<id>[^/]+)/scores", path)
        if match:
            if platform.score_hang is not None:
                platform.score_hang.wait(timeout=120)
            if platform.score_status is not None:
                return self._send(platform.score_status, "<h1>Internal error</h1>")
            grades = Grades(self._request("POST", body), platform, match["id"])
            try:
                return self._service(grades.handle_resp(grades.handle_update_score, line_item_id=match["id"]))
            except LtiServiceException as error:
                return self._send(error.status_code, {"error": error.message})
            except jwt.PyJWTError as error:  # lti1p3platform lets a bad bearer token's error escape
                return self._send(401, {"error": f"invalid token: {error}"})
        return self._send(404, "not here")


def launch_form(page: str) -> tuple[str, dict[str, str]]:
    """The action and fields of the platform's auto-posting launch form (or deep linking return)."""
    action = html.unescape(FORM_ACTION.search(page)["action"])
    return action, {m["name"]: html.unescape(m["value"]) for m in FORM_FIELD.finditer(page)}


def wait_until(predicate, *, timeout_s: float = 30, what: str = "the condition"):
    """Poll `predicate` until it is true; the deadline only stops a test that would hang."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
