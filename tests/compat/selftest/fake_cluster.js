'use strict';
// A deliberately tiny in-memory stand-in for mqnamesrv / mqbroker, written in JS, used ONLY to check
// the compat suite itself (harness, ali-ons wiring, assertions) when no Comet build is at hand:
//   tests/compat/run.sh --self-test
// It is not a reference implementation and is never used to judge Comet. It implements just the
// requests ali-ons sends (reference §9.2) with the simplest semantics that satisfy them. Knobs that
// make it misbehave on purpose, to see the tests fail with useful diagnostics:
//   FAKE_NOFILTER=1       PULL_MESSAGE ignores the tag subscription
//   FAKE_NO_COMMIT=1      UPDATE_CONSUMER_OFFSET is ignored
//   FAKE_CRASH_ON_PULL=1  the broker exits (code 3) on ~1% of pulls
// Usage (what the wrapper scripts run): node fake_cluster.js namesrv|broker -c <properties file>
const net = require('net');
const fs = require('fs');

const mode = process.argv[2];
const confFile = process.argv[process.argv.indexOf('-c') + 1];
const conf = {};
for (const line of fs.readFileSync(confFile, 'utf8').split('\n')) {
  const eq = line.indexOf('=');
  if (eq > 0) conf[line.slice(0, eq)] = line.slice(eq + 1);
}
const log = (...a) => console.log(new Date().toISOString(), mode, ...a);

function encode(header, body) {
  const h = Buffer.from(JSON.stringify(header));
  const b = body || Buffer.alloc(0);
  const out = Buffer.alloc(8 + h.length + b.length);
  out.writeInt32BE(4 + h.length + b.length, 0);
  out.writeInt32BE(h.length, 4);
  h.copy(out, 8);
  b.copy(out, 8 + h.length);
  return out;
}

function serve(port, handler) {
  const server = net.createServer(sock => {
    let buf = Buffer.alloc(0);
    sock.on('data', d => {
      buf = Buffer.concat([ buf, d ]);
      while (buf.length >= 4) {
        const len = buf.readInt32BE(0);
        if (buf.length < 4 + len) break;
        const frame = buf.subarray(4, 4 + len);
        buf = buf.subarray(4 + len);
        const hl = frame.readInt32BE(0) & 0xffffff;
        const header = JSON.parse(frame.subarray(4, 4 + hl).toString());
        const body = frame.subarray(4 + hl);
        const reply = (code, ext = {}, rbody = null, remark) => {
          const e = {};
          for (const k in ext) e[k] = String(ext[k]);
          if (!sock.destroyed) {
            sock.write(encode({ code, flag: 1, opaque: header.opaque, language: 'JAVA', version: 0, remark,
              extFields: e }, rbody));
          }
        };
        Promise.resolve(handler(header, body, reply, sock)).catch(err => reply(1, {}, null, err.message));
      }
    });
    sock.on('error', () => {});
  });
  server.listen(port, '127.0.0.1', () => log('listening', port));
}

const stringify = o => JSON.stringify(o);

