#!/usr/bin/env node
// client.mjs: a scripted ACP v2 client on @agentclientprotocol/sdk 2.4.0
// (`experimental/v2/unstable`, the draft 2.0.0-alpha.13). It spawns the
// agent command given after `--` (so a recorder can sit in between), drives
// one session through the draft's additions and prints a JSON summary:
// session/new, one prompt (waits for idle), tool_call/cancel and
// terminal/cancel of the work left running in the background (waits for
// the idle that reports none), session/set_title, session/status,
// auth/status, session/archive, session/unarchive.
//
//   node client.mjs [--summary FILE] [--trace FILE] [--timeout MS] -- AGENT [ARGS...]

import path from "node:path";
import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { captureSdkDiagnostics, countInto, errorInfo, parseClientArgs, spawnAgent, waitExit, Waiters, writeSummary } from "../sdk/lib/peer.mjs";

const CLIENT_NAME = "acptap-sdk24-client";
const CLIENT_VERSION = "0.1.0";
const { methods } = acp;

const usage = `usage: node client.mjs [flags] -- AGENT [ARGS...]
  --summary FILE   write the JSON summary to FILE (default: stderr)
  --cwd DIR        session cwd (default: the current directory)
  --trace FILE     write every wire line as JSONL {"dir":"send"|"recv","line":…}
  --timeout MS     give up after MS milliseconds (default 60000; exit 3)
`;

const { opts, agentArgv } = parseClientArgs(
  process.argv.slice(2),
  {
    summary: { type: "string" },
    cwd: { type: "string", default: process.cwd() },
    trace: { type: "string" },
    timeout: { type: "int", default: 60000 },
  },
  usage,
);

const summary = {
  client: `${CLIENT_NAME}/${CLIENT_VERSION}`,
  protocol: "acp/v2@2.0.0-alpha.13",
  agentArgv,
  protocolVersion: null,
  agentInfo: null,
  sessionId: null,
  promptMessageIds: [],
  updates: {},
  title: null,
  status: null,
  authState: null,
  wire: null,
  validationErrors: [],
  errors: [],
  agentExit: null,
  ok: false,
};
captureSdkDiagnostics(summary.validationErrors);

const peer = spawnAgent(agentArgv, { trace: opts.trace });
const seen = new Waiters();
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

const app = acp.client({ name: CLIENT_NAME }).onNotification(methods.client.session.update, ({ params }) => {
  countInto(summary.updates, params.update.sessionUpdate);
  seen.push(params.update);
});

let code = 0;
try {
  await app.connectWith(acp.ndJsonStream(peer.output, peer.input), async (agent) => {
    const init = await agent.request(methods.agent.initialize, {
      protocolVersion: 2,
      info: { name: CLIENT_NAME, title: "acptap SDK 2.4.0 test client", version: CLIENT_VERSION },
      capabilities: {},
    });
    summary.protocolVersion = init.protocolVersion;
    summary.agentInfo = init.info;
    const cwd = path.resolve(opts.cwd);
    const { sessionId } = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
    summary.sessionId = sessionId;

    const idleWithBackground = seen.wait((u) => u.sessionUpdate === "state_update" && u.state === "idle" && u.stopReason != null);
    const res = await agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Run the tests and start the dev server" }] });
    summary.promptMessageIds.push(res.messageId);
    await idleWithBackground;

    const cancelled = seen.wait((u) => u.sessionUpdate === "tool_call_update" && u.status === "cancelled");
    await agent.request(methods.agent.toolCall.cancel, { sessionId, toolCallId: "call-tests" });
    await cancelled;
    const nothingLeft = seen.wait((u) => u.sessionUpdate === "state_update" && Array.isArray(u.background) && u.background.length === 0);
    await agent.request(methods.agent.terminal.cancel, { sessionId, terminalId: "term-dev" });
    await nothingLeft;

    summary.title = (await agent.request(methods.agent.session.setTitle, { sessionId, title: "  Fix the parser  " })).title;
    summary.status = (await agent.request(methods.agent.session.status, { sessionId })).status;
    summary.authState = (await agent.request(methods.agent.auth.status, {})).state;
    await agent.request(methods.agent.session.archive, { sessionId });
    await agent.request(methods.agent.session.unarchive, { sessionId });
  });
  summary.ok = true;
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
if (summary.validationErrors.length > 0) {
  summary.ok = false;
  code = code || 1;
}
finish(code);
