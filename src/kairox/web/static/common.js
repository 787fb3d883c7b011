// Shared helpers of the Kairox pages: API calls with the CSRF header, SSE readers, DOM building.
// Data always reaches the page as text (el() and textContent), never as HTML.

export const EVENT_TYPES = [
  "SessionStarted", "UserMessageAdded", "ModelTokenDelta", "ModelCallStarted",
  "AssistantMessageCompleted", "ToolInvocationCompleted", "AgentItemRecorded", "MemoryProposed",
  "MemoryAccepted",
  "MemoryRejected", "MemoryEdited", "MemoryDeleted", "MemoryRestored", "MemoryMarkerRejected",
  "MemoryExtractionFailed", "ModelNotice",
  "ContextAssembled",
  "ContextCompactionStarted", "CompactionSummary", "ContextCompactionCompleted",
  "ContextCompactionFailed", "ContextCompactionSkipped", "ProfileSwitched", "SessionArchived",
  "SessionUnarchived", "HistoryRewound", "TurnFailed",
];

export const MEMORY_EVENTS = new Set([
  "MemoryProposed", "MemoryAccepted", "MemoryRejected", "MemoryEdited", "MemoryDeleted",
  "MemoryRestored",
]);

export class ApiError extends Error {}

function cookie(name) {
  for (const part of document.cookie.split(";")) {
    const item = part.trim();
    if (item.startsWith(name + "=")) return decodeURIComponent(item.slice(name.length + 1));
  }
  return "";
}

export function csrfToken() {
  return cookie(`kairox_csrf_${location.port || "80"}`);
}

function headers(method, extra = {}) {
  const out = { Accept: "application/json", ...extra };
  if (method !== "GET" && method !== "HEAD") out["X-CSRF-Token"] = csrfToken();
  return out;
}

async function errorOf(res) {
  let message = `request failed (HTTP ${res.status})`;
  try {
    const data = await res.json();
    if (data && typeof data.error === "string") message = data.error;
  } catch {
    // not JSON: keep the generic line
  }
  return new ApiError(message);
}

async function request(path, init) {
  try {
    return await fetch(path, { credentials: "same-origin", ...init });
  } catch {
    throw new ApiError("the server cannot be reached; is kairox serve still running?");
  }
}

export async function api(method, path, body) {
  const init = { method, headers: headers(method) };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await request(path, init);
  if (!res.ok) throw await errorOf(res);
  return res.status === 204 ? null : res.json();
}

export function query(params) {
  const qs = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === "" || value === false) continue;
    for (const v of Array.isArray(value) ? value : [value]) qs.append(key, String(v));
  }
  const text = qs.toString();
  return text ? `?${text}` : "";
}

// Follow the event log (every process writes to it); onEvent gets each StoredEvent, once, in seq
// order. A reconnecting EventSource resumes after the last event it received (Last-Event-ID).
export function subscribe(params, onEvent, onStatus = () => {}) {
  const source = new EventSource(`/api/events/stream${query(params)}`);
  for (const type of EVENT_TYPES) {
    source.addEventListener(type, (msg) => onEvent(JSON.parse(msg.data)));
  }
  source.addEventListener("open", () => onStatus("live"));
  source.addEventListener("error", () => onStatus("reconnecting"));
  return source;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function setAttrs(node, attrs) {
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function notice(message, kind = "error") {
  const box = document.getElementById("notice");
  document.getElementById("notice-text").textContent = message;
  box.className = `notice ${kind}`;
  box.hidden = false;
}

export function hideNotice() {
  document.getElementById("notice").hidden = true;
}

// Run an async action; a failure becomes a notice, never an uncaught stack trace.
export async function guarded(action) {
  try {
    return await action();
  } catch (error) {
    notice(error instanceof ApiError ? error.message : `unexpected error: ${error.message}`);
    return undefined;
  }
}

export function formatTime(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export async function initPage() {
  document.getElementById("notice-close").addEventListener("click", hideNotice);
  window.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    notice(event.reason instanceof ApiError ? event.reason.message : "unexpected error");
  });
  const info = await guarded(() => api("GET", "/api/info"));
  if (info) document.getElementById("workspace").textContent = info.workspace;
  return info;
}

// The provenance warning; only a pending proposal still asks to be checked before approving.
export function untrustedLine(inputs, pending = true) {
  if (!inputs || !inputs.length) return null;
  const refs = inputs.map((u) => `${u.kind}: ${u.ref}`).join(", ");
  const ask = pending ? " Check it before approving." : "";
  return el("p", { class: "warning" }, `⚠ Proposed after untrusted input (${refs}).${ask}`);
}

// The session a page opens when the address names none: the workspace's `main`, else the most
// recently started one (the list comes oldest first).
export function defaultSession(sessions) {
  if (!sessions || !sessions.length) return null;
  const main = sessions.find((s) => s.name === "main");
  return (main || sessions[sessions.length - 1]).name;
}

// A decision as words: "by user", with the reason only when it says more than who decided.
export function decidedBy(who, reason) {
  const by = `by ${who || "user"}`;
  return reason && reason !== `rejected by the ${who || "user"}` ? `${by}: ${reason}` : by;
}

// Session states as words, never enum names.
const STATE_LABELS = {
  idle: "idle",
  running_turn: "running a turn",
  compacting: "compacting",
  switching_profile: "switching profile",
};

export function stateLabel(state) {
  return STATE_LABELS[state] || String(state).replace(/_/g, " ");
}
