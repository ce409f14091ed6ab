"""lti1p3platform's classes, filled in for the test platform (tests/lti/platform.py): its
configuration (the registration), its launch (rendered with the library's own form template), its
login initiation, and its Assignment and Grade and Names and Role services over the platform's
dicts. Every check (tokens, scopes, signatures) is the library's."""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

import jinja2
from lti1p3platform.exceptions import LineItemNotFoundException
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.request import Request
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService

if TYPE_CHECKING:
    from tests.lti.platform import LineItem, TestPlatform

LAUNCH_FORM = jinja2.Template((files("lti1p3platform.framework") / "templates" / "launch.html").read_text())


class HttpRequest(Request):
    """lti1p3platform's request, from what the HTTP handler read."""

    def build_metadata(self, request: dict):
        return request


class PlatformConf(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs):
        self.platform: TestPlatform = kwargs["platform"]
        self.get_registration()

    def get_registration_by_params(self, **kwargs):
        return self.platform.registration()


class Launch(LTIAdvantageMessageLaunchAbstract):
    def render_launch_form(self, launch_data, **kwargs):
        return LAUNCH_FORM.render(**launch_data)


class Preflight(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs):
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url):
        return url


class Grades(AssignmentsGradesService):
    def __init__(self, request, platform: TestPlatform, lineitem_id: str | None = None):
        base = platform.url
        super().__init__(
            request,
            PlatformConf(platform=platform),
            lineitems_url=f"{base}/lineitems",
            lineitem_url=f"{base}/lineitems/{lineitem_id}" if lineitem_id else None,
        )
        self.platform = platform

    def _item(self, line_item_id: str) -> LineItem:
        item = self.platform.lineitems.get(line_item_id)
        if item is None:
            raise LineItemNotFoundException(line_item_id)
        return item

    def find_lineitems(self, page=1, limit=None, line_item_id=None, resource_link_id=None, resource_id=None, tag=None):
        items = [self._as_json(item) for item in self.platform.lineitems.values()]
        return {"content": items, "has_next": False, "next": None}

    def find_lineitem(self, line_item_id):
        return self._as_json(self._item(line_item_id))

    def create_lineitem(self, creation_data):
        item = self.platform.lineitem_add(
            label=creation_data.get("label", ""),
            score_maximum=creation_data.get("scoreMaximum", 1),
            resource_link_id=creation_data.get("resourceLinkId", ""),
        )
        return self._as_json(item)

    def update_lineitem(self, update_data):
        item = self._item(str(update_data["id"]).rsplit("/", 1)[-1])
        item.label = update_data.get("label", item.label)
        return self._as_json(item)

    def delete_lineitem(self, line_item_id):
        self.platform.lineitems.pop(line_item_id, None)

    def update_score(self, line_item_id, score):
        item = self._item(line_item_id)
        with self.platform.lock:
            self.platform.score_posts.append({"lineitem": line_item_id, **score})
            kept = item.scores.get(score["userId"])
            if kept is not None and kept["timestamp"] > score["timestamp"]:
                return UpdateScoreStatus.OLD_TIMESTAMP
            item.scores[score["userId"]] = score
        return UpdateScoreStatus.SUCCESS if kept is not None else UpdateScoreStatus.CREATED

    def get_results(self, line_item_id, page=1, limit=None, user_id=None):
        item = self._item(line_item_id)
        results = [
            {"userId": user, "resultScore": score.get("scoreGiven"), "resultMaximum": score.get("scoreMaximum")}
            for user, score in item.scores.items()
        ]
        return {"content": results, "has_next": False, "next": None}

    def _as_json(self, item: LineItem) -> dict:
        return {
            "id": f"{self.platform.url}/lineitems/{item.id}",
            "label": item.label,
            "scoreMaximum": item.score_maximum,
            "resourceLinkId": item.resource_link_id,
        }


class Roster(NamesRoleProvisioningService):
    def __init__(self, request, platform: TestPlatform, context_id: str):
        super().__init__(request, PlatformConf(platform=platform), f"{platform.url}/memberships/{context_id}")
        self.platform = platform
        self.context_id = context_id

    def get_member_data_page(self, page=1, limit=None, role=None, since=None, **kwargs):
        members = [self.platform.people[user_id].member() for user_id in self.platform.classes[self.context_id]]
        return {"content": members, "has_next": False, "next": None}

    def get_context_by_id(self):
        return Context(id=self.context_id, label=self.context_id, title=self.platform.class_titles[self.context_id])
