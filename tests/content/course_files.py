"""Read the demo course folder the way an author sees it: plain files, no database.

The importer (courses/services/content_io.py) is the authority on the format; these helpers only
let the content tests look at the files directly, so the course can be checked without PostgreSQL.
"""

import re
from pathlib import Path

import yaml

COURSE_DIR = Path(__file__).resolve().parents[2] / "courses" / "content" / "transformers"
CHAPTERS_DIR = COURSE_DIR / "chapters"

FENCE_RE = re.compile(r"^(`{3,}).*?^\1\s*$", re.MULTILINE | re.DOTALL)
INLINE_CODE_RE = re.compile(r"(`+).*?\1")
REFERENCE_RE = re.compile(r"\[\[(?P<inner>.*?)\]\]")
EXERCISE_LINE_RE = re.compile(r"^\[\[exercise:(?P<slug>[^\]]*)\]\]\s*$", re.MULTILINE)
PYTHON_LISTING_RE = re.compile(r"^```python\n(?P<code>.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def chapter_folders() -> list[Path]:
    return sorted(path for path in CHAPTERS_DIR.iterdir() if path.is_dir())


def chapter_read(folder: Path) -> tuple[dict, str]:
    """The chapter's front matter and its Markdown body."""
    text = (folder / "chapter.md").read_text()
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def written_chapter_folders() -> list[Path]:
    return [folder for folder in chapter_folders() if chapter_read(folder)[0].get("published")]


def glossary_read() -> list[dict]:
    return yaml.safe_load((COURSE_DIR / "glossary.yaml").read_text())


def quiz_read(folder: Path) -> list[dict]:
    return yaml.safe_load((folder / "quiz.yaml").read_text())


def prose(body: str) -> str:
    """The body without fenced listings and inline code, where [[...]] is literal text."""
    return INLINE_CODE_RE.sub("", FENCE_RE.sub("", body))


def term_references(body: str) -> list[str]:
    """The glossary terms a body links to: [[term]] or [[shown text|term]]."""
    terms = []
    for match in REFERENCE_RE.finditer(prose(body)):
        inner = match.group("inner")
        if not inner.startswith("exercise:"):
            terms.append(inner.split("|")[-1].strip())
    return terms


def exercise_folder(slug: str) -> Path:
    for folder in chapter_folders():
        if (folder / f"{slug}.py").exists():
            return folder
    raise LookupError(f"no chapter folder holds exercise {slug}")
