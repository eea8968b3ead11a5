// acptap ui: a read-only viewer over the store's JSON API. Every string from
// a recording goes into the page as text (textContent), never as markup.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) {
    if (k === undefined || k === null || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

async function api(path, params = {}) {
  const u = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "" && v !== null) u.searchParams.set(k, v);
  const r = await fetch(u, { credentials: "same-origin" });
  if (!r.ok) throw new Error(`${r.status} ${(await r.text()).trim()}`);
  return r.json();
}

function status(msg) { $("#status").textContent = msg || ""; }

// Routes: #/  #/s/ID[?record=rN]  #/s/ID/wire?wire=W&frames=1,2  #/compare?a=&b=&balt=
function route() {
  const h = location.hash.slice(1) || "/";
  const [path, qs] = h.split("?");
  const q = new URLSearchParams(qs || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  stopLive();
  if (parts[0] === "s" && parts[2] === "wire") return wirePage(parts[1], q);
  if (parts[0] === "s") return sessionPage(parts[1], q);
  if (parts[0] === "compare") return comparePage(q);
  return sessionsPage(q);
}

function crumbs(...items) {
  const n = $("#crumbs");
  n.replaceChildren(...items.flatMap((it, i) => [i ? " / " : "", it]));
}

const sessLink = (id) => "#/s/" + encodeURIComponent(id);
const fmtTime = (t) => (t && !t.startsWith("0001") ? new Date(t).toLocaleString() : "");
const fmtDur = (s) => (s >= 3600 ? (s / 3600).toFixed(1) + " h" : s >= 60 ? (s / 60).toFixed(1) + " min" : s ? s.toFixed(1) + " s" : "");

// ---- sessions ----

async function sessionsPage(q) {
  crumbs("sessions");
  const app = $("#app");
  const form = el("form", { class: "filters", id: "filters" },
    el("input", { type: "search", id: "q", name: "q", placeholder: "search every session's records", value: q.get("q") || "" }),
    el("select", { id: "agent", name: "agent" }, el("option", { value: "", text: "any agent" })),
    el("label", {}, "from ", el("input", { type: "date", id: "since", name: "since", value: q.get("since") || "" })),
    el("label", {}, "to ", el("input", { type: "date", id: "until", name: "until", value: q.get("until") || "" })),
    el("input", { type: "text", id: "cwd", name: "cwd", placeholder: "cwd", value: q.get("cwd") || "" }),
    el("label", {}, el("input", { type: "checkbox", id: "errors", name: "errors", checked: q.get("errors") === "1" }), " has errors"),
    el("button", { type: "submit", id: "go", text: "Filter" }));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams();
    for (const k of ["q", "agent", "since", "until", "cwd"]) if (form.elements[k].value) p.set(k, form.elements[k].value);
    if (form.elements.errors.checked) p.set("errors", "1");
    location.hash = "#/?" + p.toString();
  });
  const table = el("table", { id: "sessions" },
    el("thead", {}, el("tr", {}, ...["session", "agent", "revision", "started", "duration", "turns", "tool calls", "tokens", "cost", "losses"].map((h) => el("th", { text: h })))),
    el("tbody"));
  const pager = el("div", { class: "pager" });
  app.replaceChildren(form, table, pager);
  const offset = +(q.get("offset") || 0);
  status("loading sessions…");
  let list;
  try {
    list = await api("/api/sessions", { q: q.get("q"), agent: q.get("agent"), since: q.get("since"), until: q.get("until"), cwd: q.get("cwd"), errors: q.get("errors"), offset, limit: 50 });
  } catch (e) { status(e.message); return; }
  const sel = $("#agent");
  for (const a of list.agents || []) sel.append(el("option", { value: a, text: a, selected: a === q.get("agent") }));
  const tb = $("tbody", table);
  for (const s of list.sessions) {
    const key = s.key || s.id;
    tb.append(el("tr", { dataset: { id: key }, class: s.hasErrors ? "err" : "" },
      el("td", {}, el("a", { href: sessLink(key), class: "open", text: s.title || s.id }), s.title ? el("div", { class: "muted", text: s.id }) : null,
        s.origin ? el("div", { class: "badge origin", text: s.origin }) : null, s.cwd ? el("div", { class: "muted", text: s.cwd }) : null),
      el("td", { text: [s.agent, s.agentVersion].filter(Boolean).join(" ") }),
      el("td", { text: s.revision || "" }),
      el("td", { text: fmtTime(s.started) }),
      el("td", { text: fmtDur(s.durationSeconds) }),
      el("td", { text: s.turns }),
      el("td", { text: s.toolCalls }),
      el("td", { text: s.tokens ? s.tokens.toLocaleString() : "" }),
      el("td", { text: s.cost ? `${s.cost} ${s.currency || ""}` : "" }),
      el("td", {}, ...(s.losses || []).map((l) => el("span", { class: "badge gap", text: l })), s.hasErrors ? el("span", { class: "badge bad", text: "errors" }) : null)));
  }
  const p = new URLSearchParams(q);
  pager.append(el("span", { class: "muted", id: "total", text: `${list.total} session${list.total === 1 ? "" : "s"}` }));
  if (offset > 0) { p.set("offset", Math.max(0, offset - 50)); pager.append(el("a", { href: "#/?" + p, text: "← newer" })); }
  if (offset + list.sessions.length < list.total) { p.set("offset", offset + 50); pager.append(el("a", { href: "#/?" + p, text: "older →" })); }
  if (list.problems) for (const pr of list.problems) pager.append(el("div", { class: "badge bad", text: pr }));
  status("");
}

