"""validate_course finds each problem an author can leave in a course folder, one fixture course per
problem (tests/content/fixtures/), with the file and line, and passes the demo course.

The text problems need no sandbox; the exercise problems run in the real local sandbox
(bubblewrap), as the command does, and skip where it is missing (fail under CI)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from courses.services.validation import course_validate, key_lines
from tests.content.course_files import COURSE_DIR
from tests.runner.conftest import backend_or_skip

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
CHAPTER = "chapters/01-scores"

TEXT_PROBLEMS = [
    pytest.param(
        "broken-glossary-link",
        f"{CHAPTER}/chapter.md:15: [[softmaxx]] names no glossary term ('softmaxx')",
        id="broken-glossary-link",
    ),
    pytest.param(
        "bad-maths",
        f"{CHAPTER}/chapter.md:16: maths does not parse: '\\left( q \\cdot k' (extra left or missing right)",
        id="bad-maths",
    ),
    pytest.param(
        "split-construct",
        f"{CHAPTER}/chapter.md:16: inline maths ($...$) is split across lines: keep it on one line",
        id="split-construct",
    ),
    pytest.param(
        "leaky-hint",
        f"{CHAPTER}/chapter.md:14: exercise 'double-it', hint 2: the hint gives away a line of the solution: "
        "'return 2 * x'",
        id="hint-leaks-a-solution-line",
    ),
    pytest.param(
        "probe-misspelt",
        f"{CHAPTER}/double-it.probe.py:3: BY_HAND names operator.mull, which does not exist: the learner keeps the "
        "real one",
        id="by-hand-name-misspelt",
    ),
    pytest.param(
        "broken-lib",
        "lib/groundup.py:4: Python syntax error: expected ':'",
        id="broken-lib-module",
    ),
    pytest.param(
        "quiz-shortest",
        "chapters: the right answer is the shortest choice in 7 of 10 questions (chance: about 2.8); vary the "
        "lengths (questions 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7)",
        id="quiz-right-answer-shortest",
    ),
    pytest.param(
        "quiz-position",
        "chapters: the right answer is choice 2 in 6 of 10 questions (chance: about 2.5); vary its position",
        id="quiz-right-answer-in-one-position",
    ),
    pytest.param(
        "quiz-reasons",
        "chapters: the right answer is the only choice that gives a reason, or the only one that gives none, in 6 "
        "of 10 questions (chance: about 1.5); give the choices their reasons alike (questions 1.1, 1.2, 1.3, 1.4, "
        "1.5, 1.6)",
        id="quiz-right-answer-the-odd-one-out",
    ),
]

RUN_PROBLEMS = [
    pytest.param(
        "starter-passes",
        f"{CHAPTER}/double-it.check.py:1: the starter code passes the check: the exercise asks nothing of the learner",
        id="starter-passes",
    ),
    pytest.param(
        "solution-fails",
        f"{CHAPTER}/double-it.solution.py:2: the solution does not pass its check "
        "(succeeded: result is 43; double(21) should give twice 21.)",
        id="solution-fails",
    ),
    pytest.param(
        "trick-passes",
        f"{CHAPTER}/double-it.trick-hard-coded.py:1: the check passes this trick program, written to pass without "
        "doing the exercise: make the check judge the work",
        id="check-lets-a-trick-program-pass",
    ),
    pytest.param(
        "leaky-check",
        f"{CHAPTER}/double-it.check.py:6: the check's message for the starter code gives away a line of the "
        "solution: 'return 2 * x'",
        id="check-leaks-a-solution-line",
    ),
]


@pytest.fixture(scope="module")
def local_sandbox():
    return backend_or_skip("local")


def problems(path: Path, **options) -> list[str]:
    return [problem.text() for problem in course_validate(path=path, **options).problems]


def manage(*args: str) -> subprocess.CompletedProcess:
    # No database: validate_course reads files and runs sandboxes only.
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(("fixture", "expected"), TEXT_PROBLEMS)
def test_it_names_each_text_problem_with_its_file_and_line(fixture, expected):
    assert problems(FIXTURES / fixture, backend=None) == [expected]


def test_it_lists_every_problem_of_a_folder_not_only_the_first(tmp_path):
    course = shutil.copytree(FIXTURES / "valid", tmp_path / "course")
    chapter = course / CHAPTER / "chapter.md"
    text = chapter.read_text()
    text = text.replace("a [[softmax]] turns", "a [[soft\nmax]] turns").replace("[[score]]", "[[scores]]")
    chapter.write_text(text.replace("**larger still**", "**larger\nstill**").replace("$q$", "$q^$"))

    assert problems(course, backend=None) == [
        f"{CHAPTER}/chapter.md:15: [[scores]] names no glossary term ('scores')",
        f"{CHAPTER}/chapter.md:15: a reference [[...]] is split across lines: keep it on one line",
        f"{CHAPTER}/chapter.md:17: maths does not parse: 'q^' (missing super script or subscript)",
        f"{CHAPTER}/chapter.md:23: bold text (**...**) is split across lines: keep it on one line",
    ]


def test_it_accepts_display_maths_between_lines_of_their_own_and_code_that_looks_like_maths(tmp_path):
    course = shutil.copytree(FIXTURES / "valid", tmp_path / "course")
    chapter = course / CHAPTER / "chapter.md"
    extra = "Code is not maths: `cost = $5` and `t[[0]]`.\n\n```python\nprice = '$'\nx = t[[1,\n  2]]\n```\n"
    chapter.write_text(chapter.read_text() + "\n" + extra)

    assert problems(course, backend=None) == []


def test_it_refuses_a_lib_module_that_shadows_a_standard_or_installed_module(tmp_path):
    course = shutil.copytree(FIXTURES / "valid", tmp_path / "course")
    (course / "lib" / "groundup.py").rename(course / "lib" / "json.py")

    assert problems(course, backend=None) == [
        "lib/json.py: module name 'json' would shadow the standard-library module 'json'"
    ]
    (course / "lib" / "json.py").rename(course / "lib" / "torch.py")
    assert problems(course, backend=None) == [
        "lib/torch.py: module name 'torch' would shadow the installed module 'torch'"
    ]


def _quiz(course: Path) -> Path:
    return course / CHAPTER / "quiz.yaml"


def _write_quiz(course: Path, questions: list[tuple[list[str], int]]) -> None:
    """A quiz of (choice texts, index of the right one) questions, every choice explained."""
    lines = []
    for number, (texts, right) in enumerate(questions, start=1):
        lines += [f"- prompt: Question {number}?", "  choices:"]
        for index, text in enumerate(texts):
            lines.append(f"    - text: {text}")
            if index == right:
                lines.append("      correct: true")
            lines.append(f"      explanation: Why choice {index + 1} is {'right' if index == right else 'wrong'}.")
    _quiz(course).write_text("\n".join(lines) + "\n")


def test_it_judges_quiz_patterns_only_over_ten_questions_or_more(tmp_path):
    course = shutil.copytree(FIXTURES / "quiz-shortest", tmp_path / "course")
    questions = yaml.safe_load(_quiz(course).read_text())
    # Nine questions, six with the shortest right answer: a pattern chance makes too easily to judge.
    _quiz(course).write_text(yaml.safe_dump(questions[:6] + questions[7:10], sort_keys=False))

    assert problems(course, backend=None) == []


def test_it_says_the_last_choice_once_where_questions_have_different_numbers_of_choices(tmp_path):
    course = shutil.copytree(FIXTURES / "valid", tmp_path / "course")
    three, four = (
        ["Alpha one", "Beta two two", "Gamma three three"],
        ["Delta four", "Eps five", "Zeta six six", "Eta seven seven"],
    )
    _write_quiz(course, [(three, 2) if number % 2 else (four, 3) for number in range(10)])

    assert problems(course, backend=None) == [
        "chapters: the right answer is the last choice in 10 of 10 questions (chance: about 2.9); vary its position"
    ]


def test_it_passes_quizzes_that_vary_lengths_positions_and_reasons(tmp_path):
    course = shutil.copytree(FIXTURES / "valid", tmp_path / "course")
    texts = ["Short one", "A middle-sized choice", "The longest choice of all four", "Mid choice text"]
    _write_quiz(course, [(texts, number % 4) for number in range(12)])

    assert problems(course, backend=None) == []


def test_the_demo_course_passes_every_check_that_needs_no_sandbox_its_quizzes_included():
    # 50 questions: the right answer is a shortest choice in 12 (chance 13), at each position
    # 12 or 13 times, and the odd one out between reasons in 3 (chance about 4).
    assert problems(COURSE_DIR, backend=None) == []


def test_it_takes_the_lines_a_solution_changes_as_its_key_lines():
    starter = "def double(x):\n    return x  # make it return twice x\n\nresult = double(21)\n"
    solution = "def double(x):\n    return 2 * x\n\nresult = double(21)\n"

    assert key_lines(solution=solution, starter=starter) == [(2, "return 2 * x")]


def test_the_command_prints_one_line_per_problem_and_exits_1():
    done = manage("validate_course", str(FIXTURES / "broken-glossary-link"), "--no-run")

    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        f"{FIXTURES / 'broken-glossary-link'}/{CHAPTER}/chapter.md:15: [[softmaxx]] names no glossary term ('softmaxx')"
    ]
    assert "1 problem" in done.stderr


@pytest.mark.services
@pytest.mark.parametrize(("fixture", "expected"), RUN_PROBLEMS)
def test_it_runs_each_exercise_in_the_sandbox_and_names_what_is_wrong(local_sandbox, fixture, expected):
    assert problems(FIXTURES / fixture, backend=local_sandbox) == [expected]


@pytest.mark.services
def test_it_passes_a_sound_course_and_times_its_solutions(local_sandbox):
    report = course_validate(path=FIXTURES / "valid", backend=local_sandbox, timings=True)

    assert report.problems == []
    assert report.exercises_run == 1
    [timing] = report.timings
    assert timing.exercise == f"{CHAPTER}/double-it"
    assert len(timing.runs_ms) == 3 and timing.median_ms > 0


@pytest.mark.services
def test_the_command_exits_0_on_the_demo_course():
    backend_or_skip("local")
    # Warm: one owner's runs after the first go to a warm sandbox, so the whole course takes seconds
    # (cold, each run pays a Python start and a torch import twice).
    # (Its --timings report is tested on the small course above: three more runs of each exercise
    # here would only repeat that.)
    done = manage("validate_course", str(COURSE_DIR), "--backend", "local", "--warm")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "running chapters/10-scaling-and-efficiency/mixed-precision-anywhere" in done.stderr
    assert re.search(r"no problems, \d+ exercises run in the sandbox", done.stderr), done.stderr


def test_a_probe_judges_the_function_on_inputs_the_program_never_saw(local_sandbox, tmp_path):
    assert problems(FIXTURES / "probed", backend=local_sandbox) == []
    # What passed the check on `result` alone: right on the one input the program used.
    course = shutil.copytree(FIXTURES / "probed", tmp_path / "course")
    (course / CHAPTER / "double-it.solution.py").write_text(
        "def double(x):\n    return 42 if x == 21 else x\n\n\nresult = double(21)\n"
    )
    [problem] = problems(course, backend=local_sandbox)
    assert re.match(
        rf"{CHAPTER}/double-it.solution.py:2: the solution does not pass its check \(succeeded: double\(-?\d+\) gave "
        r"-?\d+; twice -?\d+ is -?\d+\.\)$",
        problem,
    ), problem


def test_a_probe_names_only_functions_and_operators_that_exist():
    from courses.services.probe_names import probe_problems

    source = 'BY_HAND = ["torch.softmax", "torch.sofmax", "aten::_softmax", "aten::_sofmax"]\n'
    assert [problem for _, problem in probe_problems(source)] == [
        "BY_HAND names torch.sofmax, which does not exist: the learner keeps the real one",
        "BY_HAND names aten::_sofmax, which does not exist: the learner keeps the real one",
    ]
    assert probe_problems("BY_HAND = [name for name in NAMES]\n") == [
        ("BY_HAND", "BY_HAND must be a list of names written out (strings)")
    ]
    # The course's own modules are installed only where an exercise runs: their names are looked up
    # in the module's source.
    modules = {"groundup": "import torch\n\nSCALE = 2\n\n\ndef rotate(x):\n    return x\n"}
    source = 'BY_HAND = ["groundup.rotate", "groundup.SCALE", "groundup.rotat", "groundup.torch.softmax"]\n'
    assert [problem for _, problem in probe_problems(source, modules=modules)] == [
        "BY_HAND names groundup.rotat, which does not exist: the learner keeps the real one",
        "BY_HAND names groundup.torch.softmax, which does not exist: the learner keeps the real one",
    ]


TRICK_CLASSES = [
    "copied-reference",
    "course-module",
    "course-shortcut",
    "degenerate-input",
    "hard-coded",
    "patched-torch",
    "unfixed-overflow",
]


def test_every_class_of_trick_gets_past_a_values_check_and_none_past_a_probed_one(local_sandbox):
    """One exercise twice, with one trick program of each class beside each: a check on the values
    the program left lets all of them through, and validate_course names each; the same exercise
    judged on its function, called on fresh inputs with the library softmax refused, without the
    course's copy of the piece and with the course's other finished piece that does the same work
    refused by its module's name, fails every one of them."""
    folder = "chapters/01-weights"
    expected = [
        f"{folder}/on-its-values.trick-{name}.py:1: the check passes this trick program, written to pass without "
        "doing the exercise: make the check judge the work"
        for name in TRICK_CLASSES
    ]
    # Warm: fourteen runs that each import torch would otherwise start fourteen sandboxes.
    assert problems(FIXTURES / "trick-classes", backend=local_sandbox, warm=True) == expected
