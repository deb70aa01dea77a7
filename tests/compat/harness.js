'use strict';
// Test harness for the ali-ons compatibility tests.
//
// Starts a real Comet cluster (one or more mqnamesrv + one mqbroker master) on 127.0.0.1 with free ports and
// generated configs in a temp dir, hands out ali-ons clients wired to it, and tears everything down.
// Every wait is bounded in time; server processes are always killed (end of suite, test failure,
// process exit, SIGINT/SIGTERM); a guard shell also kills them when the test process dies (even by
// SIGKILL) and bounds their lifetime to COMPAT_SERVER_MAX_SECONDS.
//
// Environment:
//   COMET_BUILD_DIR            build dir holding apps/mqnamesrv/mqnamesrv, apps/mqbroker/mqbroker
//                              (default build/release, relative to the repository root)
//   COMPAT_KEEP_TMP=1          keep the temp dir (configs, stores, logs) even when everything passed
//   COMPAT_VERBOSE=1           also record ali-ons info/debug log lines
//   COMPAT_WIRE_LOG=<file>     append every ali-ons request/response to <file> (JSON lines)
//   COMPAT_SERVER_MAX_SECONDS  hard lifetime of each server process (default 600)
//   COMPAT_BROKER_EXTRA        extra broker config lines, ';'-separated key=value pairs
//   COMPAT_GROUP               broker topology: '' (default: one ASYNC_MASTER), '1m2s' (a SYNC_MASTER
//                              with inSyncReplicas=2 + two slaves of the same brokerName), or
//                              '1m2s-stopped' (the same, with slave 2 SIGSTOPped once the group
//                              replicates, and SIGCONTed at the end), 'dledger' (a 3-peer DLedger
//                              group whose preferred leader is the tests' broker), or 'controller'
//                              (3 mqcontroller processes + 3 controller-mode brokers of one brokerName;
//                              the tests' broker is whichever one the controllers elect), or
//                              'container' (the tests' broker is one of two brokers inside one
//                              mqbrokercontainer process; the other is the slave of a second group
//                              whose master is a separate mqbroker). Tests talk to the master as before.

const assert = require('node:assert/strict');
const childProcess = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { test, before, after } = require('node:test');

const { Producer, Consumer, Message } = require('ali-ons');
const MQProducer = require('ali-ons/lib/producer/mq_producer');
const MQClientAPI = require('ali-ons/lib/mq_client_api');
const Channel = require('ali-ons/lib/channel');
const RemotingClient = require('ali-ons/lib/remoting_client');
const ResponseCode = require('ali-ons/lib/protocol/response_code');
const RemotingCommand = require('ali-ons/lib/protocol/command/remoting_command');
const MessageDecoder = require('ali-ons/lib/message/message_decoder');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const LOCALHOST = '127.0.0.1';

// ---------------------------------------------------------------------------------------------
// Small utilities

function sleep(ms) {
  return new Promise(resolve => setTimeout(resolve, ms));
}

/**
 * Polls `probe` until it returns a truthy value (which is returned) or `timeoutMs` passes.
 * `probe` may be async and may throw; the last error is reported on timeout. An error with
 * `fatal: true` (e.g. a server process died) ends the wait at once.
 */
async function waitFor(what, probe, { timeoutMs = 10000, intervalMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastError = null;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
      lastError = null;
    } catch (err) {
      if (err.fatal) throw err;
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const detail = lastError ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await sleep(intervalMs);
  }
}

/** Resolves with `promise`'s value, or rejects if it does not settle within `ms`. */
function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([ promise, timeout ]).finally(() => clearTimeout(timer));
}

function canBind(port) {
  return new Promise(resolve => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: LOCALHOST, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

// Ports handed out come from [PORT_FIRST, PORT_LAST], below Linux's ephemeral range (32768 and
// up by default): a port the kernel picks for an outgoing connection can never be one a server
// of the test is about to bind. (Port 0 did hand out such ports: a container once found its
// listenPort already taken by the local end of a broker's connection to the name server.)
// The C++ process tests use 20000-32767 (tests/it/harness.cc); the compat tests run alone
// (RUN_SERIAL) and keep to 12000-19999 anyway. A port is never handed out twice by one process.
const PORT_FIRST = 12000;
const PORT_LAST = 19999;
const handedOut = new Set();
let nextPort = PORT_FIRST + (process.pid * 7919) % (PORT_LAST - PORT_FIRST);

/**
 * A free port P such that P+d is free too for every d in `neighbours` (RocketMQ brokers also bind
 * listenPort-2 (fast/VIP channel) and listenPort+1 (HA)).
 */
async function freePort(neighbours = []) {
  const span = PORT_LAST - PORT_FIRST + 1;
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = PORT_FIRST + ((nextPort++ - PORT_FIRST) % span + span) % span;
    const block = [ port, ...neighbours.map(d => port + d) ];
    if (block.some(p => p < PORT_FIRST || p > PORT_LAST || handedOut.has(p))) continue;
    let ok = true;
    for (const p of block) {
      if (!(await canBind(p))) {
        ok = false;
        break;
      }
    }
    if (ok) {
      for (const p of block) handedOut.add(p);
      return port;
    }
  }
  throw new Error(`could not find a free 127.0.0.1 port block in ${PORT_FIRST}-${PORT_LAST}`);
}

function canConnect(port) {
  return new Promise(resolve => {
    const socket = net.connect({ port, host: LOCALHOST });
    const done = ok => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function tailOfFile(file, maxLines) {
  try {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const start = Math.max(0, lines.length - maxLines);
    return (start > 0 ? `... (${start} earlier lines)\n` : '') + lines.slice(start).join('\n');
  } catch (err) {
    return `<cannot read ${file}: ${err.message}>`;
  }
}

function listFilesRecursive(dir) {
  const out = [];
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (_) {
    return out;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFilesRecursive(full));
    else out.push(full);
  }
  return out;
}

function writeProperties(file, props) {
  const text = Object.entries(props).map(([ k, v ]) => `${k}=${v}`).join('\n') + '\n';
  fs.writeFileSync(file, text);
}

// ---------------------------------------------------------------------------------------------
// Binaries

function buildDir() {
  const dir = process.env.COMET_BUILD_DIR || 'build/release';
  return path.isAbsolute(dir) ? dir : path.join(REPO_ROOT, dir);
}

function findBinary(name) {
  const dir = buildDir();
  const candidates = [
    path.join(dir, 'apps', name, name),
    path.join(dir, 'bin', name),
    path.join(dir, name),
  ];
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch (_) {
      // try the next one
    }
  }
  throw new Error(`${name} not found (looked at ${candidates.join(', ')}); build it first, e.g. ` +
    `cmake --build ${dir} --target mqnamesrv mqbroker, or set COMET_BUILD_DIR`);
}

/** COMPAT_GROUP → null (single broker) or { slaves, stopSlave }. Unknown values are an error. */
function groupMode() {
  const mode = process.env.COMPAT_GROUP || '';
  const modes = {
    '': null,
    '1m2s': { name: '1m2s', slaves: 2, stopSlave: false },
    '1m2s-stopped': { name: '1m2s-stopped', slaves: 2, stopSlave: true },
    // A 3-peer DLedger group (n0 = this.broker with preferredLeaderId=n0, n1, n2 = this.slaves).
    'dledger': { name: 'dledger', slaves: 2, stopSlave: false, dledger: true },
    // RocketMQ 5 controller mode: 3 controllers (a Raft group) elect the master among 3 replicas
    // (this.replicas); this.broker is the elected one, the others are its slaves.
    'controller': { name: 'controller', slaves: 2, stopSlave: false, controller: true },
    // RocketMQ 5 BrokerContainer, cross deployment: one mqbrokercontainer hosts this.broker's
    // group master (group A) and the slave of group B; B's master is a separate mqbroker.
    'container': { name: 'container', slaves: 0, stopSlave: false, container: true },
  };
  if (!(mode in modes)) {
    throw new Error(`COMPAT_GROUP=${mode}: expected one of ${Object.keys(modes).map(m => `'${m}'`).join(', ')}`);
  }
  return modes[mode];
}

/**
 * The pid of the server a ServerProcess' guard shell started: the child of the guard whose
 * executable is `binary` (read from /proc; Linux only). null if not found.
 */
function serverPidOf(server, binary) {
  const want = fs.realpathSync(binary);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== server.pid) continue;
      if (fs.realpathSync(`/proc/${entry}/exe`) === want) return Number(entry);
    } catch (_) {
      // the process went away meanwhile
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Server processes

const liveServers = new Set();

function killAllServersSync() {
  for (const server of liveServers) server.killGroup('SIGKILL');
}

process.on('exit', killAllServersSync);
for (const signal of [ 'SIGINT', 'SIGTERM', 'SIGHUP' ]) {
  process.once(signal, () => {
    killAllServersSync();
    process.exit(128 + os.constants.signals[signal]);
  });
}

// The guard shell runs the server in the background in its own process group and
//  - SIGKILLs the whole group (guard, watchers, server) when its stdin — a pipe from this Node process
//    — reaches EOF, i.e. when the test process dies for any reason, even SIGKILL;
//  - SIGKILLs the group after $1 seconds (hard lifetime);
//  - ignores SIGTERM/SIGINT/SIGHUP itself ("trap :"): a signal sent to the group reaches the server
//    exactly once, and the guard keeps waiting, so the guard's exit status is the server's.
const GUARD_SCRIPT = `
max=$1; shift
exec 3<&0
"$@" </dev/null 3<&- &
child=$!
trap ':' TERM INT HUP
( while read -r _; do :; done; kill -KILL 0 ) <&3 &
exec 3<&-
( sleep "$max"; echo "[guard] lifetime of $max s exceeded: killing" >&2; kill -KILL 0 ) </dev/null &
while :; do
  wait "$child"; rc=$?
  kill -0 "$child" 2>/dev/null || break
done
kill -TERM 0 2>/dev/null
exit "$rc"
`;

/**
 * One server process (mqnamesrv or mqbroker). stdout+stderr go to `logFile`. It runs in its own
 * process group (guard shell + server), so signals go to the whole group.
 */
class ServerProcess {
  constructor(name, binary, args, { cwd, logFile, env }) {
    this.name = name;
    this.logFile = logFile;
    this.exit = null; // { code, signal } once exited
    const maxSeconds = Number(process.env.COMPAT_SERVER_MAX_SECONDS || 600);
    const fd = fs.openSync(logFile, 'a');
    fs.writeSync(fd, `[harness] ${new Date().toISOString()} starting: ${binary} ${args.join(' ')}\n`);
    this.child = childProcess.spawn('/bin/sh', [ '-c', GUARD_SCRIPT, 'comet-compat-guard',
      String(maxSeconds), binary, ...args ], {
      cwd,
      env,
      detached: true,
      stdio: [ 'pipe', fd, fd ],
    });
    fs.closeSync(fd);
    this.child.stdin.on('error', () => {}); // EPIPE if the guard is already gone
    this.pid = this.child.pid;
    liveServers.add(this);
    this.exited = new Promise(resolve => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        liveServers.delete(this);
        resolve(this.exit);
      });
      this.child.once('error', err => {
        this.exit = { code: null, signal: null, error: err };
        liveServers.delete(this);
        resolve(this.exit);
      });
    });
  }

  get alive() {
    return this.exit === null;
  }

  killGroup(signal) {
    if (!this.alive || !this.pid) return;
    try {
      process.kill(-this.pid, signal);
    } catch (_) {
      // already gone
    }
  }

  /** SIGTERM, wait up to `graceMs`, then SIGKILL; resolves with the exit status. */
  async stop(graceMs = 5000) {
    if (!this.alive) return this.exit;
    this.killGroup('SIGTERM');
    let timer;
    const graceful = await Promise.race([
      this.exited.then(() => true),
      new Promise(resolve => { timer = setTimeout(() => resolve(false), graceMs); }),
    ]);
    clearTimeout(timer);
    if (!graceful) {
      this.killGroup('SIGKILL');
      await withTimeout(this.exited, 5000, `${this.name} to die after SIGKILL`);
      this.exit.forced = true;
    }
    return this.exit;
  }

  describeExit() {
    if (!this.exit) return 'running';
    if (this.exit.error) return `failed to spawn: ${this.exit.error.message}`;
    if (this.exit.signal) return `killed by ${this.exit.signal}`;
    const code = this.exit.code;
    if (code > 128) return `exit code ${code} (killed by signal ${code - 128}?)`;
    return `exit code ${code}`;
  }
}

