"""A learner's own copy of the course's module, as a run of one exercise imports it: the learner's
pieces in place of the course's, later parts' pieces never, the piece asked for never, and an
earlier part's course pieces only once it is passed; every name left out says why."""

import sys
import types

import pytest

from courses.own_module import OwnSection, course_names, module_for_run, own_source, piece_names

MODULE = '''\
"""The course's pieces."""

SCALE = 1

# Part 1: numbers


def double(x):
    """The course's double."""
    return 2 * x


@staticmethod
def unused():
    return None


# Part 2: using them


def quadruple(x):
    return double(double(x))


def halve(x):
    return x / 2


# Part 3: later


def octuple(x):
    return double(quadruple(x))
'''

LEARNERS_DOUBLE = '''\
import math

CALLS = []


def double(x):
    """Mine."""
    CALLS.append(x)
    return x + x


def halve(x):  # a helper named like a course piece of another part
    return 0


print(double(3))
result = double(4)
'''


def imported(source: str) -> dict:
    namespace: dict = {"__name__": "groundup"}
    exec(compile(source, "groundup.py", "exec"), namespace)
    return namespace


def left_out_reason(namespace: dict, name: str) -> str:
    """What `from groundup import <name>` says; `groundup.<name>` says the same as an
    AttributeError, so hasattr and getattr with a default work as for any missing name."""
    module = types.ModuleType("groundup")
    vars(module).update(namespace)
    sys.modules["groundup"] = module
    try:
        with pytest.raises(ImportError) as raised:
            exec(f"from groundup import {name}", {})
        with pytest.raises(AttributeError) as attribute:
            getattr(module, name)
        assert str(attribute.value) == str(raised.value)
        assert getattr(module, name, None) is None and not hasattr(module, name)
    finally:
        del sys.modules["groundup"]
    return str(raised.value)


def test_a_learners_piece_replaces_the_courses_and_later_pieces_run_on_it():
    mine = own_source(LEARNERS_DOUBLE, ["double"], course_names(MODULE))
    namespace = imported(
        module_for_run(MODULE, part=3, passed_parts={1, 2}, own=[OwnSection(1, "Double it", ("double",), mine)])
    )
    assert namespace["double"].__doc__ == "Mine."
    assert namespace["quadruple"](5) == 20
    assert namespace["CALLS"] == [5, 10]  # Part 2's course piece called the learner's double
    assert namespace["halve"](8) == 4  # the learner's helper did not replace Part 2's piece


def test_a_run_never_gets_a_later_parts_piece_nor_the_one_it_asks_for():
    namespace = imported(module_for_run(MODULE, part=2, asked=["quadruple"], passed_parts={1}))
    assert "octuple" not in namespace and "quadruple" not in namespace
    assert namespace["halve"](8) == 4 and namespace["double"](3) == 6 and namespace["SCALE"] == 1
    assert (
        left_out_reason(namespace, "octuple")
        == "octuple comes from Part 3, a later part: this exercise runs without it."
    )
    assert left_out_reason(namespace, "quadruple") == (
        "quadruple is what this exercise asks you to write: define it in your code."
    )
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        namespace["__getattr__"]("no_such_name")


def test_an_earlier_parts_course_pieces_come_only_once_the_part_is_passed():
    namespace = imported(module_for_run(MODULE, part=3, passed_parts={2}))
    assert "double" not in namespace and "unused" not in namespace
    assert "which you have not passed yet" in left_out_reason(namespace, "double")
    # The learner's own piece of that part is theirs whether or not the whole part is passed.
    mine = own_source(LEARNERS_DOUBLE, ["double"], course_names(MODULE))
    namespace = imported(
        module_for_run(MODULE, part=3, passed_parts={2}, own=[OwnSection(1, "Double it", ("double",), mine)])
    )
    assert namespace["quadruple"](1) == 4 and "double" not in namespace["_LEFT_OUT"]


def test_staff_get_every_earlier_part_and_a_module_without_parts_is_unchanged():
    namespace = imported(module_for_run(MODULE, part=3, passed_parts=None))
    assert namespace["octuple"](1) == 8 and "_LEFT_OUT" not in namespace
    plain = "def helper():\n    return 1\n"
    assert module_for_run(plain, part=1, asked=["helper"], passed_parts=set()) == plain


def test_the_learners_module_keeps_their_definitions_and_drops_their_statements():
    mine = own_source(LEARNERS_DOUBLE, ["double"], course_names(MODULE))
    assert "def double(x):" in mine and "import math" in mine and "CALLS = []" in mine
    assert "print(" not in mine and "result =" not in mine
    assert "def halve" not in mine  # it would replace a course piece it was not asked for
    assert own_source("print('no function here')\n", ["double"], course_names(MODULE)) == ""
    assert own_source("def double(:\n", ["double"], course_names(MODULE)) == ""


def test_the_pieces_an_exercise_asks_for_are_what_its_starter_defines():
    starter = (
        "import torch\n\n\ndef attention(q, k, v):\n    ...\n\n\nclass Block:\n    pass\n\n\nx = attention(1, 2, 3)\n"
    )
    assert piece_names(starter) == ["attention", "Block"]
    assert piece_names("def broken(:\n") == []


def test_a_learners_import_from_the_module_itself_does_not_stop_it_loading():
    """Their code imported the course's pieces by name; in the module those are its own names. Run
    while the module loads, the import would ask for a name this run leaves out (an unpassed part)
    and stop every import of the module."""
    code = "from groundup import quadruple, double as twice\n\n\ndef triple_it(x):\n    return twice(x) + x\n"
    mine = own_source(code, ["triple_it"], course_names(MODULE))
    own = [OwnSection(2, "Triple it", ("triple_it",), mine)]
    namespace = imported(module_for_run(MODULE, part=3, passed_parts={1}, own=own, name="groundup"))
    assert "quadruple" not in namespace and "triple_it" in namespace
    assert "which you have not passed yet" in left_out_reason(namespace, "quadruple")
