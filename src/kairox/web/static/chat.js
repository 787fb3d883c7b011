// The chat page: pick or start a session, stream replies, and decide memory proposals on cards.
// The transcript is rendered from one ordered stream, the server's /api/events/stream: every
// committed event once, in seq order, whichever process wrote it (this page's turns, the TUI, the
// CLI). Sending a message only starts the turn; its events arrive on that stream like any other.
import {
  api, clear, decidedBy, defaultSession, el, guarded, hideNotice, initPage, MEMORY_EVENTS, notice,
  query, stateLabel, subscribe, untrustedLine,
} from "/static/common.js";
import { renderMarkdown } from "/static/markdown.js";

const $ = (id) => document.getElementById(id);
const state = {
  session: null, // SessionOut
  seq: 0, // the stream's position: every event up to this seq has reached the page
  held: null, // stream events held back (in order) while a session's history loads
  current: null, // the assistant bubble a reply streams into
  sending: false,
  compactPending: false,
  stateTimer: null, // re-reads the session's state while it is not idle
  opening: 0, // counts session opens; only the latest one renders
};
const STATE_POLL_MS = 500;

// -- transcript ----------------------------------------------------------------------------

function scrollDown() {
  const box = $("transcript");
  box.scrollTop = box.scrollHeight;
}

function bubble(role, text) {
  const box = el("div", { class: "text" });
  const node = el("div", { class: `msg ${role}` }, el("div", { class: "who" }, role), box);
  if (role === "assistant") renderMarkdown(box, text);
  else box.textContent = text;
  $("transcript").append(node);
  scrollDown();
  return node;
}

// The reply so far, rendered again as Markdown (a fence or a table may close later).
function setReply(node, text) {
  const waiting = node.querySelector(".waiting");
  if (waiting) waiting.remove();
  renderMarkdown(node.querySelector(".text"), text);
  scrollDown();
}

// From the model call to the first token: a spinner and "loading model…" or "waiting…".
function showWaiting(call) {
  if (!state.current) state.current = bubble("assistant", "");
  if (state.current.querySelector(".waiting") || state.current.querySelector(".text").dataset.raw) return;
  const label = call.loading ? "loading model…" : "waiting for the model…";
  state.current.append(el("div", { class: "waiting", role: "status" }, el("span", { class: "spinner", "aria-hidden": "true" }), label));
  scrollDown();
}

function systemLine(text, kind = "system") {
  $("transcript").append(el("p", { class: `line ${kind}` }, text));
  scrollDown();
}

function cardFor(memoryId) {
  return document.querySelector(`.card[data-memory-id="${CSS.escape(memoryId)}"]`);
}

function setCardStatus(card, status, detail) {
  card.dataset.status = status;
  card.querySelector(".status").textContent = detail ? `${status} · ${detail}` : status;
  const pending = status === "pending";
  card.querySelector(".actions").hidden = !pending;
  const warning = card.querySelector(".warning");
  if (warning && !pending) warning.replaceWith(untrustedLine(JSON.parse(card.dataset.untrusted || "[]"), false));
  if (!pending) card.querySelector(".editor").hidden = true;
  // A session memory the policy accepted with its taint: one button forgets it.
  const tainted = JSON.parse(card.dataset.untrusted || "[]").length > 0;
  card.querySelector(".forget").hidden = !(status === "accepted" && tainted && detail === "by policy");
}

async function decide(card, action, body) {
  const id = card.dataset.memoryId;
  const path = `/api/memories/${encodeURIComponent(id)}`;
  const record = await guarded(() => action === "forget"
    ? api("DELETE", path)
    : api("POST", `${path}/${action}`, body === undefined ? {} : { body }));
  if (!record) return;
  showRecord(card, record);
}

// A card shows the memory's record as the API has it now.
function showRecord(card, record) {
  card.querySelector(".body").textContent = record.body;
  const reason = record.status === "rejected" ? record.decision_reason : null;
  setCardStatus(card, record.status, record.status === "pending" ? "" : decidedBy(record.decided_by, reason));
}