// ---------------------------------------------------------------------------------------------
// ali-ons plumbing

// ali-ons asserts an `httpclient` even when `nameSrv` is given; it is only used to fetch the name
// server list from `onsAddr` (an Aliyun URL by default). This stub makes sure nothing ever leaves
// the machine.
const offlineHttpClient = {
  async request(url) {
    throw new Error(`compat harness: HTTP is disabled (ali-ons tried to fetch ${url})`);
  },
};

/** A logger for ali-ons that keeps the last lines in memory instead of printing them. */
class CapturingLogger {
  constructor(limit = 400) {
    this.limit = limit;
    this.lines = [];
    this.verbose = process.env.COMPAT_VERBOSE === '1';
    this.info = (...args) => { if (this.verbose) this._push('INFO', args); };
    this.debug = (...args) => { if (this.verbose) this._push('DEBUG', args); };
    this.warn = (...args) => this._push('WARN', args);
    this.error = (...args) => this._push('ERROR', args);
  }

  _push(level, args) {
    const text = require('node:util').format(...args);
    this.lines.push(`${new Date().toISOString()} ${level} ${text}`);
    if (this.lines.length > this.limit) this.lines.splice(0, this.lines.length - this.limit);
  }
}

// ---------------------------------------------------------------------------------------------
// Wire log: every request ali-ons sends through a Channel and what came back (header fields, body
// size and a short body preview), so a failure report can say exactly what was sent and answered.
// COMPAT_WIRE_LOG=<file> also appends every exchange to <file> as JSON lines.

const wireLog = [];
const WIRE_LOG_LIMIT = 2000;
const wireLogFile = process.env.COMPAT_WIRE_LOG || null;

function preview(body) {
  if (!body || !body.length) return undefined;
  const text = body.subarray(0, 300).toString('latin1').replace(/[^\x20-\x7e]/g, '.');
  return body.length > 300 ? `${text}…` : text;
}

function recordExchange(entry) {
  wireLog.push(entry);
  if (wireLog.length > WIRE_LOG_LIMIT) wireLog.splice(0, wireLog.length - WIRE_LOG_LIMIT);
  if (wireLogFile) fs.appendFileSync(wireLogFile, JSON.stringify(entry) + '\n');
}

function describeExchange(e) {
  const req = `${e.at} ${e.addr} → code ${e.code} opaque ${e.opaque}${e.oneway ? ' (oneway)' : ''} ` +
    `ext ${JSON.stringify(e.ext)}${e.bodyLength ? ` body ${e.bodyLength} B` : ''}`;
  if (e.error) return `${req}\n    ✗ ${e.error}`;
  if (!e.response) return req;
  const r = e.response;
  return `${req}\n    ← code ${r.code}${r.remark ? ` remark ${JSON.stringify(r.remark)}` : ''} ` +
    `ext ${JSON.stringify(r.ext)}${r.bodyLength ? ` body ${r.bodyLength} B: ${r.bodyPreview}` : ''}`;
}

const originalInvoke = Channel.prototype.invoke;
Channel.prototype.invoke = async function(command, timeout) {
  const entry = { at: new Date().toISOString(), addr: this.address, code: command.code, opaque: command.opaque };
  try {
    const response = await originalInvoke.call(this, command, timeout);
    entry.response = {
      code: response.code,
      remark: response.remark,
      ext: response.extFields,
      bodyLength: response.body ? response.body.length : 0,
      bodyPreview: preview(response.body),
    };
    return response;
  } catch (err) {
    entry.error = `${err.name}: ${err.message}`;
    throw err;
  } finally {
    entry.ext = command.extFields;
    entry.bodyLength = command.body ? command.body.length : 0;
    recordExchange(entry);
  }
};
const originalInvokeOneway = Channel.prototype.invokeOneway;
Channel.prototype.invokeOneway = async function(command) {
  const entry = { at: new Date().toISOString(), addr: this.address, code: command.code, opaque: command.opaque,
    oneway: true };
  try {
    return await originalInvokeOneway.call(this, command);
  } catch (err) {
    entry.error = `${err.name}: ${err.message}`;
    throw err;
  } finally {
    entry.ext = command.extFields;
    recordExchange(entry);
  }
};

