"""Chapter Markdown to sanitised HTML, split where the exercises sit.

Author text is untrusted: raw HTML in it is shown as text, and everything the renderer produces
passes through an allowlist sanitiser (nh3) before it reaches a page. The renderer adds what
authors cannot write by hand: Pygments-highlighted code, MathML from `$...$` / `$$...$$`, callouts
(`!!! note "Title"`), heading ids, and glossary references (`[[term]]`, `[[shown text|term]]`)
that open their definition in place through an HTML popover.
"""

import hashlib
import json
import re
import secrets
import xml.etree.ElementTree as etree
from collections.abc import Iterable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import markdown
import nh3
from django.core.cache import cache
from latex2mathml.converter import convert as latex_to_mathml
from markdown.extensions import Extension
from markdown.inlinepatterns import InlineProcessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor
from markdown.util import AtomicString
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from courses.models import Chapter, Exercise, GlossaryTerm
from courses.rules import exercise_marker_slug

CODE_CSS_CLASS = "codehilite"

MATHML_TAGS = {
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msup", "msub", "msubsup", "mfrac",
    "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded",
    "mphantom", "menclose", "merror", "semantics", "annotation",
}  # fmt: skip
HTML_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "b", "i", "del", "ins",
    "sub", "sup", "code", "pre", "kbd", "samp", "blockquote", "ul", "ol", "li", "dl", "dt", "dd",
    "a", "img", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "div", "span",
    "button",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "*": {"class"},
    **{f"h{n}": {"id"} for n in range(1, 7)},
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
    "th": {"align"},
    "td": {"align"},
    "span": {"id", "popover", "role"},
    "button": {"popovertarget"},
    "math": {"display", "xmlns"},
    "mi": {"mathvariant"},
    "mo": {"stretchy", "fence", "separator", "lspace", "rspace", "form", "largeop", "movablelimits", "accent"},
    "mstyle": {"displaystyle", "scriptlevel", "mathvariant"},
    "mspace": {"width", "height", "depth"},
    "mfrac": {"linethickness"},
    "mover": {"accent"},
    "munder": {"accentunder"},
    "mtable": {"columnalign", "rowspacing", "columnspacing"},
    "mtd": {"columnalign", "columnspan", "rowspan"},
    "mpadded": {"width", "height", "depth", "lspace", "voffset"},
    "menclose": {"notation"},
    "annotation": {"encoding"},
}


def html_sanitise(html: str) -> str:
    """Keep only the markup the renderer makes; no scripts, handlers, styles, frames or
    javascript:/data: URLs survive."""
    return nh3.clean(
        html,
        tags=HTML_TAGS | MATHML_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        tag_attribute_values={"button": {"type": {"button"}}},
        # A listing wider than the page scrolls inside itself; keyboard users must reach it too.
        set_tag_attribute_values={"pre": {"tabindex": "0"}},
        url_schemes={"http", "https", "mailto"},
        strip_comments=True,
        link_rel="noopener noreferrer",
    )


def code_highlight(*, source: str) -> str:
    """Python source as the same highlighted block a fenced ```python listing renders to."""
    formatter = HtmlFormatter(cssclass=CODE_CSS_CLASS, wrapcode=True)
    return html_sanitise(highlight(source, PythonLexer(), formatter))


@dataclass(frozen=True)
class Segment:
    """A stretch of prose (html) or one exercise with its rendered instructions and starter code."""

    html: str = ""
    exercise: Exercise | None = None
    instructions_html: str = ""
    starter_html: str = ""

    @property
    def is_exercise(self) -> bool:
        return self.exercise is not None


# --- Markdown extensions -------------------------------------------------------------------


class _MathInline(InlineProcessor):
    """`$...$` inline and `$$...$$` display maths, converted to MathML here on the server."""

    def __init__(self, pattern: str, md: markdown.Markdown, *, display: bool):
        super().__init__(pattern, md)
        self.display = display

    def handleMatch(self, m, data):
        latex = m.group(1).strip()
        try:
            mathml = latex_to_mathml(latex, display="block" if self.display else "inline")
        except Exception:
            # A formula latex2mathml cannot read is shown as its source rather than breaking the page.
            mathml = f'<code class="math-error">{escape(latex)}</code>'
        if self.display:
            mathml = f'<span class="math-display">{mathml}</span>'
        return self.md.htmlStash.store(mathml), m.start(0), m.end(0)


