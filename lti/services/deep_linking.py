"""Deep Linking 2.0: an instructor of the class picks, in this tool's own page, the course, part or
exercise to place; the tool answers the platform with one signed content item (an LTI resource
link to this tool's launch URL) whose custom parameters name the pick, with a line item (score
maximum and label, by the rule of lti.services.scores) when the platform takes one and the
instructor wants it graded. The JWT is pylti1p3's (DeepLink), signed with the tool's key."""

from dataclasses import dataclass

from django.db import transaction
from pylti1p3.deep_link import DeepLink
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.lineitem import LineItem

from lti.models import Context, Platform
from lti.services.launch import LaunchRefused, Target, context_cohort, instructor_grant
from lti.services.scores import target_maximum
from lti.tool import registration_for


@dataclass(frozen=True)
class DeepLinkRequest:
    """What the session keeps of an instructor's deep linking launch until they pick."""

    platform_id: int
    deployment_id: str
    context_id: int
    user_id: int
    settings: dict

    def as_session(self) -> dict:
        return {
            "platform": self.platform_id,
            "deployment_id": self.deployment_id,
            "context": self.context_id,
            "user": self.user_id,
            "settings": self.settings,
        }

    @classmethod
    def from_session(cls, data) -> "DeepLinkRequest | None":
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                platform_id=int(data["platform"]),
                deployment_id=str(data["deployment_id"]),
                context_id=int(data["context"]),
                user_id=int(data["user"]),
                settings=dict(data["settings"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def takes_lineitems(self) -> bool:
        """False only where the platform says it ignores line items (DL 2.0 accept_lineitem)."""
        return self.settings.get("accept_lineitem", True) is not False


@dataclass(frozen=True)
class DeepLinkAnswer:
    return_url: str
    jwt: str
    title: str
    graded: bool


def deep_link_answer(
    *, request: DeepLinkRequest, user, target: Target, graded: bool, launch_url: str
) -> DeepLinkAnswer:
    """The signed answer placing `target`. The instructor becomes an instructor of its course, and the
    class gets its cohort of it, in the same transaction as the choice (nothing before it)."""
    if user.pk != request.user_id:
        raise LaunchRefused("This deep linking request is another person's.")
    platform = Platform.objects.filter(pk=request.platform_id, is_active=True).first()
    context = Context.objects.filter(pk=request.context_id, platform_id=request.platform_id).first()
    if platform is None or context is None:
        raise LaunchRefused("The learning system of this deep linking request is no longer registered.")
    return_url = request.settings.get("deep_link_return_url")
    if not isinstance(return_url, str) or not return_url.startswith(("https://", "http://")):
        raise LaunchRefused("The deep linking request has no return URL to answer to.", status=400)
    maximum = target_maximum(course=target.course, chapter=target.chapter, exercise=target.exercise)
    graded = graded and request.takes_lineitems() and maximum > 0
    resource = (
        DeepLinkResource()
        .set_url(launch_url)
        .set_title(target.title())
        .set_custom_params(target.custom())
        .set_target("iframe")
    )
    if graded:
        resource.set_lineitem(
            LineItem()
            .set_score_maximum(maximum)
            .set_label(target.title()[:255])
            .set_resource_id("/".join(target.custom().values()))
        )
    with transaction.atomic():
        instructor_grant(user=user, course=target.course, context=context)
        context_cohort(context=context, course=target.course)
    deep_link = DeepLink(registration_for(platform), request.deployment_id, request.settings)
    return DeepLinkAnswer(
        return_url=return_url, jwt=deep_link.get_response_jwt([resource]), title=target.title(), graded=graded
    )