// ali-ons removes every listener when a client closes, but a request that was in flight at that
// moment can still open a channel whose later error (e.g. ECONNREFUSED once the servers are stopped)
// is emitted on the closed client: with no 'error' listener left that becomes an uncaught exception.
// Such late errors of closed clients are recorded here instead.
const lateClientErrors = [];
const originalClientError = RemotingClient.prototype.error;
RemotingClient.prototype.error = function(err) {
  if (this.listenerCount('error') === 0) {
    lateClientErrors.push(`${new Date().toISOString()} ${err.name}: ${err.message}`);
    return;
  }
  originalClientError.call(this, err);
};

// ---------------------------------------------------------------------------------------------
// Cluster

let clusterSeq = 0;

class Cluster {
  /**
   * Starts mqnamesrv + mqbroker and waits until the broker is registered (TBW102 routable).
   * Retries with fresh ports if a server dies during start-up (e.g. a port was taken meanwhile).
   */
  static async start({ name = 'compat', attempts = 3, namesrvCount = 1 } = {}) {
    let lastError;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const cluster = new Cluster(name, { namesrvCount });
      try {
        await cluster._start();
        return cluster;
      } catch (err) {
        lastError = err;
        const diedEarly = cluster.servers.some(s => !s.alive);
        cluster.dumpDiagnostics(`cluster start attempt ${attempt} failed: ${err.message}`);
        await cluster.stop({ keep: true }).catch(() => {});
        if (!diedEarly) break; // a hang/protocol problem will not be fixed by new ports
      }
    }
    throw lastError;
  }

  constructor(name, { namesrvCount = 1 } = {}) {
    this.name = name;
    this.namesrvCount = namesrvCount;
    this.id = ++clusterSeq;
    this.tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), `comet-compat-${name}-`));
    this.logger = new CapturingLogger();
    this.clientErrors = [];
    this.clients = [];
    this.namesrvs = [];
    this.namesrvPorts = [];
    this.broker = null;
    this.slaves = []; // { server, port, id, stopped } in COMPAT_GROUP modes
    this.controllers = []; // { server, port } in 'controller' mode
    this.replicas = []; // 'controller' mode: { index, name, port, addr, server, spawn }, all three brokers
    // 'container' mode: group B, { name, masterPort, masterAddr, master (mqbroker process),
    // slavePort, slaveAddr (inside the container) }, and the container's admin port.
    this.peerGroup = null;
    this.containerPort = null;
    this.containerBrokerConf = null; // 'container' mode: the tests' broker file inside the container
    this.group = groupMode();
    this.admin = null;
    this.brokerName = `compat-${name}-a`;
    this.clusterName = 'CompatCluster';
  }

  /** Name server addresses, for ali-ons' `nameSrv` option. */
  get namesrvAddrs() {
    return this.namesrvPorts.map(port => `${LOCALHOST}:${port}`);
  }

  /** The broker's `namesrvAddr` value: every name server, ';'-separated. */
  get namesrvAddr() {
    return this.namesrvAddrs.join(';');
  }

  get namesrv() {
    return this.namesrvs[0] || null;
  }

  /** Every server process started so far. */
  get servers() {
    // In 'controller' mode this.broker is also one of the replicas: list each process once.
    return [ ...new Set([ ...this.namesrvs, ...this.controllers.map(c => c.server), this.broker,
      ...this.slaves.map(s => s.server), ...this.replicas.map(r => r.server),
      this.peerGroup && this.peerGroup.master ]) ].filter(Boolean);
  }

  get brokerAddr() {
    return `${LOCALHOST}:${this.brokerPort}`;
  }

  async _start() {
    const namesrvBin = findBinary('mqnamesrv');
    const brokerBin = findBinary('mqbroker');
    for (let i = 0; i < this.namesrvCount; i++) this.namesrvPorts.push(await freePort());
    const controllerMode = Boolean(this.group && this.group.controller);
    const containerMode = Boolean(this.group && this.group.container);
    // Controller mode: the tests' broker port is the elected master's, known once elected.
    this.brokerPort = controllerMode ? null : await freePort([ -2, -1, 1 ]);

    const env = Object.assign({}, process.env, { HOME: this.tmpDir });
    const brokerDir = path.join(this.tmpDir, 'broker');
    const storeDir = path.join(brokerDir, 'store');
    fs.mkdirSync(storeDir, { recursive: true });
    const brokerProps = {
      brokerClusterName: this.clusterName,
      brokerName: this.brokerName,
      brokerId: 0,
      brokerIP1: LOCALHOST,
      listenPort: this.brokerPort,
      listenHost: LOCALHOST,
      namesrvAddr: this.namesrvAddr,
      storePathRootDir: storeDir,
      storePathCommitLog: path.join(storeDir, 'commitlog'),
      mappedFileSizeCommitLog: 64 * 1024 * 1024,
      autoCreateTopicEnable: true,
      autoCreateSubscriptionGroup: true,
      defaultTopicQueueNums: 8,
      brokerRole: 'ASYNC_MASTER',
      flushDiskType: 'ASYNC_FLUSH',
      logDir: path.join(brokerDir, 'logs'),
    };
    const dledgerPorts = [];
    if (this.group && this.group.dledger) {
      for (let i = 0; i <= this.group.slaves; i++) dledgerPorts.push(await freePort());
      Object.assign(brokerProps, {
        enableDLegerCommitLog: true,
        dLegerGroup: `${this.brokerName}-raft`,
        dLegerPeers: dledgerPorts.map((p, i) => `n${i}-${LOCALHOST}:${p}`).join(';'),
        dLegerSelfId: 'n0',
        preferredLeaderId: 'n0',
        slaveSynchronizePeriod: 1000,
      });
    } else if (controllerMode) {
      // RocketMQ 5 controller mode (docs/controller.md), with short timers so that a killed master
      // is replaced within a few seconds: heartbeats to the controllers every 200 ms, dead after
      // 2 s (the controllers then wait out the master lease, 1 s + 0.2 s here, before electing).
      // allAckInSyncStateSet: SEND_OK only once every SyncStateSet member holds the message, so
      // the elected replacement holds everything acknowledged.
      const controllerPorts = [];
      for (let i = 0; i < 3; i++) controllerPorts.push(await freePort());
      this.controllers = controllerPorts.map(port => ({ port, server: null }));
      Object.assign(brokerProps, {
        brokerId: -1,
        brokerRole: 'SLAVE',
        enableControllerMode: true,
        controllerAddr: controllerPorts.map(p => `${LOCALHOST}:${p}`).join(';'),
        allAckInSyncStateSet: true,
        brokerHeartbeatInterval: 200,
        controllerHeartBeatTimeoutMills: 2000,
        syncBrokerMetadataPeriod: 1000,
        checkSyncStateSetPeriod: 500,
        haMaxTimeSlaveNotCatchup: 3000,
        haSendHeartbeatInterval: 200,
        // Slaves copy the master's topics, consumer offsets and groups every second (default 10 s),
        // so a new master knows the topics the tests created on the old one.
        slaveSynchronizePeriod: 1000,
      });
    } else if (containerMode) {
      // The tests' broker is an ordinary ASYNC_MASTER; only where it runs changes.
    } else if (this.group) {
      // Quorum writes: master + one of the two slaves must hold every message before the answer.
      // Short HA timers so a hung slave is noticed within seconds (defaults: 5 s / 20 s).
      Object.assign(brokerProps, {
        brokerRole: 'SYNC_MASTER',
        totalReplicas: 3,
        inSyncReplicas: 2,
        haSendHeartbeatInterval: 1000,
        haHousekeepingInterval: 3000,
        slaveSynchronizePeriod: 1000,
      });
      // A hung broker must leave the routes (see _waitForGroup): brokers register every 10 s (the
      // smallest period RocketMQ and Comet allow), the name server expires a broker after 15 s.
      if (this.group.stopSlave) brokerProps.registerNameServerPeriod = 10000;
    }
    for (const pair of (process.env.COMPAT_BROKER_EXTRA || '').split(';')) {
      const eq = pair.indexOf('=');
      if (eq > 0) brokerProps[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
    }
    const brokerConf = path.join(brokerDir, 'broker.conf');
    if (!controllerMode && !containerMode) writeProperties(brokerConf, brokerProps);
    const slaveSpawns = [];
    for (let id = 1; this.group && !controllerMode && id <= this.group.slaves; id++) {
      const port = await freePort([ -2, -1, 1 ]);
      const dir = path.join(this.tmpDir, `slave-${id}`);
      const store = path.join(dir, 'store');
      fs.mkdirSync(store, { recursive: true });
      const conf = path.join(dir, 'broker.conf');
      writeProperties(conf, Object.assign({}, brokerProps, this.group.dledger ? {
        dLegerSelfId: `n${id}`,
      } : {
        brokerId: id,
        brokerRole: 'SLAVE',
      }, {
        listenPort: port,
        storePathRootDir: store,
        storePathCommitLog: path.join(store, 'commitlog'),
        logDir: path.join(dir, 'logs'),
      }));
      slaveSpawns.push({ id, port, spawn: () => new ServerProcess(`mqbroker-slave-${id}`, brokerBin,
        [ '-c', conf ], { cwd: dir, env, logFile: path.join(this.tmpDir, `mqbroker-slave-${id}.out`) }) });
    }

    for (const [ i, port ] of this.namesrvPorts.entries()) {
      const suffix = this.namesrvCount > 1 ? `-${i + 1}` : '';
      const namesrvDir = path.join(this.tmpDir, `namesrv${suffix}`);
      fs.mkdirSync(namesrvDir, { recursive: true });
      const namesrvConf = path.join(namesrvDir, 'namesrv.conf');
      writeProperties(namesrvConf, Object.assign({
        listenPort: port,
        listenHost: LOCALHOST,
        kvConfigPath: path.join(namesrvDir, 'kvConfig.json'),
        logDir: path.join(namesrvDir, 'logs'),
      }, this.group && this.group.stopSlave ? {
        brokerChannelExpiredTime: 15000,
        scanNotActiveBrokerInterval: 1000,
      } : {}));
      const server = new ServerProcess(`mqnamesrv${suffix}`, namesrvBin, [ '-c', namesrvConf ], {
        cwd: namesrvDir, env, logFile: path.join(this.tmpDir, `mqnamesrv${suffix}.out`),
      });
      this.namesrvs.push(server);
      await this._waitForPort(server, port);
    }

    this.admin = new MQClientAPI(this.clientOptions({ instanceName: `compat-admin-${this.id}` }));
    this.admin.on('error', err => this._recordClientError('admin', err));
    await withTimeout(this.admin.ready(), 10000, 'ali-ons admin client ready');

    if (controllerMode) {
      await this._startControllerMode(brokerProps, env);
    } else if (containerMode) {
      await this._startContainerMode(brokerProps, env);
    } else {
      this._brokerSpawn = () => new ServerProcess('mqbroker', brokerBin, [ '-c', brokerConf ], {
        cwd: brokerDir, env, logFile: path.join(this.tmpDir, 'mqbroker.out'),
      });
      this.broker = this._brokerSpawn();
      await this._waitForPort(this.broker, this.brokerPort);
    }
    for (const { id, port, spawn } of slaveSpawns) {
      const slave = { id, port, server: spawn(), stopped: false };
      this.slaves.push(slave);
      await this._waitForPort(slave.server, port);
    }

    // The broker registers with the name server at start; TBW102 exists when autoCreateTopicEnable.
    await waitFor('the broker to register with the name server (route of TBW102)',
      async () => {
        this.assertServersAlive();
        const route = await this.routeOf('TBW102');
        return route && route.brokerDatas.some(b => b.brokerName === this.brokerName);
      }, { timeoutMs: 15000, intervalMs: 200 });

    if (this.group) await this._waitForGroup();

    // ali-ons' process-wide internal producer (CLIENT_INNER_PRODUCER, used for retry fall-backs) is
    // created by the first client with that client's options; create it here with ours so it never
    // shares an MQClient with a test client, and so that it can be closed at the end.
    if (!MQProducer.defaultProducer) {
      await withTimeout(MQProducer.getDefaultProducer(
        this.clientOptions({ instanceName: `compat-inner-${this.id}` })), 15000, 'internal producer ready');
      MQProducer.defaultProducer.on('error', err => this._recordClientError('inner-producer', err));
    }
  }

  /**
   * 'controller' mode: starts the 3 controllers (one Raft group; each port carries the Raft
   * messages and the controller RPCs) and the 3 brokers of this.brokerName, which have no fixed
   * role: the controllers grant their ids and elect the master. Returns once every process
   * listens; _waitForGroup then waits for the master.
   */
  async _startControllerMode(brokerProps, env) {
    const controllerBin = findBinary('mqcontroller');
    const brokerBin = findBinary('mqbroker');
    const peers = this.controllers.map((c, i) => `n${i}-${LOCALHOST}:${c.port}`).join(';');
    for (const [ i, c ] of this.controllers.entries()) {
      const dir = path.join(this.tmpDir, `controller-n${i}`);
      fs.mkdirSync(dir, { recursive: true });
      const conf = path.join(dir, 'controller.conf');
      writeProperties(conf, {
        controllerDLegerGroup: `${this.brokerName}-controllers`,
        controllerDLegerPeers: peers,
        controllerDLegerSelfId: `n${i}`,
        controllerStorePath: path.join(dir, 'store'),
        logDir: path.join(dir, 'logs'),
        // Look for dead brokers and inactive masters every 200 ms (default 5 s), and replace a
        // master once 1 s + 0.2 s passed since its last heartbeat (lease; default 10 s + 1 s).
        scanNotActiveBrokerInterval: 200,
        scanInactiveMasterInterval: 200,
        masterLeaseMills: 1000,
        masterLeaseDriftMills: 200,
      });
      c.server = new ServerProcess(`mqcontroller-n${i}`, controllerBin, [ '-c', conf ], {
        cwd: dir, env, logFile: path.join(this.tmpDir, `mqcontroller-n${i}.out`),
      });
    }
    for (const c of this.controllers) await this._waitForPort(c.server, c.port);
    // Brokers that find no controller leader retry their registration only a second later.
    await waitFor('the controllers to elect a leader (CONTROLLER_GET_METADATA_INFO isLeader)', async () => {
      this.assertServersAlive();
      for (const c of this.controllers) {
        const request = RemotingCommand.createRequestCommand(1005, null);
        const response = await this.admin.invoke(`${LOCALHOST}:${c.port}`, request, 1000).catch(() => null);
        if (response && response.code === 0 && String(response.extFields.isLeader) === 'true') return true;
      }
      return false;
    }, { timeoutMs: 15000, intervalMs: 50 });
    for (let i = 0; i < 3; i++) {
      const port = await freePort([ -2, -1, 1 ]);
      const name = `mqbroker-n${i}`;
      const dir = path.join(this.tmpDir, `broker-n${i}`);
      const store = path.join(dir, 'store');
      fs.mkdirSync(store, { recursive: true });
      const conf = path.join(dir, 'broker.conf');
      writeProperties(conf, Object.assign({}, brokerProps, {
        listenPort: port,
        storePathRootDir: store,
        storePathCommitLog: path.join(store, 'commitlog'),
        logDir: path.join(dir, 'logs'),
      }));
      const spawn = () => new ServerProcess(name, brokerBin, [ '-c', conf ], {
        cwd: dir, env, logFile: path.join(this.tmpDir, `${name}.out`),
      });
      this.replicas.push({ index: i, name, port, addr: `${LOCALHOST}:${port}`, server: spawn(), spawn });
    }
    for (const r of this.replicas) await this._waitForPort(r.server, r.port);
  }

  /**
   * 'container' mode (cross deployment, as RocketMQ 5's BrokerContainer is meant to be used):
   *   - mqbroker: master of group B (`compat-<name>-b`, no TBW102, so TBW102 routes only to A);
   *   - mqbrokercontainer: the tests' broker (master of group A, `brokerProps`) and the slave of
   *     group B, one broker file each, listed in the container's `brokerConfigPaths`; the
   *     container's `namesrvAddr` replaces the brokers' (their files carry none) and its
   *     `listenPort` is a free port (ADD_BROKER / REMOVE_BROKER / GET_BROKER_CONFIG).
   * this.broker is the container process: restartBroker() restarts the whole container (SIGTERM,
   * exit 0, same files and stores), which restarts the slave of B with it.
   */
  async _startContainerMode(brokerProps, env) {
    const brokerBin = findBinary('mqbroker');
    const containerBin = findBinary('mqbrokercontainer');
    const peerName = this.brokerName.replace(/-a$/, '-b');
    const masterPort = await freePort([ -2, -1, 1 ]);
    const slavePort = await freePort([ -2, -1, 1 ]);
    this.containerPort = await freePort();
    const storeProps = store => ({ storePathRootDir: store, storePathCommitLog: path.join(store, 'commitlog') });

    const masterDir = path.join(this.tmpDir, 'broker-b-master');
    const masterStore = path.join(masterDir, 'store');
    fs.mkdirSync(masterStore, { recursive: true });
    const masterConf = path.join(masterDir, 'broker.conf');
    writeProperties(masterConf, Object.assign({}, brokerProps, storeProps(masterStore), {
      brokerName: peerName,
      listenPort: masterPort,
      autoCreateTopicEnable: false,
      logDir: path.join(masterDir, 'logs'),
    }));

    // Inside the container: no logDir (one log per process, the container's) and no namesrvAddr
    // (the container's), as a container's broker files are normally written.
    const inner = props => {
      const out = Object.assign({}, props);
      delete out.logDir;
      delete out.namesrvAddr;
      return out;
    };
    const containerDir = path.join(this.tmpDir, 'container');
    const aConf = path.join(containerDir, 'broker-a-master.conf');
    const bConf = path.join(containerDir, 'broker-b-slave.conf');
    fs.mkdirSync(path.join(containerDir, 'store-a'), { recursive: true });
    fs.mkdirSync(path.join(containerDir, 'store-b-slave'), { recursive: true });
    writeProperties(aConf, inner(Object.assign({}, brokerProps, storeProps(path.join(containerDir, 'store-a')))));
    writeProperties(bConf, inner(Object.assign({}, brokerProps, storeProps(path.join(containerDir, 'store-b-slave')), {
      brokerName: peerName,
      brokerId: 1,
      brokerRole: 'SLAVE',
      listenPort: slavePort,
      autoCreateTopicEnable: false,
    })));
    this.containerBrokerConf = aConf;
    const containerConf = path.join(containerDir, 'container.conf');
    writeProperties(containerConf, {
      brokerConfigPaths: `${aConf}:${bConf}`,
      listenPort: this.containerPort,
      listenHost: LOCALHOST,
      namesrvAddr: this.namesrvAddr,
      logDir: path.join(containerDir, 'logs'),
    });

    this.peerGroup = {
      name: peerName,
      masterPort,
      masterAddr: `${LOCALHOST}:${masterPort}`,
      slavePort,
      slaveAddr: `${LOCALHOST}:${slavePort}`,
      master: new ServerProcess('mqbroker-b-master', brokerBin, [ '-c', masterConf ], {
        cwd: masterDir, env, logFile: path.join(this.tmpDir, 'mqbroker-b-master.out'),
      }),
      probeTopic: `CompatContainerProbe_${peerName}`.replace(/[^A-Za-z0-9_-]/g, '_'),
    };
    await this._waitForPort(this.peerGroup.master, masterPort);
    this._brokerSpawn = () => new ServerProcess('mqbrokercontainer', containerBin, [ '-c', containerConf ], {
      cwd: containerDir, env, logFile: path.join(this.tmpDir, 'mqbrokercontainer.out'),
    });
    this.broker = this._brokerSpawn();
    await this._waitForContainer();
  }

  /** 'container' mode: `host:port` of the container's own (admin) port. */
  get containerAddr() {
    return `${LOCALHOST}:${this.containerPort}`;
  }

  /**
   * Runs this build's mqadmin with `args` (bounded: 20 s); resolves with { code, output } (stdout
   * and stderr together), never rejects for a non-zero exit.
   */
  mqadmin(args) {
    const binary = findBinary('mqadmin');
    return new Promise(resolve => {
      childProcess.execFile(binary, args, { timeout: 20000, env: Object.assign({}, process.env, { HOME: this.tmpDir }) },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
          resolve({ code, output: `${stdout}${stderr}` });
        });
    });
  }

  /** 'container' mode: the tests' broker identity, `cluster:brokerName:0` (REMOVE_BROKER's key). */
  get brokerIdentity() {
    return `${this.clusterName}:${this.brokerName}:0`;
  }

  /** 'container' mode: the container listens on its own port and on both brokers' ports. */
  async _waitForContainer() {
    await this._waitForPort(this.broker, this.containerPort);
    await this._waitForPort(this.broker, this.brokerPort);
    await this._waitForPort(this.broker, this.peerGroup.slavePort);
  }

  /**
   * 'container' mode: the name server routes both brokers of group B (the slave inside the
   * container as brokerId 1), B's master streams to it, and a probe message sent to B's master
   * reaches the slave's ConsumeQueue: the container's second broker really replicates while the
   * tests use its first one.
   */
  async _waitForContainerGroup() {
    const peer = this.peerGroup;
    // The container's own port answers GET_BROKER_CONFIG (26) with its settings (key=value lines).
    const request = RemotingCommand.createRequestCommand(26, null);
    const response = await this.admin.invoke(`${LOCALHOST}:${this.containerPort}`, request, 3000);
    assert.equal(response.code, 0, `GET_BROKER_CONFIG on the container's port: code ${response.code} ${response.remark}`);
    const settings = response.body ? response.body.toString('utf8') : '';
    assert.match(settings, /^brokerConfigPaths=.*broker-a-master\.conf:.*broker-b-slave\.conf$/m,
      `the container's settings list both broker files:\n${settings}`);
    await waitFor(`the name server to route brokerIds 0 and 1 of ${peer.name} (the slave in the container)`,
      async () => {
        this.assertServersAlive();
        const route = await this.routeOf(peer.name);
        const bd = route && route.brokerDatas.find(b => b.brokerName === peer.name);
        return bd && bd.brokerAddrs['0'] === peer.masterAddr && bd.brokerAddrs['1'] === peer.slaveAddr;
      }, { timeoutMs: 20000, intervalMs: 200 });
    await waitFor(`${peer.name}'s master to stream to the slave in the container (haConnectionCount 1)`, async () => {
      this.assertServersAlive();
      const table = await this.runtimeInfo(peer.masterAddr);
      return Number(table.haConnectionCount) === 1;
    }, { timeoutMs: 20000, intervalMs: 200 });
    if (!peer.probeCreated) {
      await this.admin.createTopic(peer.masterAddr, 'TBW102', {
        topicName: peer.probeTopic, readQueueNums: 1, writeQueueNums: 1, perm: 6,
        topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false,
      }, 5000);
      peer.probeCreated = true;
    }
    const result = await this.probeSend(peer.masterAddr, peer.name, peer.probeTopic,
      'CompatContainerProbe');
    assert.equal(result.sendStatus, 'SEND_OK', `probe send to ${peer.name}'s master`);
    peer.probesSent = (peer.probesSent || 0) + 1;
    const want = peer.probesSent;
    await waitFor(`${peer.name}'s master to dispatch the probe messages (max offset ${want})`, async () =>
      (await this.admin.getMaxOffset(peer.masterAddr, peer.probeTopic, 0, 3000)) === want,
    { timeoutMs: 10000, intervalMs: 100 });
    await waitFor(`the slave of ${peer.name} in the container to hold the probe messages (max offset ${want})`,
      async () => {
        this.assertServersAlive();
        return (await this.admin.getMaxOffset(peer.slaveAddr, peer.probeTopic, 0, 3000)) === want;
      }, { timeoutMs: 20000, intervalMs: 200 });
  }

  /**
   * 'controller' mode: waits until the controllers' master can serve the tests and makes it
   * this.broker: the name server routes it as brokerId 0 of this.brokerName, routes no dead
   * replica (and, with `members` null, every live one), the broker says it is the controller's
   * master with at least `members` replicas (null: every live one) in its SyncStateSet, and it
   * answers a probe SEND_MESSAGE_V2 with SUCCESS. `exclude`: a replica index that must not be
   * the master (the one just killed). Returns { replica, table } (its runtime info).
   */
  async waitForControllerMaster({ exclude = null, members = null, timeoutMs = 30000 } = {}) {
    const live = this.replicas.filter(r => r.server && r.server.alive);
    const want = members === null ? live.length : members;
    let found = null;
    await waitFor(`the name server to route the controllers' master of ${this.brokerName} as ` +
      `brokerId 0, with ${want} replicas in its SyncStateSet`, async () => {
      this.assertServersAlive();
      const route = await this.routeOf('TBW102');
      const bd = route && route.brokerDatas.find(b => b.brokerName === this.brokerName);
      if (!bd) return false;
      const routed = Object.values(bd.brokerAddrs);
      if (this.replicas.some(r => !r.server.alive && routed.includes(r.addr))) return false;
      if (members === null && live.some(r => !routed.includes(r.addr))) return false;
      const replica = this.replicas.find(r => r.addr === bd.brokerAddrs['0']);
      if (!replica || !replica.server.alive || replica.index === exclude) return false;
      const table = await this.runtimeInfo(replica.addr);
      const set = (table.syncStateSet || '').split(',').filter(Boolean);
      if (table.controllerMaster !== 'true' || set.length < want) return false;
      found = { replica, table };
      return true;
    }, { timeoutMs, intervalMs: 100 });
    await waitFor(`${found.replica.name} (the controllers' master) to acknowledge a probe send`, async () => {
      const result = await this.probeSend(found.replica.addr, this.brokerName,
        'CompatControllerProbe', 'CompatControllerProbe');
      return result.sendStatus === 'SEND_OK';
    }, { timeoutMs: 15000, intervalMs: 200 });
    this.broker = found.replica.server;
    this.brokerPort = found.replica.port;
    return found;
  }

  /** 'controller' mode: the replica that is this.broker (the master the tests talk to). */
  get masterReplica() {
    return this.replicas.find(r => r.server === this.broker) || null;
  }

  /**
   * 'controller' mode: kill -9 of the master's broker (its whole process group, at once and
   * without warning); resolves with its replica once the process is gone. this.broker stays the
   * dead one until waitForControllerMaster() names the new master.
   */
  async killMaster() {
    const replica = this.masterReplica;
    assert.ok(replica, 'no controller-mode master to kill');
    replica.server.stoppedOnPurpose = true;
    replica.server.killGroup('SIGKILL');
    await withTimeout(replica.server.exited, 5000, `${replica.name} to die after SIGKILL`);
    return replica;
  }

  /** 'controller' mode: starts a stopped replica again (same port, config and store). */
  async restartReplica(replica) {
    assert.ok(!replica.server.alive, `${replica.name} is still running`);
    replica.server = replica.spawn();
    await this._waitForPort(replica.server, replica.port);
  }

  /**
   * GET_ALL_TOPIC_CONFIG (code 21) of `addr`: whether its topic table has `topic`. A slave copies
   * its master's table (SlaveSynchronize), so this says whether a replica would know the topic
   * once elected.
   */
  async brokerKnowsTopic(addr, topic) {
    const request = RemotingCommand.createRequestCommand(21, null);
    const response = await this.admin.invoke(addr, request, 3000);
    assert.equal(response.code, 0, `GET_ALL_TOPIC_CONFIG from ${addr}: code ${response.code} ${response.remark}`);
    const table = JSON.parse(response.body.toString('utf8')).topicConfigTable || {};
    return Object.prototype.hasOwnProperty.call(table, topic);
  }

  /** GET_BROKER_RUNTIME_INFO (code 28) of `addr` through ali-ons' remoting client: the table. */
  /**
   * One SEND_MESSAGE_V2 ('probe', queue 0) of producer group `group` straight to `addr`, the
   * broker `brokerName`; resolves to ali-ons' send result (sendStatus SEND_OK on success).
   */
  async probeSend(addr, brokerName, topic, group) {
    const msg = new Message(topic, 'probe', `probe ${Date.now()}`);
    return this.admin.sendMessage(addr, brokerName, msg, {
      producerGroup: group,
      topic: msg.topic,
      defaultTopic: 'TBW102',
      defaultTopicQueueNums: 1,
      queueId: 0,
      sysFlag: 0,
      bornTimestamp: Date.now(),
      flag: 0,
      properties: MessageDecoder.messageProperties2String(msg.properties),
      reconsumeTimes: 0,
      unitMode: false,
    }, 5000);
  }

  async runtimeInfo(addr = this.brokerAddr) {
    const request = RemotingCommand.createRequestCommand(28, null);
    const response = await this.admin.invoke(addr, request, 3000);
    assert.equal(response.code, 0, `GET_BROKER_RUNTIME_INFO from ${addr}: code ${response.code} ${response.remark}`);
    return JSON.parse(response.body.toString('utf8')).table;
  }

  /**
   * Group modes: waits until the name server lists the master and both slaves under our brokerName and
   * the master streams to both slaves; then, in '1m2s-stopped', SIGSTOPs slave 2's broker process.
   */
  async _waitForGroup() {
    if (this.group.container) {
      await this._waitForContainerGroup();
      return;
    }
    if (this.group.controller) {
      await this.waitForControllerMaster();
      return;
    }
    if (this.group.dledger) {
      // The preferred leader (n0, the tests' broker) leads and is writable; the name server lists
      // it as brokerId 0 and the followers n1, n2 as brokerIds 2, 3 (RocketMQ's rule: digits + 1).
      await waitFor('the DLedger group to make n0 its writable leader', async () => {
        this.assertServersAlive();
        const table = await this.runtimeInfo();
        return table.dledgerRole === 'Leader' && table.dledgerWritable === 'true';
      }, { timeoutMs: 30000, intervalMs: 200 });
      await waitFor(`the name server to list the three peers of ${this.brokerName}`, async () => {
        this.assertServersAlive();
        const route = await this.routeOf('TBW102');
        const bd = route && route.brokerDatas.find(b => b.brokerName === this.brokerName);
        return bd && bd.brokerAddrs['0'] === this.brokerAddr && bd.brokerAddrs['2'] && bd.brokerAddrs['3'];
      }, { timeoutMs: 20000, intervalMs: 200 });
      return;
    }
    const ids = [ '0', ...this.slaves.map(s => String(s.id)) ];
    await waitFor(`the name server to list brokerIds ${ids.join(',')} of ${this.brokerName}`, async () => {
      this.assertServersAlive();
      const route = await this.routeOf('TBW102');
      const bd = route && route.brokerDatas.find(b => b.brokerName === this.brokerName);
      return bd && ids.every(id => bd.brokerAddrs[id]);
    }, { timeoutMs: 20000, intervalMs: 200 });
    await waitFor(`the master to stream to ${this.slaves.length} slaves (haConnectionCount)`, async () => {
      this.assertServersAlive();
      const table = await this.runtimeInfo();
      return Number(table.haConnectionCount) === this.slaves.length;
    }, { timeoutMs: 20000, intervalMs: 200 });
    if (this.group.stopSlave) {
      const slave = this.slaves[this.slaves.length - 1];
      const pid = serverPidOf(slave.server, findBinary('mqbroker'));
      assert.ok(pid, `cannot find the broker process of ${slave.server.name}`);
      process.kill(pid, 'SIGSTOP');
      slave.stopped = pid;
      // ali-ons talks to every broker of a route (heartbeats; UNREGISTER_CLIENT on close, whose
      // timeout makes Consumer.close() reject), so a hung broker that is still routed fails tests
      // for a client-side reason. The name server drops a broker that stopped registering after
      // brokerChannelExpiredTime (RocketMQ default 120 s; 15 s here): wait for that, as a real
      // deployment would, before the tests run. The master keeps the hung slave's HA connection
      // until haHousekeepingInterval (3 s) and must keep quorum writes going meanwhile.
      await waitFor(`the name server to drop the stopped ${slave.server.name} from the route`, async () => {
        this.assertServersAlive();
        const route = await this.routeOf('TBW102');
        const bd = route && route.brokerDatas.find(b => b.brokerName === this.brokerName);
        return bd && bd.brokerAddrs['0'] && !bd.brokerAddrs[String(slave.id)];
      }, { timeoutMs: 30000, intervalMs: 250 });
      await waitFor('the master to drop the hung slave and keep one (haConnectionCount 1)', async () => {
        const table = await this.runtimeInfo();
        return Number(table.haConnectionCount) === this.slaves.length - 1;
      }, { timeoutMs: 20000, intervalMs: 250 });
    }
  }

  /** SIGCONTs every slave stopped by the group mode (before stopping servers). */
  resumeStoppedSlaves() {
    for (const slave of this.slaves) {
      if (!slave.stopped) continue;
      try {
        process.kill(slave.stopped, 'SIGCONT');
      } catch (_) {
        // already gone
      }
      slave.stopped = false;
    }
  }

  /**
   * Stops the broker with SIGTERM (SIGKILL after `graceMs`) and starts it again on the same port with
   * the same config and store; waits until it listens and is registered again. Returns
   * { exit, stopMs, startMs } (exit.forced if SIGTERM was not enough).
   */
  async restartBroker({ graceMs = 10000 } = {}) {
    const t0 = Date.now();
    const exit = await this.broker.stop(graceMs);
    const stopMs = Date.now() - t0;
    const t1 = Date.now();
    const replica = this.masterReplica;
    if (replica) {
      // Controller mode: the same replica again; the controllers still hold it as the master
      // unless its heartbeats stopped for longer than controllerHeartBeatTimeoutMills + lease.
      replica.server = replica.spawn();
      this.broker = replica.server;
    } else {
      this.broker = this._brokerSpawn();
    }
    if (this.group && this.group.container) await this._waitForContainer();
    else await this._waitForPort(this.broker, this.brokerPort);
    await waitFor('the restarted broker to register with the name server', async () => {
      this.assertServersAlive();
      const route = await this.routeOf('TBW102');
      return route && route.brokerDatas.some(b => b.brokerName === this.brokerName);
    }, { timeoutMs: 15000, intervalMs: 200 });
    // DLedger: the stopped leader comes back as a follower; the group hands leadership back to
    // it (preferredLeaderId) once it has caught up, and only then is it this test's master again
    // (an unmodified client keeps the master address of its cached route until its 30 s poll).
    // Controller mode: whichever replica the controllers hold as master once all three are back
    // in its SyncStateSet becomes this test's master (normally the restarted one, see above).
    // Container: the slave of group B restarted with the container; wait until it is routed and
    // replicating again, so that a failure there is this test's, not a later one's.
    if (this.group && this.group.container) await this._waitForGroup();
    if (this.group && (this.group.dledger || this.group.controller)) {
      await this._waitForGroup();
      // A client may have fetched the route while the other peer led for a moment (between
      // the stop and the hand-back): it keeps sending to that peer, now a follower, until its
      // next route poll (every second here, 30 s by default; docs/dledger.md "Clients"). Do that
      // poll now, as every client would shortly.
      for (const client of this.clients) {
        if (client._mqClient) await client._mqClient.updateAllTopicRouterInfo();
      }
    }
    return { exit, stopMs, startMs: Date.now() - t1 };
  }

  /** Stops name server `index` (SIGTERM) on purpose; returns its exit status. */
  async stopNamesrv(index) {
    const server = this.namesrvs[index];
    server.stoppedOnPurpose = true;
    return server.stop();
  }

  /**
   * Asks every name server separately (one short-lived ali-ons MQClientAPI each) for the route of
   * `topic`; returns one entry per name server: the route, null for TOPIC_NOT_EXIST, or an Error.
   */
  async routeFromEach(topic) {
    const out = [];
    for (const addr of this.namesrvAddrs) {
      const api = new MQClientAPI(this.clientOptions({ nameSrv: [ addr ], instanceName: `compat-probe-${this.id}` }));
      api.on('error', err => this._recordClientError(`probe ${addr}`, err));
      try {
        await withTimeout(api.ready(), 5000, `probe client for ${addr}`);
        out.push(await api.getTopicRouteInfoFromNameServer(topic, 3000));
      } catch (err) {
        out.push(err.name === 'MQClientException' && err.code === ResponseCode.TOPIC_NOT_EXIST ? null : err);
      } finally {
        await withTimeout(api.close(), 5000, `closing the probe client for ${addr}`).catch(() => {});
      }
    }
    return out;
  }

  async _waitForPort(server, port) {
    await waitFor(`${server.name} to listen on ${LOCALHOST}:${port}`, async () => {
      if (!server.alive) {
        throw Object.assign(new Error(`${server.name} exited during start-up (${server.describeExit()})`),
          { fatal: true });
      }
      return canConnect(port);
    }, { timeoutMs: 20000, intervalMs: 100 });
  }

  /** Throws if a server process is gone (crash) — tests call this so a crash is never silent. */
  assertServersAlive() {
    for (const server of this.servers) {
      if (!server.alive && !server.stoppedOnPurpose) {
        throw Object.assign(new Error(`${server.name} is not running any more ` +
          `(${server.describeExit()}); see ${server.logFile}`), { fatal: true });
      }
    }
  }

  /** Options shared by every ali-ons client of this cluster. Timers are shortened for test speed. */
  clientOptions(extra = {}) {
    return Object.assign({
      nameSrv: this.namesrvAddrs,
      onsAddr: 'http://127.0.0.1:1/comet-compat-http-disabled',
      httpclient: offlineHttpClient,
      logger: this.logger,
      // No accessKey/secretKey: ali-ons then adds no AccessKey/Signature extFields.
      pollNameServerInteval: 1000,
      heartbeatBrokerInterval: 2000,
      rebalanceInterval: 1000,
      persistConsumerOffsetInterval: 1000,
    }, extra);
  }

  _recordClientError(label, err) {
    this.clientErrors.push({ label, time: new Date().toISOString(), name: err.name, code: err.code,
      message: err.message });
    if (this.clientErrors.length > 500) this.clientErrors.splice(0, this.clientErrors.length - 500);
  }

  /** A started ali-ons Producer; closed by stop(). */
  async newProducer({ instanceName, ...options } = {}) {
    const label = `producer:${instanceName || 'default'}`;
    // sendMsgTimeout 15 s instead of 3 s: on a loaded CI machine a slow answer must not turn into an
    // ali-ons retry (which would store the message twice and blur what the test checks).
    const producer = new Producer(this.clientOptions({ instanceName: instanceName || `p-${this.id}`,
      sendMsgTimeout: 15000, ...options }));
    producer.on('error', err => this._recordClientError(label, err));
    this.clients.push(producer);
    await withTimeout(producer.ready(), 15000, `${label} ready`);
    return producer;
  }

  /**
   * A started ali-ons push Consumer (clustering). Distinct instanceNames give distinct clientIds
   * (`<ip>@<instanceName>`), which two consumers of one group in one process need.
   */
  async newConsumer({ instanceName, consumerGroup, ...options }) {
    assert.ok(consumerGroup, 'consumerGroup is required');
    const label = `consumer:${consumerGroup}:${instanceName}`;
    const consumer = new Consumer(this.clientOptions({ instanceName, consumerGroup, ...options }));
    consumer.on('error', err => this._recordClientError(label, err));
    this.clients.push(consumer);
    await withTimeout(consumer.ready(), 15000, `${label} ready`);
    return consumer;
  }

  /** Closes one client (bounded); safe to call twice. */
  async closeClient(client) {
    const index = this.clients.indexOf(client);
    if (index < 0) return;
    this.clients.splice(index, 1);
    await withTimeout(client.close(), 15000, 'closing an ali-ons client');
  }

  /** Route of `topic` from the name server via ali-ons' own API, or null if TOPIC_NOT_EXIST. */
  async routeOf(topic) {
    try {
      return await this.admin.getTopicRouteInfoFromNameServer(topic, 3000);
    } catch (err) {
      if (err.name === 'MQClientException' && err.code === ResponseCode.TOPIC_NOT_EXIST) return null;
      throw err;
    }
  }

  /** Waits until the name server routes `topic` to our broker with `queueNums` read/write queues. */
  async waitForRoute(topic, queueNums, timeoutMs = 45000) {
    const started = Date.now();
    const route = await waitFor(`name server route of ${topic} with ${queueNums} queues`, async () => {
      this.assertServersAlive();
      const r = await this.routeOf(topic);
      const qd = r && r.queueDatas.find(q => q.brokerName === this.brokerName);
      return qd && Number(qd.writeQueueNums) === queueNums && Number(qd.readQueueNums) === queueNums && r;
    }, { timeoutMs, intervalMs: 200 });
    return { route, elapsedMs: Date.now() - started };
  }

  /**
   * Creates `topic` on the broker with UPDATE_AND_CREATE_TOPIC through ali-ons' MQClientAPI.createTopic
   * (the request ali-ons itself would send) and waits for the name server to route it.
   */
  async createTopic(topic, queueNums = 8) {
    await this.admin.createTopic(this.brokerAddr, 'TBW102', {
      topicName: topic,
      readQueueNums: queueNums,
      writeQueueNums: queueNums,
      perm: 6,
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: 0,
      order: false,
    }, 5000);
    return this.waitForRoute(topic, queueNums);
  }

  /** QUERY_CONSUMER_OFFSET through ali-ons' API; returns a number (−1 when the broker has none). */
  async committedOffset(topic, group, queueId) {
    try {
      return await this.admin.queryConsumerOffset(this.brokerAddr, { topic, consumerGroup: group, queueId },
        3000);
    } catch (err) {
      if (err.name === 'MQClientException') return -1;
      throw err;
    }
  }

  async maxOffset(topic, queueId) {
    return this.admin.getMaxOffset(this.brokerAddr, topic, queueId, 3000);
  }

  /** Everything useful for a post-mortem, on stderr. */
  dumpDiagnostics(reason) {
    const out = [];
    out.push(`\n======== compat diagnostics (${this.name}): ${reason}`);
    out.push(`temp dir (kept): ${this.tmpDir}`);
    for (const server of this.servers) {
      out.push(`-------- ${server.name} (pid ${server.pid}, ${server.describeExit()}): ${server.logFile}`);
      out.push(tailOfFile(server.logFile, 120));
    }
    for (const file of listFilesRecursive(this.tmpDir)) {
      if (/\.log$/.test(file)) {
        out.push(`-------- log file ${file}`);
        out.push(tailOfFile(file, 80));
      }
    }
    if (this.clientErrors.length) {
      out.push(`-------- ali-ons error events (last ${Math.min(40, this.clientErrors.length)} of ` +
        `${this.clientErrors.length})`);
      for (const e of this.clientErrors.slice(-40)) {
        out.push(`${e.time} [${e.label}] ${e.name}${e.code !== undefined ? ` code=${e.code}` : ''}: ` +
          `${e.message}`);
      }
    }
    const failed = wireLog.filter(e => e.error || (e.response && ![ 0, 19, 20, 21 ].includes(e.response.code)));
    if (failed.length) {
      out.push(`-------- non-success exchanges (last ${Math.min(25, failed.length)} of ${failed.length}; ` +
        '17 on route lookups / 22 on offset queries can be normal)');
      out.push(failed.slice(-25).map(describeExchange).join('\n'));
    }
    if (lateClientErrors.length) {
      out.push('-------- errors of already closed ali-ons clients');
      out.push(lateClientErrors.slice(-10).join('\n'));
    }
    out.push(`-------- last ${Math.min(15, wireLog.length)} wire exchanges`);
    out.push(wireLog.slice(-15).map(describeExchange).join('\n'));
    if (this.logger.lines.length) {
      out.push(`-------- ali-ons log (last ${Math.min(60, this.logger.lines.length)} lines)`);
      out.push(this.logger.lines.slice(-60).join('\n'));
    }
    out.push('======== end of compat diagnostics\n');
    process.stderr.write(out.join('\n') + '\n');
    this.keepTmp = true;
  }

  /** Closes all clients, stops both servers, removes the temp dir unless something failed. */
  async stop({ keep = false } = {}) {
    for (const client of this.clients.slice().reverse()) {
      await this.closeClient(client).catch(err => this._recordClientError('close', err));
    }
    if (MQProducer.defaultProducer) {
      const inner = MQProducer.defaultProducer;
      MQProducer.defaultProducer = null;
      await withTimeout(inner.close(), 15000, 'closing the internal producer')
        .catch(err => this._recordClientError('close', err));
    }
    if (this.admin) {
      await withTimeout(this.admin.close(), 10000, 'closing the admin client')
        .catch(err => this._recordClientError('close', err));
      this.admin = null;
    }
    this.resumeStoppedSlaves();
    const exits = {};
    for (const server of this.servers.reverse()) {
      exits[server.name] = await server.stop();
    }
    if (!keep && !this.keepTmp && process.env.COMPAT_KEEP_TMP !== '1') {
      fs.rmSync(this.tmpDir, { recursive: true, force: true });
    }
    return exits;
  }
}

