// The context inspector: for a turn, the budget by source as an SVG chart, every item that was
// considered (included or left out, with tokens and reason), and the compaction summaries.
import { api, clear, defaultSession, el, guarded, initPage, query, subscribe, svg } from "/static/common.js";

const $ = (id) => document.getElementById(id);
const SOURCES = ["system", "memory", "workspace", "knowledge_base", "recall", "summary", "history", "prompt"];
const LABELS = {
  system: "system", memory: "memory", workspace: "workspace retrieval",
  knowledge_base: "knowledge base", recall: "recall", summary: "summary", history: "history", prompt: "prompt",
};

function sessionName() {
  return $("c-session").value;
}

async function loadSessions() {
  const sessions = await guarded(() => api("GET", "/api/sessions"));
  const select = clear($("c-session"));
  const wanted = new URL(location.href).searchParams.get("session") || defaultSession(sessions);
  for (const s of sessions || []) {
    select.append(el("option", { value: s.name, selected: s.name === wanted }, s.name));
  }
  if (!sessions || !sessions.length) {
    clear($("trace-head")).append(el("p", { class: "hint" }, "No sessions in this workspace yet."));
  }
}

async function loadTurns(keep) {
  const name = sessionName();
  const select = clear($("c-turn"));
  if (!name) return;
  const base = `/api/sessions/${encodeURIComponent(name)}/context`;
  const turns = (await guarded(() => api("GET", `${base}/turns`))) || [];
  for (const t of [...new Set(turns)]) select.append(el("option", { value: t }, `turn ${t}`));
  if (keep !== undefined && turns.includes(keep)) select.value = String(keep);
  else if (turns.length) select.value = String(turns[turns.length - 1]);
  await Promise.all([loadTrace(), loadSummaries()]);
}

function fact(label, value) {
  return el("div", { class: "fact" }, el("span", { class: "label" }, label), el("span", { class: "value" }, value));
}

// The chart is drawn at the width it is shown (so its 12 px text stays 12 px on a phone), and
// drawn again when that width changes.
let drawn = null;

function drawChart(trace) {
  const box = clear($("chart"));
  drawn = trace;
  const inner = box.clientWidth - 26; // the box's padding and border
  const width = Math.max(260, Math.min(720, inner > 0 ? inner : 720));
  const rowH = 26;
  const labelW = width < 480 ? 134 : 170;
  const numW = width < 480 ? 56 : 80;
  const barW = width - labelW - numW;
  const rows = SOURCES.map((s) => [s, trace.by_source[s] || 0]);
  const scale = (n) => (trace.budget > 0 ? (n / trace.budget) * barW : 0);
  const height = 40 + rows.length * rowH + 10;
  const chart = svg("svg", {
    id: "budget-chart", viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img",
    "aria-label": `context budget: ${trace.used} of ${trace.budget} tokens used`,
  });
  // One stacked bar: the whole budget, filled by source.
  chart.append(svg("rect", { x: labelW, y: 6, width: barW, height: 20, class: "track" }));
  let x = labelW;
  for (const [source, tokens] of rows) {
    const w = scale(tokens);
    if (w <= 0) continue;
    chart.append(svg("rect", { x, y: 6, width: w, height: 20, class: `seg src-${source}`, dataset: { source } },
      svg("title", {}, `${LABELS[source]}: ${tokens} tokens`)));
    x += w;
  }
  chart.append(svg("text", { x: 0, y: 21, class: "axis" }, `used ${trace.used.toLocaleString()} / ${trace.budget.toLocaleString()}`));
  // Then one bar per source, so small sources stay readable.
  rows.forEach(([source, tokens], i) => {
    const y = 40 + i * rowH;
    chart.append(
      svg("text", { x: 0, y: y + 14, class: "label" }, LABELS[source]),
      svg("rect", { x: labelW, y: y + 2, width: barW, height: 16, class: "track" }),
      svg("rect", { x: labelW, y: y + 2, width: Math.max(scale(tokens), tokens > 0 ? 1 : 0), height: 16, class: `bar src-${source}`, dataset: { source, tokens } }),
      svg("text", { x: labelW + barW + 8, y: y + 14, class: "num" }, String(tokens)),
    );
  });
  box.append(chart);
}

let chartWidth = 0;
new ResizeObserver(() => {
  const width = $("chart").clientWidth;
  if (drawn && width !== chartWidth) drawChart(drawn);
  chartWidth = width;
}).observe($("chart"));

function drawItems(trace) {
  const body = clear($("items").querySelector("tbody"));
  for (const item of trace.items) {
    const name = item.source_name ? `${item.ref} (${item.source_name})` : item.ref;
    const toggle = el("button", { type: "button", class: "expand", "aria-expanded": "false", title: "Show the text the model saw" }, "show");
    const row = el("tr", { class: item.included ? "in" : "out", dataset: { source: item.source, ref: item.ref } },
      el("td", {}, LABELS[item.source] || item.source),
      el("td", { class: "ref" }, toggle, " ", name),
      el("td", { class: "num" }, String(item.tokens)),
      el("td", { class: "included" }, item.included ? (item.truncated ? "yes (truncated)" : "yes") : "no"),
      el("td", { class: "reason" }, item.reason || ""));
    toggle.addEventListener("click", () => expandItem(row, toggle, trace.turn, item.ref));
    body.append(row);
  }
  if (!trace.items.length) body.append(el("tr", {}, el("td", { colspan: 5 }, "No items.")));
}