function proposalCard(p) {
  const editor = el("div", { class: "editor", hidden: true },
    el("textarea", { class: "edit-body", rows: 3, "aria-label": "Edited body" }),
    el("div", { class: "row" },
      el("button", { type: "button", class: "approve-edited" }, "Approve edited"),
      el("button", { type: "button", class: "cancel-edit" }, "Cancel")));
  const card = el("article", { class: `card scope-${p.scope}`, dataset: { memoryId: p.memory_id, status: "pending", untrusted: JSON.stringify(p.untrusted_inputs || []) } },
    el("header", {},
      el("span", { class: `badge ${p.scope}` }, p.scope),
      el("code", { class: "key" }, p.key || "(no key)"),
      el("span", { class: "status" }, "pending")),
    untrustedLine(p.untrusted_inputs),
    el("div", { class: "body" }, p.body),
    p.replaces_body === null || p.replaces_body === undefined
      ? null
      : el("div", { class: "replaces" }, el("span", { class: "label" }, "replaces: "), el("span", { class: "old" }, p.replaces_body)),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "approve" }, "Approve"),
      el("button", { type: "button", class: "reject" }, "Reject"),
      el("button", { type: "button", class: "edit" }, "Edit then approve")),
    el("button", { type: "button", class: "forget", hidden: true }, "Forget"),
    editor);
  card.querySelector(".approve").addEventListener("click", () => decide(card, "approve"));
  card.querySelector(".reject").addEventListener("click", () => decide(card, "reject"));
  card.querySelector(".forget").addEventListener("click", () => decide(card, "forget"));
  card.querySelector(".edit").addEventListener("click", () => {
    editor.hidden = false;
    const area = editor.querySelector("textarea");
    area.value = card.querySelector(".body").textContent;
    area.focus();
  });
  editor.querySelector(".cancel-edit").addEventListener("click", () => { editor.hidden = true; });
  editor.querySelector(".approve-edited").addEventListener("click", () => {
    const text = editor.querySelector("textarea").value;
    if (!text.trim()) { notice("the edited body cannot be empty"); return; }
    decide(card, "approve", text);
  });
  return card;
}

// One event from the stream. History (read up to state.seq) and the stream never overlap.
function onStreamEvent(event) {
  state.seq = event.seq;
  if (state.held) state.held.push(event);
  else apply(event);
}

// Apply one event to the page: history and live events take the same path.
function apply(event) {
  const p = event.payload;
  const ours = state.session && event.session_id === state.session.id;
  if (MEMORY_EVENTS.has(event.type)) {
    applyMemory(event, ours);
  } else if (ours && event.type.startsWith("ContextCompaction")) {
    applyCompaction(event);
  }
  if (!ours) return;
  switch (event.type) {
    case "UserMessageAdded":
      state.current = null;
      bubble("user", p.text);
      break;
    case "ModelCallStarted":
      if (p.purpose === "reply") { showWaiting(p); answeredBy(p.model); }
      break;
    case "ModelTokenDelta":
      if (!state.current) state.current = bubble("assistant", "");
      setReply(state.current, (state.current.querySelector(".text").dataset.raw || "") + p.text);
      break;
    case "AssistantMessageCompleted":
      if (state.current) setReply(state.current, p.text);
      else bubble("assistant", p.text);
      state.current = null;
      if (p.finish_reason === "length") systemLine("note: the reply was cut at its length limit", "warning");
      if (p.finish_reason === "loop") systemLine("note: the reply was stopped because it kept repeating itself", "warning");
      break;
    case "MemoryExtractionFailed": systemLine(`memory extraction failed: ${p.reason}`, "warning"); break;
    case "ModelNotice": systemLine(p.text, "warning"); break;
    case "ToolInvocationCompleted":
      // The tool line goes between the text before the call and the text after it.
      if (state.current && !state.current.querySelector(".text").dataset.raw) state.current.remove();
      state.current = null;
      systemLine(`tool ${p.name}: ${p.is_error ? "error" : "ok"}`, "tool");
      break;
    case "TurnFailed":
      if (state.current && !state.current.querySelector(".text").dataset.raw) state.current.remove();
      state.current = null;
      systemLine(`turn ${p.turn} failed: ${p.reason}`, "error");
      break;
    case "MemoryMarkerRejected": systemLine(`memory marker not proposed: ${p.reason}`, "warning"); break;
    case "CompactionSummary":
      systemLine(`history compacted: events ${p.from_seq}–${p.to_seq} replaced by a summary${p.fallback ? " (fallback)" : ""}`);
      break;
    case "ProfileSwitched": systemLine(`profile switched: ${p.from_profile} → ${p.to_profile}`); break;
    case "HistoryRewound": systemLine(`history rewound: events ${p.from_seq}–${p.to_seq} left the history (${p.reason})`); break;
    case "SessionArchived": systemLine("session archived"); break;
    case "SessionUnarchived": systemLine("session unarchived"); break;
    default: break;
  }
}