// ---------------------------------------------------------------------------------------------
// node:test glue

/**
 * Registers before/after hooks that start and stop one cluster for the current test file, and
 * returns { cluster, test } where `test(name, { timeoutMs }, fn(t, cluster))` runs `fn` with its own
 * bounded timeout and prints diagnostics (server logs, ali-ons errors) when it fails.
 */
function useCluster(name, options = {}) {
  const holder = { cluster: null, failed: false };
  before(async () => {
    holder.cluster = await Cluster.start({ name, ...options });
  }, { timeout: 90000 });
  after(async () => {
    if (!holder.cluster) return;
    const exits = await holder.cluster.stop({ keep: holder.failed });
    for (const [ server, exit ] of Object.entries(exits)) {
      if (exit && exit.forced) {
        process.stderr.write(`[compat] ${server} did not stop within 5 s of SIGTERM; it was killed\n`);
      }
    }
  }, { timeout: 60000 });
  holder.test = (testName, { timeoutMs = 90000 } = {}, fn) => {
    test(testName, { timeout: timeoutMs + 30000 }, async t => {
      assert.ok(holder.cluster, 'cluster did not start (see diagnostics above)');
      try {
        await withTimeout(Promise.resolve().then(() => fn(t, holder.cluster)), timeoutMs, `test "${testName}"`);
        holder.cluster.assertServersAlive();
      } catch (err) {
        holder.failed = true;
        holder.cluster.dumpDiagnostics(`test "${testName}" failed: ${err.message}`);
        throw err;
      }
    });
  };
  return holder;
}

