"""An LMS class's roster into its cohorts (LTI Names and Role Provisioning Services).

The roster is read from the class's memberships URL (the launch's namesroleservice claim) with a
client-credentials token. Its active learners become members of the class's cohort of every
course the class uses (each a person found by (issuer, subject), with an account made for them if
they have not launched yet, and enrolled, so the dashboards list them); members of those cohorts
who are no longer active learners of the class leave the cohort (their enrolment and progress
stay theirs). Instructors on the roster gain nothing here: they become instructors of a course
when they launch it.
"""

import logging
from dataclasses import dataclass

import requests
from django.db import transaction
from django.utils import timezone
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.names_roles import NamesRolesProvisioningService

from lti.models import Context, ContextCohort
from lti.services.launch import LaunchRefused, identity_user, role_of
from lti.tool import CachingServiceConnector
from teaching.models import CohortMembership
from teaching.services.cohorts import cohort_member_add

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RosterSync:
    added: int
    removed: int
    learners: int


def roster_fetch(*, context: Context) -> list[dict]:
    """Every member on the class's roster (all pages). LaunchRefused names what went wrong."""
    if not context.memberships_url:
        raise LaunchRefused(
            f"{context.platform.name} did not offer this class's roster (no Names and Role Provisioning Services "
            "claim in its launches).",
            status=409,
        )
    connector = CachingServiceConnector(context.platform)
    service = NamesRolesProvisioningService(connector, {"context_memberships_url": context.memberships_url})
    try:
        members = service.get_members()
    except LtiServiceException as error:
        raise LaunchRefused(
            f"{context.platform.name} answered HTTP {error.response.status_code} for the roster.", status=502
        ) from error
    except requests.RequestException as error:
        raise LaunchRefused(f"{context.platform.name} did not answer for the roster: {error}", status=502) from error
    except LtiException as error:
        raise LaunchRefused(f"The roster could not be read: {error}", status=502) from error
    if not isinstance(members, list):
        raise LaunchRefused(f"{context.platform.name} sent a roster this tool cannot read.", status=502)
    return members


def _active_learners(members: list[dict]) -> dict[str, dict]:
    learners = {}
    for member in members:
        if not isinstance(member, dict) or not member.get("user_id"):
            continue
        if (member.get("status") or "Active") != "Active":
            continue
        try:
            if role_of(member.get("roles")) == "learner":
                learners[str(member["user_id"])] = member
        except LaunchRefused:
            continue
    return learners


def roster_sync(*, context: Context) -> RosterSync:
    members = roster_fetch(context=context)
    learners = _active_learners(members)
    platform = context.platform
    cohorts = [found.cohort for found in ContextCohort.objects.select_related("cohort").filter(context=context)]
    added = removed = 0
    with transaction.atomic():
        users = {
            subject: identity_user(platform=platform, subject=subject, person=member, launched=False)
            for subject, member in learners.items()
        }
        keep = {user.pk for user in users.values()}
        for cohort in cohorts:
            present = set(CohortMembership.objects.filter(cohort=cohort).values_list("user_id", flat=True))
            for user in users.values():
                if user.pk not in present:
                    cohort_member_add(cohort=cohort, user=user)
                    added += 1
            # One by one, so the dashboards' counts follow each leaving member (teaching.receivers).
            for membership in CohortMembership.objects.filter(cohort=cohort).exclude(user_id__in=keep):
                membership.delete()
                removed += 1
        Context.objects.filter(pk=context.pk).update(roster_synced_at=timezone.now())
    log.info("LTI roster of %s synced: %s learners, %s added, %s removed", context, len(learners), added, removed)
    return RosterSync(added=added, removed=removed, learners=len(learners))
