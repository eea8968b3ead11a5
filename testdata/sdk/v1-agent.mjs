#!/usr/bin/env node
// v1-agent.mjs: a scripted ACP v1 agent (protocolVersion 1) built on the
// official SDK's default entrypoint (`@agentclientprotocol/sdk`, the stable v1
// profile), speaking newline-delimited JSON-RPC on stdin/stdout.
//
// Usage: node v1-agent.mjs [--mode basic|everything|invalid] [--state FILE]
//
// --state FILE: the sessions outlive the process (kept in FILE), so a later
// process — a later connection — can session/load them.
//
// The mode of each prompt turn is chosen as in v2-agent.mjs: a keyword in the
// prompt text, else --mode, else ACPTAP_SDK_AGENT_MODE, else "everything".
//
// basic:      two agent_message_chunks, then the prompt response end_turn.
// everything: agent_thought_chunk, agent_message_chunk, plan, tool_call,
//             session/request_permission, tool_call_update (in_progress,
//             completed with a v1 diff and text content), current_mode_update,
//             available_commands_update, config_option_update,
//             session_info_update, usage_update; notice and compaction_* when
//             the client advertised session.notices / session.compaction;
//             fs/read_text_file + fs/write_text_file when it advertised fs;
//             terminal/create, terminal/output, terminal/wait_for_exit,
//             terminal/release and a terminal tool call when it advertised
//             terminal; a form-mode elicitation/create when it advertised
//             elicitation.form.
// invalid:    basic plus one agent_message_chunk without its required content.
//
// Also served: initialize, session/new, session/load (replays the session's
// updates), session/set_mode, session/cancel, session/close.

import { Readable, Writable } from "node:stream";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";

const { methods } = acp;
const AGENT_NAME = "acptap-sdk-v1-agent";
const AGENT_VERSION = "0.1.0";
const MODES = ["basic", "everything", "invalid"];

let defaultMode = process.env.ACPTAP_SDK_AGENT_MODE || "everything";
let stateFile = null;
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === "--mode") defaultMode = process.argv[++i];
  else if (a === "--state") stateFile = process.argv[++i];
  else if (a.startsWith("--mode=")) defaultMode = a.slice(7);
  else {
    process.stderr.write(`usage: node v1-agent.mjs [--mode basic|everything|invalid] [--state FILE]\n`);
    process.exit(a === "-h" || a === "--help" ? 0 : 2);
  }
}
if (!MODES.includes(defaultMode)) {
  process.stderr.write(`v1-agent: unknown mode ${JSON.stringify(defaultMode)}\n`);
  process.exit(2);
}

const text = (t) => ({ type: "text", text: t });

function turnMode(prompt) {
  const words = prompt
    .filter((b) => b && b.type === "text")
    .map((b) => b.text.toLowerCase())
    .join(" ");
  for (const m of MODES) if (new RegExp(`\\b${m}\\b`).test(words)) return m;
  return defaultMode;
}

const availableModes = [
  { id: "ask", name: "Ask", description: "Ask before every edit" },
  { id: "code", name: "Code" },
];
const modesOf = (s) => ({ currentModeId: s.mode, availableModes });
const configOptionsOf = (s) => [
  {
    id: "model",
    name: "Model",
    category: "model",
    type: "select",
    currentValue: "fake-large",
    options: [
      { value: "fake-small", name: "Fake Small" },
      { value: "fake-large", name: "Fake Large" },
    ],
  },
  { id: "auto_approve", name: "Auto-approve edits", type: "boolean", currentValue: s.mode === "code" },
];

let clientCaps = {};
const sessions = new Map();
let sessionCounter = 0;

// --state: what a later process needs to load a session (its history for
// the replay, its turn count and mode).
function loadState() {
  if (!stateFile || !fs.existsSync(stateFile)) return;
  const st = JSON.parse(fs.readFileSync(stateFile, "utf8"));
  sessionCounter = st.sessionCounter ?? 0;
  for (const d of st.sessions ?? []) sessions.set(d.id, { ...d, active: null });
}

function saveState() {
  if (!stateFile) return;
  const list = [...sessions.values()].map(({ id, cwd, mode, turn, history, closed }) => ({ id, cwd, mode, turn, history, closed }));
  fs.writeFileSync(stateFile, JSON.stringify({ sessionCounter, sessions: list }));
}

loadState();

function getSession(id) {
  const s = sessions.get(id);
  if (!s || s.closed) throw acp.RequestError.resourceNotFound(id);
  return s;
}

class Cancelled extends Error {}