// ---------------------------------------------------------------------------------------------
// Helpers for the tests

/**
 * Sends `messages` (array of ali-ons Message) with at most `concurrency` in flight. Returns
 * { results, failures }: results[i] is the send result of messages[i] (or undefined on failure).
 */
async function sendAll(producer, messages, concurrency = 32) {
  const results = new Array(messages.length);
  const failures = [];
  let next = 0;
  async function worker() {
    while (next < messages.length) {
      const i = next++;
      try {
        results[i] = await producer.send(messages[i]);
      } catch (err) {
        failures.push({ index: i, name: err.name, code: err.code, message: err.message });
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, messages.length) }, worker));
  return { results, failures };
}

/** Queue keys (MessageQueue.key) currently assigned to `consumer` for `topic`. */
function assignedQueues(consumer, topic) {
  const ids = [];
  for (const { messageQueue } of consumer.processQueueTable.values()) {
    if (messageQueue.topic === topic) ids.push(Number(messageQueue.queueId));
  }
  return ids.sort((a, b) => a - b);
}

/** Records what a consumer handler saw. */
class DeliveryLog {
  constructor() {
    this.entries = [];
  }

  record(consumerLabel, msg) {
    this.entries.push({
      consumer: consumerLabel,
      topic: msg.topic,
      queueId: Number(msg.queueId),
      queueOffset: Number(msg.queueOffset),
      msgId: msg.msgId,
      keys: msg.keys,
      tags: msg.tags,
      body: msg.body ? msg.body.toString() : '',
      reconsumeTimes: msg.reconsumeTimes,
      retryTopic: msg.retryTopic,
      originMessageId: msg.originMessageId,
      commitLogOffset: msg.commitLogOffset,
      storeHost: msg.storeHost,
      properties: Object.assign({}, msg.properties),
      at: Date.now(),
    });
  }

