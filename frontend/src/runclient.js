// Talks to the runs API (DESIGN.md, "Public API contract"), the saved-code API, the attempts API
// and the hints API, with the session cookie and the CSRF token the page carries.

const TERMINAL = new Set(["succeeded", "failed", "timed_out", "error"]);
const POLL_MS = 500;

export class ApiError extends Error {
  constructor(status, detail, retryAfter, data) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.retryAfter = retryAfter;
    this.data = data; // the error's body (a 409 on saving code carries the other save)
  }
}

export function apiClient({ csrfToken }) {
  async function request(method, url, body, { keepalive = false } = {}) {
    let response;
    try {
      response = await fetch(url, {
        method,
        credentials: "same-origin",
        keepalive,
        headers: {
          Accept: "application/json",
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
          ...(method === "GET" ? {} : { "X-CSRFToken": csrfToken }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError(0, "Could not reach the server. Check your connection and try again.");
    }
    let data = {};
    try {
      data = await response.json();
    } catch {
      data = {};
    }
    if (!response.ok) {
      const retry = parseInt(response.headers.get("Retry-After") || "", 10);
      throw new ApiError(response.status, errorDetail(data), Number.isFinite(retry) ? retry : null, data);
    }
    return data;
  }

  return {
    codeSave: (exerciseId, code, { base, ...options } = {}) =>
      request("PUT", `/api/exercises/${exerciseId}/code/`, base === undefined ? { code } : { code, base }, options),
    runCreate: (exerciseId, code) => request("POST", "/api/runs/", { exercise: exerciseId, code }),
    runGet: (runId) => request("GET", `/api/runs/${runId}/`),
    runStop: (runId) => request("POST", `/api/runs/${runId}/stop/`, {}),
    attemptsList: (exerciseId, before) =>
      request("GET", `/api/exercises/${exerciseId}/attempts/${before ? `?before=${encodeURIComponent(before)}` : ""}`),
    attemptGet: (exerciseId, runId) => request("GET", `/api/exercises/${exerciseId}/attempts/${runId}/`),
    hintReveal: (exerciseId, position) => request("POST", `/api/exercises/${exerciseId}/hints/`, { position }),
  };
}

function errorDetail(data) {
  if (typeof data?.detail === "string") return data.detail;
  for (const value of Object.values(data || {})) {
    if (Array.isArray(value) && typeof value[0] === "string") return value[0];
  }
  return "";
}

/** The status event a polled run stands for (the same fields the stream's status event has). */
function statusEventOf(run) {
  const { status, exit_code, reason, duration_ms, limit, cause, check_passed, passed } = run;
  return { type: "status", status, exit_code, reason, duration_ms, limit, cause, check_passed, passed };
}

/**
 * Follow a run until it ends: its events as they come over SSE (which also says when a worker
 * has claimed the run), or by polling the run only when the stream cannot be opened or breaks.
 * Calls onEvent(event) for each output event in order, onRunning() once the run has started,
 * and onEnd(statusEvent) once. Returns { close }.
 */
export function runFollow({ api, runId, onEvent, onRunning, onEnd }) {
  let delivered = 0; // output events passed to onEvent so far (their index in the run's outputs)
  let ended = false;
  let running = false;
  let source = null;
  let pollTimer = null;

  function markRunning() {
    if (!running && !ended) {
      running = true;
      onRunning();
    }
  }

  function deliver(index, event) {
    if (ended || index < delivered) return;
    delivered = index + 1;
    markRunning();
    onEvent(event);
  }

  function finish(statusEvent) {
    if (ended) return;
    ended = true;
    close();
    onEnd(statusEvent);
  }

  function close() {
    if (source) source.close();
    source = null;
    clearTimeout(pollTimer);
  }

  function fromRun(run) {
    (run.outputs || []).slice(delivered).forEach((event, offset) => deliver(delivered + offset, event));
    if (run.status === "running") markRunning();
    if (TERMINAL.has(run.status)) {
      finish(statusEventOf(run));
    }
  }

  async function poll() {
    if (ended) return;
    try {
      fromRun(await api.runGet(runId));
    } catch (error) {
      if (error.status === 404) {
        finish({ type: "status", status: "error", reason: "the run is gone", cause: "platform", limit: "none" });
        return;
      }
    }
    if (!ended) pollTimer = setTimeout(poll, POLL_MS);
  }

  if (typeof EventSource === "function") {
    // running=1: the stream also says when a worker claims the run, so nothing polls beside it.
    source = new EventSource(`/api/runs/${runId}/events/?running=1`, { withCredentials: true });
    source.onmessage = (message) => {
      const index = parseInt(message.lastEventId, 10);
      deliver(Number.isFinite(index) ? index : delivered, JSON.parse(message.data));
    };
    source.addEventListener("running", markRunning);
    source.addEventListener("status", (message) => finish(JSON.parse(message.data)));
    source.onerror = () => {
      if (ended) return;
      // The stream broke (a proxy, a restart, no SSE): fall back to polling from where it stopped.
      source.close();
      source = null;
      poll();
    };
  } else {
    poll();
  }
  return { close };
}
