// The Output pane: a status line and the run's events as the learner should read them. What
// happened is read from the run's facts (`cause`, `limit`); the `reason` is shown, never parsed.

function seconds(ms) {
  const s = (ms || 0) / 1000;
  return s < 10 ? s.toFixed(1) : s < 100 ? s.toFixed(1).replace(/\.0$/, "") : Math.round(s).toString();
}

const LIMIT_WORDS = {
  time: "time limit",
  memory: "memory limit",
  output: "output limit",
  processes: "process limit",
  files: "file limit",
};

/** "Finished in 0.4 s", "Stopped: time limit 20 s", "Stopped by you", ... from a status event. */
export function statusText({ status, reason, duration_ms: durationMs, cause, limit }) {
  reason = reason || "";
  if (status === "queued") return "Queued…";
  if (status === "running") return "Running…";
  if (status === "succeeded") return `Finished in ${seconds(durationMs)} s`;
  if (cause === "learner") return "Stopped by you";
  if (LIMIT_WORDS[limit]) return `Stopped: ${reason || LIMIT_WORDS[limit]}`;
  if (status === "timed_out") return `Stopped: ${reason || "time limit"}`;
  if (status === "failed") return durationMs != null ? `Failed after ${seconds(durationMs)} s` : "Failed";
  return `Could not run your code${reason ? `: ${reason}` : ""}. Try again in a moment.`;
}

function statusTone({ status, cause }) {
  if (status === "succeeded") return "ok";
  if (status === "queued" || status === "running") return "busy";
  if (cause === "learner") return "neutral";
  return "bad";
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class OutputPane {
  constructor(root) {
    this.root = root;
    this.status = root.querySelector("[data-output-status]");
    this.body = root.querySelector("[data-output-body]");
    this.lastStream = null;
    this.figures = 0;
  }

  clear() {
    this.body.replaceChildren();
    this.lastStream = null;
    this.figures = 0;
    this.root.classList.add("has-run");
  }

  setStatus(text, tone = "neutral") {
    this.status.textContent = text;
    this.status.dataset.tone = tone;
  }

  showStatusEvent(event) {
    this.setStatus(statusText(event), statusTone(event));
    if (event.status === "succeeded" && this.body.childElementCount === 0) {
      this.body.append(el("p", "out-note", "Your code ran and printed nothing."));
    }
  }

  /** A message from the page itself (too many runs, runner down), not from the program. */
  showProblem(text) {
    this.setStatus(text, "bad");
  }

  add(event) {
    switch (event.type) {
      case "stream":
        return this.addStream(event.name === "stderr" ? "stderr" : "stdout", event.text || "");
      case "display":
        return this.addDisplay(event.data || {});
      case "error":
        return this.addError(event);
      case "check":
        return this.addCheck(event);
      default:
        return undefined;
    }
  }

  addStream(name, text) {
    if (!this.lastStream || this.lastStream.dataset.stream !== name || this.lastStream !== this.body.lastElementChild) {
      this.lastStream = el("pre", `out-stream out-${name}`);
      this.lastStream.dataset.stream = name;
      if (name === "stderr") this.lastStream.setAttribute("aria-label", "Error output");
      this.body.append(this.lastStream);
    }
    this.lastStream.append(document.createTextNode(text));
  }

  addDisplay(data) {
    if (data["image/png"]) {
      this.figures += 1;
      const figure = el("figure", "out-figure");
      const img = el("img");
      img.src = `data:image/png;base64,${data["image/png"]}`;
      const described = (data["text/plain"] || "").replace(/^<|>$/g, "");
      img.alt = `Figure ${this.figures} drawn by your code${described ? ` (${described})` : ""}`;
      figure.append(img);
      this.body.append(figure);
    } else if (data["text/plain"]) {
      this.body.append(el("pre", "out-stream out-display", data["text/plain"]));
    }
  }

  addError({ ename, evalue, traceback }) {
    const box = el("div", "out-error");
    box.append(el("p", "out-error-title", evalue ? `${ename}: ${evalue}` : ename || "Error"));
    const lines = Array.isArray(traceback) ? traceback : [];
    if (lines.length) box.append(el("pre", "out-traceback", lines.join("\n")));
    this.body.append(box);
  }

  addCheck({ passed, message }) {
    const box = el("div", `out-check ${passed ? "is-passed" : "is-failed"}`);
    box.append(el("p", "out-check-title", passed ? "Check passed" : "Not quite yet"));
    if (message) box.append(el("p", "out-check-message", message));
    this.body.append(box);
  }
}