// ---- a session ----

let live = null;
function stopLive() { if (live) { live.close(); live = null; } }

function refsOf(it) {
  // frames grouped by wire log
  const by = new Map();
  for (const r of it.refs || []) {
    if (!by.has(r.wire)) by.set(r.wire, new Set());
    for (const f of r.frames) by.get(r.wire).add(f);
  }
  return by;
}

function framesLink(id, it) {
  const by = refsOf(it);
  if (!by.size) return null;
  const links = [];
  for (const [w, fs] of by) {
    const frames = [...fs].sort((a, b) => a - b);
    links.push(el("a", { class: "frames", href: `#/s/${encodeURIComponent(id)}/wire?wire=${encodeURIComponent(w)}&frames=${frames.join(",")}`,
      title: `${w}: frames ${frames.join(", ")}`, text: `frames ${frames.join(",")}` }));
  }
  return el("span", { class: "refs" }, ...links);
}

function blockNode(b) {
  if (b.type === "reasoning") return el("details", { class: "reasoning" }, el("summary", { text: "reasoning" }), el("div", { class: "text", text: b.text }));
  if (b.type === "diff") return diffNode(b.text);
  if (b.type === "text" || b.type === "refusal") return el("div", { class: "text", text: b.text });
  return el("div", { class: "text muted", text: `[${b.type}] ${b.text || ""}` });
}

function diffNode(patch) {
  const pre = el("pre", { class: "diff" });
  for (const line of (patch || "").replace(/\n$/, "").split("\n")) {
    const cls = line.startsWith("+++") || line.startsWith("---") || line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
    pre.append(el("span", { class: cls, text: line }), cls ? "" : "\n");
  }
  return pre;
}

function jsonNode(list) {
  if (!list || !list.length) return null;
  return el("details", { class: "json" }, el("summary", { class: "muted", text: `records ${list.length}` }),
    ...list.map((r) => el("pre", { text: JSON.stringify(r, null, 2) })));
}

const badge = (t, cls) => (t ? el("span", { class: "badge " + (cls || t), text: t }) : null);

