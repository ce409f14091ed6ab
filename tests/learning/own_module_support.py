"""A two-part course whose first part asks the learner to write a piece of the course's module
(`double`), and whose second part's exercise imports it: for the tests of the learner's own module."""

from courses.models import Chapter, Course, CourseModule, Exercise

MODULE = '''\
"""The course's pieces, part by part."""

# Part 1: doubling


def double(x):
    """The course's double."""
    return 2 * x


def triple(x):
    return 3 * x


# Part 2: using it


def quadruple(x):
    return double(double(x))


# Part 3: later


def octuple(x):
    return double(quadruple(x))
'''

DOUBLE_STARTER = '''\
def double(x):
    """Twice x, for any number x."""
    ...  # your code here


print(double(21))
'''

DOUBLE_PROBE = """\
import random


def calls(seed):
    draw = random.Random(seed)
    return [("double", (draw.randint(-1000, 1000),)) for _ in range(5)]
"""

DOUBLE_CHECK = """\
def check(ns, probed=None):
    for call in probed or []:
        (x,) = call.args
        if call.error or call.value != 2 * x:
            return False, f"double({x}) gave {call.error or call.value}; it should be {2 * x}."
    return bool(probed), "double is right on numbers it had never seen."
"""

# The second part's exercise prints whose `double` it runs; its check reads the course's module,
# which must be the course's own whatever the learner wrote.
USE_STARTER = """\
from groundup import double, quadruple

print("double says:", double.__doc__)
result = quadruple(3)
print("quadruple(3) =", result)
"""

USE_CHECK = """\
import groundup


def check(ns):
    if groundup.double.__doc__ != "The course's double.":
        return False, "the check did not get the course's module"
    return ns.get("result") == 12, "quadruple(3) is 12."
"""

LATER_STARTER = "from groundup import octuple\n\nprint(octuple(1))\n"


def two_part_course(*, slug: str = "own-module") -> Course:
    course = Course.objects.create(slug=slug, title="Own module", published=True)
    CourseModule.objects.create(course=course, name="groundup", source=MODULE)
    one = Chapter.objects.create(
        course=course,
        number=1,
        slug="doubling",
        title="Doubling",
        published=True,
        body="Write it.\n\n[[exercise:double-it]]\n",
    )
    two = Chapter.objects.create(
        course=course,
        number=2,
        slug="using-it",
        title="Using it",
        published=True,
        body="Use it.\n\n[[exercise:use-it]]\n\n[[exercise:look-ahead]]\n",
    )
    Exercise.objects.create(
        chapter=one,
        slug="double-it",
        title="Double it",
        position=1,
        starter_code=DOUBLE_STARTER,
        check_code=DOUBLE_CHECK,
        probe_code=DOUBLE_PROBE,
        solution_code=DOUBLE_STARTER.replace("    ...  # your code here", "    return x * 2"),
    )
    Exercise.objects.create(
        chapter=two, slug="use-it", title="Use it", position=1, starter_code=USE_STARTER, check_code=USE_CHECK
    )
    Exercise.objects.create(chapter=two, slug="look-ahead", title="Look ahead", position=2, starter_code=LATER_STARTER)
    return course


def own_double(marker: str) -> str:
    """A learner's right `double`, told apart from the course's by its docstring."""
    return DOUBLE_STARTER.replace('"""Twice x, for any number x."""', f'"""{marker}"""').replace(
        "    ...  # your code here", "    return x + x"
    )
