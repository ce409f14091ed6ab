"""The files of a course folder as text: UTF-8 files, YAML that remembers the line of each key,
typed access to one mapping with errors that point at the right line, and chapter.md's front
matter. Nothing here knows what a course holds; reader.py does."""

from pathlib import Path
from typing import Any

import yaml

from courses.services.content_io.rules import SLUG_RE
from courses.services.content_io.specs import ContentError

# --- YAML that remembers where each mapping came from -------------------------------------


class _Map(dict):
    """A YAML mapping with the file line it starts on and the line of each key."""

    line: int = 0
    key_lines: dict[str, int]


class _LineLoader(yaml.SafeLoader):
    line_offset = 0


def _construct_map(loader: _LineLoader, node: yaml.MappingNode):
    loader.flatten_mapping(node)
    mapping = _Map()
    mapping.line = node.start_mark.line + 1 + loader.line_offset
    mapping.key_lines = {}
    yield mapping
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is not text", key_node.start_mark)
        if key in mapping:
            raise yaml.constructor.ConstructorError(None, None, f"key '{key}' appears twice", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=True)
        mapping.key_lines[key] = value_node.start_mark.line + 1 + loader.line_offset


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)


def load_yaml(text: str, *, file: str, line_offset: int = 0) -> Any:
    loader = _LineLoader(text)
    loader.line_offset = line_offset
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 + line_offset if mark else None
        raise ContentError(file, line, f"invalid YAML: {error.problem or error.context}") from None
    finally:
        loader.dispose()


# --- One mapping of one file -------------------------------------------------------------------


class MappingReader:
    """Typed access to one mapping of one file, with errors that point at the right line."""

    def __init__(
        self,
        value: Any,
        *,
        file: str,
        what: str,
        line: int,
        allowed: set[str],
        required: set[str],
        prefixed: bool = True,
    ):
        if not isinstance(value, dict):
            raise ContentError(file, line, f"{what} must be a mapping of keys to values")
        self.map, self.file, self.what, self.prefixed = value, file, what, prefixed
        self.line = getattr(value, "line", line)
        unknown = [key for key in value if key not in allowed]  # in file order
        if unknown:
            names = ", ".join(f"'{name}'" for name in unknown)
            plural = "s" if len(unknown) > 1 else ""
            raise self.error(unknown[0], f"unknown key{plural} {names} (allowed: {', '.join(sorted(allowed))})")
        missing = sorted(required - set(value))
        if missing:
            raise ContentError(file, self.line, self.message(f"missing required key '{missing[0]}'"))

    def line_of(self, key: str) -> int:
        return getattr(self.map, "key_lines", {}).get(key, self.line)

    def message(self, problem: str) -> str:
        return f"{self.what}: {problem}" if self.prefixed else problem

    def error(self, key: str, problem: str) -> ContentError:
        return ContentError(self.file, self.line_of(key), self.message(problem))

    def text(self, key: str, *, max_length: int | None = None, required: bool = False) -> str:
        value = self.map.get(key, "")
        if value is None:
            value = ""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.error(key, f"{key} must be text")
        value = str(value).replace("\r\n", "\n").strip()
        if required and not value:
            raise self.error(key, f"{key} must not be empty")
        if max_length and len(value) > max_length:
            raise self.error(key, f"{key} is {len(value)} characters long; at most {max_length} fit")
        return value

    def slug(self, key: str, *, max_length: int) -> str:
        value = self.text(key, required=True, max_length=max_length)
        if not SLUG_RE.match(value):
            raise self.error(key, f"{key} '{value}' must be lowercase letters, digits and hyphens")
        return value

    def flag(self, key: str, *, default: bool) -> bool:
        value = self.map.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"{key} must be true or false")
        return value

    def integer(self, key: str, *, default: int) -> int:
        value = self.map.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"{key} must be a whole number")
        return value

    def items(self, key: str) -> list:
        value = self.map.get(key) or []
        if not isinstance(value, list):
            raise self.error(key, f"{key} must be a list")
        return value


def field_max_length(model, name: str) -> int:
    return model._meta.get_field(name).max_length


def read_text(path: Path, *, file: str) -> str:
    try:
        return path.read_text(encoding="utf-8").replace("\r\n", "\n")
    except FileNotFoundError:
        raise ContentError(file, None, "file is missing") from None
    except UnicodeDecodeError as error:
        raise ContentError(file, None, f"not UTF-8 text ({error.reason})") from None


def item_line(item: Any, parent: MappingReader, key: str) -> int:
    return getattr(item, "line", parent.line_of(key))


# --- chapter.md ----------------------------------------------------------------------------------


def split_front_matter(text: str, *, file: str) -> tuple[str, str, int]:
    """Returns the front matter, the body and the file line the body starts on."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise ContentError(file, 1, "must start with front matter: a line '---', YAML, a line '---'")
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    raise ContentError(file, 1, "the front matter is not closed by a line '---'")


def trim_blank_lines(body: str, first_line: int = 1) -> tuple[str, int]:
    """Drops blank lines around a body (the export writes one after the front matter) and
    returns the line the first kept one was on."""
    lines = body.replace("\r\n", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
        first_line += 1
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines), first_line