function itemNode(id, it) {
  const common = { id: "item-" + it.id, dataset: { kind: it.kind, records: it.records.join(" ") } };
  const refs = framesLink(id, it);
  const head = (label, ...extra) => el("div", { class: "who" }, label, ...extra, it.revised ? badge("revised", "") : null, refs);
  switch (it.kind) {
    case "message": {
      const n = el("div", { ...common, class: "item " + (it.role || "") + (it.reasoning ? " reasoning" : "") },
        head(it.role + (it.origin ? " · " + it.origin : "") + (it.severity ? " · " + it.severity : "") + (it.author ? " · " + it.author : "") + (it.child ? " · " + it.child : "")));
      if (it.reasoning) n.append(el("details", { class: "reasoning" }, el("summary", { text: "reasoning" }), ...it.blocks.map((b) => el("div", { class: "text", text: b.text }))));
      else n.append(...(it.blocks || []).map(blockNode));
      n.append(jsonNode(it.json) || "");
      return n;
    }
    case "tool": {
      const t = it.tool;
      const body = [];
      for (const p of t.paths || []) body.push(el("div", { class: "muted", text: "at " + p }));
      if (t.input) body.push(el("div", { class: "muted", text: "input" }), el("pre", { class: "input", text: JSON.stringify(t.input, null, 2) }));
      if (t.statuses && t.statuses.length > 1) body.push(el("div", { class: "muted", text: "status: " + t.statuses.join(" → ") }));
      for (const b of t.result || []) body.push(b.type === "text" ? el("pre", { class: "result", text: b.text }) : blockNode(b));
      for (const d of t.diffs || []) body.push(el("div", { class: "muted", text: `${d.op || "change"} ${diffPath(d)}` }), d.patch ? diffNode(d.patch) : "");
      if (t.terminal) body.push(terminalNode(t.terminal));
      if (t.raw) body.push(el("details", {}, el("summary", { class: "muted", text: "raw output" }), el("pre", { text: JSON.stringify(t.raw, null, 2) })));
      body.push(jsonNode(it.json));
      return el("div", { ...common, class: "item tool" },
        el("details", { class: "tool" },
          el("summary", {}, el("b", { text: t.title || t.name || t.callId }), " ", badge(t.kind, ""), " ", badge(t.status || "pending"), " ", refs),
          ...body));
    }
    case "permission": {
      const p = it.permission;
      return el("div", { ...common, class: "item permission" }, head("permission"), el("b", { text: p.title || "" }), " ",
        badge(p.decision || p.status), p.selected ? badge(p.selected, "") : null,
        p.callId ? el("div", { class: "muted", text: "for tool call " + p.callId }) : p.command ? el("div", { class: "muted", text: "for command " + p.command }) : null,
        p.description ? el("div", { class: "text", text: p.description }) : null,
        el("div", { class: "muted", text: "options: " + (p.options || []).map((o) => o.name).join(" · ") }), jsonNode(it.json));
    }
    case "input_request": {
      const q = it.input;
      return el("div", { ...common, class: "item" }, head("question"), el("div", { class: "text", text: q.message || q.url || "" }), badge(q.status),
        q.response ? el("pre", { text: JSON.stringify(q.response, null, 2) }) : null, jsonNode(it.json));
    }
    case "plan":
      return el("div", { ...common, class: "item plan" }, head("plan"),
        el("ul", { class: "plan" }, ...(it.plan || []).map((e) => el("li", { class: e.status, text: (e.status === "completed" ? "☑ " : e.status === "in_progress" ? "◐ " : "☐ ") + e.content }))), jsonNode(it.json));
    case "state":
      return el("div", { ...common, class: "item small" }, it.state.state, it.state.stopReason ? " · " + it.state.stopReason : "",
        it.state.error ? badge(JSON.stringify(it.state.error), "error") : null,
        it.state.background ? el("span", { class: "muted", text: " · background: " + it.state.background }) : null, " ", refs);
    case "usage": {
      const u = it.usage;
      return el("div", { ...common, class: "item small" }, u.scope ? `${u.scope} ` : "", `usage ${u.used ? u.used.toLocaleString() : "?"} / ${u.size ? u.size.toLocaleString() : "?"} tokens`, u.cost ? ` · ${u.cost} ${u.currency || ""}` : "", " ", refs);
    }
    case "declaration":
      return el("div", { ...common, class: "item small loss" }, (it.lossy || []).length ? "declared lost: " : "", ...(it.lossy || []).map((l) => badge(l, "gap")),
        it.through ? ` copied history through ${it.through}` : "", " ", refs);
    case "file_change":
      return el("div", { ...common, class: "item" }, head("file change", badge(it.summary, ""), it.cause ? ` by ${it.cause}` : ""), ...(it.diffs || []).map((d) => d.patch ? diffNode(d.patch) : el("div", { text: `${d.op} ${diffPath(d)}` })));
    case "terminal":
      return el("div", { ...common, class: "item" }, head("terminal"), terminalNode(it.terminal));
    case "subagent":
      return el("div", { ...common, class: "item small" }, "subagent → ", el("a", { href: sessLink(it.child), text: it.child }), it.cause ? ` (tool call ${it.cause})` : "", " ", refs);
    case "compaction":
      return el("div", { ...common, class: "item" }, head("compaction", " ", badge(it.summary, ""), " ", badge(it.status), it.through ? ` replaces through ${it.through}` : ""),
        ...(it.blocks || []).map(blockNode), it.error ? badge(JSON.stringify(it.error), "error") : null, jsonNode(it.json));
    default:
      return el("div", { ...common, class: "item small" }, it.kind, it.summary ? ": " + it.summary : "",
        it.failure ? badge(`prompt refused: error ${it.failure.code} ${it.failure.message}`, "error") : null, " ", refs, jsonNode(it.json));
  }
}

