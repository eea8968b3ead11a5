#!/usr/bin/env node
// v1-client.mjs: a scripted ACP v1 client (protocolVersion 1) built on the
// official SDK's default entrypoint. It spawns the agent command given after
// `--`, drives one session and prints a JSON summary. It serves fs/* from an
// in-memory file system and terminal/* with a fake terminal (nothing is run).
//
//   node v1-client.mjs [flags] -- AGENT [ARGS...]

import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { captureSdkDiagnostics, countInto, errorInfo, parseClientArgs, spawnAgent, waitExit, writeSummary } from "./lib/peer.mjs";

const CLIENT_NAME = "acptap-sdk-v1-client";
const CLIENT_VERSION = "0.1.0";
const { methods } = acp;

const usage = `usage: node v1-client.mjs [flags] -- AGENT [ARGS...]
  --summary FILE        write the JSON summary to FILE (default: stderr)
  --mode MODE           keyword put in the first default prompt: basic|everything|invalid (default everything)
  --prompt TEXT         a prompt to send (repeatable; default: "<mode>: …" then "basic: …")
  --cwd DIR             session cwd (default: the current directory)
  --add-dir DIR         an additionalDirectories entry (repeatable; default: <cwd>/../acptap-extra-root)
  --no-mcp              send an empty mcpServers (default: a stdio and an http server carrying secrets)
  --no-fs               do not advertise or serve fs/read_text_file and fs/write_text_file
  --no-terminal         do not advertise or serve terminal/*
  --no-notices          do not advertise session.notices and session.compaction
  --no-elicitation      do not advertise elicitation.form
  --permission KIND     answer permission requests by selecting the first option of KIND, or "cancel" (default allow_once)
  --elicitation ACTION  accept|decline|cancel (default accept)
  --set-mode ID         send session/set_mode after the prompts
  --load                send session/load for the session after the prompts (the agent replays it)
  --load-session ID     start by loading session ID (session/load; the agent replays it) instead of session/new
  --no-close            do not send session/close
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
    fs: { type: "bool", default: true },
    terminal: { type: "bool", default: true },
    notices: { type: "bool", default: true },
    elicitation: { type: "string", default: "accept" },
    "no-elicitation": { type: "bool", default: false },
    permission: { type: "string", default: "allow_once" },
    "set-mode": { type: "string" },
    load: { type: "bool", default: false },
    "load-session": { type: "string" },
    close: { type: "bool", default: true },
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
// Recognisable secrets: SECRET-ENV-VALUE-1234, SECRET-HEADER-VALUE-5678, SECRET-ARG-VALUE-9012.
const mcpServers = opts.mcp
  ? [
      {
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

const files = new Map([[path.join(cwd, "src", "hello.go"), 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("helo")\n}\n']]);
const terminals = new Map();
let terminalCounter = 0;

const summary = {
  client: `${CLIENT_NAME}/${CLIENT_VERSION}`,
  protocol: "acp/v1",
  agentArgv,
  protocolVersion: null,
  agentInfo: null,
  sessionId: null,
  modes: null,
  updates: {},
  totalUpdates: 0,
  stopReasons: [],
  requests: {},
  permissionAnswers: [],
  elicitationAnswers: [],
  filesWritten: [],
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

function terminal(params) {
  const t = terminals.get(params.terminalId);
  if (!t) throw acp.RequestError.resourceNotFound(params.terminalId);
  return t;
}

let app = acp
  .client({ name: CLIENT_NAME })
  .onNotification(methods.client.session.update, ({ params }) => {
    countInto(summary.updates, params.update.sessionUpdate);
    summary.totalUpdates++;
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
    let res = { action: opts.elicitation };
    if (opts.elicitation === "accept" && params.mode === "form") {
      const content = {};
      for (const [k, p] of Object.entries(params.requestedSchema?.properties ?? {})) {
        if (p.type === "string") content[k] = Array.isArray(p.enum) ? p.enum[0] : "Fix the greeting (acptap test)";
        else if (p.type === "boolean") content[k] = true;
        else if (p.type === "integer" || p.type === "number") content[k] = 1;
      }
      res = { action: "accept", content };
    }
    summary.elicitationAnswers.push(res);
    return res;
  });

if (opts.fs) {
  app = app
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      countInto(summary.requests, methods.client.fs.readTextFile);
      const content = files.get(params.path);
      if (content === undefined) throw acp.RequestError.resourceNotFound(`file://${params.path}`);
      let lines = content.split(/(?<=\n)/);
      if (params.line != null) lines = lines.slice(Math.max(params.line - 1, 0));
      if (params.limit != null) lines = lines.slice(0, params.limit);
      return { content: lines.join("") };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      countInto(summary.requests, methods.client.fs.writeTextFile);
      files.set(params.path, params.content);
      summary.filesWritten.push(params.path);
      return {};
    });
}
if (opts.terminal) {
  app = app
    .onRequest(methods.client.terminal.create, ({ params }) => {
      countInto(summary.requests, methods.client.terminal.create);
      terminalCounter += 1;
      const id = `client-term-${terminalCounter}`;
      const cmd = [params.command, ...(params.args ?? [])].join(" ");
      terminals.set(id, { output: `$ ${cmd}\nok  \texample/hello\t0.003s\n`, exitCode: 0 });
      return { terminalId: id };
    })
    .onRequest(methods.client.terminal.output, ({ params }) => {
      countInto(summary.requests, methods.client.terminal.output);
      const t = terminal(params);
      return { output: t.output, truncated: false, exitStatus: { exitCode: t.exitCode } };
    })
    .onRequest(methods.client.terminal.waitForExit, ({ params }) => {
      countInto(summary.requests, methods.client.terminal.waitForExit);
      return { exitCode: terminal(params).exitCode };
    })
    .onRequest(methods.client.terminal.kill, ({ params }) => {
      countInto(summary.requests, methods.client.terminal.kill);
      terminal(params).exitCode = null;
      return {};
    })
    .onRequest(methods.client.terminal.release, ({ params }) => {
      countInto(summary.requests, methods.client.terminal.release);
      terminal(params);
      terminals.delete(params.terminalId);
      return {};
    });
}

