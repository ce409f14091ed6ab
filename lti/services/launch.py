"""A validated launch (lti.tool has checked the token), made into what this platform keeps.

Everything a launch may be refused for (its role, the class, what it opens) is decided before the
first write, and the writes are one transaction: a refused launch creates, enrols and grades
nothing.

- The person: found by (issuer, subject), never by e-mail or name. The first launch makes them an
  account of their own, with no password (they only come in through their learning system).
- Their role, from the context roles of the launch only (an institution or system role says
  nothing of this class): Instructor or TeachingAssistant makes them an instructor of the course
  the launch opens, and of no other; Learner enrols them. Any other role set is refused.
- The class (the launch's context): one cohort per class and course, which the learner joins, so
  the dashboards filter by the LMS class as it is.
- What it opens: the custom parameters `course` (slug), `part` (number or slug) and `exercise`
  (slug), which deep linking writes into every link it places, or else what the link opened the
  last time. The launch lands there.
"""

import hashlib
import re
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify

from courses.models import Chapter, Course, Exercise
from lti.models import Context, ContextCohort, Identity, Platform, ResourceLink, origin_of
from teaching.models import Cohort
from teaching.services.cohorts import cohort_invite_code_new, cohort_member_add

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
ROLES = CLAIM + "roles"
CONTEXT = CLAIM + "context"
RESOURCE_LINK = CLAIM + "resource_link"
CUSTOM = CLAIM + "custom"
DEPLOYMENT = CLAIM + "deployment_id"
PRESENTATION = CLAIM + "launch_presentation"
AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
# Context roles, as full URIs, sub-roles (membership/Instructor#TeachingAssistant) and the short
# names LTI 1.3 still allows for context roles ("Instructor").
INSTRUCTOR_ROLES = frozenset(
    {
        f"{MEMBERSHIP}#Instructor",
        f"{MEMBERSHIP}#TeachingAssistant",
        f"{MEMBERSHIP}/Instructor#TeachingAssistant",
        "Instructor",
        "TeachingAssistant",
    }
)
LEARNER_ROLES = frozenset({f"{MEMBERSHIP}#Learner", "Learner"})


class LaunchRefused(Exception):
    """A launch (or a deep linking or roster request) this tool will not take, and why, in words
    for the person who sees the page and the log. `status` is the HTTP status of the page."""

    def __init__(self, reason: str, *, status: int = 403):
        super().__init__(reason)
        self.reason = reason
        self.status = status


def role_of(roles) -> str:
    """'instructor' or 'learner' from a launch's or a roster's roles; LaunchRefused otherwise."""
    if not roles:
        raise LaunchRefused("The launch carries no role, so this tool cannot tell a learner from an instructor.")
    if not isinstance(roles, list) or not all(isinstance(role, str) for role in roles):
        raise LaunchRefused("The launch's roles claim is not a list of roles.", status=400)
    if INSTRUCTOR_ROLES.intersection(roles) or any(role.startswith(f"{MEMBERSHIP}/Instructor#") for role in roles):
        return "instructor"
    if LEARNER_ROLES.intersection(roles) or any(role.startswith(f"{MEMBERSHIP}/Learner#") for role in roles):
        return "learner"
    raise LaunchRefused(
        "The launch gives no role this tool knows in the class (it takes Learner, Instructor and "
        f"TeachingAssistant): {', '.join(roles)}."
    )


@dataclass(frozen=True)
class Target:
    """What a link opens: a course, one of its parts, or one exercise of a part."""

    course: Course
    chapter: Chapter | None = None
    exercise: Exercise | None = None

    def url(self) -> str:
        if self.chapter is None:
            return reverse("frontend:course", args=[self.course.slug])
        url = reverse("frontend:chapter", args=[self.course.slug, self.chapter.slug])
        return f"{url}#exercise-{self.exercise.slug}" if self.exercise else url

    def custom(self) -> dict[str, str]:
        """The custom parameters a placed link carries to name this target."""
        params = {"course": self.course.slug}
        if self.chapter is not None:
            params["part"] = str(self.chapter.number)
        if self.exercise is not None:
            params["exercise"] = self.exercise.slug
        return params

    def title(self) -> str:
        if self.exercise is not None:
            return f"{self.exercise.title} ({self.course.title}, part {self.chapter.number})"
        if self.chapter is not None:
            return f"Part {self.chapter.number}: {self.chapter.title} ({self.course.title})"
        return self.course.title

    @classmethod
    def of_link(cls, link: ResourceLink) -> "Target":
        return cls(course=link.course, chapter=link.chapter, exercise=link.exercise)


