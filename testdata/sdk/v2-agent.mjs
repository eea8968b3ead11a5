#!/usr/bin/env node
// v2-agent.mjs: a scripted ACP v2 agent (schema 2.0.0-alpha.9) built on the
// official SDK's `experimental/v2/unstable` entrypoint, speaking
// newline-delimited JSON-RPC on stdin/stdout. Logs go to stderr only.
//
// Usage: node v2-agent.mjs [--mode basic|everything|invalid] [--no-batch] [--state FILE]
//
// The mode of each prompt turn is, first match wins:
//   1. a keyword in the prompt text: "basic", "everything" or "invalid";
//   2. --mode MODE;
//   3. the environment variable ACPTAP_SDK_AGENT_MODE;
//   4. "everything".
// --no-batch (or ACPTAP_SDK_AGENT_BATCH=0) sends the batched chunks one by one.
// --state FILE (or ACPTAP_SDK_AGENT_STATE) keeps the sessions in FILE, so that
// a later process (a later connection) can resume or fork them.
//
// basic:      user_message_chunk echo, state_update running, two
//             agent_message_chunks, state_update idle end_turn.
// everything: every alpha.9 session/update kind (see README.md), a JSON-RPC
//             batch of two session/update notifications, a
//             session/request_permission and a form-mode elicitation/create.
// invalid:    basic, plus one agent_message_chunk without its required
//             messageId (a schema violation the receiving SDK rejects).
//
// Also served: initialize, session/new, session/resume (replayFrom start
// replays every update sent for the session), session/fork (unstable: the
// fork gets a copy of the session's history, replayed when the fork is
// resumed with replayFrom), session/set_config_option, session/cancel,
// session/close.

import { Readable, Writable } from "node:stream";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";

const { methods } = acp;
const AGENT_NAME = "acptap-sdk-v2-agent";
const AGENT_VERSION = "0.1.0";
const MODES = ["basic", "everything", "invalid"];

