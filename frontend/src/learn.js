// Entry point of the learning pages' browser code: every exercise on the page gets an editor,
// Run / Stop / Reset and a live Output pane. Without this script the starter code stays visible.
import { DraftStore, codeTooLarge, conflictShow, sameVersion } from "./drafts.js";
import { editorCreate } from "./editor.js";
import { hintsMount } from "./hints.js";
import { HistoryPanel } from "./history.js";
import { OutputPane } from "./output.js";
import { apiClient, runFollow } from "./runclient.js";

const SAVE_AFTER_MS = 1000;
// After a save that could not reach the server: again after 2 s, then up to every 30 s, and at
// once when the browser says it is back online.
const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 30000;
const IS_MAC = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

function jsonScript(id) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

function button(label, className) {
  const node = document.createElement("button");
  node.type = "button";
  node.className = className;
  node.textContent = label;
  return node;
}

/** Clear words for a run that could not start: caps, a runner that is down, oversized code. */
function runProblemText(error) {
  if (error.status === 429) {
    const wait = error.retryAfter ? ` Try again in ${error.retryAfter} s.` : "";
    return `Too many runs at once. ${error.detail || ""}${wait}`.replace(/\s+/g, " ").trim();
  }
  if (error.status === 503) return "The code runner is unavailable right now. Try again in a minute.";
  if (error.status === 413 || (error.status === 400 && /bytes|KiB|too large|limit/i.test(error.detail))) {
    // The server's detail names its limit (RUNNER_MAX_CODE_BYTES), whatever it is set to.
    return `Your code is too large to run. ${error.detail || ""}`.trim();
  }
  if (error.status === 401 || error.status === 403) return "Your session has ended. Log in again to run code.";
  if (error.status === 0) {
    return "Your run could not be sent: the server cannot be reached. Your code is kept; run again when you are back online.";
  }
  return `Could not start the run. ${error.detail || ""}`.trim();
}

