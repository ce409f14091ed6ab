"""Author Markdown cannot inject script: raw HTML is shown as text and the output is sanitised."""

from html.parser import HTMLParser

import pytest

from courses.models import Chapter, Exercise, GlossaryTerm
from courses.rendering import chapter_render, html_sanitise, markdown_render

ATTACKS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    '<a href="javascript:alert(1)">click</a>',
    '<iframe src="https://example.com"></iframe>',
    "<svg onload=alert(1)>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "[x](data:text/html,<script>alert(1)</script>)",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>",
    "[[softmax]] with `<script>` in code and <b onclick=alert(1)>bold</b>",
    "$\\href{javascript:alert(1)}{x}$",
    '!!! note "<script>alert(1)</script>"\n    <img src=x onerror=alert(1)>',
]


class _Inspector(HTMLParser):
    """Collects everything in the output that could run script."""

    def __init__(self):
        super().__init__()
        self.problems = []

    def handle_starttag(self, tag, attrs):
        if tag in {"script", "iframe", "svg", "style", "object", "embed", "form", "input"}:
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name in {"style", "srcdoc", "formaction"}:
                self.problems.append(f"{tag} {name}")
            if name in {"href", "src", "xlink:href", "action"} and value:
                scheme = value.strip().lower().replace("\t", "").replace("\n", "")
                if scheme.startswith(("javascript:", "data:", "vbscript:")):
                    self.problems.append(f"{tag} {name}={value}")


def _problems(html: str) -> list[str]:
    inspector = _Inspector()
    inspector.feed(html)
    return inspector.problems


HOSTILE_TERM = GlossaryTerm(term="softmax", definition='<script>alert(1)</script><img src=x onerror="alert(2)">')


@pytest.mark.parametrize("attack", ATTACKS)
def test_it_renders_hostile_markdown_without_executable_markup(attack):
    html = markdown_render(text=f"Before.\n\n{attack}\n\nAfter.", glossary=[HOSTILE_TERM])
    assert _problems(html) == [], html


@pytest.mark.parametrize("attack", ATTACKS)
def test_it_sanitises_exercise_instructions_too(attack):
    exercise = Exercise(slug="x", title="X", instructions=attack, starter_code=attack)
    segments = chapter_render(chapter=Chapter(body="[[exercise:x]]"), glossary=[HOSTILE_TERM], exercises=[exercise])
    assert _problems(segments[0].instructions_html + segments[0].starter_html) == []


def test_it_shows_raw_html_as_text():
    html = markdown_render(text="<script>alert(1)</script>")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_it_escapes_html_in_a_term_definition():
    html = markdown_render(text="[[softmax]]", glossary=[HOSTILE_TERM])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert _problems(html) == []


def test_it_drops_javascript_links_but_keeps_safe_ones():
    html = markdown_render(text="[bad](javascript:alert(1)) [good](https://example.com/x)")
    assert "javascript" not in html
    assert 'href="https://example.com/x"' in html


def test_the_sanitiser_strips_what_the_renderer_never_makes():
    dirty = '<p onclick="x()" style="color:red">a<script>b</script><iframe></iframe><button type="submit" formaction="/x">c</button></p>'
    assert html_sanitise(dirty) == "<p>a<button>c</button></p>"
