#!/usr/bin/env node
// v2-client.mjs: a scripted ACP v2 client (schema 2.0.0-alpha.9) built on the
// official SDK's `experimental/v2/unstable` entrypoint. It spawns the agent
// command given after `--` (any argv, so a recorder can sit in between),
// drives one session and prints a JSON summary.
//
//   node v2-client.mjs [flags] -- AGENT [ARGS...]
//
// See usage below and README.md for the flags and the summary format.

import path from "node:path";
import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { captureSdkDiagnostics, countInto, errorInfo, parseClientArgs, spawnAgent, waitExit, Waiters, writeSummary } from "./lib/peer.mjs";

const CLIENT_NAME = "acptap-sdk-v2-client";
const CLIENT_VERSION = "0.1.0";
const { methods } = acp;

const usage = `usage: node v2-client.mjs [flags] -- AGENT [ARGS...]
  --summary FILE        write the JSON summary to FILE (default: stderr)
  --mode MODE           keyword put in the first default prompt: basic|everything|invalid (default everything)
  --prompt TEXT         a prompt to send (repeatable; default: "<mode>: …" then "basic: …")
  --cwd DIR             session cwd (default: the current directory)
  --add-dir DIR         an additionalDirectories entry (repeatable; default: <cwd>/../acptap-extra-root)
  --no-mcp              send no mcpServers (default: a stdio and an http server carrying secrets)
  --permission KIND     answer permission requests by selecting the first option of KIND
                        (allow_once|allow_always|reject_once|reject_always), or "cancel" (default allow_once)
  --elicitation ACTION  answer elicitations: accept|decline|cancel (default accept, with content fitting the form)
  --set-config ID=VALUE send session/set_config_option after the prompts (repeatable; true/false → boolean)
  --resume              send session/resume with replayFrom {type:"start"} after the prompts
  --resume-session ID   start by resuming session ID (replayFrom {type:"start"}) instead of session/new
  --no-prompts          send no prompts (e.g. only resume, or only fork)
  --fork                after the prompts: session/fork, then session/resume of the fork with replayFrom
  --fork-prompt TEXT    a prompt to send to the fork (repeatable)
  --no-close            do not send session/close
  --traceparent TP      send _meta.traceparent TP with every session/prompt (W3C trace context)
  --trace FILE          write every wire line as JSONL {"dir":"send"|"recv","line":…}
  --timeout MS          give up after MS milliseconds (default 60000; exit 3)
  --strict              exit 1 when the SDK reported validation errors
  --ignore-agent-exit   exit 0 even when the agent command exits non-zero
`;

const { opts, agentArgv } = parseClientArgs(
  process.argv.slice(2),
  {
    summary: { type: "string" },
    mode: { type: "string", default: "everything" },
    prompt: { type: "list", default: [] },
    cwd: { type: "string", default: process.cwd() },
    "add-dir": { type: "list", default: [] },
    mcp: { type: "bool", default: true },
    permission: { type: "string", default: "allow_once" },
    elicitation: { type: "string", default: "accept" },
    "set-config": { type: "list", default: [] },
    resume: { type: "bool", default: false },
    "resume-session": { type: "string" },
    prompts: { type: "bool", default: true },
    fork: { type: "bool", default: false },
    "fork-prompt": { type: "list", default: [] },
    close: { type: "bool", default: true },
    traceparent: { type: "string" },
    trace: { type: "string" },
    timeout: { type: "int", default: 60000 },
    strict: { type: "bool", default: false },
    "ignore-agent-exit": { type: "bool", default: false },
  },
  usage,
);

const cwd = path.resolve(opts.cwd);
const additionalDirectories = (opts["add-dir"].length > 0 ? opts["add-dir"] : [path.resolve(cwd, "..", "acptap-extra-root")]).map((d) => path.resolve(d));
const prompts = opts.prompt.length > 0 ? opts.prompt : [`${opts.mode}: please fix the greeting in src/hello.go`, "basic: thanks, that is all"];

// Recognisable secrets: a recorder must scrub these before anything is stored.
// (SECRET-ENV-VALUE-1234, SECRET-HEADER-VALUE-5678, SECRET-ARG-VALUE-9012)
const mcpServers = opts.mcp
  ? [
      {
        type: "stdio",
        name: "secret-stdio-server",
        command: "/usr/local/bin/fake-mcp-server",
        args: ["--token", "SECRET-ARG-VALUE-9012"],
        env: [{ name: "FAKE_API_KEY", value: "SECRET-ENV-VALUE-1234" }],
      },
      {
        type: "http",
        name: "secret-http-server",
        url: "https://mcp.example.invalid/mcp",
        headers: [{ name: "Authorization", value: "Bearer SECRET-HEADER-VALUE-5678" }],
      },
    ]
  : [];

