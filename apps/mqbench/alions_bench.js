// The mqbench producer load driven through ali-ons (the Node RocketMQ client), to compare the
// client side of the numbers in docs/benchmarks.md. Usage (from the repository root):
//   NODE_PATH=tests/compat/node_modules node apps/mqbench/alions_bench.js \
//       NAMESRV TOPIC SIZE CONCURRENCY SECONDS
// CONCURRENCY = sends awaited in parallel (1 = one synchronous sender). Prints one JSON line.
'use strict';
const { Producer, Message } = require('ali-ons');

const [namesrv, topic, size, concurrency, seconds] = process.argv.slice(2);
const quiet = () => {};
const logger = { info: quiet, debug: quiet, warn: quiet, error: quiet };

async function main() {
  const producer = new Producer({
    nameSrv: namesrv.split(';'),
    onsAddr: 'http://127.0.0.1:1/no-http',
    httpclient: { async request() { throw new Error('HTTP disabled'); } },
    logger,
    producerGroup: 'alions_bench',
    instanceName: `alions-bench-${process.pid}`,
  });
  await producer.ready();
  const body = Buffer.alloc(Number(size), 'x');
  const end = Date.now() + Number(seconds) * 1000;
  const lat = [];
  let failed = 0;
  const start = process.hrtime.bigint();
  async function worker() {
    while (Date.now() < end) {
      const t0 = process.hrtime.bigint();
      try {
        const r = await producer.send(new Message(topic, 'bench', body));
        if (r.sendStatus !== 'SEND_OK') failed++;
        else lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
      } catch (e) {
        failed++;
      }
    }
  }
  await Promise.all(Array.from({ length: Number(concurrency) }, worker));
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  lat.sort((a, b) => a - b);
  const p = q => lat.length ? lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] : 0;
  console.log(JSON.stringify({ client: 'ali-ons', ok: lat.length, failed, seconds: secs,
    tps: lat.length / secs, p50_ms: p(0.5), p99_ms: p(0.99), p999_ms: p(0.999),
    max_ms: lat.length ? lat[lat.length - 1] : 0, concurrency: Number(concurrency) }));
  await producer.close();
  process.exit(failed === 0 && lat.length > 0 ? 0 : 1);
}
main().catch(e => { console.error(e); process.exit(2); });