class Turn {
  constructor(client, s, signal) {
    this.client = client;
    this.s = s;
    this.signal = signal;
  }
  check() {
    if (this.signal.aborted) throw new Cancelled();
  }
  async update(update) {
    this.check();
    this.s.history.push(update);
    await this.client.notify(methods.client.session.update, { sessionId: this.s.id, update });
  }
  async request(method, params) {
    this.check();
    const r = await this.client.request(method, params, { cancellationSignal: this.signal });
    this.check();
    return r;
  }
}

async function basicTurn(t, n) {
  await t.update({ sessionUpdate: "agent_message_chunk", messageId: `agent-${n}-message`, content: text("Hello from the ACP v1 SDK agent. ") });
  await t.update({ sessionUpdate: "agent_message_chunk", messageId: `agent-${n}-message`, content: text("Nothing to do in basic mode.") });
}

async function everythingTurn(t, n) {
  const s = t.s;
  const file = path.join(s.cwd, "src", "hello.go");
  const editCall = `call-${n}-edit`;
  const msg = `agent-${n}-message`;

  // v1 chunks: messageId is optional; thoughts go without one, messages with one.
  await t.update({ sessionUpdate: "agent_thought_chunk", content: text("The user wants the greeting fixed. ") });
  await t.update({ sessionUpdate: "agent_thought_chunk", content: text("I will edit hello.go.") });
  const entries = (a, b) => [
    { content: "Edit src/hello.go", priority: "high", status: a },
    { content: "Run the tests", priority: "medium", status: b },
  ];
  await t.update({ sessionUpdate: "plan", entries: entries("in_progress", "pending") });
  await t.update({ sessionUpdate: "agent_message_chunk", messageId: msg, content: text("I'll fix the greeting ") });
  await t.update({ sessionUpdate: "agent_message_chunk", messageId: msg, content: text("in src/hello.go.") });

  const rawInput = { path: file, old: 'fmt.Println("helo")', new: 'fmt.Println("hello")' };
  await t.update({ sessionUpdate: "tool_call", toolCallId: editCall, title: "Edit src/hello.go", kind: "edit", status: "pending", rawInput, locations: [{ path: file, line: 5 }] });

  const perm = await t.request(methods.client.session.requestPermission, {
    sessionId: s.id,
    toolCall: { toolCallId: editCall, title: "Edit src/hello.go", kind: "edit", rawInput },
    options: [
      { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
      { optionId: "allow-always", name: "Always allow", kind: "allow_always" },
      { optionId: "reject-once", name: "Reject", kind: "reject_once" },
    ],
  });
  if (perm.outcome.outcome === "cancelled") throw new Cancelled();
  const allowed = perm.outcome.outcome === "selected" && String(perm.outcome.optionId).startsWith("allow");
  if (!allowed) {
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: editCall, status: "failed", rawOutput: { error: "permission denied" } });
  } else {
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: editCall, status: "in_progress" });
    let oldText = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("helo")\n}\n';
    if (clientCaps.fs?.readTextFile) {
      const r = await t.request(methods.client.fs.readTextFile, { sessionId: s.id, path: file });
      oldText = r.content;
    }
    const newText = oldText.replace('"helo"', '"hello"');
    if (clientCaps.fs?.writeTextFile) {
      await t.request(methods.client.fs.writeTextFile, { sessionId: s.id, path: file, content: newText });
    }
    await t.update({
      sessionUpdate: "tool_call_update",
      toolCallId: editCall,
      status: "completed",
      content: [
        { type: "diff", path: file, oldText, newText },
        { type: "content", content: text("Edited 1 line in src/hello.go.") },
      ],
      rawOutput: { linesChanged: 1 },
    });
  }
  await t.update({ sessionUpdate: "plan", entries: entries("completed", "in_progress") });

  if (clientCaps.terminal) {
    const execCall = `call-${n}-exec`;
    const term = await t.request(methods.client.terminal.create, { sessionId: s.id, command: "go", args: ["test", "./..."], cwd: s.cwd, outputByteLimit: 65536 });
    await t.update({
      sessionUpdate: "tool_call",
      toolCallId: execCall,
      title: "go test ./...",
      kind: "execute",
      status: "in_progress",
      rawInput: { command: "go test ./..." },
      content: [{ type: "terminal", terminalId: term.terminalId }],
    });
    const exit = await t.request(methods.client.terminal.waitForExit, { sessionId: s.id, terminalId: term.terminalId });
    const out = await t.request(methods.client.terminal.output, { sessionId: s.id, terminalId: term.terminalId });
    await t.request(methods.client.terminal.release, { sessionId: s.id, terminalId: term.terminalId });
    await t.update({
      sessionUpdate: "tool_call_update",
      toolCallId: execCall,
      status: exit.exitCode === 0 ? "completed" : "failed",
      rawOutput: { exitCode: exit.exitCode ?? null, output: out.output, truncated: out.truncated },
    });
  }
  await t.update({ sessionUpdate: "plan", entries: entries("completed", "completed") });

  if (clientCaps.elicitation?.form) {
    await t.request(methods.client.elicitation.create, {
      sessionId: s.id,
      toolCallId: editCall,
      mode: "form",
      message: "How should the change be committed?",
      requestedSchema: {
        type: "object",
        properties: { message: { type: "string", title: "Commit message" }, push: { type: "boolean", title: "Push", default: false } },
        required: ["message"],
      },
    });
  }

  s.mode = s.mode === "code" ? "ask" : "code";
  await t.update({ sessionUpdate: "current_mode_update", currentModeId: s.mode });
  await t.update({ sessionUpdate: "config_option_update", configOptions: configOptionsOf(s) });
  await t.update({
    sessionUpdate: "available_commands_update",
    availableCommands: [
      { name: "review", description: "Review the pending changes", input: { hint: "what to focus on" } },
      { name: "compact", description: "Compact the conversation" },
    ],
  });
  await t.update({ sessionUpdate: "session_info_update", title: "Fix the greeting", updatedAt: new Date(Date.UTC(2026, 10, 1, 12, 0, n)).toISOString() });
  await t.update({ sessionUpdate: "usage_update", used: 1200 * n, size: 200000, cost: { amount: 0.0125 * n, currency: "USD" } });
  if (clientCaps.session?.notices) {
    await t.update({ sessionUpdate: "notice", severity: "warning", title: "Context is getting long" });
  }
  if (clientCaps.session?.compaction) {
    const cmp = `compaction-${n}`;
    await t.update({ sessionUpdate: "compaction_update", compactionId: cmp, status: "in_progress" });
    await t.update({ sessionUpdate: "compaction_summary_chunk", compactionId: cmp, content: text("Fixed the greeting.") });
    await t.update({ sessionUpdate: "compaction_update", compactionId: cmp, status: "completed" });
  }
  await t.update({ sessionUpdate: "agent_message_chunk", messageId: msg, content: text(" Done.") });
}

