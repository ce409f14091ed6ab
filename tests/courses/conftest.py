import shutil
from pathlib import Path

import pytest

from courses.models import Chapter, Choice, Course, Exercise, ExerciseTrick, GlossaryTerm, Hint, Question
from tests.courses.authoring_sandbox import local_backend  # noqa: F401 - the sandbox that validates on save

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def course_dir(tmp_path) -> Path:
    """A private copy of the small fixture course, free to break."""
    target = tmp_path / "mini"
    shutil.copytree(FIXTURES / "mini", target)
    return target


def db_snapshot() -> dict:
    """Every course row, every column (ids and timestamps included), in a stable order."""
    snapshot = {}
    for model in (Course, Chapter, Exercise, Hint, ExerciseTrick, Question, Choice, GlossaryTerm):
        snapshot[model.__name__] = list(model.objects.order_by("pk").values())
    snapshot["instructors"] = sorted(Course.instructors.through.objects.values_list("course_id", "user_id"))
    return snapshot


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} must occur once in {path}"
    path.write_text(text.replace(old, new))


def admin_form_data(response) -> dict:
    """What the browser would post back for an admin change page, unchanged."""
    data = {}

    def add(form):
        for name in form.fields:
            value = form[name].value()
            if isinstance(value, bool):
                if value:
                    data[form.add_prefix(name)] = "on"
            elif value is not None:
                data[form.add_prefix(name)] = value

    add(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        add(formset.management_form)
        for form in formset.forms:
            add(form)
    return data