function parseArgs(argv) {
  const opts = {
    mode: process.env.ACPTAP_SDK_AGENT_MODE || "everything",
    batch: process.env.ACPTAP_SDK_AGENT_BATCH !== "0",
    state: process.env.ACPTAP_SDK_AGENT_STATE || null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--mode") opts.mode = argv[++i];
    else if (a.startsWith("--mode=")) opts.mode = a.slice("--mode=".length);
    else if (a === "--no-batch") opts.batch = false;
    else if (a === "--state") opts.state = argv[++i];
    else if (a.startsWith("--state=")) opts.state = a.slice("--state=".length);
    else if (a === "-h" || a === "--help") {
      process.stderr.write("usage: node v2-agent.mjs [--mode basic|everything|invalid] [--no-batch] [--state FILE]\n");
      process.exit(0);
    } else {
      process.stderr.write(`v2-agent: unknown argument ${JSON.stringify(a)}\n`);
      process.exit(2);
    }
  }
  if (!MODES.includes(opts.mode)) {
    process.stderr.write(`v2-agent: unknown mode ${JSON.stringify(opts.mode)}\n`);
    process.exit(2);
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const b64 = (s) => Buffer.from(s, "utf8").toString("base64");
const text = (t) => ({ type: "text", text: t });

function turnMode(prompt) {
  const words = prompt
    .filter((b) => b && b.type === "text")
    .map((b) => b.text.toLowerCase())
    .join(" ");
  for (const m of MODES) {
    if (new RegExp(`\\b${m}\\b`).test(words)) return m;
  }
  return opts.mode;
}

function configOptions(s) {
  return [
    {
      configId: "mode",
      name: "Mode",
      category: "mode",
      type: "select",
      currentValue: s.config.mode,
      options: [
        { value: "ask", name: "Ask", description: "Ask before every edit" },
        { value: "code", name: "Code" },
      ],
    },
    {
      configId: "model",
      name: "Model",
      category: "model",
      type: "select",
      currentValue: s.config.model,
      options: [
        { value: "fake-small", name: "Fake Small" },
        { value: "fake-large", name: "Fake Large" },
      ],
    },
    { configId: "auto_approve", name: "Auto-approve edits", type: "boolean", currentValue: s.config.auto_approve },
  ];
}

const availableCommands = [
  { name: "review", description: "Review the pending changes", input: { type: "text", hint: "what to focus on" } },
  { name: "compact", description: "Compact the conversation" },
];

const sessions = new Map();
let sessionCounter = 0;

function newSession(params) {
  sessionCounter += 1;
  const s = {
    id: `sdk-v2-session-${sessionCounter}`,
    cwd: params.cwd,
    additionalDirectories: params.additionalDirectories ?? [],
    turn: 0,
    history: [], // every update sent, for replay
    queue: Promise.resolve(),
    active: null, // AbortController of the running turn
    closed: false,
    config: { mode: "code", model: "fake-large", auto_approve: false },
  };
  sessions.set(s.id, s);
  saveState();
  return s;
}

// --state: the sessions outlive the process, for resume and fork on a later
// connection. Only what replay and numbering need is kept.
function loadState() {
  if (!opts.state || !fs.existsSync(opts.state)) return;
  const st = JSON.parse(fs.readFileSync(opts.state, "utf8"));
  sessionCounter = st.sessionCounter ?? 0;
  for (const d of st.sessions ?? []) {
    sessions.set(d.id, { ...d, queue: Promise.resolve(), active: null });
  }
}

function saveState() {
  if (!opts.state) return;
  const list = [...sessions.values()].map(({ id, cwd, additionalDirectories, turn, history, closed, config }) => ({
    id,
    cwd,
    additionalDirectories,
    turn,
    history,
    closed,
    config,
  }));
  fs.writeFileSync(opts.state, JSON.stringify({ sessionCounter, sessions: list }));
}

loadState();

function getSession(id) {
  const s = sessions.get(id);
  if (!s || s.closed) throw acp.RequestError.resourceNotFound(id);
  return s;
}

// Turn runner: every send goes through here so the session history can be replayed.
class Turn {
  constructor(client, session, signal) {
    this.client = client;
    this.s = session;
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
  async batch(updates) {
    this.check();
    if (!opts.batch) {
      for (const u of updates) await this.update(u);
      return;
    }
    this.s.history.push(...updates);
    await this.client.batch(updates.map((update) => acp.batchNotification(methods.client.session.update, { sessionId: this.s.id, update })));
  }
  async request(method, params) {
    this.check();
    const res = await this.client.request(method, params, { cancellationSignal: this.signal });
    this.check();
    return res;
  }
}

class Cancelled extends Error {}

async function echoPrompt(client, s, messageId, prompt, mode) {
  const updates = prompt.map((content) => ({ sessionUpdate: "user_message_chunk", messageId, content }));
  if (mode === "everything") updates.push({ sessionUpdate: "user_message", messageId, content: prompt });
  for (const update of updates) {
    s.history.push(update);
    await client.notify(methods.client.session.update, { sessionId: s.id, update });
  }
}

async function basicTurn(t, n) {
  const msg = `agent-${n}-message`;
  await t.update({ sessionUpdate: "agent_message_chunk", messageId: msg, content: text("Hello from the ACP v2 SDK agent. ") });
  await t.update({ sessionUpdate: "agent_message_chunk", messageId: msg, content: text("Nothing to do in basic mode.") });
  return "end_turn";
}

async function invalidTurn(t, n) {
  await basicTurn(t, n);
  // Deliberately invalid: ContentChunk requires messageId.
  await t.update({ sessionUpdate: "agent_message_chunk", content: text("this chunk has no messageId") });
  return "end_turn";
}

async function everythingTurn(t, n) {
  const s = t.s;
  const cwd = s.cwd;
  const file = path.join(cwd, "src", "hello.go");
  const thought = `agent-${n}-thought`;
  const msg = `agent-${n}-message`;
  const editCall = `call-${n}-edit`;
  const execCall = `call-${n}-exec`;
  const term = `term-${n}`;
  const planId = `plan-${n}`;

  await t.update({ sessionUpdate: "session_info_update", title: "Fix the greeting", updatedAt: new Date(Date.UTC(2026, 10, 1, 12, 0, n)).toISOString() });
  await t.update({ sessionUpdate: "agent_thought_chunk", messageId: thought, content: text("The user wants the greeting fixed. ") });
  await t.update({ sessionUpdate: "agent_thought_chunk", messageId: thought, content: text("I will edit hello.go and run the tests.") });
  await t.update({ sessionUpdate: "agent_thought", messageId: thought, content: [text("The user wants the greeting fixed. I will edit hello.go and run the tests.")] });

  const entries = (s1, s2, s3) => [
    { content: "Edit src/hello.go", priority: "high", status: s1 },
    { content: "Run the tests", priority: "medium", status: s2 },
    { content: "Summarise the change", priority: "low", status: s3 },
  ];
  await t.update({ sessionUpdate: "plan_update", plan: { type: "items", planId, entries: entries("in_progress", "pending", "pending") } });

  // A JSON-RPC batch of two session/update notifications.
  await t.batch([
    { sessionUpdate: "agent_message_chunk", messageId: msg, content: text("I'll fix the greeting ") },
    { sessionUpdate: "agent_message_chunk", messageId: msg, content: text("in src/hello.go.") },
  ]);

  // Tool call 1: an edit, gated by a permission request.
  const rawInput = { path: file, old: 'fmt.Println("helo")', new: 'fmt.Println("hello")' };
  await t.update({
    sessionUpdate: "tool_call_update",
    toolCallId: editCall,
    name: "edit_file",
    title: "Edit src/hello.go",
    kind: "edit",
    status: "pending",
    rawInput,
    locations: [{ path: file, line: 5 }],
  });
  await t.update({ sessionUpdate: "state_update", state: "requires_action" });
  const perm = await t.request(methods.client.session.requestPermission, {
    sessionId: s.id,
    title: "Allow editing src/hello.go?",
    description: "The agent wants to change one line.",
    subject: { type: "tool_call", toolCall: { toolCallId: editCall, title: "Edit src/hello.go", kind: "edit", rawInput } },
    options: [
      { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
      { optionId: "allow-always", name: "Always allow", kind: "allow_always" },
      { optionId: "reject-once", name: "Reject", kind: "reject_once" },
    ],
  });
  if (perm.outcome.outcome === "cancelled") throw new Cancelled();
  await t.update({ sessionUpdate: "state_update", state: "running" });
  const allowed = perm.outcome.outcome === "selected" && String(perm.outcome.optionId).startsWith("allow");
  if (!allowed) {
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: editCall, status: "failed", rawOutput: { error: "permission denied", optionId: perm.outcome.optionId ?? null } });
  } else {
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: editCall, status: "in_progress" });
    await t.update({ sessionUpdate: "tool_call_content_chunk", toolCallId: editCall, content: { type: "content", content: text("Applying the edit…") } });
    await t.update({
      sessionUpdate: "tool_call_update",
      toolCallId: editCall,
      status: "completed",
      content: [
        {
          type: "diff",
          changes: [{ operation: "modify", path: file, fileType: "text", mimeType: "text/x-go" }],
          patch: {
            format: "git_patch",
            text:
              "diff --git a/src/hello.go b/src/hello.go\n--- a/src/hello.go\n+++ b/src/hello.go\n@@ -5 +5 @@\n-\tfmt.Println(\"helo\")\n+\tfmt.Println(\"hello\")\n",
          },
        },
        { type: "content", content: text("Edited 1 line in src/hello.go.") },
      ],
      rawOutput: { linesChanged: 1 },
    });
  }
  await t.update({ sessionUpdate: "plan_update", plan: { type: "items", planId, entries: entries("completed", "in_progress", "pending") } });

  // Tool call 2: a command in an agent-owned terminal.
  await t.update({
    sessionUpdate: "tool_call_update",
    toolCallId: execCall,
    name: "run_command",
    title: "go test ./...",
    kind: "execute",
    status: "in_progress",
    rawInput: { command: "go test ./...", cwd },
    content: [{ type: "terminal", terminalId: term }],
  });
  await t.update({ sessionUpdate: "terminal_update", terminalId: term, command: "go test ./...", cwd });
  await t.update({ sessionUpdate: "terminal_output_chunk", terminalId: term, data: b64("=== RUN   TestHello\n") });
  await t.update({ sessionUpdate: "terminal_output_chunk", terminalId: term, data: b64("--- PASS: TestHello (0.00s)\nok  \texample/hello\t0.003s\n") });
  await t.update({
    sessionUpdate: "terminal_update",
    terminalId: term,
    output: { data: b64("=== RUN   TestHello\n--- PASS: TestHello (0.00s)\nok  \texample/hello\t0.003s\n") },
    exitStatus: { exitCode: 0, signal: null },
  });
  await t.update({ sessionUpdate: "tool_call_update", toolCallId: execCall, status: "completed", rawOutput: { exitCode: 0, stdout: "ok  \texample/hello\t0.003s\n" } });

  // A form-mode elicitation tied to the edit tool call.
  await t.update({ sessionUpdate: "state_update", state: "requires_action" });
  const eli = await t.request(methods.client.elicitation.create, {
    sessionId: s.id,
    toolCallId: editCall,
    mode: "form",
    message: "How should the change be committed?",
    requestedSchema: {
      type: "object",
      title: "Commit details",
      properties: {
        message: { type: "string", title: "Commit message", minLength: 1 },
        bump: { type: "string", title: "Version bump", enum: ["patch", "minor", "major"] },
        retries: { type: "integer", title: "Retries", minimum: 0, maximum: 5 },
        push: { type: "boolean", title: "Push after commit", default: false },
      },
      required: ["message"],
    },
  });
  await t.update({ sessionUpdate: "state_update", state: "running" });
  const commitMsg = eli.action === "accept" && eli.content && typeof eli.content.message === "string" ? eli.content.message : null;

  await t.update({ sessionUpdate: "plan_update", plan: { type: "items", planId, entries: entries("completed", "completed", "completed") } });
  await t.update({ sessionUpdate: "plan_update", plan: { type: "items", planId: `${planId}-scratch`, entries: [{ content: "Scratch step", priority: "low", status: "cancelled" }] } });
  await t.update({ sessionUpdate: "plan_removed", planId: `${planId}-scratch` });

  await t.update({ sessionUpdate: "usage_update", used: 1200 * n, size: 200000, cost: { amount: 0.0125 * n, currency: "USD" } });
  await t.update({ sessionUpdate: "config_option_update", configOptions: configOptions(s) });
  await t.update({ sessionUpdate: "available_commands_update", availableCommands });
  await t.update({ sessionUpdate: "notice", severity: "info", title: "Context is getting long", description: "A compaction will run now." });

  const cmp = `compaction-${n}`;
  await t.update({ sessionUpdate: "compaction_update", compactionId: cmp, status: "in_progress" });
  await t.update({ sessionUpdate: "compaction_summary_chunk", compactionId: cmp, content: text("Fixed the greeting in src/hello.go; ") });
  await t.update({ sessionUpdate: "compaction_summary_chunk", compactionId: cmp, content: text("tests pass.") });
  await t.update({ sessionUpdate: "compaction_update", compactionId: cmp, status: "completed", summary: [text("Fixed the greeting in src/hello.go; tests pass.")] });

  // Unstable-only (U) kinds.
  const child = `${s.id}-child-${n}`;
  await t.update({ sessionUpdate: "subagent_update", sessionId: child, title: "Test runner", description: "Runs the test suite", capabilities: { cancel: {} }, state: { state: "running" } });
  await t.update({ sessionUpdate: "session_message_chunk", messageId: `inter-${n}`, senderSessionId: child, recipientSessionId: s.id, content: text("Tests ") });
  await t.update({ sessionUpdate: "session_message_chunk", messageId: `inter-${n}`, senderSessionId: child, recipientSessionId: s.id, content: text("passed.") });
  await t.update({ sessionUpdate: "session_message", messageId: `inter-${n}`, senderSessionId: child, recipientSessionId: s.id, content: [text("Tests passed.")] });
  await t.update({ sessionUpdate: "subagent_update", sessionId: child, state: { state: "idle", stopReason: "end_turn" } });

  // A vendor extension update (allowed: `_`-prefixed kinds are implementation-specific).
  await t.update({ sessionUpdate: "_acptap_test_vendor", detail: { answer: 42 } });

  const final = commitMsg ? `Done. Suggested commit message: ${commitMsg}` : "Done.";
  await t.update({ sessionUpdate: "agent_message", messageId: msg, content: [text(`I'll fix the greeting in src/hello.go. ${final}`)] });
  return "end_turn";
}

