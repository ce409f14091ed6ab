"""The names a probe's BY_HAND refuses, checked before any run: each must exist, or the learner
keeps the real function (FORMAT.md, "Judging the learner's functions: the probe")."""

import ast
from collections.abc import Mapping

from courses.own_module import defined_names
from sandbox.harness.probe import by_hand_unknown


def probe_problems(probe_code: str, *, modules: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(needle, problem) for a probe's BY_HAND: read from the source as written (a list of
    strings), each name resolved in this process, which has the sandbox's packages, or, for a
    name in one of the course's own modules (`modules`: name -> source, installed only where an
    exercise runs), looked up among that module's top-level definitions."""
    try:
        tree = ast.parse(probe_code)
    except SyntaxError:
        return []  # the reader has said so
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "BY_HAND" for t in node.targets):
            try:
                names = ast.literal_eval(node.value)
            except ValueError:
                names = None
            if not isinstance(names, list | tuple) or not all(isinstance(name, str) for name in names):
                return [("BY_HAND", "BY_HAND must be a list of names written out (strings)")]
            return [
                (f'"{name}"', f"BY_HAND names {name}, which does not exist: the learner keeps the real one")
                for name in _by_hand_unknown(names, modules or {})
            ]
    return []


def _by_hand_unknown(names: list[str], modules: Mapping[str, str]) -> list[str]:
    """The names no refusal would reach. A course module's name ("groundup.rotate") must be one of
    its top-level definitions."""
    unknown = []
    for name in names:
        module, _, attribute = name.partition(".")
        if module in modules:
            if attribute not in defined_names(modules[module]):
                unknown.append(name)
        elif by_hand_unknown([name]):
            unknown.append(name)
    return unknown
