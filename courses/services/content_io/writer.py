"""Exporting: a course's rows written back as a folder in the format (courses/content/FORMAT.md),
byte for byte the same for the same rows."""

from pathlib import Path
from typing import Any

import yaml

from courses.models import Course
from courses.rules import DEFAULT_QUESTION_KIND
from courses.services.content_io.source import trim_blank_lines
from courses.services.content_io.specs import ContentError

YAML_WIDTH = 100
FOLD_OVER = 72  # a plain value this long still fits on its line after any key and indent


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow=False, indentless=False):
        # Lists indented under their key, as the format's examples and most editors write them.
        return super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, data: str):
    # Multi-line text as a literal block, long lines folded: the files read like what an author
    # writes and diff line by line. Both styles load back to the same string.
    style = "|" if "\n" in data else ">" if len(data) > FOLD_OVER else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def _dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=YAML_WIDTH)


def _clean(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")


def _remove_tree(path: Path) -> None:
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            _remove_tree(child)
        else:
            child.unlink()
    path.rmdir()


def course_export(*, course: Course, path: str | Path) -> None:
    """Write a course as a folder (FORMAT.md), byte for byte the same for the same rows.

    The folder's course.yaml, glossary.yaml, lib/ and chapters/ are replaced; other files in it
    are left alone. A folder that holds other things and no course.yaml is refused.
    """
    root = Path(path)
    if root.exists() and any(root.iterdir()) and not (root / "course.yaml").exists():
        raise ContentError(str(path), None, "the folder is not empty and holds no course.yaml; refusing to write there")
    root.mkdir(parents=True, exist_ok=True)
    for owned in ("chapters", "lib"):
        if (root / owned).is_dir():
            _remove_tree(root / owned)

    course_data = {
        "slug": course.slug,
        "title": course.title,
        "level": course.level,
        "published": course.published,
        "summary": _clean(course.summary),
        "instructors": sorted(course.instructors.values_list("username", flat=True)),
    }
    _write(root / "course.yaml", _dump_yaml(course_data))
    terms = sorted(course.glossary.all(), key=lambda term: (term.term.lower(), term.term))
    glossary = [{"term": term.term, "definition": _clean(term.definition)} for term in terms]
    _write(root / "glossary.yaml", _dump_yaml(glossary) if glossary else "[]\n")
    for module in course.modules.order_by("name"):
        _write(root / "lib" / f"{module.name}.py", module.source.replace("\r\n", "\n"))

    chapters = course.chapters.order_by("number").prefetch_related(
        "exercises__hints", "exercises__tricks", "questions__choices"
    )
    for chapter in chapters:
        folder = root / "chapters" / f"{chapter.number:02d}-{chapter.slug}"
        front = {"slug": chapter.slug, "title": chapter.title}
        # Optional text is left out when empty, as an author would write it.
        front.update(
            {
                key: _clean(value)
                for key, value in [("summary", chapter.summary), ("lede", chapter.lede)]
                if value.strip()
            }
        )
        front["published"] = chapter.published
        exercises = sorted(chapter.exercises.all(), key=lambda exercise: exercise.position)
        if exercises:
            front["exercises"] = [
                {
                    "slug": exercise.slug,
                    "title": exercise.title,
                    **({"instructions": _clean(exercise.instructions)} if exercise.instructions.strip() else {}),
                    **({"hints": [_clean(hint.text) for hint in exercise.hints.all()]} if exercise.hints.all() else {}),
                    "time_limit": exercise.time_limit_s,
                    "gpu": exercise.needs_gpu,
                }
                for exercise in exercises
            ]
        body, _ = trim_blank_lines(chapter.body)
        _write(folder / "chapter.md", f"---\n{_dump_yaml(front)}---\n" + (f"\n{body}\n" if body else ""))
        for exercise in exercises:
            _write(folder / f"{exercise.slug}.py", exercise.starter_code.replace("\r\n", "\n"))
            if exercise.check_code:
                _write(folder / f"{exercise.slug}.check.py", exercise.check_code.replace("\r\n", "\n"))
            if exercise.solution_code:
                _write(folder / f"{exercise.slug}.solution.py", exercise.solution_code.replace("\r\n", "\n"))
            if exercise.probe_code:
                _write(folder / f"{exercise.slug}.probe.py", exercise.probe_code.replace("\r\n", "\n"))
            for trick in exercise.tricks.all():
                _write(folder / f"{exercise.slug}.trick-{trick.name}.py", trick.code.replace("\r\n", "\n"))
        questions = sorted(chapter.questions.all(), key=lambda question: question.position)
        if questions:
            quiz = []
            for question in questions:
                choices = []
                for choice in sorted(question.choices.all(), key=lambda choice: choice.position):
                    item = {"text": choice.text}
                    if choice.is_correct:
                        item["correct"] = True
                    if choice.explanation.strip():
                        item["explanation"] = _clean(choice.explanation)
                    choices.append(item)
                # The default type goes unsaid, as an author writes it.
                kind = {"type": question.kind} if question.kind != DEFAULT_QUESTION_KIND else {}
                quiz.append({**kind, "prompt": _clean(question.prompt), "choices": choices})
            _write(folder / "quiz.yaml", _dump_yaml(quiz))
