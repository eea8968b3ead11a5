#!/usr/bin/env node
// v2-replay-client.mjs: an ACP v2 client (schema 2.0.0-alpha.9, the official
// SDK's `experimental/v2/unstable` entrypoint) that opens recorded sessions
// the way an editor does with `acptap replay --serve STORE`: initialize,
// session/list, then session/resume with replayFrom {type: "start"} for the
// chosen sessions, counting every update the SDK accepts (it drops, and
// logs, updates that do not conform to the schema: see validationErrors).
// It then checks that a prompt is refused, and that an unknown method gets
// -32601.
//
//   node v2-replay-client.mjs [flags] -- AGENT [ARGS...]

import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { captureSdkDiagnostics, countInto, errorInfo, parseClientArgs, spawnAgent, waitExit, Waiters, writeSummary } from "./lib/peer.mjs";

const CLIENT_NAME = "acptap-sdk-v2-replay-client";
const CLIENT_VERSION = "0.1.0";
const { methods } = acp;

const usage = `usage: node v2-replay-client.mjs [flags] -- AGENT [ARGS...]
  --summary FILE    write the JSON summary to FILE (default: stderr)
  --session ID      resume this session (repeatable; default: every session session/list returns)
  --no-prompt       do not check that session/prompt is refused
  --trace FILE      write every wire line as JSONL {"dir":"send"|"recv","line":…}
  --timeout MS      give up after MS milliseconds (default 60000; exit 3)
  --strict          exit 1 when the SDK reported validation errors
`;

const { opts, agentArgv } = parseClientArgs(
  process.argv.slice(2),
  {
    summary: { type: "string" },
    session: { type: "list", default: [] },
    prompt: { type: "bool", default: true },
    trace: { type: "string" },
    timeout: { type: "int", default: 60000 },
    strict: { type: "bool", default: false },
  },
  usage,
);

const summary = {
  client: `${CLIENT_NAME}/${CLIENT_VERSION}`,
  protocol: "acp/v2",
  agentArgv,
  protocolVersion: null,
  agentInfo: null,
  sessions: [],
  resumed: [],
  resumeResults: {},
  updates: {},
  totalUpdates: 0,
  received: [],
  stopReasons: [],
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
const states = new Waiters();
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
  return u.messageId ?? u.toolCallId ?? u.terminalId ?? u.compactionId ?? u.plan?.planId ?? u.state ?? null;
}

const app = acp.client({ name: CLIENT_NAME }).onNotification(methods.client.session.update, ({ params }) => {
  const u = params.update;
  countInto(summary.updates, u.sessionUpdate);
  summary.totalUpdates++;
  summary.received.push({ sessionId: params.sessionId, sessionUpdate: u.sessionUpdate, id: entityId(u) });
  if (u.sessionUpdate === "state_update") {
    if (u.state === "idle" && u.stopReason != null) summary.stopReasons.push(u.stopReason);
    states.push({ sessionId: params.sessionId, state: u.state });
  }
});

let code = 0;
try {
  await app.connectWith(acp.ndJsonStream(peer.output, peer.input), async (agent) => {
    const init = await agent.request(methods.agent.initialize, {
      protocolVersion: 2,
      info: { name: CLIENT_NAME, title: "acptap SDK v2 replay client", version: CLIENT_VERSION },
      capabilities: {},
    });
    summary.protocolVersion = init.protocolVersion;
    summary.agentInfo = init.info;

    const list = await agent.request(methods.agent.session.list, {});
    summary.sessions = list.sessions.map((s) => ({ sessionId: s.sessionId, cwd: s.cwd, title: s.title ?? null, updatedAt: s.updatedAt ?? null }));
    const ids = opts.session.length > 0 ? opts.session : list.sessions.map((s) => s.sessionId);

    for (const sessionId of ids) {
      const info = list.sessions.find((s) => s.sessionId === sessionId);
      const idle = states.wait((s) => s.sessionId === sessionId && s.state === "idle");
      const res = await agent.request(methods.agent.session.resume, { sessionId, cwd: info?.cwd ?? process.cwd(), replayFrom: { type: "start" } });
      await idle;
      summary.resumed.push(sessionId);
      summary.resumeResults[sessionId] = res;
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