def target_from_params(*, platform: Platform, params: dict, staff: bool) -> Target:
    """The course, part and exercise that `params` name (custom parameters, or the deep linking
    page's form). LaunchRefused (404, or 403 for a course this platform may not use) for anything
    else: an unknown course, part or exercise, or a draft for a learner."""
    slug = str(params.get("course") or "").strip()
    course = Course.objects.filter(slug=slug).first() if slug else None
    if course is None:
        raise LaunchRefused(f"This link names a course this platform does not have: {slug!r}.", status=404)
    if not platform.courses.filter(pk=course.pk).exists():
        raise LaunchRefused(
            f"{platform.name} may not open the course {course.title!r}: an admin adds it to the "
            "learning system's registration first."
        )
    if not (course.published or staff):
        raise LaunchRefused(f"The course {course.title!r} is not published yet.", status=404)
    part = str(params.get("part") or "").strip()
    if not part:
        if params.get("exercise"):
            raise LaunchRefused("This link names an exercise without its part.", status=400)
        return Target(course=course)
    chapters = Chapter.objects.filter(course=course)
    chapter = chapters.filter(number=int(part)).first() if part.isdigit() else chapters.filter(slug=part).first()
    if chapter is None:
        raise LaunchRefused(f"The course {course.title!r} has no part {part!r}.", status=404)
    if not (chapter.published or staff):
        raise LaunchRefused(f"Part {chapter.number} of {course.title!r} is not published yet.", status=404)
    exercise_slug = str(params.get("exercise") or "").strip()
    if not exercise_slug:
        return Target(course=course, chapter=chapter)
    exercise = Exercise.objects.filter(chapter=chapter, slug=exercise_slug).first()
    if exercise is None:
        raise LaunchRefused(f"Part {chapter.number} of {course.title!r} has no exercise {exercise_slug!r}.", status=404)
    return Target(course=course, chapter=chapter, exercise=exercise)


@dataclass
class Accepted:
    """What a launch became: who is signed in, where they land, and what the session keeps."""

    user: object
    landing_url: str
    role: str
    context: Context | None = None
    link: ResourceLink | None = None
    frame_origins: list[str] = field(default_factory=list)


def _claim_dict(claims: dict, name: str) -> dict:
    value = claims.get(name)
    return value if isinstance(value, dict) else {}


def frame_origins_of(*, platform: Platform, claims: dict) -> list[str]:
    """Who may frame the launched pages: the registration's origins and the launch's return URL's."""
    return_url = _claim_dict(claims, PRESENTATION).get("return_url") or ""
    origins = platform.frame_origin_list()
    return list(dict.fromkeys([*origins, *([origin_of(return_url)] if origin_of(return_url) else [])]))


def _username_for(*, issuer: str, subject: str, name: str) -> str:
    digest = hashlib.sha256(f"{issuer}\n{subject}".encode()).hexdigest()[:10]
    stem = slugify(name)[:40].strip("-") or "lti"
    return f"{stem}-{digest}"


