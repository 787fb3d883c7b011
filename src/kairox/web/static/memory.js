// The memory browser: the one place to see and change what Kairox remembers.
// The list re-reads through the API whenever a memory event appears in the log, from any process.
import {
  api, clear, decidedBy, el, formatTime, guarded, initPage, MEMORY_EVENTS, notice, query,
  subscribe, untrustedLine,
} from "/static/common.js";

const $ = (id) => document.getElementById(id);
const sessionNames = new Map(); // session id -> name, for provenance lines
let reloadTimer = null;

function filters() {
  return {
    scope: $("f-scope").value || undefined,
    status: $("f-status").value || undefined,
    text: $("f-text").value.trim() || undefined,
    all_sessions: $("f-sessions").checked || $("f-scope").value === "session",
  };
}

const SORTS = {
  updated: (a, b) => b.updated_at.localeCompare(a.updated_at),
  created: (a, b) => a.created_at.localeCompare(b.created_at),
  key: (a, b) => (a.key || "").localeCompare(b.key || ""),
  scope: (a, b) => a.scope.localeCompare(b.scope) || (a.key || "").localeCompare(b.key || ""),
  status: (a, b) => a.status.localeCompare(b.status),
};

// "v3"; "" for a proposal, pending or rejected: it is no version of a memory (the first
// acceptance makes v1), as kairox.core.records.version_label says.
function versionLabel(v) {
  return v.version > 0 && v.status !== "pending" && v.status !== "rejected" ? `v${v.version}` : "";
}

function provenance(m) {
  const parts = [];
  if (m.proposed_session_id) {
    const name = sessionNames.get(m.proposed_session_id) || m.proposed_session_id;
    parts.push(`proposed in session ${name}${m.proposed_turn !== null ? `, turn ${m.proposed_turn}` : ""}`);
  } else {
    parts.push("added outside a session");
  }
  if (m.decided_by) parts.push(`decided ${decidedBy(m.decided_by, m.decision_reason)}`);
  parts.push(`changed ${formatTime(m.updated_at)}`);
  return parts.join(" · ");
}

async function act(m, action) {
  const id = encodeURIComponent(m.id);
  const calls = {
    approve: () => api("POST", `/api/memories/${id}/approve`, {}),
    reject: () => api("POST", `/api/memories/${id}/reject`, {}),
    delete: () => api("DELETE", `/api/memories/${id}`),
    undo: () => api("POST", `/api/memories/${id}/undo`),
  };
  const record = await guarded(calls[action]);
  if (record) await reload();
}

async function toggleHistory(row, m) {
  const box = row.querySelector(".history");
  if (row.dataset.historyOpen) { delete row.dataset.historyOpen; box.hidden = true; return; }
  row.dataset.historyOpen = "1"; // set before the fetch, so a refresh meanwhile keeps it open
  await showHistory(row, m);
}

async function showHistory(row, m) {
  const box = row.querySelector(".history");
  const versions = await guarded(() => api("GET", `/api/memories/${encodeURIComponent(m.id)}/history`));
  if (!versions) return;
  clear(box).append(el("ol", {}, versions.map((v) =>
    el("li", { class: v.undone ? "undone" : "" },
      el("span", { class: "meta" }, `${versionLabel(v) ? `${versionLabel(v)} ` : ""}${v.action} · ${v.status} · ${v.actor} · ${formatTime(v.changed_at)}${v.undone ? " · undone" : ""}`),
      el("span", { class: "text" }, v.body)))));
  box.hidden = false;
}

function openEditor(row, m) {
  const editor = row.querySelector(".editor");
  editor.hidden = false;
  const area = editor.querySelector("textarea");
  area.value = m.body;
  area.focus();
}

function memoryRow(m, undoable) {
  const editor = el("div", { class: "editor", hidden: true },
    el("textarea", { class: "edit-body", rows: 3, "aria-label": "New body" }),
    el("div", { class: "row" },
      el("button", { type: "button", class: "save" }, "Save"),
      el("button", { type: "button", class: "cancel-edit" }, "Cancel")));
  const pending = m.status === "pending";
  const live = m.status === "accepted" || pending;
  const row = el("article", { class: `memory-row status-${m.status}`, dataset: { memoryId: m.id, status: m.status } },
    el("header", {},
      el("span", { class: `badge ${m.scope}` }, m.scope),
      el("code", { class: "key" }, m.key || "(no key)"),
      el("span", { class: "status" }, m.status),
      el("span", { class: "version" }, versionLabel(m) || (m.status === "pending" ? "new" : "-"))),
    untrustedLine(m.untrusted_inputs, m.status === "pending"),
    m.forget ? el("p", { class: "forget" }, "Proposed deletion: approving deletes this memory.") : null,
    el("div", { class: "body" }, m.body),
    el("p", { class: "provenance" }, provenance(m)),
    el("div", { class: "actions" },
      pending ? el("button", { type: "button", class: "approve", onclick: () => act(m, "approve") }, "Approve") : null,
      pending ? el("button", { type: "button", class: "reject", onclick: () => act(m, "reject") }, "Reject") : null,
      live && !m.forget ? el("button", { type: "button", class: "edit", onclick: () => openEditor(row, m) }, "Edit") : null,
      m.status !== "deleted" ? el("button", { type: "button", class: "delete", onclick: () => act(m, "delete") }, "Delete") : null,
      // Undo only where it applies: the latest edit, replacement or delete is not undone yet.
      undoable ? el("button", { type: "button", class: "undo", onclick: () => act(m, "undo") }, "Undo") : null,
      el("button", { type: "button", class: "history-toggle", onclick: () => toggleHistory(row, m) }, "History")),
    editor,
    el("div", { class: "history", hidden: true }));
  editor.querySelector(".cancel-edit").addEventListener("click", () => { editor.hidden = true; });
  editor.querySelector(".save").addEventListener("click", async () => {
    const body = editor.querySelector("textarea").value;
    if (!body.trim()) { notice("a memory body cannot be empty"); return; }
    const record = await guarded(() => api("PATCH", `/api/memories/${encodeURIComponent(m.id)}`, { body }));
    if (record) { editor.hidden = true; await reload(); }
  });
  return row;
}

