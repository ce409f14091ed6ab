from django.contrib.auth.models import AbstractUser
from django.db import models


class User(AbstractUser):
    """A person on the platform. Admins are staff; instructors are linked to the courses they
    teach (Course.instructors); everyone else is a learner."""

    class Role(models.TextChoices):
        LEARNER = "learner", "Learner"
        INSTRUCTOR = "instructor", "Instructor"
        ADMIN = "admin", "Admin"

    class Theme(models.TextChoices):
        SYSTEM = "system", "Follow the system"
        LIGHT = "light", "Light"
        DARK = "dark", "Dark"

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.LEARNER)
    theme = models.CharField(max_length=8, choices=Theme.choices, default=Theme.SYSTEM)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(role__in=["learner", "instructor", "admin"]), name="user_role_valid"
            ),
            models.CheckConstraint(condition=models.Q(theme__in=["system", "light", "dark"]), name="user_theme_valid"),
        ]

    @property
    def is_instructor(self) -> bool:
        return self.role == self.Role.INSTRUCTOR

    def save(self, *args, **kwargs):
        # The role is the one source of truth for access: an admin authors everything in the
        # Django admin, so the role carries the staff and superuser flags with it.
        if self.role == self.Role.ADMIN:
            self.is_staff = True
            self.is_superuser = True
        super().save(*args, **kwargs)
