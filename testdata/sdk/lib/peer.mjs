// Shared plumbing for the SDK test clients: argv parsing, spawning the agent
// command with byte-transparent taps on its stdio, SDK diagnostics capture,
// timeouts and the JSON summary.

import { spawn } from "node:child_process";
import fs from "node:fs";
import { Readable, Transform, Writable } from "node:stream";

// parseClientArgs splits `[flags] -- AGENT ARGV...` and parses the flags
// against spec: {name: {type: "bool"|"string"|"list"|"int", default}}.
export function parseClientArgs(argv, spec, usage) {
  const dd = argv.indexOf("--");
  const flagArgs = dd === -1 ? argv : argv.slice(0, dd);
  const agentArgv = dd === -1 ? [] : argv.slice(dd + 1);
  const opts = {};
  for (const [name, s] of Object.entries(spec)) opts[name] = s.type === "list" ? [...(s.default ?? [])] : s.default;
  const listSeen = new Set();
  for (let i = 0; i < flagArgs.length; i++) {
    let a = flagArgs[i];
    if (a === "-h" || a === "--help") {
      process.stderr.write(usage);
      process.exit(0);
    }
    if (!a.startsWith("--")) fail(`unexpected argument ${JSON.stringify(a)} (put the agent command after --)`);
    let value;
    const eq = a.indexOf("=");
    if (eq !== -1) {
      value = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    let name = a.slice(2);
    let negated = false;
    if (!(name in spec) && name.startsWith("no-") && spec[name.slice(3)]?.type === "bool") {
      name = name.slice(3);
      negated = true;
    }
    const s = spec[name];
    if (!s) fail(`unknown flag ${a}`);
    if (s.type === "bool") {
      opts[name] = !negated;
      continue;
    }
    if (value === undefined) {
      if (i + 1 >= flagArgs.length) fail(`flag ${a} needs a value`);
      value = flagArgs[++i];
    }
    if (s.type === "list") {
      if (!listSeen.has(name)) {
        opts[name] = [];
        listSeen.add(name);
      }
      opts[name].push(value);
    } else if (s.type === "int") {
      opts[name] = Number.parseInt(value, 10);
      if (!Number.isFinite(opts[name])) fail(`flag ${a} needs an integer`);
    } else opts[name] = value;
  }
  if (agentArgv.length === 0) fail("missing agent command: use -- AGENT [ARGS...]");
  return { opts, agentArgv };

  function fail(msg) {
    process.stderr.write(`${msg}\n${usage}`);
    process.exit(2);
  }
}

// captureSdkDiagnostics records what the SDK reports through console.error
// (it logs and drops notifications whose params fail schema validation,
// malformed messages and responses to unknown requests).
export function captureSdkDiagnostics(sink) {
  const orig = console.error.bind(console);
  console.error = (...args) => {
    const first = typeof args[0] === "string" ? args[0] : "";
    if (/^(Error handling notification|Invalid message|Got response to unknown request)/.test(first)) {
      const entry = { kind: first };
      for (const a of args.slice(1)) {
        if (a && typeof a === "object" && "method" in a) entry.method = a.method;
        if (a && typeof a === "object" && "params" in a && a.params && typeof a.params === "object" && a.params.update) entry.sessionUpdate = a.params.update.sessionUpdate;
        if (a && typeof a === "object" && "code" in a && "message" in a) entry.error = { code: a.code, message: a.message, data: truncate(JSON.stringify(a.data)) };
        if (a && typeof a === "object" && "message" in a && !("code" in a) && !("method" in a)) entry.message = a.message;
        if (typeof a === "number" || typeof a === "string") entry.id = a;
      }
      sink.push(entry);
    }
    orig(...args);
  };
}

function truncate(s, n = 600) {
  if (typeof s !== "string") return s;
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

// lineTap is a pass-through Transform that also splits the bytes into lines
// and calls onLine(line) for each complete one. The bytes are not changed.
function lineTap(onLine) {
  let pending = "";
  return new Transform({
    transform(chunk, _enc, cb) {
      pending += chunk.toString("utf8");
      let i;
      while ((i = pending.indexOf("\n")) !== -1) {
        const line = pending.slice(0, i).replace(/\r$/, "");
        pending = pending.slice(i + 1);
        if (line.trim() !== "") onLine(line);
      }
      cb(null, chunk);
    },
    flush(cb) {
      if (pending.trim() !== "") onLine(pending);
      cb();
    },
  });
}

// spawnAgent starts argv with piped stdin/stdout (stderr inherited) and returns
// web streams for ndJsonStream plus wire statistics and an exit promise.
export function spawnAgent(argv, { trace } = {}) {
  const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const stats = { framesSent: 0, framesReceived: 0, batchesSent: 0, batchesReceived: 0, unparsableReceived: 0 };
  const traceFd = trace ? fs.openSync(trace, "w") : null;
  const record = (dir, line) => {
    let parsed;
    try {
      parsed = JSON.parse(line);
    } catch {
      if (dir === "recv") stats.unparsableReceived++;
    }
    if (dir === "recv") {
      stats.framesReceived++;
      if (Array.isArray(parsed)) stats.batchesReceived++;
    } else {
      stats.framesSent++;
      if (Array.isArray(parsed)) stats.batchesSent++;
    }
    if (traceFd !== null) fs.writeSync(traceFd, JSON.stringify({ dir, line }) + "\n");
  };
  const exited = new Promise((resolve) => {
    child.on("error", (err) => resolve({ code: null, signal: null, error: String(err.message ?? err) }));
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  const inTap = lineTap((l) => record("recv", l));
  child.stdout.pipe(inTap);
  const outTap = lineTap((l) => record("send", l));
  outTap.pipe(child.stdin);
  child.stdin.on("error", () => {}); // EPIPE when the agent exits first
  return {
    child,
    stats,
    exited,
    input: Readable.toWeb(inTap),
    output: Writable.toWeb(outTap),
    closeTrace: () => traceFd !== null && fs.closeSync(traceFd),
    endStdin: () => outTap.end(),
  };
}

// waitExit waits for the child, escalating to SIGTERM then SIGKILL.
export async function waitExit(peer, graceMs = 5000) {
  const timeout = (ms) => new Promise((r) => setTimeout(() => r(null), ms).unref());
  let res = await Promise.race([peer.exited, timeout(graceMs)]);
  if (res) return res;
  peer.child.kill("SIGTERM");
  res = await Promise.race([peer.exited, timeout(2000)]);
  if (res) return { ...res, killed: "SIGTERM" };
  peer.child.kill("SIGKILL");
  return { ...(await peer.exited), killed: "SIGKILL" };
}

export function writeSummary(file, summary) {
  const json = JSON.stringify(summary, null, 2) + "\n";
  if (file) fs.writeFileSync(file, json);
  else process.stderr.write(json);
}

export function countInto(map, key) {
  map[key] = (map[key] ?? 0) + 1;
}

export function errorInfo(e) {
  if (e && typeof e === "object" && "code" in e) return { code: e.code, message: e.message, data: e.data };
  return { message: String(e && e.message ? e.message : e) };
}

// Waiter resolves the next time predicate(value) holds for a pushed value.
export class Waiters {
  constructor() {
    this.list = [];
  }
  wait(pred) {
    return new Promise((resolve) => this.list.push({ pred, resolve }));
  }
  push(v) {
    this.list = this.list.filter((w) => {
      if (w.pred(v)) {
        w.resolve(v);
        return false;
      }
      return true;
    });
  }
}