let code = 0;
try {
  await app.connectWith(acp.ndJsonStream(peer.output, peer.input), async (agent) => {
    const clientCapabilities = { fs: { readTextFile: opts.fs, writeTextFile: opts.fs }, terminal: opts.terminal };
    if (opts.notices) clientCapabilities.session = { notices: {}, compaction: {} };
    if (!opts["no-elicitation"]) clientCapabilities.elicitation = { form: {} };
    const init = await agent.request(methods.agent.initialize, {
      protocolVersion: 1,
      clientCapabilities,
      clientInfo: { name: CLIENT_NAME, title: "acptap SDK v1 test client", version: CLIENT_VERSION },
    });
    summary.protocolVersion = init.protocolVersion;
    summary.agentInfo = init.agentInfo ?? null;

    let sessionId, ns;
    if (opts["load-session"]) {
      sessionId = opts["load-session"];
      ns = await agent.request(methods.agent.session.load, { sessionId, cwd, additionalDirectories, mcpServers });
    } else {
      ns = await agent.request(methods.agent.session.new, { cwd, additionalDirectories, mcpServers });
      sessionId = ns.sessionId;
    }
    summary.sessionId = sessionId;
    summary.modes = ns.modes ?? null;

    for (const [i, t] of prompts.entries()) {
      const prompt = [{ type: "text", text: t }];
      if (i === 0) prompt.push({ type: "resource_link", name: "hello.go", uri: `file://${path.join(cwd, "src", "hello.go")}`, mimeType: "text/x-go" });
      const res = await agent.request(methods.agent.session.prompt, { sessionId, prompt });
      summary.stopReasons.push(res.stopReason);
    }
    if (opts["set-mode"]) await agent.request(methods.agent.session.setMode, { sessionId, modeId: opts["set-mode"] });
    if (opts.load) await agent.request(methods.agent.session.load, { sessionId, cwd, additionalDirectories, mcpServers });
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