if (mode === 'namesrv') {
  const topics = new Map(); // topic -> {brokerName, queueNums, perm}
  const brokers = new Map(); // brokerName -> {cluster, addrs}
  serve(Number(conf.listenPort), (h, body, reply) => {
    const ext = h.extFields || {};
    if (h.code === 103) {
      brokers.set(ext.brokerName, { cluster: ext.clusterName, addrs: { [ext.brokerId]: ext.brokerAddr } });
      const table = JSON.parse(body.toString()).topicConfigSerializeWrapper.topicConfigTable;
      for (const t in table) topics.set(t, { brokerName: ext.brokerName, ...table[t] });
      return reply(0);
    }
    if (h.code === 105) {
      const t = topics.get(ext.topic);
      if (!t) return reply(17, {}, null, `No topic route info in name server for the topic: ${ext.topic}`);
      const route = {
        brokerDatas: [{ brokerAddrs: brokers.get(t.brokerName).addrs, brokerName: t.brokerName, cluster: 'c' }],
        filterServerTable: {},
        queueDatas: [{ brokerName: t.brokerName, perm: t.perm, readQueueNums: t.readQueueNums,
          writeQueueNums: t.writeQueueNums, topicSysFlag: 0 }],
      };
      return reply(0, {}, Buffer.from(stringify(route)));
    }
    return reply(3, {}, null, 'not supported');
  });
} else {
  const port = Number(conf.listenPort);
  const topics = new Map();
  topics.set('TBW102', { readQueueNums: 8, writeQueueNums: 8, perm: 7 });
  const queues = new Map(); // `${topic}#${q}` -> [records]
  const commitlog = new Map(); // phys -> record
  let phys = 0;
  const offsets = new Map();
  const groups = new Map(); // group -> Map(clientId -> sock)
  let waiters = [];
  let opaque = 1;

  const nsSocks = new Map();
  function register() {
    for (const addr of conf.namesrvAddr.split(';')) registerWith(addr);
  }
  function registerWith(addr) {
    const [ host, p ] = addr.split(':');
    let nsSock = nsSocks.get(addr);
    // RegisterBrokerBody as a RocketMQ broker sends it (uncompressed).
    const topicConfigTable = {};
    for (const [ name, t ] of topics) {
      topicConfigTable[name] = { topicName: name, readQueueNums: t.readQueueNums, writeQueueNums: t.writeQueueNums,
        perm: t.perm, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false };
    }
    const body = { topicConfigSerializeWrapper: { topicConfigTable,
      dataVersion: { timestamp: Date.now(), counter: opaque } }, filterServerList: [] };
    const send = () => nsSock.write(encode({ code: 103, flag: 0, opaque: opaque++, language: 'JAVA', version: 395,
      extFields: { brokerName: conf.brokerName, brokerId: '0', clusterName: conf.brokerClusterName,
        brokerAddr: `127.0.0.1:${port}`, haServerAddr: `127.0.0.1:${port + 1}`, compressed: 'false' } },
    Buffer.from(stringify(body))));
    if (!nsSock || nsSock.destroyed) {
      nsSock = net.connect(Number(p), host, send);
      nsSock.on('data', () => {});
      nsSock.on('error', () => {});
      nsSocks.set(addr, nsSock);
    } else send();
  }
  function createTopic(t, n, perm = 6) {
    if (!topics.has(t)) {
      topics.set(t, { readQueueNums: n, writeQueueNums: n, perm });
      setTimeout(register, 50);
    }
  }
  function props2map(s) {
    const m = {};
    for (const kv of s.split('\u0002')) {
      const i = kv.indexOf('\u0001');
      if (i > 0) m[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return m;
  }
  function map2props(m) {
    return Object.entries(m).map(([ k, v ]) => `${k}\u0001${v}\u0002`).join('');
  }
  function msgId(offset) {
    const b = Buffer.alloc(16);
    b.set([ 127, 0, 0, 1 ], 0);
    b.writeInt32BE(port, 4);
    b.writeBigInt64BE(BigInt(offset), 8);
    return b.toString('hex').toUpperCase();
  }
  function put(topic, queueId, body, props, sysFlag, bornTs, flag, reconsume) {
    const key = `${topic}#${queueId}`;
    if (!queues.has(key)) queues.set(key, []);
    const q = queues.get(key);
    const tb = Buffer.from(topic);
    const pb = Buffer.from(props);
    const size = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + body.length + 1 + tb.length + 2 + pb.length;
    const r = Buffer.alloc(size);
    let o = 0;
    const i32 = v => { r.writeInt32BE(v, o); o += 4; };
    const i64 = v => { r.writeBigInt64BE(BigInt(v), o); o += 8; };
    i32(size); r.writeUInt32BE(0xDAA320A7, o); o += 4; i32(0); i32(queueId); i32(flag);
    i64(q.length); i64(phys); i32(sysFlag); i64(bornTs);
    r.set([ 127, 0, 0, 1 ], o); o += 4; i32(1234);
    i64(Date.now()); r.set([ 127, 0, 0, 1 ], o); o += 4; i32(port);
    i32(reconsume); i64(0); i32(body.length); body.copy(r, o); o += body.length;
    r.writeUInt8(tb.length, o); o += 1; tb.copy(r, o); o += tb.length;
    r.writeInt16BE(pb.length, o); o += 2; pb.copy(r, o);
    const rec = { buf: r, topic, queueId, offset: q.length, phys, storeTime: Date.now(), props: props2map(props), body, sysFlag, flag, reconsume };
    q.push(rec);
    commitlog.set(phys, rec);
    phys += size;
    const w = waiters;
    waiters = [];
    w.forEach(fn => fn());
    return rec;
  }
  function pull(ext) {
    const key = `${ext.topic}#${ext.queueId}`;
    const q = queues.get(key) || [];
    const off = Number(ext.queueOffset);
    if (off > q.length) return { code: 21, ext: { nextBeginOffset: q.length, minOffset: 0, maxOffset: q.length } };
    const sub = ext.subscription || '*';
    const tags = sub === '*' ? null : sub.split('||').map(s => s.trim());
    const out = [];
    let i = off;
    for (; i < q.length && out.length < Number(ext.maxMsgNums); i++) {
      if (process.env.FAKE_NOFILTER || !tags || tags.includes(q[i].props.TAGS)) out.push(q[i].buf);
    }
    const hdr = { nextBeginOffset: i, minOffset: 0, maxOffset: q.length, suggestWhichBrokerId: 0 };
    if (out.length) return { code: 0, ext: hdr, body: Buffer.concat(out) };
    if (i > off) return { code: 20, ext: hdr };
    return { code: 19, ext: hdr };
  }
  serve(port, async (h, body, reply, sock) => {
    const ext = h.extFields || {};
    switch (h.code) {
      case 34: {
        const hb = JSON.parse(body.toString());
        for (const c of hb.consumerDataSet) {
          if (!groups.has(c.groupName)) groups.set(c.groupName, new Map());
          groups.get(c.groupName).set(hb.clientID, sock);
          createTopic(`%RETRY%${c.groupName}`, 1);
        }
        return reply(0);
      }
      case 35: {
        if (ext.consumerGroup && groups.has(ext.consumerGroup)) groups.get(ext.consumerGroup).delete(ext.clientID);
        return reply(0);
      }
      case 38: {
        const g = groups.get(ext.consumerGroup);
        if (!g || !g.size) return reply(1, {}, null, 'no consumer');
        return reply(0, {}, Buffer.from(stringify({ consumerIdList: [ ...g.keys() ] })));
      }
      case 17: createTopic(ext.topic, Number(ext.writeQueueNums), Number(ext.perm)); return reply(0);
      case 310: {
        if (!topics.has(ext.b)) {
          if (ext.c === 'TBW102') createTopic(ext.b, Math.min(Number(ext.d), 8));
          else return reply(17, {}, null, 'topic not exist');
        }
        const rec = put(ext.b, Number(ext.e), Buffer.from(body), ext.i || '', Number(ext.f), Number(ext.g),
          Number(ext.h), Number(ext.j || 0));
        return reply(0, { msgId: msgId(rec.phys), queueId: rec.queueId, queueOffset: rec.offset });
      }
      case 11: {
        if (process.env.FAKE_CRASH_ON_PULL && Math.random() < 0.01) process.exit(3);
        let r = pull(ext);
        const deadline = Date.now() + Math.min(Number(ext.suspendTimeoutMillis || 0), 15000);
        while (r.code === 19 && Date.now() < deadline) {
          await new Promise(res => { waiters.push(res); setTimeout(res, 500); });
          r = pull(ext);
        }
        return reply(r.code, r.ext, r.body);
      }
      case 14: {
        const k = `${ext.topic}@${ext.consumerGroup}#${ext.queueId}`;
        // Like a Java broker: no (or a negative) committed offset while the queue still starts at 0 -> 0.
        if (!offsets.has(k) || offsets.get(k) < 0) return reply(0, { offset: 0 });
        return reply(0, { offset: offsets.get(k) });
      }
      case 15: {
        const k = `${ext.topic}@${ext.consumerGroup}#${ext.queueId}`;
        if (!process.env.FAKE_NO_COMMIT) offsets.set(k, Number(ext.commitOffset));
        return reply(0);
      }
      case 30: return reply(0, { offset: (queues.get(`${ext.topic}#${ext.queueId}`) || []).length });
      case 29: {
        const q = queues.get(`${ext.topic}#${ext.queueId}`) || [];
        const i = q.findIndex(r => r.storeTime >= Number(ext.timestamp));
        return reply(0, { offset: i < 0 ? q.length : i });
      }
      case 36: {
        const rec = commitlog.get(Number(ext.offset));
        if (!rec) return reply(1, {}, null, 'no such offset');
        const retry = `%RETRY%${ext.group}`;
        createTopic(retry, 1);
        const props = Object.assign({}, rec.props);
        if (!props.RETRY_TOPIC) props.RETRY_TOPIC = rec.topic;
        if (!props.ORIGIN_MESSAGE_ID) props.ORIGIN_MESSAGE_ID = ext.originMsgId;
        setTimeout(() => put(retry, 0, rec.body, map2props(props), rec.sysFlag, Date.now(), rec.flag, rec.reconsume + 1), 2000);
        return reply(0);
      }
      default: return reply(3, {}, null, `code ${h.code} not supported`);
    }
  });
  setTimeout(register, 100);
  setInterval(register, 30000);
}
process.on('SIGTERM', () => process.exit(0));
