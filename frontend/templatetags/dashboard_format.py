"""Number formats for the dashboards: a rate as a percentage, a time in ms as seconds."""

from django import template

register = template.Library()


@register.filter
def percent(rate) -> str:
    return "\u2013" if rate is None else f"{rate * 100:.0f}%"


@register.filter
def seconds(ms) -> str:
    return "\u2013" if ms is None else f"{ms / 1000:.2f} s"


@register.filter
def number(value) -> str:
    if value is None:
        return "\u2013"
    return f"{value:g}" if isinstance(value, float) else str(value)
