"""Course modules (lib/<name>.py): imported with the course, exported back, refused when broken or
when their name would shadow a real module, edited on the course's admin page, and handed to a run
of any exercise of the course."""

import pytest
from django.urls import reverse

from courses.models import CourseModule, Exercise
from courses.selectors import course_modules_for_exercise
from courses.services.content_io import ContentError, course_export, course_import
from tests.courses.conftest import db_snapshot

pytestmark = pytest.mark.django_db

GROUNDUP = '"""The course\'s own code."""\n\n\ndef twice(x):\n    return 2 * x\n'
LAYERS = "import torch\n\nWIDTH = 4\n"


def _add_lib(course_dir, **modules):
    (course_dir / "lib").mkdir(exist_ok=True)
    for name, source in modules.items():
        (course_dir / "lib" / f"{name}.py").write_text(source)


def test_it_imports_the_modules_and_hands_them_to_every_exercise_of_the_course(course_dir):
    _add_lib(course_dir, layers=LAYERS, groundup=GROUNDUP)

    report = course_import(path=course_dir)

    assert report.created["module"] == 2
    assert "2 modules" in report.summary()
    for exercise in Exercise.objects.all():
        assert course_modules_for_exercise(exercise=exercise) == (("groundup", GROUNDUP), ("layers", LAYERS))


def test_it_updates_and_removes_modules_in_place_and_round_trips_them(course_dir, tmp_path):
    _add_lib(course_dir, layers=LAYERS, groundup=GROUNDUP)
    course_import(path=course_dir)
    groundup_id = CourseModule.objects.get(name="groundup").pk
    (course_dir / "lib" / "layers.py").unlink()
    (course_dir / "lib" / "groundup.py").write_text(GROUNDUP + "\nHALF = 0.5\n")

    report = course_import(path=course_dir)
    before = db_snapshot() | {"modules": list(CourseModule.objects.values())}
    course_export(course=report.course, path=tmp_path / "out")
    again = course_import(path=tmp_path / "out")

    assert (report.updated["module"], report.removed["module"]) == (1, 1)
    assert CourseModule.objects.get().pk == groundup_id
    assert (tmp_path / "out" / "lib" / "groundup.py").read_text() == GROUNDUP + "\nHALF = 0.5\n"
    assert sorted(p.name for p in (tmp_path / "out" / "lib").iterdir()) == ["groundup.py"]
    assert not again.changed
    assert db_snapshot() | {"modules": list(CourseModule.objects.values())} == before


def test_a_course_without_modules_exports_no_lib_folder(course_dir, tmp_path):
    (tmp_path / "out" / "lib").mkdir(parents=True)
    (tmp_path / "out" / "course.yaml").write_text("slug: old\ntitle: Old\n")
    (tmp_path / "out" / "lib" / "stale.py").write_text("x = 1\n")

    course_export(course=course_import(path=course_dir).course, path=tmp_path / "out")

    assert not (tmp_path / "out" / "lib").exists()


@pytest.mark.parametrize(
    ("name", "source", "message"),
    [
        ("groundup", "def twice(x)\n    return x\n", "lib/groundup.py:1: Python syntax error: expected ':'"),
        ("math", "PI = 3\n", "lib/math.py: module name 'math' would shadow the standard-library module 'math'"),
        ("numpy", "x = 1\n", "lib/numpy.py: module name 'numpy' would shadow the installed module 'numpy'"),
        ("Layers", "x = 1\n", "lib/Layers.py: module name 'Layers' must be a lowercase Python identifier"),
        ("class", "x = 1\n", "lib/class.py: module name 'class' is a Python keyword"),
    ],
    ids=["syntax-error", "stdlib", "installed", "not-lowercase", "keyword"],
)
def test_it_refuses_a_broken_or_shadowing_module_and_writes_nothing(course_dir, name, source, message):
    _add_lib(course_dir, **{name: source})

    with pytest.raises(ContentError) as error:
        course_import(path=course_dir)

    assert str(error.value).startswith(message)
    assert all(rows == [] for rows in db_snapshot().values())


def test_it_refuses_other_files_in_lib(course_dir):
    _add_lib(course_dir, groundup=GROUNDUP)
    (course_dir / "lib" / "notes.txt").write_text("no")

    with pytest.raises(ContentError, match=r"^lib/notes\.txt: lib/ holds course modules only"):
        course_import(path=course_dir)


def test_the_admin_shows_the_modules_on_the_course_and_refuses_a_shadowing_name(course_dir, admin_user, client):
    _add_lib(course_dir, groundup=GROUNDUP)
    course = course_import(path=course_dir).course
    client.force_login(admin_user)
    url = reverse("admin:courses_course_change", args=[course.pk])

    page = client.get(url).content.decode()
    assert "groundup" in page and "def twice(x):" in page

    form = client.get(url).context["adminform"].form
    data = {key: value for key, value in form.initial.items() if value is not None and key != "instructors"}
    data.update(
        {
            "modules-TOTAL_FORMS": "2",
            "modules-INITIAL_FORMS": "1",
            "modules-0-id": str(course.modules.get().pk),
            "modules-0-course": str(course.pk),
            "modules-0-name": "groundup",
            "modules-0-source": GROUNDUP,
            "modules-1-course": str(course.pk),
            "modules-1-name": "json",
            "modules-1-source": "x = (\n",
        }
    )
    response = client.post(url, data)

    assert response.status_code == 200  # the form again, with the errors
    errors = str(response.context["inline_admin_formsets"][0].formset.errors)
    assert "would shadow the standard-library module" in errors
    assert "Python syntax error" in errors
    assert list(course.modules.values_list("name", flat=True)) == ["groundup"]
