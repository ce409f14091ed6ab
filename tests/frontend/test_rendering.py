"""Chapter Markdown to HTML: headings, highlighted listings, maths, callouts, glossary popovers
and exercises at their places."""

from courses.models import Chapter, Exercise, GlossaryTerm
from courses.rendering import chapter_render, code_highlight, markdown_render

GLOSSARY = [
    GlossaryTerm(term="softmax", definition="Turns scores into weights that sum to one."),
    GlossaryTerm(term="key axis", definition="The direction the scores are divided along."),
]


def test_it_gives_headings_ids_and_keeps_one_h1_for_the_page():
    html = markdown_render(text="## Scores, scale, softmax\n\ntext")
    assert '<h2 id="scores-scale-softmax">Scores, scale, softmax</h2>' in html
    demoted = markdown_render(text="# Top\n\n## Below")
    assert "<h1" not in demoted
    assert '<h2 id="top">' in demoted and '<h3 id="below">' in demoted


def test_it_highlights_fenced_python_with_pygments_classes():
    html = markdown_render(text="```python\nimport torch\nprint(1)\n```")
    assert '<div class="codehilite">' in html
    assert '<span class="kn">import</span>' in html
    assert '<span class="nb">print</span>' in html
    assert '<span class="kn">import</span>' in code_highlight(source="import torch\n")


def test_it_renders_inline_and_display_maths_as_mathml():
    html = markdown_render(text="Inline $QK^T$ here.\n\n$$\\sqrt{d_k}$$")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">' in html
    assert "<msup><mi>K</mi><mi>T</mi></msup>" in html
    assert '<span class="math-display"><math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in html
    assert "<msqrt>" in html


def test_it_keeps_dollars_in_code_and_shows_broken_latex_as_source():
    assert "<code>$x$</code>" in markdown_render(text="`$x$`")
    assert "math-error" in markdown_render(text="$\\frac{1}{$")


def test_it_renders_callouts_with_their_title():
    html = markdown_render(text='!!! note "Why scale"\n    Scores grow with the width.')
    assert '<div class="admonition note">' in html
    assert '<p class="admonition-title">Why scale</p>' in html
    assert "<p>Scores grow with the width.</p>" in html


def test_it_turns_glossary_references_into_popover_buttons():
    html = markdown_render(text="A [[softmax]] over the [[width|key axis]].", glossary=GLOSSARY)
    assert '<button class="term" popovertarget="t-1" type="button">softmax</button>' in html
    assert '<span class="term-def" id="t-1" popover="auto" role="note">' in html
    assert (
        '<strong class="term-name">softmax</strong><span class="term-text">Turns scores into weights that sum to one.</span>'
        in html
    )
    assert '<button class="term" popovertarget="t-2" type="button">width</button>' in html
    assert '<strong class="term-name">key axis</strong>' in html


def test_it_reads_a_reference_that_wraps_across_lines():
    html = markdown_render(text="The [[key\naxis]] and [[the\nwidth|key\naxis]].", glossary=GLOSSARY)
    assert '<button class="term" popovertarget="t-1" type="button">key axis</button>' in html
    assert '<button class="term" popovertarget="t-2" type="button">the width</button>' in html


def test_it_matches_terms_ignoring_case_and_leaves_unknown_terms_as_text():
    assert 'popovertarget="t-1"' in markdown_render(text="[[SoftMax]]", glossary=GLOSSARY)
    html = markdown_render(text="An [[unheard of]] word and [[shown|missing]].", glossary=GLOSSARY)
    assert html == "<p>An unheard of word and shown.</p>"


def test_it_places_exercises_at_their_markers_and_keeps_unplaced_ones_at_the_end():
    chapter = Chapter(body="Intro [[softmax]].\n\n[[exercise:first]]\n\nMiddle.\n\n[[exercise:unknown]]\n\nEnd.")
    first = Exercise(slug="first", title="First", instructions="Use the [[softmax]].", starter_code="x = 1\n")
    extra = Exercise(slug="extra", title="Extra", starter_code="")
    segments = chapter_render(chapter=chapter, glossary=GLOSSARY, exercises=[first, extra])
    kinds = [s.exercise.slug if s.is_exercise else "prose" for s in segments]
    assert kinds == ["prose", "first", "prose", "prose", "extra"]
    # Popover ids stay unique across the body and the instructions.
    assert 'id="t-1"' in segments[0].html and 'id="t-2"' in segments[1].instructions_html
    assert '<span class="n">x</span>' in segments[1].starter_html


def test_it_leaves_an_exercise_marker_inside_a_listing_alone():
    chapter = Chapter(body="```\n[[exercise:first]]\n```\n")
    first = Exercise(slug="first", title="First")
    segments = chapter_render(chapter=chapter, glossary=[], exercises=[first])
    assert "[[exercise:first]]" in segments[0].html


def test_it_renders_a_chapter_once_and_anew_after_any_edit_to_what_it_shows(monkeypatch):
    from courses import rendering

    renders = []
    real = rendering._chapter_render
    monkeypatch.setattr(rendering, "_chapter_render", lambda **kw: renders.append(1) or real(**kw))
    chapter = Chapter(pk=7, body="See the [[softmax]].\n\n[[exercise:first]]\n")
    first = Exercise(slug="first", title="First", instructions="Scale the scores.", starter_code="x = 1\n")
    glossary = [GlossaryTerm(term="softmax", definition="Turns scores into weights.")]

    def page() -> str:
        segments = chapter_render(chapter=chapter, glossary=glossary, exercises=[first])
        assert segments[1].exercise is first  # the learner's own exercise row, never a cached copy
        return "".join(s.html + s.instructions_html + s.starter_html for s in segments)

    shown = page()
    assert page() == shown and len(renders) == 1, "the second view renders the chapter again"

    chapter.body = "See the [[softmax]], now with more.\n\n[[exercise:first]]\n"
    assert "now with more" in page()
    glossary[0].definition = "Weights that sum to one."
    assert "Weights that sum to one." in page()
    first.instructions = "Divide by the square root of d."
    assert "Divide by the square root of d." in page()
    first.starter_code = "y = 2\n"
    assert '<span class="n">y</span>' in page()
    assert len(renders) == 5