class _GlossaryInline(InlineProcessor):
    """`[[term]]` or `[[shown text|term]]`: a button that opens the definition in a popover.
    A term the glossary lacks renders as its plain text."""

    def __init__(self, pattern: str, md: markdown.Markdown, *, state: "_RenderState"):
        super().__init__(pattern, md)
        self.state = state

    def handleMatch(self, m, data):
        # A reference may wrap across lines in the source: "[[residual\nstream]]".
        shown = " ".join(m.group(1).split())
        name = " ".join((m.group(2) or m.group(1)).split())
        term = self.state.glossary.get(name.lower())
        if term is None:
            return AtomicString(shown), m.start(0), m.end(0)
        popover_id = self.state.next_id()
        wrap = etree.Element("span", {"class": "term-ref"})
        wrap.text = AtomicString("")
        button = etree.SubElement(wrap, "button", {"type": "button", "class": "term", "popovertarget": popover_id})
        button.text = AtomicString(shown)
        definition = etree.SubElement(
            wrap, "span", {"id": popover_id, "popover": "auto", "class": "term-def", "role": "note"}
        )
        definition.text = AtomicString("")
        name_el = etree.SubElement(definition, "strong", {"class": "term-name"})
        name_el.text = AtomicString(term.term)
        text_el = etree.SubElement(definition, "span", {"class": "term-text"})
        text_el.text = AtomicString(term.definition)
        return wrap, m.start(0), m.end(0)


class _ExerciseSlots(Preprocessor):
    """Replaces each `[[exercise:slug]]` line with a marker the renderer splits the HTML at.
    Runs after fenced code is stashed, so a marker inside a listing stays text."""

    def __init__(self, md: markdown.Markdown, *, state: "_RenderState"):
        super().__init__(md)
        self.state = state

    def run(self, lines):
        out = []
        for line in lines:
            slug = exercise_marker_slug(line)
            if slug:
                out += ["", self.md.htmlStash.store(self.state.slot_html(slug)), ""]
            else:
                out.append(line)
        return out


class _DemoteHeadings(Treeprocessor):
    """The page's title is its only h1, so a body that uses `#` is shifted down one level."""

    def run(self, root):
        if root.find(".//h1") is None:
            return
        for el in root.iter():
            if el.tag in {"h1", "h2", "h3", "h4", "h5"}:
                el.tag = f"h{int(el.tag[1]) + 1}"


class _ReadingExtension(Extension):
    def __init__(self, *, state: "_RenderState"):
        super().__init__()
        self.state = state

    def extendMarkdown(self, md):
        # Raw HTML in author text is escaped rather than passed through.
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.preprocessors.register(_ExerciseSlots(md, state=self.state), "exercise_slots", 20)
        # Above escapes (180) and emphasis, so LaTeX backslashes and underscores reach
        # the converter untouched; below backticks (190), so `$` in inline code stays code.
        md.inlinePatterns.register(_MathInline(r"\$\$(.+?)\$\$", md, display=True), "math_display", 186)
        md.inlinePatterns.register(
            _MathInline(r"(?<![\\$])\$(?!\s)([^$\n]+?)(?<!\s)\$", md, display=False), "math", 185
        )
        md.inlinePatterns.register(
            _GlossaryInline(r"\[\[([^\[\]|]+?)(?:\|([^\[\]|]+?))?\]\]", md, state=self.state), "glossary", 175
        )
        md.treeprocessors.register(_DemoteHeadings(md), "demote_headings", 1)


@dataclass
class _RenderState:
    glossary: dict[str, GlossaryTerm]
    nonce: str = field(default_factory=lambda: secrets.token_hex(8))
    counter: int = 0

    def next_id(self) -> str:
        self.counter += 1
        return f"t-{self.counter}"

    def slot_html(self, slug: str) -> str:
        # The nonce keeps anything else in the output from being taken for an exercise slot.
        return f'<div data-slot="{self.nonce}:{slug}"></div>'

    def slot_re(self) -> re.Pattern:
        return re.compile(rf'<div data-slot="{self.nonce}:([a-z0-9-]+)"></div>')


