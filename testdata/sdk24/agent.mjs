#!/usr/bin/env node
// agent.mjs: a scripted ACP v2 agent on @agentclientprotocol/sdk 2.4.0
// (`experimental/v2/unstable`, the draft 2.0.0-alpha.13), speaking
// newline-delimited JSON-RPC on stdin/stdout. Logs go to stderr only.
//
// It advertises what only the newer draft has (session.title, .archive,
// .status, auth.status) and exercises its additions:
//   session/prompt    echo, state_update running (background []), a tool
//                     call and a terminal (with size) that advertise
//                     capabilities.cancel, then idle with both still running
//                     as background work;
//   tool_call/cancel  answers, then the call's cancelled update;
//   terminal/cancel   answers, then the terminal's exit (SIGTERM) and a
//                     state_update idle with no background work left;
//   session/set_title stores the trimmed title and answers with it;
//   session/status    open, with the foreground state snapshot;
//   session/archive, session/unarchive, auth/status.

import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";

const { methods } = acp;
const AGENT_NAME = "acptap-sdk24-agent";
const AGENT_VERSION = "0.1.0";
const text = (t) => ({ type: "text", text: t });

const sessions = new Map();
let counter = 0;

function getSession(id) {
  const s = sessions.get(id);
  if (!s) throw acp.RequestError.resourceNotFound(id);
  return s;
}

const notify = (client, s, update) => client.notify(methods.client.session.update, { sessionId: s.id, update });

async function turn(client, s, n) {
  await notify(client, s, { sessionUpdate: "state_update", state: "running", background: [] });
  await notify(client, s, { sessionUpdate: "agent_message_chunk", messageId: `agent-${n}`, content: text("Running the tests and the dev server.") });
  await notify(client, s, {
    sessionUpdate: "tool_call_update",
    toolCallId: "call-tests",
    name: "bash",
    title: "Run the test suite",
    kind: "execute",
    status: "in_progress",
    rawInput: { command: "go test ./..." },
    capabilities: { cancel: {} },
  });
  await notify(client, s, {
    sessionUpdate: "terminal_update",
    terminalId: "term-dev",
    command: "npm run dev",
    cwd: s.cwd,
    size: { cols: 120, rows: 40 },
    capabilities: { cancel: {} },
  });
  await notify(client, s, { sessionUpdate: "terminal_output_chunk", terminalId: "term-dev", data: Buffer.from("listening on :3000\n").toString("base64") });
  await notify(client, s, { sessionUpdate: "terminal_update", terminalId: "term-dev", size: { cols: 100, rows: 30 } });
  s.background = [
    { type: "terminal", terminalId: "term-dev" },
    { type: "tool_call", toolCallId: "call-tests" },
  ];
  await notify(client, s, { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn", background: s.background });
}

const app = acp
  .agent({ name: AGENT_NAME })
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: 2,
    info: { name: AGENT_NAME, title: "acptap SDK 2.4.0 test agent", version: AGENT_VERSION },
    capabilities: {
      session: { title: {}, archive: {}, status: {} },
      auth: { status: {} },
    },
    authMethods: [],
  }))
  .onRequest(methods.agent.session.new, ({ params }) => {
    counter += 1;
    const s = { id: `sdk24-session-${counter}`, cwd: params.cwd, turn: 0, title: null, archived: false, background: [], queue: Promise.resolve() };
    sessions.set(s.id, s);
    return { sessionId: s.id };
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    s.turn += 1;
    const n = s.turn;
    const messageId = `user-${n}`;
    await notify(client, s, { sessionUpdate: "user_message", messageId, content: params.prompt });
    s.queue = s.queue.then(() => turn(client, s, n)).catch((e) => process.stderr.write(`sdk24 agent: ${e && e.stack ? e.stack : e}\n`));
    return { messageId };
  })
  .onRequest(methods.agent.toolCall.cancel, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    await s.queue;
    s.queue = s.queue.then(async () => {
      await notify(client, s, { sessionUpdate: "tool_call_update", toolCallId: params.toolCallId, status: "cancelled", capabilities: null });
      s.background = s.background.filter((w) => w.toolCallId !== params.toolCallId);
      await notify(client, s, { sessionUpdate: "state_update", state: "idle", background: s.background });
    });
    return {};
  })
  .onRequest(methods.agent.terminal.cancel, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    await s.queue;
    s.queue = s.queue.then(async () => {
      await notify(client, s, { sessionUpdate: "terminal_update", terminalId: params.terminalId, exitStatus: { exitCode: null, signal: "SIGTERM" }, capabilities: null });
      s.background = s.background.filter((w) => w.terminalId !== params.terminalId);
      await notify(client, s, { sessionUpdate: "state_update", state: "idle", background: s.background });
    });
    return {};
  })
  .onRequest(methods.agent.session.setTitle, async ({ params }) => {
    const s = getSession(params.sessionId);
    const title = params.title.trim();
    if (title === "") throw acp.RequestError.invalidParams({ title: "empty after normalization" });
    s.title = title;
    return { title };
  })
  .onRequest(methods.agent.session.status, async ({ params }) => {
    const s = getSession(params.sessionId);
    await s.queue;
    return { status: s.archived ? "saved" : "open", state: { sessionUpdate: "state_update", state: "idle", background: s.background } };
  })
  .onRequest(methods.agent.session.archive, async ({ params }) => {
    const s = getSession(params.sessionId);
    await s.queue;
    s.archived = true;
    return {};
  })
  .onRequest(methods.agent.session.unarchive, async ({ params }) => {
    getSession(params.sessionId).archived = false;
    return {};
  })
  .onRequest(methods.agent.auth.status, () => ({ state: "not_required" }));

const conn = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
conn.closed.then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`sdk24 agent: connection closed with error: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