// One item expanded to its text, through the facade's single expand call (GET .../context/item).
async function expandItem(row, toggle, turn, ref) {
  const open = row.nextElementSibling && row.nextElementSibling.classList.contains("item-text");
  if (open) {
    row.nextElementSibling.remove();
    toggle.textContent = "show";
    toggle.setAttribute("aria-expanded", "false");
    return;
  }
  const base = `/api/sessions/${encodeURIComponent(sessionName())}/context/item`;
  const data = await guarded(() => api("GET", `${base}${query({ turn, ref })}`));
  if (!data) return;
  row.after(el("tr", { class: "item-text", dataset: { ref } }, el("td", { colspan: 5 }, el("pre", {}, data.text))));
  toggle.textContent = "hide";
  toggle.setAttribute("aria-expanded", "true");
}

async function loadTrace() {
  const name = sessionName();
  const turn = $("c-turn").value;
  const head = clear($("trace-head"));
  clear($("chart"));
  drawn = null;
  clear($("items").querySelector("tbody"));
  if (!name || turn === "") {
    if (name) head.append(el("p", { class: "hint" }, "This session has no assembled turn yet."));
    return;
  }
  const url = new URL(location.href);
  url.searchParams.set("session", name);
  history.replaceState(null, "", url);
  const trace = await guarded(() => api("GET", `/api/sessions/${encodeURIComponent(name)}/context${query({ turn })}`));
  if (!trace) return;
  head.append(
    fact("turn", String(trace.turn)), fact("model", trace.model),
    fact("tokenizer", trace.estimated && trace.tokenizer !== "estimate" ? `${trace.tokenizer} (estimated)` : trace.tokenizer),
    fact("window", String(trace.window)), fact("headroom", String(trace.headroom)),
    fact("budget", String(trace.budget)), fact("used", String(trace.used)),
  );
  // the floor is stated whenever retrieval searched, also when no hit fell under it
  const retrieved = trace.items.filter((i) => i.source === "workspace" || i.source === "knowledge_base");
  if (retrieved.length || trace.relevance_floor > 0) {
    const fell = trace.items.filter((i) => !i.included && i.reason === "below the relevance floor").length;
    head.append(fact("relevance floor", `${trace.relevance_floor.toFixed(2)} · ${fell} of ${retrieved.length} hits under it`));
  }
  if (trace.retrieval_errors && trace.retrieval_errors.length) {
    head.append(el("p", { class: "warning" }, `retrieval errors: ${trace.retrieval_errors.join("; ")}`));
  }
  drawChart(trace);
  drawItems(trace);
}

async function loadSummaries() {
  const name = sessionName();
  const box = clear($("summaries"));
  if (!name) return;
  const list = await guarded(() => api("GET", `/api/sessions/${encodeURIComponent(name)}/context/summaries`));
  if (!list) return;
  if (!list.length) { box.append(el("p", { class: "hint" }, "No compaction yet.")); return; }
  for (const s of list) {
    box.append(el("article", { class: "summary", dataset: { seq: s.seq } },
      el("header", {},
        el("strong", {}, `replaced events ${s.from_seq}–${s.to_seq}`),
        ` · ${s.tokens_before} → ${s.tokens_after} tokens`,
        // a fallback note is written by no model: the badge says so, once
        s.fallback ? " · " : ` · ${s.model}`,
        s.fallback ? el("span", { class: "badge" }, "fallback") : null),
      el("div", { class: "body" }, s.text)));
  }
}

async function searchHistory(event) {
  event.preventDefault();
  const name = sessionName();
  const q = $("recall-q").value.trim();
  const box = clear($("recall-hits"));
  if (!name || !q) return;
  const scope = $("recall-workspace").checked ? "workspace" : "session";
  const url = `/api/sessions/${encodeURIComponent(name)}/context/recall${query({ q, scope })}`;
  const found = await guarded(() => api("GET", url));
  if (!found) return;
  if (!found.indexed) { box.append(el("li", { class: "hint" }, "Nothing is indexed yet: the history fills as the session talks.")); return; }
  if (!found.hits.length) { box.append(el("li", { class: "hint" }, `No matches (${found.indexed} messages indexed).`)); return; }
  for (const h of found.hits) {
    const turn = h.turn === null ? "" : ` · turn ${h.turn}`;
    box.append(el("li", { class: "recall-hit", dataset: { seq: h.seq } },
      el("header", {}, el("strong", {}, `${h.session}${turn}`), ` · seq:${h.seq} · ${h.time} · ${h.speaker}`),
      el("div", { class: "body" }, h.snippet)));
  }
}

async function main() {
  await initPage();
  await loadSessions();
  $("c-session").addEventListener("change", () => loadTurns());
  $("c-turn").addEventListener("change", loadTrace);
  $("recall-form").addEventListener("submit", searchHistory);
  await loadTurns();
  const last = await guarded(() => api("GET", "/api/events/last"));
  subscribe({ after: last ? last.last_seq : undefined }, (event) => {
    if (event.type === "SessionStarted") loadSessions();
    if (event.type === "ContextAssembled" || event.type === "CompactionSummary") {
      const t = $("c-turn").value;
      loadTurns(t === "" ? undefined : Number(t));
    }
  }, (status) => {
    $("live").textContent = status;
    $("live").dataset.status = status;
  });
}

main();
