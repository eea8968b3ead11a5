#!/usr/bin/env node
// v1-replay-client.mjs: an ACP v1 client (protocolVersion 1, the official
// SDK's main entrypoint) that opens recorded sessions the way a v1 editor
// does with `acptap replay --serve STORE`: initialize, session/list, then
// session/load for the chosen sessions (the agent replays the history as
// session/update notifications before it answers), counting every update
// the SDK accepts (it drops, and logs, updates that do not conform to the
// schema: see validationErrors). It then checks that a prompt is refused,
// and that an unknown method gets -32601.
//
//   node v1-replay-client.mjs [flags] -- AGENT [ARGS...]

import * as acp from "@agentclientprotocol/sdk";
import { captureSdkDiagnostics, countInto, errorInfo, parseClientArgs, spawnAgent, waitExit, writeSummary } from "./lib/peer.mjs";

const CLIENT_NAME = "acptap-sdk-v1-replay-client";
const CLIENT_VERSION = "0.1.0";
const { methods } = acp;

const usage = `usage: node v1-replay-client.mjs [flags] -- AGENT [ARGS...]
  --summary FILE     write the JSON summary to FILE (default: stderr)
  --session ID       load this session (repeatable; default: every session session/list returns)
  --no-compaction    do not advertise session.compaction (the agent must then send no compaction updates)
  --no-prompt        do not check that session/prompt is refused
  --trace FILE       write every wire line as JSONL {"dir":"send"|"recv","line":…}
  --timeout MS       give up after MS milliseconds (default 60000; exit 3)
  --strict           exit 1 when the SDK reported validation errors
`;

const { opts, agentArgv } = parseClientArgs(
  process.argv.slice(2),
  {
    summary: { type: "string" },
    session: { type: "list", default: [] },
    compaction: { type: "bool", default: true },
    prompt: { type: "bool", default: true },
    trace: { type: "string" },
    timeout: { type: "int", default: 60000 },
    strict: { type: "bool", default: false },
  },
  usage,
);

const summary = {
  client: `${CLIENT_NAME}/${CLIENT_VERSION}`,
  protocol: "acp/v1",
  agentArgv,
  protocolVersion: null,
  agentInfo: null,
  agentCapabilities: null,
  sessions: [],
  loaded: [],
  loadResults: {},
  updates: {},
  totalUpdates: 0,
  received: [],
  promptError: null,
  unknownMethodError: null,
  wire: null,
  validationErrors: [],
  errors: [],
  agentExit: null,
  ok: false,
};
captureSdkDiagnostics(summary.validationErrors);

const peer = spawnAgent(agentArgv, { trace: opts.trace });
let finished = false;

function finish(code) {
  if (finished) return;
  finished = true;
  summary.wire = peer.stats;
  peer.closeTrace();
  writeSummary(opts.summary, summary);
  process.exit(code);
}

const timer = setTimeout(async () => {
  summary.errors.push({ message: `timeout after ${opts.timeout} ms` });
  peer.child.kill("SIGKILL");
  summary.agentExit = await peer.exited;
  finish(3);
}, opts.timeout);

// entityId names what an update is about, so the test can match the updates
// received one for one with the ones acptap sent.
function entityId(u) {
  return u.messageId ?? u.toolCallId ?? u.compactionId ?? u.currentModeId ?? null;
}

// loading is the session being loaded: updates must arrive while it is.
let loading = null;
const app = acp.client({ name: CLIENT_NAME }).onNotification(methods.client.session.update, ({ params }) => {
  const u = params.update;
  countInto(summary.updates, u.sessionUpdate);
  summary.totalUpdates++;
  summary.received.push({ sessionId: params.sessionId, sessionUpdate: u.sessionUpdate, id: entityId(u), duringLoad: loading === params.sessionId });
});

let code = 0;
try {
  await app.connectWith(acp.ndJsonStream(peer.output, peer.input), async (agent) => {
    const clientCapabilities = { fs: { readTextFile: false, writeTextFile: false }, terminal: false };
    if (opts.compaction) clientCapabilities.session = { compaction: {} };
    const init = await agent.request(methods.agent.initialize, {
      protocolVersion: 1,
      clientCapabilities,
      clientInfo: { name: CLIENT_NAME, title: "acptap SDK v1 replay client", version: CLIENT_VERSION },
    });
    summary.protocolVersion = init.protocolVersion;
    summary.agentInfo = init.agentInfo ?? null;
    summary.agentCapabilities = init.agentCapabilities ?? null;

    const list = await agent.request(methods.agent.session.list, {});
    summary.sessions = list.sessions.map((s) => ({ sessionId: s.sessionId, cwd: s.cwd, title: s.title ?? null, updatedAt: s.updatedAt ?? null }));
    const ids = opts.session.length > 0 ? opts.session : list.sessions.map((s) => s.sessionId);

    for (const sessionId of ids) {
      const info = list.sessions.find((s) => s.sessionId === sessionId);
      loading = sessionId;
      const res = await agent.request(methods.agent.session.load, { sessionId, cwd: info?.cwd ?? process.cwd(), mcpServers: [] });
      loading = null;
      summary.loaded.push(sessionId);
      summary.loadResults[sessionId] = res;
    }

    if (opts.prompt && ids.length > 0) {
      try {
        await agent.request(methods.agent.session.prompt, { sessionId: ids[0], prompt: [{ type: "text", text: "hello?" }] });
        summary.errors.push({ message: "session/prompt on a recording was accepted" });
      } catch (e) {
        summary.promptError = errorInfo(e);
      }
    }
    try {
      await agent.request("_acptap_test/unknown", {});
      summary.errors.push({ message: "an unknown method was accepted" });
    } catch (e) {
      summary.unknownMethodError = errorInfo(e);
    }
  });
  summary.ok = summary.errors.length === 0;
  if (!summary.ok) code = 1;
} catch (e) {
  summary.errors.push(errorInfo(e));
  code = 1;
}
clearTimeout(timer);
peer.endStdin();
summary.agentExit = await waitExit(peer);
if (summary.agentExit.code !== 0) {
  summary.errors.push({ message: `agent command exited with ${JSON.stringify(summary.agentExit)}` });
  summary.ok = false;
  code = code || 1;
}
if (opts.strict && summary.validationErrors.length > 0) {
  summary.ok = false;
  code = code || 1;
}
finish(code);