const summary = {
  client: `${CLIENT_NAME}/${CLIENT_VERSION}`,
  protocol: "acp/v2",
  agentArgv,
  protocolVersion: null,
  agentInfo: null,
  sessionId: null,
  forkSessionId: null,
  promptMessageIds: [],
  updates: {},
  totalUpdates: 0,
  stopReasons: [],
  requests: {},
  permissionAnswers: [],
  elicitationAnswers: [],
  notifications: {},
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

function elicitationContent(schema) {
  const content = {};
  for (const [name, p] of Object.entries(schema?.properties ?? {})) {
    switch (p.type) {
      case "string":
        content[name] = Array.isArray(p.enum) && p.enum.length ? p.enum[0] : Array.isArray(p.oneOf) && p.oneOf.length ? p.oneOf[0].const : "Fix the greeting (acptap test)";
        break;
      case "integer":
        content[name] = typeof p.minimum === "number" ? Math.max(p.minimum, 1) : 1;
        break;
      case "number":
        content[name] = typeof p.minimum === "number" ? p.minimum : 1.5;
        break;
      case "boolean":
        content[name] = true;
        break;
      case "array": {
        const items = p.items ?? {};
        const first = Array.isArray(items.enum) ? items.enum[0] : Array.isArray(items.anyOf) ? items.anyOf[0]?.const : undefined;
        content[name] = first === undefined ? [] : [first];
        break;
      }
      default:
        break;
    }
  }
  return content;
}

const app = acp
  .client({ name: CLIENT_NAME })
  .onNotification(methods.client.session.update, ({ params }) => {
    const u = params.update;
    countInto(summary.updates, u.sessionUpdate);
    summary.totalUpdates++;
    if (u.sessionUpdate === "state_update") {
      if (u.state === "idle" && u.stopReason != null) summary.stopReasons.push(u.stopReason);
      states.push({ sessionId: params.sessionId, state: u.state, stopReason: u.stopReason ?? null });
    }
  })
  .onNotification(methods.client.elicitation.complete, ({ params }) => {
    countInto(summary.notifications, methods.client.elicitation.complete);
    void params;
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    countInto(summary.requests, methods.client.session.requestPermission);
    let outcome;
    if (opts.permission === "cancel") outcome = { outcome: "cancelled" };
    else {
      const opt = params.options.find((o) => o.kind === opts.permission) ?? params.options[0];
      outcome = { outcome: "selected", optionId: opt.optionId };
    }
    summary.permissionAnswers.push(outcome);
    return { outcome };
  })
  .onRequest(methods.client.elicitation.create, ({ params }) => {
    countInto(summary.requests, methods.client.elicitation.create);
    let res;
    if (opts.elicitation === "accept") res = params.mode === "form" ? { action: "accept", content: elicitationContent(params.requestedSchema) } : { action: "accept" };
    else res = { action: opts.elicitation };
    summary.elicitationAnswers.push(res);
    return res;
  });

let code = 0;
try {
  await app.connectWith(acp.ndJsonStream(peer.output, peer.input), async (agent) => {
    const init = await agent.request(methods.agent.initialize, {
      protocolVersion: 2,
      info: { name: CLIENT_NAME, title: "acptap SDK v2 test client", version: CLIENT_VERSION },
      capabilities: { elicitation: { form: {} } },
    });
    summary.protocolVersion = init.protocolVersion;
    summary.agentInfo = init.info;

    // resume replays history, then the agent sends the current state and answers.
    const resume = async (id) => {
      const idle = states.wait((s) => s.sessionId === id && s.state === "idle");
      await agent.request(methods.agent.session.resume, { sessionId: id, cwd, additionalDirectories, mcpServers, replayFrom: { type: "start" } });
      await idle;
    };
    const promptTurn = async (id, prompt) => {
      const idle = states.wait((s) => s.sessionId === id && s.state === "idle" && s.stopReason != null);
      const params = { sessionId: id, prompt };
      if (opts.traceparent) params._meta = { traceparent: opts.traceparent };
      const res = await agent.request(methods.agent.session.prompt, params);
      summary.promptMessageIds.push(res.messageId);
      await idle;
    };

    let sessionId;
    if (opts["resume-session"]) {
      sessionId = opts["resume-session"];
      await resume(sessionId);
    } else {
      const ns = await agent.request(methods.agent.session.new, { cwd, additionalDirectories, mcpServers });
      sessionId = ns.sessionId;
    }
    summary.sessionId = sessionId;

    for (const [i, textPrompt] of (opts.prompts ? prompts : []).entries()) {
      const prompt = [{ type: "text", text: textPrompt }];
      if (i === 0) prompt.push({ type: "resource_link", name: "hello.go", uri: `file://${path.join(cwd, "src", "hello.go")}`, mimeType: "text/x-go" });
      await promptTurn(sessionId, prompt);
    }

    for (const kv of opts["set-config"]) {
      const eq = kv.indexOf("=");
      const configId = kv.slice(0, eq);
      const raw = kv.slice(eq + 1);
      const isBool = raw === "true" || raw === "false";
      await agent.request(methods.agent.session.setConfigOption, isBool ? { sessionId, configId, type: "boolean", value: raw === "true" } : { sessionId, configId, type: "id", value: raw });
    }

    if (opts.resume) {
      const idle = states.wait((s) => s.sessionId === sessionId && s.state === "idle");
      await agent.request(methods.agent.session.resume, { sessionId, cwd, additionalDirectories, mcpServers, replayFrom: { type: "start" } });
      await idle;
    }

    if (opts.fork) {
      const fk = await agent.request(methods.agent.session.fork, { sessionId, cwd, additionalDirectories, mcpServers });
      summary.forkSessionId = fk.sessionId;
      await resume(fk.sessionId);
      for (const textPrompt of opts["fork-prompt"]) await promptTurn(fk.sessionId, [{ type: "text", text: textPrompt }]);
      if (opts.close) await agent.request(methods.agent.session.close, { sessionId: fk.sessionId });
    }

    if (opts.close) await agent.request(methods.agent.session.close, { sessionId });
  });
  summary.ok = true;
} catch (e) {
  summary.errors.push(errorInfo(e));
  code = 1;
}
clearTimeout(timer);
peer.endStdin();
summary.agentExit = await waitExit(peer);
if (summary.agentExit.code !== 0 && !opts["ignore-agent-exit"]) {
  summary.errors.push({ message: `agent command exited with ${JSON.stringify(summary.agentExit)}` });
  summary.ok = false;
  code = code || 1;
}
if (opts.strict && summary.validationErrors.length > 0) {
  summary.ok = false;
  code = code || 1;
}
finish(code);