async function runTurn(client, s, n, mode) {
  const ac = new AbortController();
  s.active = ac;
  const t = new Turn(client, s, ac.signal);
  let stopReason;
  let error = null;
  try {
    await t.update({ sessionUpdate: "state_update", state: "running" });
    if (mode === "basic") stopReason = await basicTurn(t, n);
    else if (mode === "invalid") stopReason = await invalidTurn(t, n);
    else stopReason = await everythingTurn(t, n);
  } catch (e) {
    if (e instanceof Cancelled || ac.signal.aborted) stopReason = "cancelled";
    else {
      stopReason = "error";
      error = { code: -32603, message: String(e && e.message ? e.message : e) };
      process.stderr.write(`v2-agent: turn ${n} failed: ${e && e.stack ? e.stack : e}\n`);
    }
  } finally {
    s.active = null;
  }
  const idle = { sessionUpdate: "state_update", state: "idle", stopReason };
  if (error) idle.error = error;
  if (mode === "everything" && stopReason === "end_turn") idle.usage = { totalTokens: 1500, inputTokens: 1200, outputTokens: 300, thoughtTokens: 40 };
  s.history.push(idle);
  saveState();
  await client.notify(methods.client.session.update, { sessionId: s.id, update: idle });
}

async function cancelActive(s) {
  if (s.active) {
    s.active.abort();
  }
  await s.queue;
}

