from django.conf import settings

from frontend.management.commands.pygments_css import CSS_PATH, pygments_css


def test_the_committed_code_highlighting_css_is_current():
    assert CSS_PATH.read_text() == pygments_css(), "run: python manage.py pygments_css"
    assert CSS_PATH.is_relative_to(settings.BASE_DIR / "frontend" / "static")
    assert ':root:not([data-theme="light"]) .codehilite .k' in pygments_css()