function exerciseMount(section) {
  const id = Number(section.dataset.exerciseId);
  const slug = section.dataset.exerciseSlug;
  const title = section.querySelector(".exercise-title")?.textContent.trim() || "this exercise";
  const canRun = section.hasAttribute("data-can-run");
  const starter = jsonScript(`exercise-${slug}-starter`) ?? "";
  const saved = jsonScript(`exercise-${slug}-saved`);
  const api = apiClient({ csrfToken: section.dataset.csrf || "" });
  const output = new OutputPane(section.querySelector("[data-exercise-output]"));
  const doneBadge = section.querySelector("[data-exercise-done]");

  // The editor takes the place of the highlighted starter code.
  const listing = section.querySelector("[data-exercise-code]");
  const holder = document.createElement("div");
  holder.className = "exercise-editor";
  listing.after(holder);
  listing.hidden = true;

  const toolbar = document.createElement("div");
  toolbar.className = "exercise-toolbar";
  const help = document.createElement("p");
  help.className = "editor-help";
  help.id = `exercise-${slug}-help`;
  help.innerHTML = `<kbd>${IS_MAC ? "⌘" : "Ctrl"}</kbd>+<kbd>Enter</kbd> runs · <kbd>Esc</kbd> then <kbd>Tab</kbd> leaves the editor`;
  let run;
  if (canRun) {
    run = button("Run", "button run-button");
    run.setAttribute("aria-keyshortcuts", IS_MAC ? "Meta+Enter" : "Control+Enter");
  } else {
    run = document.createElement("a");
    run.className = "button run-button";
    run.href = section.dataset.loginUrl || "/accounts/login/";
    run.textContent = "Log in to run";
  }
  const stop = button("Stop", "button button-quiet stop-button");
  stop.hidden = true;
  const reset = button("Reset", "button button-quiet reset-button");
  reset.title = "Put the starter code back (undo with Ctrl+Z)";
  const saveState = document.createElement("span");
  saveState.className = "save-state";
  toolbar.append(run, stop, reset, saveState, help);
  holder.after(toolbar);

  let dirty = false;
  let saveTimer = null;
  let saving = null;
  let retryMs = RETRY_FIRST_MS;
  let conflicted = false; // while the learner chooses between two versions, nothing is saved
  let current = null; // { runId, follow } while a run is going
  // The saved version the editor's code comes from (an ISO time; null: never saved).
  let base = section.dataset.savedAt || null;
  const limit = Number(section.dataset.codeLimit) || 0;
  const drafts = canRun ? new DraftStore({ learner: section.dataset.learner, exerciseId: id }) : null;
  const conflictHolder = document.createElement("div");
  conflictHolder.hidden = true;

  function scheduleSave() {
    if (!canRun) return;
    dirty = true;
    const code = editor.getCode();
    const tooLarge = codeTooLarge(code, limit);
    if (tooLarge) {
      // Not kept here either: the same limit and words as the server's.
      clearTimeout(saveTimer);
      saveState.textContent = `Not saved: ${tooLarge}`;
      return;
    }
    drafts.keep(code, base);
    if (conflicted) return;
    saveState.textContent = "";
    clearTimeout(saveTimer);
    saveTimer = setTimeout(save, SAVE_AFTER_MS);
  }

  function retryLater() {
    clearTimeout(saveTimer);
    const wait = retryMs;
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    saveState.textContent =
      `Not saved: the server cannot be reached. Your code is kept in this browser; ` +
      `trying again in ${Math.round(wait / 1000)} s.`;
    saveTimer = setTimeout(save, wait);
  }

  function conflictWith(other) {
    conflicted = true;
    clearTimeout(saveTimer);
    saveState.textContent = "Not saved: saved elsewhere too. Choose a version below.";
    conflictShow({
      holder: conflictHolder,
      other: other.code,
      mine: editor.getCode(),
      onKeepMine: () => {
        conflicted = false;
        base = other.saved_at;
        dirty = true;
        drafts.keep(editor.getCode(), base);
        save();
      },
      onTakeOther: () => {
        conflicted = false;
        base = other.saved_at;
        editor.setCode(other.code); // one change: Ctrl+Z brings the learner's version back
        clearTimeout(saveTimer);
        dirty = false;
        drafts.clear();
        saveState.textContent = "Saved";
      },
    });
  }

  // One save at a time, each from the version the last one left: overlapping saves from one page
  // would otherwise look like another tab's.
  async function save() {
    clearTimeout(saveTimer);
    if (saving) await saving;
    if (!canRun || !dirty || conflicted) return;
    const code = editor.getCode();
    if (codeTooLarge(code, limit)) return;
    dirty = false;
    saveState.textContent = "Saving…";
    saving = api
      .codeSave(id, code, { base })
      .then((saved) => {
        base = saved.saved_at;
        retryMs = RETRY_FIRST_MS;
        if (!dirty) {
          drafts.clear();
          saveState.textContent = "Saved";
        } else {
          drafts.keep(editor.getCode(), base);
        }
      })
      .catch((error) => {
        dirty = true;
        if (error.status === 409 && error.data) conflictWith(error.data);
        else if (error.status === 0 || error.status >= 500) retryLater();
        else saveState.textContent = `Not saved: ${error.detail || "try again"}`;
      })
      .finally(() => {
        saving = null;
      });
    return saving;
  }

  function setRunning(isRunning) {
    section.classList.toggle("is-running", isRunning);
    if (canRun) run.disabled = isRunning;
    stop.hidden = !isRunning;
    stop.disabled = false;
  }

  async function start() {
    if (!canRun || current) return;
    setRunning(true);
    output.clear();
    output.setStatus("Queued…", "busy");
    await save();
    let created;
    try {
      created = await api.runCreate(id, editor.getCode());
    } catch (error) {
      setRunning(false);
      output.showProblem(runProblemText(error));
      return;
    }
    current = { runId: created.id };
    current.follow = runFollow({
      api,
      runId: created.id,
      onRunning: () => output.setStatus("Running…", "busy"),
      onEvent: (event) => output.add(event),
      onEnd: (statusEvent) => {
        current = null;
        setRunning(false);
        output.showStatusEvent(statusEvent);
        if (statusEvent.passed === true) {
          doneBadge.hidden = false;
          section.classList.add("is-done");
        }
        history?.refresh();
      },
    });
  }

  stop.addEventListener("click", async () => {
    if (!current) return;
    stop.disabled = true;
    output.setStatus("Stopping…", "busy");
    try {
      await api.runStop(current.runId);
    } catch (error) {
      stop.disabled = false;
      output.showProblem(`Could not stop the run. ${error.detail || ""}`.trim());
    }
  });

  reset.addEventListener("click", () => {
    if (editor.getCode() === starter) return;
    editor.setCode(starter);
    saveState.textContent = `Starter code restored (${IS_MAC ? "⌘" : "Ctrl"}+Z undoes it)`;
    editor.view.focus();
  });

  // A draft this browser kept but the server never got: back in the editor, saved again (or, when
  // the exercise was saved elsewhere since, shown beside that save).
  const loaded = saved ?? starter;
  const draft = drafts?.read();
  const restoring = draft && draft.code !== loaded;
  const editor = editorCreate({
    parent: holder,
    code: restoring && sameVersion(draft.base, base) ? draft.code : loaded,
    label: `Code for ${title}`,
    onRun: start,
    onChange: scheduleSave,
  });
  editor.view.contentDOM.setAttribute("aria-describedby", help.id);
  if (canRun) run.addEventListener("click", start);
  toolbar.after(conflictHolder);
  if (restoring && sameVersion(draft.base, base)) {
    dirty = true;
    saveState.textContent = "Restored your unsaved edits from this browser";
    saveTimer = setTimeout(save, SAVE_AFTER_MS);
  } else if (restoring) {
    editor.setCode(draft.code);
    drafts.keep(draft.code, draft.base);
    conflictWith({ code: loaded, saved_at: base });
  } else if (draft) {
    drafts.clear(); // the server has it
  }
  if (canRun) {
    window.addEventListener("online", () => {
      if (dirty && !conflicted) {
        retryMs = RETRY_FIRST_MS;
        save();
      }
    });
  }

  // Each run is an attempt the learner can look back at, compare and put back (history.js).
  const history = canRun
    ? new HistoryPanel({
        api,
        exerciseId: id,
        slug,
        editor,
        undoKeys: `${IS_MAC ? "⌘" : "Ctrl"}+Z`,
      })
    : null;
  if (history) {
    reset.after(history.toggle);
    toolbar.after(history.panel);
  }

  hintsMount({ section, api, exerciseId: id });

  // Typing in the last second before leaving must not be lost.
  window.addEventListener("pagehide", () => {
    if (canRun && dirty && !conflicted) api.codeSave(id, editor.getCode(), { keepalive: true, base }).catch(() => {});
  });
  section.classList.add("is-enhanced");
}

document.querySelectorAll("section.exercise[data-exercise-id]").forEach(exerciseMount);
