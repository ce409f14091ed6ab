"""The demo accounts that `make run` prints, one per role, the instructor teaching the demo course
(teaching's: it stands on both accounts and courses). Local use only: their passwords are published."""

from accounts.models import User
from courses.models import Course

DEMO_ACCOUNTS = [
    ("learner", "learner-demo-pass", User.Role.LEARNER),
    ("instructor", "instructor-demo-pass", User.Role.INSTRUCTOR),
    ("admin", "admin-demo-pass", User.Role.ADMIN),
]


def demo_accounts_reset(*, course_slug: str) -> None:
    """Creates the demo accounts, or puts back their role and password."""
    for username, password, role in DEMO_ACCOUNTS:
        user, _ = User.objects.get_or_create(username=username, defaults={"role": role})
        user.role = role
        user.set_password(password)
        user.save()
        if role == User.Role.INSTRUCTOR:
            for taught in Course.objects.filter(slug=course_slug):
                taught.instructors.add(user)