const app = acp
  .agent({ name: AGENT_NAME })
  .onRequest(methods.agent.initialize, ({ params }) => {
    clientCaps = params.clientCapabilities ?? {};
    return {
      protocolVersion: 1,
      agentInfo: { name: AGENT_NAME, title: "acptap SDK v1 test agent", version: AGENT_VERSION },
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { embeddedContext: true },
        mcpCapabilities: { http: true },
        sessionCapabilities: { close: {}, additionalDirectories: {} },
      },
      authMethods: [],
    };
  })
  .onRequest(methods.agent.session.new, ({ params }) => {
    sessionCounter += 1;
    const s = { id: `sdk-v1-session-${sessionCounter}`, cwd: params.cwd, mode: "code", turn: 0, history: [], active: null, closed: false };
    sessions.set(s.id, s);
    saveState();
    return { sessionId: s.id, modes: modesOf(s), configOptions: configOptionsOf(s) };
  })
  .onRequest(methods.agent.session.load, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    for (const update of s.history) await client.notify(methods.client.session.update, { sessionId: s.id, update });
    return { modes: modesOf(s), configOptions: configOptionsOf(s) };
  })
  .onRequest(methods.agent.session.setMode, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    if (!availableModes.some((m) => m.id === params.modeId)) throw acp.RequestError.invalidParams({ modeId: params.modeId });
    s.mode = params.modeId;
    const update = { sessionUpdate: "current_mode_update", currentModeId: s.mode };
    s.history.push(update);
    await client.notify(methods.client.session.update, { sessionId: s.id, update });
    return {};
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    s.turn += 1;
    const n = s.turn;
    const mode = turnMode(params.prompt);
    // Only kept for session/load replay: v1 agents do not echo prompts live.
    for (const content of params.prompt) s.history.push({ sessionUpdate: "user_message_chunk", messageId: `user-${n}`, content });
    const ac = new AbortController();
    s.active = ac;
    const t = new Turn(client, s, ac.signal);
    try {
      if (mode === "basic") await basicTurn(t, n);
      else if (mode === "invalid") {
        await basicTurn(t, n);
        await t.update({ sessionUpdate: "agent_message_chunk", messageId: `agent-${n}-message` }); // missing content
      } else await everythingTurn(t, n);
      return { stopReason: "end_turn" };
    } catch (e) {
      if (e instanceof Cancelled || ac.signal.aborted) return { stopReason: "cancelled" };
      throw e;
    } finally {
      s.active = null;
      saveState();
    }
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    const s = sessions.get(params.sessionId);
    if (s && s.active) s.active.abort();
  })
  .onRequest(methods.agent.session.close, ({ params }) => {
    const s = getSession(params.sessionId);
    if (s.active) s.active.abort();
    s.closed = true;
    saveState();
    return {};
  });

const conn = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
conn.closed.then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`v1-agent: connection closed with error: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
