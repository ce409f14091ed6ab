// Entry point of the authoring pages in the admin: the learners' exercise editor (CodeMirror,
// Python, line numbers) for starter, check and solution code, and the chapter body beside a live
// preview rendered on the server by the learner page's renderer, with the lines that have
// problems (unknown glossary terms, maths that does not parse) flagged in the editor. Each
// editor writes back into its textarea, so the admin form posts what it always posted.
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { EditorState, StateEffect, StateField } from "@codemirror/state";
import { Decoration, EditorView, keymap, lineNumbers } from "@codemirror/view";
import { editorCreate } from "./editor.js";

const CODE_FIELDS = /(^|-)(starter_code|check_code|probe_code|solution_code|code)$/;
const PREVIEW_AFTER_MS = 300;

function mountCode(textarea) {
  if (textarea.dataset.editor || textarea.name.includes("__prefix__")) return;
  textarea.dataset.editor = "code";
  const holder = document.createElement("div");
  holder.className = "authoring-editor";
  textarea.after(holder);
  textarea.hidden = true;
  const label = document.querySelector(`label[for="${textarea.id}"]`)?.textContent.replace(/:$/, "") || textarea.name;
  let editor;
  editor = editorCreate({
    parent: holder,
    code: textarea.value,
    label,
    onRun: () => {},
    onChange: () => {
      textarea.value = editor.getCode();
    },
  });
}

// --- The chapter body and its preview -----------------------------------------------------------

const setProblems = StateEffect.define();
const problemLines = StateField.define({
  create: () => Decoration.none,
  update(value, tr) {
    value = value.map(tr.changes);
    for (const effect of tr.effects) {
      if (!effect.is(setProblems)) continue;
      const marks = [];
      for (const { line, problem } of effect.value) {
        if (line < 1 || line > tr.state.doc.lines) continue;
        const at = tr.state.doc.line(line).from;
        marks.push(Decoration.line({ class: "cm-problem-line", attributes: { title: problem } }).range(at));
      }
      marks.sort((a, b) => a.from - b.from);
      value = Decoration.set(marks, true);
    }
    return value;
  },
  provide: (field) => EditorView.decorations.from(field),
});

function previewUrl() {
  return window.location.pathname.replace(/courses\/chapter\/.*$/, "courses/chapter/preview-body/");
}

function mountBody(textarea) {
  textarea.dataset.editor = "body";
  const split = document.createElement("div");
  split.className = "body-split";
  const editorHolder = document.createElement("div");
  editorHolder.className = "authoring-editor body-editor";
  const side = document.createElement("div");
  side.className = "body-side";
  const problems = document.createElement("ul");
  problems.className = "errorlist preview-problems";
  problems.setAttribute("aria-live", "polite");
  const preview = document.createElement("div");
  preview.className = "reading preview-pane";
  preview.setAttribute("data-preview", "");
  preview.setAttribute("aria-label", "Preview as a learner sees it");
  side.append(problems, preview);
  split.append(editorHolder, side);
  textarea.after(split);
  textarea.hidden = true;

  const match = window.location.pathname.match(/chapter\/(\d+)\/change/);
  const chapterId = match ? match[1] : "";
  const csrf = document.querySelector("input[name=csrfmiddlewaretoken]")?.value || "";
  let timer = 0;
  let asked = 0;

  async function refresh() {
    const mine = ++asked;
    const form = new FormData();
    form.append("body", view.state.doc.toString());
    form.append("chapter", chapterId);
    form.append("course", document.getElementById("id_course")?.value || "");
    const response = await fetch(previewUrl(), {
      method: "POST",
      body: form,
      headers: { "X-CSRFToken": csrf },
      credentials: "same-origin",
    });
    if (mine !== asked || !response.ok) return; // a newer keystroke's preview is on its way
    const data = await response.json();
    preview.innerHTML = data.html; // sanitised by the renderer on the server
    problems.replaceChildren(
      ...data.problems.map(({ line, problem }) => {
        const item = document.createElement("li");
        item.textContent = `Line ${line}: ${problem}`;
        return item;
      }),
    );
    view.dispatch({ effects: setProblems.of(data.problems) });
  }

  const view = new EditorView({
    parent: editorHolder,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        lineNumbers(),
        history(),
        EditorView.lineWrapping,
        keymap.of([...defaultKeymap, ...historyKeymap]),
        problemLines,
        EditorView.contentAttributes.of({ "aria-label": "Body (Markdown)" }),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          textarea.value = view.state.doc.toString();
          clearTimeout(timer);
          timer = setTimeout(refresh, PREVIEW_AFTER_MS);
        }),
      ],
    }),
  });
  refresh();
}

function mountAll(root = document) {
  for (const textarea of root.querySelectorAll("textarea")) {
    if (CODE_FIELDS.test(textarea.name)) mountCode(textarea);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  mountAll();
  const body = document.querySelector("#chapter_form textarea[name=body]");
  if (body) mountBody(body);
});
// A new inline exercise ("Add another Exercise") gets its editors too.
document.addEventListener("formset:added", (event) => mountAll(event.target));
