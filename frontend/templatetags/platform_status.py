"""The degraded parts of the platform, for the admin's home page (frontend/templates/admin/index.html)."""

from django import template

from frontend.status import platform_status

register = template.Library()


@register.simple_tag
def platform_problems() -> list[str]:
    return platform_status().problems