async function reload() {
  const records = await guarded(() => api("GET", `/api/memories${query(filters())}`));
  if (!records) return;
  const undoable = await guarded(() => api("POST", "/api/memories/undoable", { ids: records.map((m) => m.id) }));
  const canUndo = new Set(undoable ? undoable.ids : []);
  records.sort(SORTS[$("f-sort").value] || SORTS.updated);
  const box = $("memories");
  // A row whose editor is open keeps its place, so a live refresh never eats typing.
  const open = new Map();
  // An open history stays open (and is re-read) when a live refresh rebuilds its row.
  const historyOpen = new Set();
  for (const row of box.querySelectorAll(".memory-row")) {
    if (!row.querySelector(".editor").hidden) open.set(row.dataset.memoryId, row);
    if (row.dataset.historyOpen) historyOpen.add(row.dataset.memoryId);
  }
  clear(box);
  for (const m of records) {
    const kept = open.get(m.id);
    const row = kept || memoryRow(m, canUndo.has(m.id));
    box.append(row);
    if (!kept && historyOpen.has(m.id)) {
      row.dataset.historyOpen = "1";
      showHistory(row, m);
    }
  }
  $("memory-count").textContent = records.length === 1 ? "1 memory" : `${records.length} memories`;
  if (!records.length) box.append(el("p", { class: "hint" }, "No memories match."));
}

function scheduleReload() {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(reload, 100);
}

async function exportAs(format) {
  const params = { format, ...filters(), text: undefined };
  const data = await guarded(() => api("GET", `/api/memories/export${query(params)}`));
  if (!data) return;
  const type = format === "json" ? "application/json" : "text/markdown";
  const url = URL.createObjectURL(new Blob([data.content], { type }));
  const link = el("a", { href: url, download: data.filename, class: "hidden-link" });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

async function importFile() {
  const file = $("import-file").files[0];
  if (!file) { notice("choose a file to import"); return; }
  const content = await file.text();
  const format = $("import-format").value;
  const report = await guarded(() => api("POST", "/api/memories/import", { format, content }));
  if (!report) return;
  const parts = [
    `${report.created.length} created`, `${report.replaced.length} replaced`,
    `${report.pending.length} pending review`, `${report.unchanged.length} unchanged`,
    `${report.skipped.length} skipped`,
  ];
  const reasons = report.skipped.map((s) => `${s.scope}:${s.key || "-"} (${s.reason})`).join("; ");
  notice(`import done: ${parts.join(", ")}${reasons ? ` — skipped: ${reasons}` : ""}`, "info");
  $("import-file").value = "";
  await reload();
}

async function main() {
  await initPage();
  const sessions = await guarded(() => api("GET", "/api/sessions"));
  for (const s of sessions || []) sessionNames.set(s.id, s.name);
  for (const id of ["f-scope", "f-status", "f-sort", "f-sessions"]) $(id).addEventListener("change", reload);
  $("f-text").addEventListener("input", scheduleReload);
  $("export-json").addEventListener("click", () => exportAs("json"));
  $("export-markdown").addEventListener("click", () => exportAs("markdown"));
  $("import").addEventListener("click", importFile);
  $("import-file").addEventListener("change", () => {
    const file = $("import-file").files[0];
    if (file && /\.(md|markdown)$/i.test(file.name)) $("import-format").value = "markdown";
    else if (file && /\.json$/i.test(file.name)) $("import-format").value = "json";
  });
  const last = await guarded(() => api("GET", "/api/events/last"));
  subscribe({ after: last ? last.last_seq : undefined }, (event) => {
    if (event.type === "SessionStarted") sessionNames.set(event.session_id, event.payload.name);
    if (MEMORY_EVENTS.has(event.type)) scheduleReload();
  }, (status) => {
    $("live").textContent = status;
    $("live").dataset.status = status;
  });
  await reload();
}

main();
