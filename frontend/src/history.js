// An exercise's attempt history: every run the learner made of it, newest first, with its time,
// its verdict and what went wrong first. Any attempt can be compared with the editor's code
// (CodeMirror's merge view: the attempt on the left, the editor on the right) or put back in the
// editor as one change that Ctrl+Z undoes.
import { comparisonCreate } from "./editor.js";

const VERDICTS = {
  passed: "Passed",
  succeeded: "Ran, check not passed",
  failed: "Failed",
  timed_out: "Timed out",
  error: "Platform error",
  queued: "Queued",
  running: "Running",
};

function verdictOf(attempt) {
  return attempt.passed ? "passed" : attempt.status;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class HistoryPanel {
  /**
   * `api`: the page's API client; `exerciseId`; `editor`: { getCode, setCode, view };
   * `undoKeys`: how the learner undoes a change here ("Ctrl+Z", "⌘+Z").
   */
  constructor({ api, exerciseId, slug, editor, undoKeys }) {
    this.api = api;
    this.exerciseId = exerciseId;
    this.editor = editor;
    this.undoKeys = undoKeys;
    this.codes = new Map(); // attempt id -> code, read once
    this.merge = null;

    this.toggle = el("button", "button button-quiet history-button", "History");
    this.toggle.type = "button";
    this.toggle.setAttribute("aria-expanded", "false");
    this.toggle.setAttribute("aria-controls", `exercise-${slug}-history`);

    this.panel = el("section", "exercise-history");
    this.panel.id = `exercise-${slug}-history`;
    this.panel.hidden = true;
    this.panel.setAttribute("aria-label", "Your attempts");
    this.status = el("p", "history-status");
    this.status.setAttribute("aria-live", "polite");
    this.list = el("ol", "history-list");
    this.more = el("button", "button button-quiet history-more", "Older attempts");
    this.more.type = "button";
    this.more.hidden = true;
    this.compare = el("div", "history-compare");
    this.compare.hidden = true;
    this.panel.append(this.status, this.list, this.more, this.compare);

    this.toggle.addEventListener("click", () => this.setOpen(this.panel.hidden));
    this.more.addEventListener("click", () => this.load({ before: this.more.dataset.before }));
  }

  setOpen(open) {
    this.panel.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
    if (open) this.load();
    else this.closeCompare();
  }

  /** After a run ends: an open panel shows it. */
  refresh() {
    if (!this.panel.hidden) this.load();
  }

  async load({ before } = {}) {
    this.status.textContent = "Loading your attempts…";
    let page;
    try {
      page = await this.api.attemptsList(this.exerciseId, before);
    } catch (error) {
      this.status.textContent = `Could not load your attempts. ${error.detail || ""}`.trim();
      return;
    }
    if (!before) this.list.replaceChildren();
    const shown = this.list.children.length;
    page.attempts.forEach((attempt, i) => this.list.append(this.row(attempt, page.count - shown - i)));
    this.status.textContent = page.count
      ? `${page.count} attempt${page.count === 1 ? "" : "s"}, newest first.`
      : "No attempts yet: each press of Run keeps one here.";
    this.more.hidden = !page.next_before;
    this.more.dataset.before = page.next_before || "";
  }

  row(attempt, number) {
    const item = el("li", `history-item is-${verdictOf(attempt)}`);
    item.dataset.attemptId = attempt.id;
    const when = new Date(attempt.created_at);
    const head = el("p", "history-head");
    head.append(
      el("strong", "history-number", `Attempt ${number}`),
      " · ",
      el("time", "history-time", when.toLocaleString()),
      " · ",
      el("span", "history-verdict", VERDICTS[verdictOf(attempt)] || attempt.status),
    );
    head.querySelector("time").dateTime = attempt.created_at;
    item.append(head);
    if (attempt.failure) item.append(el("p", "history-failure", attempt.failure));
    const actions = el("p", "history-actions");
    const compare = el("button", "button button-quiet history-compare-button", "Compare with the editor");
    const restore = el("button", "button button-quiet history-restore-button", "Restore");
    compare.type = restore.type = "button";
    compare.setAttribute("aria-label", `Compare attempt ${number} with the editor`);
    restore.setAttribute("aria-label", `Put attempt ${number} in the editor`);
    compare.addEventListener("click", () => this.showCompare(attempt, number));
    restore.addEventListener("click", () => this.restore(attempt, number));
    actions.append(compare, restore);
    item.append(actions);
    return item;
  }

  /** The attempt's code (read once), or null after saying in the panel that it could not be read. */
  async codeOf(attempt, number) {
    if (!this.codes.has(attempt.id)) {
      try {
        const detail = await this.api.attemptGet(this.exerciseId, attempt.id);
        this.codes.set(attempt.id, detail.code);
      } catch (error) {
        this.status.textContent = `Could not load attempt ${number}. ${error.detail || ""}`.trim();
        return null;
      }
    }
    return this.codes.get(attempt.id);
  }

  async showCompare(attempt, number) {
    const code = await this.codeOf(attempt, number);
    if (code === null) return;
    this.closeCompare();
    const caption = el("p", "history-compare-caption", `Attempt ${number} (left) against the editor (right)`);
    const close = el("button", "button button-quiet history-compare-close", "Close the comparison");
    close.type = "button";
    close.addEventListener("click", () => this.closeCompare());
    const holder = el("div", "history-merge");
    this.compare.replaceChildren(caption, holder, close);
    this.compare.hidden = false;
    this.merge = comparisonCreate({
      parent: holder,
      left: code,
      right: this.editor.getCode(),
      collapseUnchanged: { margin: 3, minSize: 6 },
    });
  }

  closeCompare() {
    if (this.merge) this.merge.destroy();
    this.merge = null;
    this.compare.hidden = true;
    this.compare.replaceChildren();
  }

  async restore(attempt, number) {
    const code = await this.codeOf(attempt, number);
    if (code === null) return;
    this.closeCompare();
    this.editor.setCode(code);
    this.status.textContent = `Attempt ${number} is in the editor (${this.undoKeys} undoes it).`;
    this.editor.view.focus();
  }
}
