from django.contrib.auth.models import AbstractUser
from django.contrib.auth.models import UserManager as BaseUserManager
from django.db import models


class UserManager(BaseUserManager):
    def create_superuser(self, username, email=None, password=None, **extra_fields):
        # `createsuperuser` makes an admin: the role is what carries the superuser flag (User.save).
        extra_fields.setdefault("role", User.Role.ADMIN)
        return super().create_superuser(username, email, password, **extra_fields)


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

    objects = UserManager()

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
        # Django admin, so the role carries the staff and superuser flags with it, both ways: an
        # admin given another role (a demotion) loses them in the same save.
        is_admin = self.role == self.Role.ADMIN
        self.is_staff = self.is_superuser = is_admin
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "role" in update_fields:
            kwargs["update_fields"] = {*update_fields, "is_staff", "is_superuser"}
        super().save(*args, **kwargs)