const diffPath = (d) => (d.oldPath ? d.oldPath + " → " : "") + (d.path || "");

function terminalNode(t) {
  const out = t.notBase64 ? "(output not base64)" : t.binary ? `(${t.binary} bytes of binary output)` : t.output || "";
  const end = [t.status, t.exit ? "exit " + t.exit : "", t.signal].filter(Boolean).join(" ");
  return el("pre", { class: "terminal", text: `${t.cwd ? t.cwd + " " : ""}$ ${t.command || ""}\n${out}${end ? "\n(" + end + ")" : ""}` });
}

async function sessionPage(id, q) {
  crumbs(el("a", { href: "#/", text: "sessions" }), id);
  const app = $("#app");
  status("loading…");
  let page;
  try { page = await api("/api/session", { id, limit: 500 }); } catch (e) { app.replaceChildren(el("p", { class: "badge bad", text: e.message })); status(""); return; }
  const counts = page.view.counts || {};
  const side = el("aside", { class: "side", id: "types" }, el("div", { class: "muted", text: "record types" }),
    ...Object.keys(counts).sort().map((t) => el("label", {}, el("input", { type: "checkbox", checked: true, dataset: { type: t }, onchange: applyFilter }), ` ${t} (${counts[t]})`)));
  const wires = el("span", { class: "muted", id: "wires" }, "wire: ");
  const actions = el("div", { class: "filters" },
    el("a", { id: "export-html", href: `/export?id=${encodeURIComponent(id)}&format=html`, text: "export HTML" }),
    el("a", { id: "export-md", href: `/export?id=${encodeURIComponent(id)}&format=markdown`, text: "Markdown" }),
    el("select", { id: "capture", onchange: (e) => { for (const a of [$("#export-html"), $("#export-md")]) { const u = new URL(a.href); u.searchParams.set("capture", e.target.value); a.href = u.pathname + u.search; } } },
      ...["full", "redacted", "metadata", "none"].map((l) => el("option", { value: l, text: "capture: " + l }))),
    (page.prev || []).length ? el("a", { id: "compare-prev", href: `#/compare?a=${encodeURIComponent(id)}&b=${encodeURIComponent(id)}&balt=${encodeURIComponent(page.prev[0])}`, text: "compare with the previous rebuild" }) : null,
    wires);
  const losses = (page.view.losses || []).length ? el("div", { class: "item loss", id: "losses" }, el("b", { text: "Declared losses " }), ...page.view.losses.map((l) => badge(`${l.category} (${l.record})`, "gap"))) : null;
  const tr = el("div", { id: "transcript" });
  const chart = el("div", { id: "usage-chart" });
  const more = el("div", { class: "pager" });
  const title = el("h2", { text: id });
  const facts = el("div", { class: "muted", id: "summary", text: "reading the whole session for its summary…" });
  // The summary of a long stream comes after the first screen (/api/summary).
  const summarize = (s) => {
    title.textContent = s.title || id;
    facts.textContent = [s.agent, s.agentVersion, s.revision, fmtTime(s.started), fmtDur(s.durationSeconds), `${s.turns} turns`, `${s.toolCalls} tool calls`, s.tokens ? `${s.tokens} tokens` : "", s.cost ? `${s.cost} ${s.currency}` : ""].filter(Boolean).join(" · ");
    wires.replaceChildren("wire: ", ...(s.wires || []).map((w) => el("a", { class: "wire", href: `#/s/${encodeURIComponent(id)}/wire?wire=${encodeURIComponent(w)}`, text: w })));
  };
  app.replaceChildren(title, facts, actions, el("div", { class: "layout" }, side, el("div", {}, chart, losses || "", tr, more)));
  if (page.summary) summarize(page.summary);
  else api("/api/summary", { id }).then(summarize, (e) => { facts.textContent = "summary: " + e.message; });
  const render = (view) => {
    tr.replaceChildren(...view.items.map((it) => itemNode(id, it)));
    chart.replaceChildren(usageChart(view.items) || "");
    applyFilter();
  };
  render(page.view);
  let next = page.view.next;
  const pageMore = async () => {
    const v = (await api("/api/session", { id, from: next, limit: 500 })).view;
    tr.append(...v.items.map((it) => itemNode(id, it)));
    next = v.next;
    more.replaceChildren(next ? el("button", { id: "more", onclick: pageMore, text: "more records" }) : "");
    applyFilter();
  };
  more.replaceChildren(next ? el("button", { id: "more", onclick: pageMore, text: "more records" }) : "");
  const want = q.get("record");
  if (want) highlightRecord(want);
  // Live: while the stream grows, the first window is read again.
  live = new EventSource(`/api/live?id=${encodeURIComponent(id)}`);
  live.addEventListener("append", async (ev) => {
    const last = JSON.parse(ev.data).last;
    status(`live: record ${last}`);
    if (next) return; // reading a long stream page by page: leave the pages alone
    const v = await api("/api/session", { id, limit: 500 });
    render(v.view);
    next = v.view.next;
  });
  status("");
}