const app = acp
  .agent({ name: AGENT_NAME })
  .onRequest(methods.agent.initialize, ({ params }) => ({
    protocolVersion: 2,
    info: { name: AGENT_NAME, title: "acptap SDK v2 test agent", version: AGENT_VERSION },
    capabilities: {
      session: { prompt: { embeddedContext: {} }, mcp: { stdio: {}, http: {} }, additionalDirectories: {} },
    },
    authMethods: [],
    _meta: { clientProtocolVersion: params.protocolVersion },
  }))
  .onRequest(methods.agent.session.new, ({ params }) => {
    const s = newSession(params);
    return { sessionId: s.id, configOptions: configOptions(s), availableCommands };
  })
  .onRequest(methods.agent.session.resume, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    if (params.additionalDirectories) s.additionalDirectories = params.additionalDirectories;
    saveState();
    await s.queue;
    if (params.replayFrom && params.replayFrom.type === "start") {
      for (const update of s.history) await client.notify(methods.client.session.update, { sessionId: s.id, update });
    }
    await client.notify(methods.client.session.update, { sessionId: s.id, update: { sessionUpdate: "state_update", state: "idle" } });
    return { configOptions: configOptions(s), availableCommands };
  })
  .onRequest(methods.agent.session.setConfigOption, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    if (!(params.configId in s.config)) throw acp.RequestError.invalidParams({ configId: params.configId });
    s.config[params.configId] = params.value;
    const update = { sessionUpdate: "config_option_update", configOptions: configOptions(s) };
    s.history.push(update);
    saveState();
    await client.notify(methods.client.session.update, { sessionId: s.id, update });
    return { configOptions: configOptions(s) };
  })
  .onRequest(methods.agent.session.fork, async ({ params }) => {
    const src = getSession(params.sessionId);
    await src.queue;
    const s = newSession(params);
    s.turn = src.turn;
    s.history = structuredClone(src.history);
    s.config = { ...src.config };
    saveState();
    return { sessionId: s.id, configOptions: configOptions(s), availableCommands };
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    s.turn += 1;
    const n = s.turn;
    const mode = turnMode(params.prompt);
    const messageId = `user-${n}`;
    await echoPrompt(client, s, messageId, params.prompt, mode);
    s.queue = s.queue.then(() => runTurn(client, s, n, mode)).catch((e) => process.stderr.write(`v2-agent: ${e && e.stack ? e.stack : e}\n`));
    return { messageId };
  })
  .onNotification(methods.agent.session.cancel, async ({ params }) => {
    const s = sessions.get(params.sessionId);
    if (s && s.active) s.active.abort();
  })
  .onRequest(methods.agent.session.close, async ({ params }) => {
    const s = getSession(params.sessionId);
    await cancelActive(s);
    s.closed = true;
    saveState();
    return {};
  });

const conn = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
conn.closed.then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`v2-agent: connection closed with error: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