def identity_user(*, platform: Platform, subject: str, person: dict, launched: bool) -> object:
    """The account of (issuer, subject), made on first sight. `person` holds what the platform
    says of them (name, given_name, family_name, email): kept for staff, never used to find anyone."""
    User = get_user_model()
    name = str(person.get("name") or " ".join(filter(None, [person.get("given_name"), person.get("family_name")])))
    now = timezone.now()
    identity = Identity.objects.select_related("user").filter(issuer=platform.issuer, subject=subject).first()
    if identity is None:
        user = User(
            username=_username_for(issuer=platform.issuer, subject=subject, name=name),
            first_name=str(person.get("given_name") or "")[:150],
            last_name=str(person.get("family_name") or "")[:150],
            role=User.Role.LEARNER,
        )
        user.set_unusable_password()
        try:
            with transaction.atomic():
                user.save()
                identity = Identity.objects.create(
                    issuer=platform.issuer,
                    subject=subject,
                    user=user,
                    platform=platform,
                    name=name[:300],
                    email=str(person.get("email") or "")[:300],
                    last_launch_at=now if launched else None,
                )
        except IntegrityError:  # the same person's two first launches at once: the other made them
            identity = Identity.objects.select_related("user").get(issuer=platform.issuer, subject=subject)
        return identity.user
    changes = {"name": name[:300] or identity.name, "email": str(person.get("email") or identity.email)[:300]}
    if launched:
        changes["last_launch_at"] = now
    Identity.objects.filter(pk=identity.pk).update(platform=platform, **changes)
    return identity.user


def context_upsert(*, platform: Platform, deployment_id: str, claim: dict, memberships_url: str = "") -> Context:
    context, _ = Context.objects.get_or_create(
        platform=platform, deployment_id=deployment_id, context_id=str(claim["id"])[:255]
    )
    changes = {
        "title": str(claim.get("title") or context.title)[:500],
        "label": str(claim.get("label") or context.label)[:255],
    }
    if memberships_url:
        changes["memberships_url"] = memberships_url[:1000]
    if any(getattr(context, name) != value for name, value in changes.items()):
        Context.objects.filter(pk=context.pk).update(**changes)
        for name, value in changes.items():
            setattr(context, name, value)
    return context


def context_cohort(*, context: Context, course: Course) -> Cohort:
    """The class's cohort of the course, made the first time the class uses the course."""
    found = ContextCohort.objects.select_related("cohort").filter(context=context, course=course).first()
    if found is not None:
        return found.cohort
    with transaction.atomic():
        # The class's first launches of a course at once make one cohort: they take turns here.
        Context.objects.select_for_update().filter(pk=context.pk).first()
        found = ContextCohort.objects.select_related("cohort").filter(context=context, course=course).first()
        if found is not None:
            return found.cohort
        stem = f"{context} · {context.platform.name}"[:90]
        name, n = stem, 1
        while Cohort.objects.filter(course=course, name__iexact=name).exists():
            n += 1
            name = f"{stem} ({n})"
        cohort = Cohort.objects.create(course=course, name=name, invite_code=cohort_invite_code_new())
        ContextCohort.objects.create(context=context, course=course, cohort=cohort)
    return cohort


def instructor_grant(*, user, course: Course, context: Context) -> None:
    """An instructor of the class becomes an instructor of this course, and of no other."""
    User = get_user_model()
    if user.role == User.Role.LEARNER:
        user.role = User.Role.INSTRUCTOR
        user.save(update_fields=["role"])
    course.instructors.add(user)
    context.instructors.add(user)


def _lineitem_of(claims: dict) -> str:
    endpoint = _claim_dict(claims, AGS)
    scopes = endpoint.get("scope") or []
    lineitem = endpoint.get("lineitem") or ""
    return lineitem if isinstance(lineitem, str) and SCORE_SCOPE in scopes else ""


def launch_target(*, platform: Platform, claims: dict, staff: bool) -> Target:
    """What a resource launch opens: its custom parameters, else what its link opened before."""
    custom = _claim_dict(claims, CUSTOM)
    if custom.get("course"):
        return target_from_params(platform=platform, params=custom, staff=staff)
    context_id = str(_claim_dict(claims, CONTEXT).get("id") or "")
    link = (
        ResourceLink.objects.select_related("course", "chapter", "exercise")
        .filter(
            context__platform=platform,
            context__deployment_id=claims.get(DEPLOYMENT),
            context__context_id=context_id,
            link_id=str(_claim_dict(claims, RESOURCE_LINK).get("id") or ""),
        )
        .first()
    )
    if link is None:
        raise LaunchRefused(
            "This link does not say what to open: place it with this tool's deep linking, or give it the custom "
            "parameter course=<course slug> (and part=<number>, exercise=<slug>).",
            status=400,
        )
    return Target.of_link(link)