function applyMemory(event, ours) {
  const p = event.payload;
  if (event.type === "MemoryProposed") {
    if (ours) {
      $("transcript").append(proposalCard(p));
      scrollDown();
    }
    return;
  }
  const card = cardFor(p.memory_id);
  if (!card) return;
  if (event.type === "MemoryAccepted") {
    card.querySelector(".body").textContent = p.body;
    setCardStatus(card, "accepted", `by ${p.decided_by}`);
  } else if (event.type === "MemoryRejected") {
    setCardStatus(card, "rejected", decidedBy(p.decided_by, p.reason));
  } else if (event.type === "MemoryEdited") {
    card.querySelector(".body").textContent = p.body;
    setCardStatus(card, card.dataset.status, `edited by ${p.decided_by}`);
  } else if (event.type === "MemoryDeleted") {
    setCardStatus(card, "deleted", `by ${p.decided_by}`);
  } else if (event.type === "MemoryRestored") {
    // back with the status it had: re-read the record rather than guess it
    guarded(() => api("GET", `/api/memories/${encodeURIComponent(p.memory_id)}`)).then((record) => {
      if (record) showRecord(card, record);
    });
  }
}

function applyCompaction(event) {
  const p = event.payload;
  const messages = {
    ContextCompactionStarted: "compacting…",
    ContextCompactionCompleted: "compacted",
    ContextCompactionFailed: `compaction failed: ${p.reason}`,
    ContextCompactionSkipped: `compaction skipped: ${p.reason}`,
  };
  if (event.type in messages) $("compact-status").textContent = messages[event.type];
}

// -- sessions ------------------------------------------------------------------------------

async function loadSessions() {
  const sessions = await guarded(() => api("GET", "/api/sessions"));
  if (!sessions) return [];
  const list = clear($("sessions"));
  for (const s of sessions) {
    const current = state.session && state.session.name === s.name;
    list.append(el("li", {},
      el("button", { type: "button", class: current ? "session current" : "session", dataset: { name: s.name }, onclick: () => openSession(s.name) },
        s.name, sessionModel(s))));
  }
  return sessions;
}

// The session's profile, then the model that answered its latest turn (a --model may differ
// from the profile's); the model's full spec is the entry's title.
function sessionModel(s) {
  return [el("small", {}, ` ${s.profile}`), answeredTag(s)];
}

function answeredTag(s) {
  if (!s.answered_by) return null;
  return el("span", { class: "session-model", title: `profile ${s.profile}, answered by ${s.answered_by}` }, `· ${s.answered_by}`);
}

// A reply starts: the open session's entry names the model that answers it.
function answeredBy(model) {
  const button = [...document.querySelectorAll("#sessions button.session")].find((b) => b.dataset.name === state.session.name);
  if (!button) return;
  const old = button.querySelector(".session-model");
  if (old) old.remove();
  button.append(answeredTag({ ...state.session, answered_by: model }));
}

async function openSession(name) {
  const opening = ++state.opening; // a later open (a click, the default at start) wins
  const info = await guarded(() => api("GET", `/api/sessions/${encodeURIComponent(name)}`));
  if (!info || opening !== state.opening) return;
  state.session = info;
  state.current = null;
  // The history is everything up to the stream's position; what the stream brings meanwhile
  // waits, in order, until the history is on the page.
  const until = state.seq;
  state.held = [];
  const url = new URL(location.href);
  url.searchParams.set("session", info.name);
  history.replaceState(null, "", url);
  showArchived();
  hideNotice();
  for (const id of ["nav-context", "nav-memory"]) {
    const link = new URL($(id).href);
    link.searchParams.set("session", info.name);
    $(id).href = link.pathname + link.search;
  }
  clear($("transcript"));
  $("compact-status").textContent = "";
  const events = await guarded(() => api("GET", `/api/events${query({ session: info.name, until })}`));
  if (opening !== state.opening) return; // another session took the page meanwhile
  for (const event of events || []) apply(event);
  const held = state.held;
  state.held = null;
  for (const event of held) apply(event);
  await Promise.all([loadSessions(), loadProfiles(), refreshState()]);
}

// The state label follows the API: while the session is not idle it is read again, so a label
// never outlives the state it names (a queued compaction or switch ends without this page).
async function refreshState() {
  clearTimeout(state.stateTimer);
  if (!state.session) return;
  const name = state.session.name;
  const s = await guarded(() => api("GET", `/api/sessions/${encodeURIComponent(name)}/state`));
  if (!s || !state.session || state.session.name !== name) return;
  // a reply streaming in is "running a turn", whatever an older request answered
  if (!state.sending) $("session-state").textContent = s.state === "idle" ? "" : `${stateLabel(s.state)}${s.queued ? ` (+${s.queued} queued)` : ""}`;
  if (s.state !== "idle" || s.queued) state.stateTimer = setTimeout(refreshState, STATE_POLL_MS);
}

// The composer grows with its text (its CSS caps the height and scrolls beyond it).
function fitComposer() {
  const area = $("message");
  area.style.height = "auto";
  area.style.height = `${area.scrollHeight + 2}px`;
}

async function loadProfiles() {
  const data = await guarded(() => api("GET", "/api/profiles"));
  if (!data) return;
  const select = clear($("profile"));
  for (const p of data.profiles) {
    select.append(el("option", { value: p.alias, selected: state.session && state.session.profile === p.alias }, `${p.alias} (${p.model})`));
  }
}