  byKey() {
    const map = new Map();
    for (const e of this.entries) {
      if (!map.has(e.keys)) map.set(e.keys, []);
      map.get(e.keys).push(e);
    }
    return map;
  }

  distinctKeys() {
    return new Set(this.entries.map(e => e.keys));
  }
}

/**
 * Checks that, per queue, first deliveries come in strictly increasing queue-offset order (a
 * redelivery of an older offset is allowed, at-least-once). Returns a list of violations.
 */
function perQueueOrderViolations(entries) {
  const lastFirstSeen = new Map();
  const seen = new Set();
  const violations = [];
  for (const e of entries) {
    const id = `${e.topic}#${e.queueId}#${e.queueOffset}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const q = `${e.topic}#${e.queueId}`;
    const prev = lastFirstSeen.get(q);
    if (prev !== undefined && e.queueOffset <= prev) {
      violations.push(`queue ${q}: offset ${e.queueOffset} delivered after ${prev}`);
    }
    lastFirstSeen.set(q, e.queueOffset);
  }
  return violations;
}

/** A topic/group name unique to this run (broker state is fresh per cluster anyway). */
function uniqueName(prefix) {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}`;
}

module.exports = {
  Cluster,
  describeExchange,
  wireLog,
  DeliveryLog,
  Message,
  Consumer,
  Producer,
  assignedQueues,
  canConnect,
  findBinary,
  freePort,
  perQueueOrderViolations,
  sendAll,
  sleep,
  uniqueName,
  useCluster,
  waitFor,
  withTimeout,
};
