"""Courses as files: import, idempotency, the round trip, broken files and the commands."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.db import connection

from accounts.models import User
from courses.models import Chapter, Choice, Course, Exercise, GlossaryTerm, Question
from courses.services.chapters import chapter_reading_extra_text
from courses.services.content_io import ContentError, course_export, course_import
from tests.courses.conftest import db_snapshot, edit
from tests.runner.conftest import backend_or_skip
from tests.services import service_missing

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def test_it_imports_a_course_folder(course_dir, make_user):
    make_user(User.Role.INSTRUCTOR, username="ada")
    edit(course_dir / "course.yaml", "instructors: []", "instructors: [ada]")

    report = course_import(path=course_dir)

    course = Course.objects.get(slug="mini-course")
    assert report.course == course
    assert (course.title, course.level, course.published) == ("A mini course", "intermediate", True)
    assert course.summary == "A small course that exercises every part of the course format."
    assert list(course.instructors.values_list("username", flat=True)) == ["ada"]
    assert [(c.number, c.slug, c.published) for c in course.chapters.all()] == [
        (1, "first-steps", True),
        (2, "attention", True),
        (3, "coming-soon", False),
    ]
    attention = course.chapters.get(slug="attention")
    assert attention.lede == "Attention blends values.\nThe weights come from a softmax."
    assert attention.body.startswith("## Scores\n")
    exercises = list(attention.exercises.all())
    assert [(e.position, e.slug, e.time_limit_s, e.needs_gpu) for e in exercises] == [
        (1, "score-keys", 30, False),
        (2, "on-the-gpu", 40, True),
    ]
    assert exercises[0].solution_code.endswith("print(scores)\n")
    assert exercises[1].starter_code == (course_dir / "chapters/02-attention/on-the-gpu.py").read_text()
    first = course.chapters.get(slug="first-steps").exercises.get()
    assert first.check_code.startswith("def check(ns):")
    assert list(first.hints.values_list("position", "text")) == [
        (1, "`t` holds one number now: count the values in the list."),
        (2, "`torch.tensor` takes a whole list, so the list needs three values."),
    ]
    assert not exercises[0].hints.exists()
    assert list(first.tricks.values_list("name", flat=True)) == ["two-numbers"]
    questions = list(attention.questions.all())
    assert [q.prompt for q in questions] == ["What does a query stand for?", "What does softmax return?"]
    assert [(c.position, c.is_correct) for c in questions[1].choices.all()] == [(1, False), (2, True), (3, False)]
    assert questions[1].choices.get(position=2).explanation == ""
    assert sorted(course.glossary.values_list("term", flat=True)) == ["Query", "attention", "softmax"]
    assert course.glossary.get(term="softmax").definition.endswith("\n\nUsed everywhere in attention.")
    assert report.summary() == (
        "Imported course 'mini-course': created 1 course, 3 chapters, 3 exercises, 2 hints, 1 trick program, "
        "2 questions, 5 choices, "
        "3 glossary terms; updated nothing; removed nothing."
    )


def test_it_counts_exercises_and_quiz_in_the_reading_time(course_dir):
    many_words = "".join(f"# note {i} about the tensor\n" for i in range(120))
    (course_dir / "chapters/02-attention/score-keys.py").write_text(many_words)

    course_import(path=course_dir)

    chapter = Chapter.objects.get(slug="attention")
    assert chapter.compute_reading_minutes() == 1
    assert chapter.reading_minutes == chapter.compute_reading_minutes(chapter_reading_extra_text(chapter=chapter))
    assert chapter.reading_minutes == 4


def test_it_changes_nothing_when_imported_twice(course_dir):
    course_import(path=course_dir)
    before = db_snapshot()

    report = course_import(path=course_dir)

    assert db_snapshot() == before
    assert not report.changed
    assert report.summary() == "Imported course 'mini-course': created nothing; updated nothing; removed nothing."


def test_it_updates_in_place_and_removes_what_the_files_dropped(course_dir):
    course_import(path=course_dir)
    ids = {model: dict(model.objects.values_list("slug", "pk")) for model in (Chapter, Exercise)}
    attention_id = GlossaryTerm.objects.get(term="attention").pk
    chapters = course_dir / "chapters"
    # Swap the numbers of two chapters, reorder the exercises, move the right answer,
    # rename a term's case, drop a chapter and a question.
    (chapters / "01-first-steps").rename(chapters / "02-first-steps")
    (chapters / "02-attention").rename(chapters / "01-attention")
    (chapters / "03-coming-soon" / "chapter.md").unlink()
    (chapters / "03-coming-soon").rmdir()
    body = chapters / "01-attention" / "chapter.md"
    edit(body, "[[exercise:score-keys]]", "[[exercise:TMP]]")
    edit(body, "[[exercise:on-the-gpu]]", "[[exercise:score-keys]]")
    edit(body, "[[exercise:TMP]]", "[[exercise:on-the-gpu]]")
    quiz = chapters / "01-attention" / "quiz.yaml"
    quiz.write_text(
        "- prompt: What does softmax return?\n"
        "  choices:\n"
        "    - text: Scores that can be negative\n"
        "      correct: true\n"
        "    - text: Weights that sum to one\n"
        "      explanation: Changed.\n"
    )
    edit(course_dir / "glossary.yaml", "- term: attention", "- term: Attention")

    report = course_import(path=course_dir)

    assert dict(Chapter.objects.values_list("slug", "number")) == {"attention": 1, "first-steps": 2}
    assert dict(Chapter.objects.values_list("slug", "pk")) == {
        slug: pk for slug, pk in ids[Chapter].items() if slug != "coming-soon"
    }
    assert dict(Exercise.objects.values_list("slug", "pk")) == ids[Exercise]
    assert dict(Exercise.objects.filter(chapter__slug="attention").values_list("slug", "position")) == {
        "on-the-gpu": 1,
        "score-keys": 2,
    }
    assert Question.objects.get().prompt == "What does softmax return?"
    assert list(Choice.objects.values_list("position", "is_correct")) == [(1, True), (2, False)]
    assert GlossaryTerm.objects.get(pk=attention_id).term == "Attention"
    assert report.removed == {"chapter": 1, "question": 1}  # rows inside them go with them
    assert report.created == {}


def test_it_round_trips_import_export_import(course_dir, tmp_path, make_user):
    make_user(User.Role.INSTRUCTOR, username="ada")
    edit(course_dir / "course.yaml", "instructors: []", "instructors: [ada]")
    course_import(path=course_dir)
    before = db_snapshot()
    course = Course.objects.get(slug="mini-course")

    course_export(course=course, path=tmp_path / "first")
    report = course_import(path=tmp_path / "first")
    course_export(course=course, path=tmp_path / "second")
    course_export(course=course, path=tmp_path / "first")  # over an earlier export

    assert not report.changed
    assert db_snapshot() == before
    files = sorted(p.relative_to(tmp_path / "first") for p in (tmp_path / "first").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "second") for p in (tmp_path / "second").rglob("*") if p.is_file())
    for name in files:
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes(), name
    assert "chapters/02-attention/quiz.yaml" in {str(name) for name in files}


def test_it_round_trips_into_an_empty_database(course_dir, tmp_path):
    course_import(path=course_dir)
    course_export(course=Course.objects.get(), path=tmp_path / "out")
    Course.objects.all().delete()

    course_import(path=tmp_path / "out")
    course_export(course=Course.objects.get(), path=tmp_path / "again")

    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (tmp_path / "again" / path.relative_to(tmp_path / "out")).read_bytes()


def test_it_refuses_to_export_over_a_folder_that_is_not_a_course(course_dir, tmp_path):
    course_import(path=course_dir)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("keep me")

    with pytest.raises(ContentError, match=r"not empty and holds no course\.yaml"):
        course_export(course=Course.objects.get(), path=tmp_path / "busy")
    assert (tmp_path / "busy" / "notes.txt").read_text() == "keep me"


# --- Broken files -----------------------------------------------------------------------------

Q = "chapters/02-attention/quiz.yaml"
C1 = "chapters/01-first-steps/chapter.md"
C2 = "chapters/02-attention/chapter.md"


def _drop(path: Path) -> None:
    path.unlink()


BROKEN = [
    pytest.param(
        lambda d: edit(d / Q, "      correct: true\n    - text: A single", "    - text: A single"),
        f"{Q}:8: question 2 has no correct choice",
        id="no-correct-choice",
    ),
    pytest.param(
        lambda d: edit(
            d / Q,
            "    - text: What this position offers\n",
            "    - text: What this position offers\n      correct: true\n",
        ),
        f"{Q}:1: question 1 has 2 correct choices; it needs exactly one",
        id="two-correct-choices",
    ),
    pytest.param(
        lambda d: edit(d / Q, "      explanation: That is the key.\n", ""),
        f"{Q}:6: question 1, choice 2 is wrong and has no explanation",
        id="wrong-choice-without-explanation",
    ),
    pytest.param(
        lambda d: edit(d / Q, "    - text: What this position offers\n      explanation: That is the key.\n", ""),
        f"{Q}:1: question 1 has 1 choices; a question has 2 to 6",
        id="too-few-choices",
    ),
    pytest.param(
        lambda d: edit(d / Q, "  choices:\n    - text: What this", "  choices:\n  - text: What this"),
        f"{Q}:4: invalid YAML: mapping values are not allowed here",
        id="yaml-syntax",
    ),
    pytest.param(
        lambda d: edit(d / "course.yaml", "instructors: []", "instructors: []\ntitel: Typo\nextra: 1"),
        "course.yaml:8: unknown keys 'titel', 'extra' (allowed: instructors, level, published, slug, summary, title)",
        id="unknown-course-keys",
    ),
    pytest.param(
        lambda d: edit(d / "course.yaml", "level: intermediate", "level: expert"),
        "course.yaml:3: level must be one of beginner, intermediate, advanced, not 'expert'",
        id="bad-level",
    ),
    pytest.param(
        lambda d: edit(d / "course.yaml", "published: true", "published: sometimes"),
        "course.yaml:4: published must be true or false",
        id="bad-type",
    ),
    pytest.param(
        lambda d: edit(d / "course.yaml", "instructors: []", "instructors: [ghost]"),
        "course.yaml:7: unknown instructor username 'ghost'",
        id="unknown-instructor",
    ),
    pytest.param(
        lambda d: _drop(d / "course.yaml"),
        "course.yaml: file is missing",
        id="missing-course-file",
    ),
    pytest.param(
        lambda d: edit(d / "glossary.yaml", "- term: Query", "- term: Attention\n  definition: Again.\n- term: Query"),
        "glossary.yaml:3: term 2: term 'Attention' repeats 'attention' (terms are unique ignoring case)",
        id="duplicate-glossary-term",
    ),
    pytest.param(
        lambda d: edit(d / C2, "time_limit: 30", "time_limit: 300"),
        f"{C2}:13: exercise 'score-keys': time_limit must be 1 to 120 seconds, not 300",
        id="time-limit-out-of-range",
    ),
    pytest.param(
        lambda d: edit(d / C2, "    gpu: true", "    gpus: true"),
        f"{C2}:18: exercise 2: unknown key 'gpus' (allowed: gpu, hints, instructions, slug, time_limit, title)",
        id="unknown-exercise-key",
    ),
    pytest.param(
        lambda d: edit(d / C1, "needs three values.\n", "needs three values.\n      - ''\n"),
        f"{C1}:12: exercise 'make-a-tensor': hint 3 is empty",
        id="empty-hint",
    ),
    pytest.param(
        lambda d: edit(
            d / C1, '      - "`t` holds one number now: count the values in the list."', "      - Count: three"
        ),
        f"{C1}:12: exercise 'make-a-tensor': hint 1 must be text; YAML read a mapping: put a hint with ': ' in it "
        "in quotes or after '>'",
        id="hint-read-as-a-mapping",
    ),
    pytest.param(
        lambda d: edit(d / C1, "    hints:\n", "    hints:\n" + "      - Again.\n" * 5),
        f"{C1}:12: exercise 'make-a-tensor': 7 hints; at most 6 are shown one by one",
        id="too-many-hints",
    ),
    pytest.param(
        lambda d: (d / "chapters/03-coming-soon").rename(d / "chapters/03-later"),
        "chapters/03-later/chapter.md:2: slug 'coming-soon' does not match the folder name '03-later'",
        id="folder-slug-mismatch",
    ),
    pytest.param(
        lambda d: edit(d / "chapters/01-first-steps/chapter.md", "title: First steps\n", ""),
        "chapters/01-first-steps/chapter.md:2: missing required key 'title'",
        id="missing-title",
    ),
    pytest.param(
        lambda d: edit(d / C2, "title: Attention\n", "title: Attention: by hand\n"),
        f"{C2}:3: invalid YAML: mapping values are not allowed here",
        id="front-matter-syntax",
    ),
    pytest.param(
        lambda d: _drop(d / "chapters/02-attention/on-the-gpu.py"),
        f"{C2}:14: exercise 'on-the-gpu': its starter code file chapters/02-attention/on-the-gpu.py is missing",
        id="missing-exercise-file",
    ),
    pytest.param(
        lambda d: edit(d / C2, "[[exercise:on-the-gpu]]", "[[exercise:on-the-cpu]]"),
        f"{C2}:30: [[exercise:on-the-cpu]] names no exercise of this chapter",
        id="unknown-exercise-marker",
    ),
    pytest.param(
        lambda d: edit(d / C2, "\n[[exercise:on-the-gpu]]\n", "\n"),
        f"{C2}:14: exercise 'on-the-gpu' is not placed in the body (add a line [[exercise:on-the-gpu]])",
        id="exercise-not-placed",
    ),
    pytest.param(
        lambda d: edit(d / C2, "[[exercise:on-the-gpu]]\n", "[[exercise:on-the-gpu]]\n\n[[exercise:score-keys]]\n"),
        f"{C2}:32: exercise 'score-keys' is placed more than once",
        id="exercise-placed-twice",
    ),
    pytest.param(
        lambda d: edit(d / C2, "then a [[Softmax]] turns", "then see [[exercise:score-keys]] turns"),
        f"{C2}:23: [[exercise:score-keys]] must stand on a line of its own",
        id="inline-exercise-marker",
    ),
    pytest.param(
        lambda d: edit(d / C2, "[[Softmax]]", "[[the softmax|softmaxx]]"),
        f"{C2}:23: [[the softmax|softmaxx]] names no glossary term ('softmaxx')",
        id="unknown-glossary-term",
    ),
    pytest.param(
        lambda d: (d / "chapters/02-attention/stray.py").write_text("x = 1\n"),
        "chapters/02-attention/stray.py: no exercise 'stray' is declared in chapter.md",
        id="stray-code-file",
    ),
    pytest.param(
        lambda d: (d / "chapters/01-first-steps/make-a-tensor.check.py").write_text(
            "def judge(ns):\n    return True, ''\n"
        ),
        "chapters/01-first-steps/make-a-tensor.check.py:1: a check file must define check(ns)",
        id="check-without-check",
    ),
    pytest.param(
        lambda d: (d / "chapters/01-first-steps/make-a-tensor.trick-Two_Numbers.py").write_text("t = 1\n"),
        "chapters/01-first-steps/make-a-tensor.trick-Two_Numbers.py: a trick program's name 'Two_Numbers' must be "
        "lowercase letters, digits and hyphens",
        id="trick-program-name",
    ),
    pytest.param(
        lambda d: (d / "chapters/02-attention/score-keys.trick-nothing.py").write_text("x = (\n"),
        "chapters/02-attention/score-keys.trick-nothing.py:1: Python syntax error: '(' was never closed",
        id="trick-program-syntax",
    ),
    pytest.param(
        lambda d: (d / "chapters/01-first-steps/make-a-tensor.probe.py").write_text("def call(seed):\n    return []\n"),
        "chapters/01-first-steps/make-a-tensor.probe.py:1: a probe file must define calls(seed)",
        id="probe-without-calls",
    ),
    pytest.param(
        lambda d: (d / "chapters/01-first-steps/make-a-tensor.check.py").write_text("def check(ns):\n    return (\n"),
        "chapters/01-first-steps/make-a-tensor.check.py:2: Python syntax error: '(' was never closed",
        id="check-syntax-error",
    ),
]


@pytest.mark.parametrize(("breaks", "message"), BROKEN)
def test_it_names_file_line_and_problem_and_writes_nothing(course_dir, breaks, message):
    breaks(course_dir)

    with pytest.raises(ContentError) as error:
        course_import(path=course_dir)

    assert str(error.value) == message
    assert all(rows == [] for rows in db_snapshot().values())


@pytest.mark.parametrize(("breaks", "message"), BROKEN[:3] + BROKEN[-8:])
def test_it_leaves_an_imported_course_as_it_was_when_a_reimport_fails(course_dir, breaks, message):
    course_import(path=course_dir)
    before = db_snapshot()
    edit(course_dir / "chapters/01-first-steps/chapter.md", "title: First steps", "title: Changed")
    breaks(course_dir)

    with pytest.raises(ContentError, match="^" + re.escape(message) + "$"):
        course_import(path=course_dir)

    assert db_snapshot() == before


# --- Commands -----------------------------------------------------------------------------------


def _manage(*args: str) -> subprocess.CompletedProcess:
    """Run manage.py in its own process against the test database (committed rows only)."""
    if connection.vendor != "postgresql":
        service_missing("the command tests run against PostgreSQL")
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "ecplatform.settings.test"}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


@pytest.mark.django_db(transaction=True)
def test_it_imports_and_exports_with_the_commands(course_dir, tmp_path):
    first = _manage("import_course", str(course_dir), "--backend", "local")
    again = _manage("import_course", str(course_dir), "--backend", "local")
    exported = _manage("export_course", "mini-course", str(tmp_path / "out"))

    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == (
        "Imported course 'mini-course': created 1 course, 3 chapters, 3 exercises, 2 hints, 1 trick program, "
        "2 questions, 5 choices, 3 glossary terms; updated nothing; removed nothing."
    )
    assert again.stdout.strip().endswith("created nothing; updated nothing; removed nothing.")
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "out" / "chapters" / "02-attention" / "quiz.yaml").is_file()
    assert Chapter.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_it_exits_non_zero_with_the_message_and_writes_nothing(course_dir):
    edit(course_dir / Q, "      correct: true\n    - text: A single", "    - text: A single")

    result = _manage("import_course", str(course_dir), "--backend", "local")
    unknown = _manage("export_course", "no-such-course", str(course_dir / "out"))

    assert result.returncode != 0
    assert result.stdout == ""
    assert f"{Q}:8: question 2 has no correct choice" in result.stderr
    assert Course.objects.count() == 0
    assert unknown.returncode != 0
    assert "no course with the slug 'no-such-course'" in unknown.stderr


@pytest.mark.django_db(transaction=True)
def test_the_command_publishes_nothing_when_an_exercise_of_a_published_chapter_fails(course_dir):
    backend_or_skip("local")
    edit(course_dir / "chapters/01-first-steps/make-a-tensor.solution.py", "[1.0, 2.0, 3.0]", "[1.0, 2.0]")

    refused = _manage("import_course", str(course_dir), "--backend", "local")

    assert refused.returncode != 0
    assert "Nothing was imported" in refused.stderr
    assert "Part 1 (first-steps): Exercise 'make-a-tensor' fails validation" in refused.stderr
    assert "the solution does not pass its check" in refused.stderr
    assert Course.objects.count() == 0

    # As a draft, the same chapter imports: only published chapters must validate.
    edit(course_dir / "chapters/01-first-steps/chapter.md", "published: true", "published: false")
    drafted = _manage("import_course", str(course_dir), "--backend", "local")
    assert drafted.returncode == 0, drafted.stderr
    assert not Chapter.objects.get(slug="first-steps").published


def test_it_round_trips_the_demo_course(tmp_path):
    demo = ROOT / "courses" / "content" / "transformers"

    report = course_import(path=demo)
    before = db_snapshot()
    course_export(course=report.course, path=tmp_path / "demo")
    again = course_import(path=tmp_path / "demo")

    assert report.created["chapter"] == sum(1 for path in (demo / "chapters").iterdir() if path.is_dir())
    assert report.created["glossary term"] == len(yaml.safe_load((demo / "glossary.yaml").read_text()))
    assert not again.changed
    assert db_snapshot() == before


def test_it_refuses_a_chapter_slug_a_course_page_uses(tmp_path):
    from courses.services.content_io import ContentError, course_import

    course_dir = tmp_path / "c"
    (course_dir / "chapters" / "01-glossary").mkdir(parents=True)
    (course_dir / "course.yaml").write_text("slug: c\ntitle: C\n")
    (course_dir / "chapters" / "01-glossary" / "chapter.md").write_text("---\nslug: glossary\ntitle: G\n---\n")
    with pytest.raises(ContentError, match="slug 'glossary' is taken by a course page"):
        course_import(path=course_dir)


def test_a_chapter_slug_a_course_page_uses_fails_validation():
    from django.core.exceptions import ValidationError

    from courses.models import Chapter

    with pytest.raises(ValidationError, match="taken by a course page"):
        Chapter(slug="glossary").clean()


def test_it_imports_and_exports_an_exercises_probe(course_dir, tmp_path):
    probe = "def calls(seed):\n    return [('make', (seed % 7,))]\n"
    (course_dir / "chapters/01-first-steps/make-a-tensor.probe.py").write_text(probe)

    course_import(path=course_dir)
    course_export(course=Course.objects.get(), path=tmp_path / "out")

    assert Exercise.objects.get(slug="make-a-tensor").probe_code == probe
    assert (tmp_path / "out/chapters/01-first-steps/make-a-tensor.probe.py").read_text() == probe
    assert not (tmp_path / "out/chapters/02-attention/score-keys.probe.py").exists()