def launch_accept(*, platform: Platform, claims: dict) -> Accepted:
    """A resource link launch: the person, their role in the course, the class's cohort and the
    link, in one transaction after every check."""
    role = role_of(claims.get(ROLES))
    context_claim = _claim_dict(claims, CONTEXT)
    if not context_claim.get("id"):
        raise LaunchRefused("The launch names no class (its context claim is missing).", status=400)
    link_claim = _claim_dict(claims, RESOURCE_LINK)
    target = launch_target(platform=platform, claims=claims, staff=role == "instructor")
    memberships_url = _claim_dict(claims, NRPS).get("context_memberships_url") or ""
    with transaction.atomic():
        user = identity_user(platform=platform, subject=str(claims["sub"]), person=claims, launched=True)
        context = context_upsert(
            platform=platform,
            deployment_id=str(claims[DEPLOYMENT]),
            claim=context_claim,
            memberships_url=memberships_url if isinstance(memberships_url, str) else "",
        )
        cohort = context_cohort(context=context, course=target.course)
        link, created = ResourceLink.objects.get_or_create(
            context=context,
            link_id=str(link_claim["id"])[:255],
            defaults={"course": target.course, "chapter": target.chapter, "exercise": target.exercise},
        )
        changes = {
            "course": target.course,
            "chapter": target.chapter,
            "exercise": target.exercise,
            "title": str(link_claim.get("title") or link.title)[:500],
        }
        lineitem = _lineitem_of(claims)
        if lineitem:
            changes["lineitem_url"] = lineitem[:1000]
        if created or any(getattr(link, name) != value for name, value in changes.items()):
            for name, value in changes.items():
                setattr(link, name, value)
            link.save()
        if role == "instructor":
            instructor_grant(user=user, course=target.course, context=context)
        else:
            cohort_member_add(cohort=cohort, user=user)
    return Accepted(
        user=user,
        landing_url=target.url(),
        role=role,
        context=context,
        link=link,
        frame_origins=frame_origins_of(platform=platform, claims=claims),
    )


def deep_link_accept(*, platform: Platform, claims: dict) -> Accepted:
    """A deep linking request: only an instructor of the class may place content; they are signed
    in to pick it (lti.views.deep_link_pick), and become an instructor of the course they place."""
    if role_of(claims.get(ROLES)) != "instructor":
        raise LaunchRefused("Only the class's instructors place this tool's content: this launch is a learner's.")
    context_claim = _claim_dict(claims, CONTEXT)
    if not context_claim.get("id"):
        raise LaunchRefused("The deep linking request names no class (its context claim is missing).", status=400)
    memberships_url = _claim_dict(claims, NRPS).get("context_memberships_url") or ""
    with transaction.atomic():
        user = identity_user(platform=platform, subject=str(claims["sub"]), person=claims, launched=True)
        context = context_upsert(
            platform=platform,
            deployment_id=str(claims[DEPLOYMENT]),
            claim=context_claim,
            memberships_url=memberships_url if isinstance(memberships_url, str) else "",
        )
        context.instructors.add(user)
    return Accepted(
        user=user,
        landing_url=reverse("lti:deep_link"),
        role="instructor",
        context=context,
        frame_origins=frame_origins_of(platform=platform, claims=claims),
    )


PLACEMENT_RE = re.compile(r"^(?P<course>[-\w]+)(/(?P<part>\d+)(/(?P<exercise>[-\w]+))?)?$")


def placement_parse(value: str) -> dict[str, str]:
    """The deep linking page's choice, "<course>[/<part>[/<exercise>]]", as target parameters."""
    match = PLACEMENT_RE.match(value or "")
    if match is None:
        raise LaunchRefused("Choose a course, a part or an exercise to place.", status=400)
    return {name: value for name, value in match.groupdict().items() if value}