// -- actions -------------------------------------------------------------------------------

async function send(text) {
  if (!state.session) {
    // a workspace with no session yet: the message starts its `main`, as the CLI and TUI do
    const info = await guarded(() => api("POST", "/api/sessions", { name: "main" }));
    if (!info) { restore(text); return; }
    await openSession(info.name);
    if (!state.session) { restore(text); return; }
  }
  const name = state.session.name;
  state.sending = true;
  $("send").disabled = true;
  $("stop").disabled = false;
  $("session-state").textContent = stateLabel("running_turn");
  hideNotice(); // an error of an earlier turn is stale now
  try {
    // The answer is the outcome only; the turn's events reach the page on the stream.
    const outcome = await guarded(() => api("POST", `/api/sessions/${encodeURIComponent(name)}/messages`, { text }));
    if (outcome && outcome.failure) notice(`the turn failed: ${outcome.failure}`);
    if (outcome === undefined) restore(text); // refused: the message goes back to the composer
  } finally {
    state.sending = false;
    $("send").disabled = false;
    $("stop").disabled = true;
    await refreshState();
  }
}

// Put a message that was not sent back, unless something new was typed meanwhile.
function restore(text) {
  if ($("message").value.trim()) return;
  $("message").value = text;
  fitComposer();
}

async function compactNow() {
  if (!state.session) { notice("pick or start a session first"); return; }
  $("compact-status").textContent = "compacting…";
  const result = await guarded(() => api("POST", `/api/sessions/${encodeURIComponent(state.session.name)}/compact`));
  if (!result) { $("compact-status").textContent = ""; return; }
  $("compact-status").textContent = result.status === "queued" ? "queued (runs after the current turn)" : compactionLine(result);
}

// What a compaction that ran did, in the words of `kairox compact`.
function compactionLine(r) {
  const span = `events ${r.from_seq}–${r.to_seq}, ${r.tokens_before} → ${r.tokens_after} tokens`;
  switch (r.outcome) {
    case "summarised": return `compacted: ${span}`;
    case "fallback": return `compacted with the fallback note: ${span} (${r.reason})`;
    case "skipped": return `compaction skipped: ${r.reason}`;
    default: return `compaction failed: ${r.reason}`;
  }
}

async function toggleArchive() {
  if (!state.session) { notice("pick or start a session first"); return; }
  const action = state.session.archived ? "unarchive" : "archive";
  const info = await guarded(() => api("POST", `/api/sessions/${encodeURIComponent(state.session.name)}/${action}`));
  if (!info) return;
  state.session = info;
  showArchived();
  systemLine(info.archived ? "session archived: its session memories were discarded" : "session unarchived");
  await loadSessions();
}

function showArchived() {
  const archived = Boolean(state.session && state.session.archived);
  $("archive").textContent = archived ? "Unarchive session" : "Archive session";
  $("session-title").textContent = state.session ? `${state.session.name}${archived ? " (archived)" : ""}` : "No session";
}

async function stopTurn() {
  if (!state.session) return;
  await guarded(() => api("POST", `/api/sessions/${encodeURIComponent(state.session.name)}/cancel`));
}

async function switchProfile() {
  if (!state.session) { notice("pick or start a session first"); return; }
  const alias = $("profile").value;
  const info = await guarded(() => api("POST", `/api/sessions/${encodeURIComponent(state.session.name)}/profile`, { alias }));
  if (info) { state.session = info; await loadSessions(); }
}

async function main() {
  await initPage();
  $("new-session").addEventListener("submit", async (e) => {
    e.preventDefault();
    const name = $("new-session-name").value.trim();
    if (!name) return;
    const info = await guarded(() => api("POST", "/api/sessions", { name }));
    if (info) { $("new-session-name").value = ""; await openSession(info.name); }
  });
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("message").value;
    if (!text.trim() || state.sending) return;
    $("message").value = "";
    fitComposer();
    send(text);
  });
  $("message").addEventListener("input", fitComposer);
  $("message").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("composer").requestSubmit(); }
  });
  $("compact").addEventListener("click", compactNow);
  $("archive").addEventListener("click", toggleArchive);
  $("stop").addEventListener("click", stopTurn);
  $("switch-profile").addEventListener("click", switchProfile);
  const last = await guarded(() => api("GET", "/api/events/last"));
  state.seq = last ? last.last_seq : 0;
  subscribe({ after: state.seq }, onStreamEvent, (status) => {
    $("live").textContent = status;
    $("live").dataset.status = status;
  });
  const sessions = await loadSessions();
  const wanted = new URL(location.href).searchParams.get("session") || defaultSession(sessions);
  if (wanted && !state.opening) await openSession(wanted); // unless one was opened meanwhile
}

main();
