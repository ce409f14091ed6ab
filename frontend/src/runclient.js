// Talks to the runs API (DESIGN.md, "Public API contract") and the saved-code API, with the
// session cookie and the CSRF token the page carries.

const TERMINAL = new Set(["succeeded", "failed", "timed_out", "error"]);
const POLL_MS = 500;
const STATUS_POLL_MS = 1000;

export class ApiError extends Error {
  constructor(status, detail, retryAfter) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.retryAfter = retryAfter;
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
      throw new ApiError(response.status, errorDetail(data), Number.isFinite(retry) ? retry : null);
    }
    return data;
  }

  return {
    codeSave: (exerciseId, code, options) => request("PUT", `/api/exercises/${exerciseId}/code/`, { code }, options),
    runCreate: (exerciseId, code) => request("POST", "/api/runs/", { exercise: exerciseId, code }),
    runGet: (runId) => request("GET", `/api/runs/${runId}/`),
    runStop: (runId) => request("POST", `/api/runs/${runId}/stop/`, {}),
  };
}

function errorDetail(data) {
  if (typeof data?.detail === "string") return data.detail;
  for (const value of Object.values(data || {})) {
    if (Array.isArray(value) && typeof value[0] === "string") return value[0];
  }
  return "";
}

/**
 * Follow a run until it ends: its events as they come over SSE, or by polling the run when
 * EventSource fails. Calls onEvent(event) for each output event in order, onRunning() once the
 * run has started, and onEnd(statusEvent) once. Returns { close }.
 */
export function runFollow({ api, runId, onEvent, onRunning, onEnd }) {
  let delivered = 0; // output events passed to onEvent so far (their index in the run's outputs)
  let ended = false;
  let running = false;
  let source = null;
  let pollTimer = null;
  let statusTimer = null;

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
    clearTimeout(statusTimer);
  }

  function fromRun(run) {
    (run.outputs || []).slice(delivered).forEach((event, offset) => deliver(delivered + offset, event));
    if (run.status === "running") markRunning();
    if (TERMINAL.has(run.status)) {
      finish({ type: "status", status: run.status, reason: run.reason, duration_ms: run.duration_ms, exit_code: run.exit_code });
    }
  }

  async function poll() {
    if (ended) return;
    try {
      fromRun(await api.runGet(runId));
    } catch (error) {
      if (error.status === 404) {
        finish({ type: "status", status: "error", reason: "the run is gone" });
        return;
      }
    }
    if (!ended) pollTimer = setTimeout(poll, POLL_MS);
  }

  // The stream carries output and the end, not the move from queued to running: a light look
  // at the run shows that until the first event arrives.
  async function watchStatus() {
    if (ended || running || source === null) return;
    try {
      const run = await api.runGet(runId);
      if (run.status === "running") markRunning();
    } catch {
      // The stream or the fallback reports real trouble.
    }
    if (!ended && !running) statusTimer = setTimeout(watchStatus, STATUS_POLL_MS);
  }

  if (typeof EventSource === "function") {
    source = new EventSource(`/api/runs/${runId}/events/`, { withCredentials: true });
    source.onmessage = (message) => {
      const index = parseInt(message.lastEventId, 10);
      deliver(Number.isFinite(index) ? index : delivered, JSON.parse(message.data));
    };
    source.addEventListener("status", (message) => finish(JSON.parse(message.data)));
    source.onerror = () => {
      if (ended) return;
      // The stream broke (a proxy, a restart, no SSE): fall back to polling from where it stopped.
      source.close();
      source = null;
      clearTimeout(statusTimer);
      poll();
    };
    statusTimer = setTimeout(watchStatus, STATUS_POLL_MS);
  } else {
    poll();
  }
  return { close };
}