class _Renderer:
    def __init__(self, *, glossary: Iterable[GlossaryTerm]):
        self.state = _RenderState(glossary={t.term.lower(): t for t in glossary})
        self.md = markdown.Markdown(
            extensions=[
                "fenced_code",
                "codehilite",
                "tables",
                "admonition",
                "toc",
                "sane_lists",
                _ReadingExtension(state=self.state),
            ],
            extension_configs={
                "codehilite": {"css_class": CODE_CSS_CLASS, "guess_lang": False, "wrapcode": True},
                "tables": {"use_align_attribute": True},
            },
            output_format="html",
        )

    def pieces(self, text: str) -> list[str]:
        """Raw HTML pieces alternating with exercise slugs: [html, slug, html, slug, html]."""
        self.md.reset()
        return self.state.slot_re().split(self.md.convert(text))

    def html(self, text: str) -> str:
        return html_sanitise("".join(self.pieces(text)[::2]))


def markdown_render(*, text: str, glossary: Iterable[GlossaryTerm] = ()) -> str:
    return _Renderer(glossary=glossary).html(text)


def hint_html(*, text: str, glossary: Iterable[GlossaryTerm] = ()) -> str:
    """A hint as the page shows it, from the cache when the same text was rendered with the same
    glossary (a page shows the revealed hints on every visit)."""
    glossary = list(glossary)
    made_of = [_RENDERER_VERSION, text, [(term.term, term.definition) for term in glossary]]
    key = f"hint-html:{hashlib.sha256(json.dumps(made_of).encode()).hexdigest()}"
    html = cache.get(key)
    if html is None:
        html = markdown_render(text=text, glossary=glossary)
        cache.set(key, html, RENDER_CACHE_S)
    return html


def chapter_render(
    *, chapter: Chapter, glossary: Iterable[GlossaryTerm], exercises: Iterable[Exercise]
) -> list[Segment]:
    """The chapter body as prose segments with each exercise at its marker, from the cache when
    the same text was rendered before. Rendering a long chapter (Markdown, MathML, highlighting,
    sanitising) costs more than the rest of its page together, and the text changes only when an
    author edits it, so the key is a digest of everything the HTML is made from: an edit is seen
    at once, whoever made it and however."""
    glossary, exercises = list(glossary), list(exercises)
    key = _render_key(chapter=chapter, glossary=glossary, exercises=exercises)
    by_slug = {exercise.slug: exercise for exercise in exercises}
    cached = cache.get(key)
    if cached is None:
        segments = _chapter_render(chapter=chapter, glossary=glossary, exercises=exercises)
        cached = [
            (s.html, s.exercise.slug if s.exercise else None, s.instructions_html, s.starter_html) for s in segments
        ]
        cache.set(key, cached, RENDER_CACHE_S)
    return [
        Segment(
            html=html, exercise=by_slug[slug] if slug else None, instructions_html=instructions, starter_html=starter
        )
        for html, slug, instructions, starter in cached
    ]


# The renderer's own code is part of the key: a deployment that changes it renders anew.
_RENDERER_VERSION = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
RENDER_CACHE_S = 24 * 3600


def _render_key(*, chapter: Chapter, glossary: list[GlossaryTerm], exercises: list[Exercise]) -> str:
    made_of = [
        _RENDERER_VERSION,
        chapter.body,
        [(term.term, term.definition) for term in glossary],
        [(exercise.slug, exercise.instructions, exercise.starter_code) for exercise in exercises],
    ]
    return f"chapter-html:{chapter.pk}:{hashlib.sha256(json.dumps(made_of).encode()).hexdigest()}"


def _chapter_render(*, chapter: Chapter, glossary: list[GlossaryTerm], exercises: list[Exercise]) -> list[Segment]:
    """Exercises the body does not place (added in the admin without a marker) follow at the
    end, so none is lost."""
    renderer = _Renderer(glossary=glossary)
    by_slug = {exercise.slug: exercise for exercise in exercises}
    segments: list[Segment] = []
    placed: set[str] = set()

    def add_exercise(exercise: Exercise) -> None:
        placed.add(exercise.slug)
        segments.append(
            Segment(
                exercise=exercise,
                instructions_html=renderer.html(exercise.instructions),
                starter_html=code_highlight(source=exercise.starter_code),
            )
        )

    pieces = renderer.pieces(chapter.body)
    for index, piece in enumerate(pieces):
        if index % 2 == 0:
            if piece.strip():
                segments.append(Segment(html=html_sanitise(piece)))
        elif piece in by_slug and piece not in placed:
            add_exercise(by_slug[piece])
    for exercise in by_slug.values():
        if exercise.slug not in placed:
            add_exercise(exercise)
    return segments
