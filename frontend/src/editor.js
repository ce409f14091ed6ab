// The exercise editor: CodeMirror 6 with Python, line numbers, bracket matching and indentation.
// Tab indents (indentWithTab); CodeMirror lets keyboard users out with Escape then Tab, and the
// page says so next to the editor.
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { bracketMatching, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { MergeView } from "@codemirror/merge";
import { EditorState } from "@codemirror/state";
import {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { classHighlighter } from "@lezer/highlight";

// Colours come from site.css (tok-* classes), so the editor follows the light and dark themes.
const theme = EditorView.theme({
  "&": { fontSize: "0.9rem" },
  ".cm-content": { fontFamily: "var(--font-mono)", padding: "0.6rem 0" },
  ".cm-gutters": { fontFamily: "var(--font-mono)" },
});

/**
 * Mount an editor in `parent`. `onRun` runs on Ctrl/Cmd+Enter, `onChange` after every edit.
 * Returns { view, getCode, setCode } where setCode is one undoable change.
 */
export function editorCreate({ parent, code, label, onRun, onChange }) {
  const runKeys = keymap.of([
    { key: "Mod-Enter", run: () => (onRun(), true), preventDefault: true },
  ]);
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: code,
      extensions: [
        runKeys,
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        bracketMatching(),
        closeBrackets(),
        autocompletion({ activateOnTyping: false }),
        highlightActiveLine(),
        syntaxHighlighting(classHighlighter),
        python(),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap, indentWithTab]),
        theme,
        EditorView.contentAttributes.of({ "aria-label": label, tabindex: "0" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange();
        }),
      ],
    }),
  });
  return {
    view,
    getCode: () => view.state.doc.toString(),
    setCode: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
  };
}

const readOnly = [
  lineNumbers(),
  python(),
  syntaxHighlighting(classHighlighter),
  EditorState.readOnly.of(true),
  EditorView.editable.of(false),
];

/**
 * Two versions of some code side by side, read-only, with what changed marked (CodeMirror's merge
 * view): `left` and `right` are texts. Returns the view; destroy() removes it.
 */
export function comparisonCreate({ parent, left, right, collapseUnchanged }) {
  return new MergeView({
    a: { doc: left, extensions: readOnly },
    b: { doc: right, extensions: readOnly },
    parent,
    ...(collapseUnchanged ? { collapseUnchanged } : {}),
  });
}