// usageChart draws the context window used and the cost over the session's
// usage summaries (one point each), or nothing with fewer than two.
function usageChart(items) {
  const pts = items.filter((it) => it.kind === "usage" && it.usage);
  if (pts.length < 2) return null;
  const W = 600, H = 60, ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H + 14}`);
  svg.setAttribute("class", "usage");
  const line = (vals, color) => {
    const top = Math.max(...vals) || 1;
    const p = document.createElementNS(ns, "polyline");
    p.setAttribute("points", vals.map((v, i) => `${(i / (vals.length - 1)) * W},${H - (v / top) * H + 2}`).join(" "));
    p.setAttribute("fill", "none");
    p.setAttribute("stroke", color);
    p.setAttribute("stroke-width", "2");
    svg.append(p);
  };
  line(pts.map((it) => it.usage.used || 0), "#3056d3");
  if (pts.some((it) => it.usage.cost)) line(pts.map((it) => it.usage.cost || 0), "#0b6b3a");
  const last = pts[pts.length - 1].usage;
  const label = document.createElementNS(ns, "text");
  label.setAttribute("x", "0"); label.setAttribute("y", String(H + 13)); label.setAttribute("font-size", "11"); label.setAttribute("fill", "#667085");
  label.textContent = `tokens (blue) up to ${(last.used || 0).toLocaleString()}` + (last.cost ? `, cost (green) up to ${last.cost} ${last.currency || ""}` : "");
  svg.append(label);
  return svg;
}

function highlightRecord(rec) {
  const n = [...document.querySelectorAll("#transcript .item")].find((e) => e.dataset.records.split(" ").includes(rec));
  if (!n) { status(`record ${rec} is not on this page`); return; }
  n.classList.add("hl");
  const d = n.querySelector("details.tool");
  if (d) d.open = true;
  n.scrollIntoView({ block: "center" });
}

function applyFilter() {
  const off = new Set([...document.querySelectorAll("#types input")].filter((i) => !i.checked).map((i) => i.dataset.type));
  for (const n of document.querySelectorAll("#transcript .item")) {
    // an item is hidden when every record type in it is switched off
    const types = (n.dataset.types || kindTypes(n.dataset.kind)).split(" ");
    n.hidden = types.every((t) => off.has(t));
  }
}

function kindTypes(kind) {
  return { tool: "tool_call tool_result file_change terminal", usage: "usage_summary", input_request: "input_request", message: "message",
    permission: "permission", plan: "plan", state: "state", declaration: "declaration", compaction: "compaction", subagent: "subagent",
    session_info: "session_info", config_change: "config_change", file_change: "file_change", terminal: "terminal" }[kind] || kind;
}

// ---- the wire ----

async function wirePage(id, q) {
  const w = q.get("wire");
  const want = new Set((q.get("frames") || "").split(",").filter(Boolean).map(Number));
  crumbs(el("a", { href: "#/", text: "sessions" }), el("a", { href: sessLink(id), text: id }), "wire " + w);
  const app = $("#app");
  status("loading frames…");
  let page;
  try { page = await api("/api/wire", { id, wire: w, limit: 5000 }); } catch (e) { app.replaceChildren(el("p", { class: "badge bad", text: e.message })); status(""); return; }
  const tb = el("tbody");
  for (const f of page.frames) {
    const row = el("tr", { class: "frame" + (want.has(f.seq) ? " hl" : ""), id: "frame-" + f.seq, dataset: { seq: f.seq } },
      el("td", { text: f.seq }),
      el("td", { class: f.dir, text: f.dir === "c2a" ? "→ agent" : f.dir === "a2c" ? "← client" : f.dir }),
      el("td", {}, f.method || (f.kind ? f.kind : f.type), f.update ? el("div", { class: "muted", text: f.update }) : null, f.id ? el("div", { class: "muted", text: "id " + f.id }) : null),
      el("td", { text: f.latencyMs ? f.latencyMs.toFixed(1) + " ms" : "" }),
      el("td", {}, f.problems ? el("span", { class: "badge bad nonconforming", title: f.problems.join("\n"), text: "nonconforming" }) : null,
        f.gap ? el("span", { class: "badge gap", text: f.gap }) : null, f.type === "session" ? badge("session " + f.session, "") : null),
      el("td", {}, ...(f.records || []).map((r) => el("a", { class: "record", href: `#/s/${encodeURIComponent(id)}?record=${r}`, text: r + " " }))),
      el("td", { class: "line", title: "click to expand", text: f.line + (f.cut ? ` … (${f.cut} bytes more)` : ""), onclick: (e) => e.currentTarget.parentNode.classList.toggle("open") }));
    tb.append(row);
  }
  app.replaceChildren(el("h2", { text: "Wire log " + w }),
    el("div", { class: "muted", text: `${page.frames.length} entries · ${page.flagged} flagged by the schema check · agent: ${(page.header.agent && page.header.agent.command || []).join(" ")}` }),
    el("table", { id: "wire" }, el("thead", {}, el("tr", {}, ...["seq", "direction", "method", "latency", "check", "records", "line"].map((h) => el("th", { text: h })))), tb));
  const first = [...want][0];
  if (first !== undefined && $("#frame-" + first)) $("#frame-" + first).scrollIntoView({ block: "center" });
  status("");
}

