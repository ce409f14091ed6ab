// Edits never lost: the editor's code is kept in this browser (localStorage) as the learner types,
// with the saved version it started from, until the server has it. A draft left by a page that
// could not save (offline, the server down, the tab closed) is put back when the exercise opens
// again. Kept per learner and exercise, so another account in the same browser never sees it.
import { comparisonCreate } from "./editor.js";

const encoder = new TextEncoder();

/** The server's words for code over its limit (ecplatform/code.py), or null when it fits. */
export function codeTooLarge(code, limit) {
  const size = encoder.encode(code).length;
  return limit && size > limit ? `Code is ${size} bytes; the limit is ${limit} bytes.` : null;
}

/** Two saved versions (ISO times, or null for none) are the same save. */
export function sameVersion(a, b) {
  if (!a || !b) return !a && !b;
  return Date.parse(a) === Date.parse(b);
}

export class DraftStore {
  constructor({ learner, exerciseId }) {
    this.key = `easycompilers:draft:${learner}:${exerciseId}`;
  }

  /** { code, base } or null. */
  read() {
    try {
      const value = JSON.parse(localStorage.getItem(this.key) || "null");
      return value && typeof value.code === "string" ? value : null;
    } catch {
      return null;
    }
  }

  keep(code, base) {
    try {
      localStorage.setItem(this.key, JSON.stringify({ code, base: base || null, at: Date.now() }));
      return true;
    } catch {
      return false; // storage full or refused: the server save still runs
    }
  }

  clear() {
    try {
      localStorage.removeItem(this.key);
    } catch {
      // nothing kept, nothing to clear
    }
  }
}

/**
 * Shows two versions of the code side by side (the other save on the left, the learner's on the
 * right) and lets the learner keep one. `onKeepMine()`, `onTakeOther()`.
 */
export function conflictShow({ holder, other, mine, onKeepMine, onTakeOther }) {
  const box = document.createElement("div");
  box.className = "exercise-conflict";
  box.setAttribute("role", "alert");
  const text = document.createElement("p");
  text.textContent =
    "This exercise was saved from another tab or device after this version was loaded. " +
    "Keep your version, or take the other one (left).";
  const merge = document.createElement("div");
  merge.className = "conflict-merge";
  const actions = document.createElement("p");
  actions.className = "conflict-actions";
  const keep = document.createElement("button");
  keep.type = "button";
  keep.className = "button";
  keep.textContent = "Keep mine";
  const take = document.createElement("button");
  take.type = "button";
  take.className = "button button-quiet";
  take.textContent = "Take the other one";
  actions.append(keep, take);
  box.append(text, merge, actions);
  holder.replaceChildren(box);
  holder.hidden = false;
  const view = comparisonCreate({ parent: merge, left: other, right: mine });
  const close = () => {
    view.destroy();
    holder.replaceChildren();
    holder.hidden = true;
  };
  keep.addEventListener("click", () => (close(), onKeepMine()));
  take.addEventListener("click", () => (close(), onTakeOther()));
  return close;
}