// ---- compare ----

async function comparePage(q) {
  const a = q.get("a"), b = q.get("b");
  crumbs(el("a", { href: "#/", text: "sessions" }), "compare");
  const app = $("#app");
  let c;
  try { c = await api("/api/compare", { a, b, aalt: q.get("aalt"), balt: q.get("balt") }); } catch (e) { app.replaceChildren(el("p", { class: "badge bad", text: e.message })); return; }
  const label = (id, alt) => id + (alt ? ` (${alt})` : "");
  const tb = el("tbody");
  for (const r of c.rows) {
    tb.append(el("tr", { class: r.status, dataset: { n: r.n } }, el("td", { text: r.n }), el("td", { text: r.status }),
      el("td", {}, el("pre", { text: r.a })), el("td", {}, el("pre", { text: r.b }))));
  }
  const cnt = c.counts || {};
  app.replaceChildren(el("h2", { text: `${label(a, q.get("aalt"))} ⇄ ${label(b, q.get("balt"))}` }),
    el("div", { id: "compare-counts", class: "muted", text: `${cnt.same || 0} same · ${cnt.differs || 0} differ · ${cnt.onlyA || 0} only left · ${cnt.onlyB || 0} only right${c.cut ? " (first rows only)" : ""}` }),
    el("table", { class: "cmp", id: "compare" }, el("thead", {}, el("tr", {}, ...["#", "", "left", "right"].map((h) => el("th", { text: h })))), tb));
}

window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", () => {
  // The token came in the URL; the server set the cookie. Drop it from the
  // address bar so it is not copied around or kept in history.
  const u = new URL(location.href);
  if (u.searchParams.has("token")) { u.searchParams.delete("token"); history.replaceState(null, "", u.pathname + u.search + u.hash); }
  route();
});
