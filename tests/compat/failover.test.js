'use strict';
// Controller mode only (run.sh --group controller): kill -9 of the elected master while an ali-ons
// producer and push consumer run. The controllers elect an in-sync replica (allAckInSyncStateSet:
// every SEND_OK message is on every SyncStateSet member), ali-ons finds it at its next name-server
// poll (1 s here), and the consumer receives every message acknowledged before and after the kill.
// The killed broker then comes back and rejoins as a slave while the clients keep going.

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { DeliveryLog, Message, assignedQueues, perQueueOrderViolations, sleep, uniqueName, useCluster,
  waitFor } = require('./harness');

const SENDERS = 4; // sends in flight
const BEFORE = 300; // acknowledged sends before the kill
const AFTER = 300; // acknowledged sends once the new master is routed

if (process.env.COMPAT_GROUP !== 'controller') {
  test('kill -9 of the controller-mode master under live ali-ons clients',
    { skip: 'needs the controller group (run.sh --group controller)' }, () => {});
} else {
  const h = useCluster('failover');

  h.test('kill -9 of the elected master: a new master is elected, ali-ons carries on, no acknowledged ' +
    'message is lost', { timeoutMs: 150000 }, async (t, cluster) => {
    const topic = uniqueName('CompatFailover');
    const group = uniqueName('CompatFailoverGroup');
    await cluster.createTopic(topic, 8);
    // The topic was created on the master only; the slaves copy its topic table every second. A
    // replica elected before it has the topic would answer the consumer's pulls with TOPIC_NOT_EXIST.
    const first = cluster.masterReplica;
    for (const r of cluster.replicas.filter(x => x !== first)) {
      await waitFor(`${r.name} to copy ${topic} from the master`, () => cluster.brokerKnowsTopic(r.addr, topic),
        { timeoutMs: 15000, intervalMs: 200 });
    }

    const log = new DeliveryLog();
    const consumer = await cluster.newConsumer({
      instanceName: 'failover-c', consumerGroup: group, consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    consumer.subscribe(topic, '*', async msg => log.record('c', msg));
    await waitFor('the consumer to be assigned all 8 queues', () => assignedQueues(consumer, topic).length === 8,
      { timeoutMs: 30000 });
    const producer = await cluster.newProducer({ instanceName: 'failover-p', producerGroup: 'CompatFailoverP' });

    // Senders run through the whole test: each send is acknowledged (SEND_OK), answered otherwise, or
    // fails (no route to a live master, connection refused); only SEND_OK counts as acknowledged.
    const acked = new Map(); // key -> { sentAt, ackedAt, queueId, queueOffset }
    const notOk = [];
    const failures = [];
    let seq = 0;
    let stopSending = false;
    async function sender() {
      while (!stopSending) {
        const i = seq++;
        const key = `failover-${i}`;
        const msg = new Message(topic, 'TagFailover', `failover body ${i}`);
        msg.keys = [ key ];
        const sentAt = Date.now();
        try {
          const r = await producer.send(msg);
          if (r.sendStatus === 'SEND_OK') {
            acked.set(key, { sentAt, ackedAt: Date.now(), queueId: Number(r.messageQueue.queueId),
              queueOffset: r.queueOffset });
          } else {
            notOk.push({ key, status: r.sendStatus });
          }
        } catch (err) {
          failures.push({ key, at: Date.now(), name: err.name, code: err.code, message: err.message });
          await sleep(50);
        }
        await sleep(5);
      }
    }
    const senders = Array.from({ length: SENDERS }, sender);
    const started = Date.now();
    try {
      await waitFor(`${BEFORE} acknowledged sends and live consumption before the kill`, () => {
        cluster.assertServersAlive();
        return acked.size >= BEFORE && log.distinctKeys().size >= BEFORE / 2;
      }, { timeoutMs: 45000, intervalMs: 100 });

      const killedAt = Date.now();
      const ackedBeforeKill = acked.size;
      t.diagnostic(`${ackedBeforeKill} sends acknowledged in ${killedAt - started} ms before the kill`);
      const old = await cluster.killMaster();
      const { replica: next, table } = await cluster.waitForControllerMaster({ exclude: old.index, members: 1 });
      const electedMs = Date.now() - killedAt;
      t.diagnostic(`${old.name} killed after ${ackedBeforeKill} acknowledged sends; ${next.name} is master ` +
        `at epoch ${table.masterEpoch} (SyncStateSet ${table.syncStateSet}) and routed ${electedMs} ms later`);
      assert.notEqual(next, old);

      const routedAt = Date.now();
      await waitFor(`${AFTER} sends acknowledged through the new master`, () => {
        cluster.assertServersAlive();
        return [ ...acked.values() ].filter(a => a.sentAt >= routedAt).length >= AFTER;
      }, { timeoutMs: 45000, intervalMs: 100 });
      const firstAckAfter = Math.min(...[ ...acked.values() ].filter(a => a.sentAt > killedAt).map(a => a.ackedAt));
      t.diagnostic(`first SEND_OK of a send made after the kill: ${firstAckAfter - killedAt} ms after it; ` +
        `${failures.length} sends failed and ${notOk.length} were answered without SEND_OK meanwhile`);

      // The killed master returns (same store and port) and must rejoin as a slave of the new one,
      // with the clients still running.
      const restartAt = Date.now();
      await cluster.restartReplica(old);
      const back = await cluster.waitForControllerMaster(); // all three routed and in the SyncStateSet
      t.diagnostic(`${old.name} restarted and back in the SyncStateSet after ${Date.now() - restartAt} ms`);
      assert.equal(back.replica, next, 'the returning replica must not take the mastership back');
      const rejoined = await cluster.runtimeInfo(old.addr);
      assert.equal(rejoined.controllerMaster, 'false', `${old.name} must come back as a slave`);
    } finally {
      stopSending = true;
      await Promise.all(senders);
    }

    // Every acknowledged message reaches the consumer (at least once).
    const stoppedAt = Date.now();
    await waitFor(`all ${acked.size} acknowledged messages to be consumed`, () => {
      cluster.assertServersAlive();
      const seen = log.distinctKeys();
      return [ ...acked.keys() ].every(k => seen.has(k));
    }, { timeoutMs: 60000, intervalMs: 250 }).catch(err => {
      const seen = log.distinctKeys();
      const missing = [ ...acked.keys() ].filter(k => !seen.has(k));
      err.message += `; ${missing.length} acknowledged messages never consumed, e.g. ` +
        JSON.stringify(missing.slice(0, 5).map(k => Object.assign({ key: k }, acked.get(k))));
      throw err;
    });
    t.diagnostic(`the last acknowledged message was consumed ${Date.now() - stoppedAt} ms after the sends stopped`);

    // No acknowledged (queue, offset) was given to two messages, and an offset the consumer read
    // always held the same message: nothing acknowledged or consumed was overwritten.
    const byOffset = new Map();
    for (const [ key, a ] of acked) {
      const id = `${a.queueId}#${a.queueOffset}`;
      assert.ok(!byOffset.has(id), `queue ${a.queueId} offset ${a.queueOffset} acknowledged for both ` +
        `${byOffset.get(id)} and ${key}`);
      byOffset.set(id, key);
    }
    const consumedAt = new Map();
    for (const e of log.entries) {
      const id = `${e.queueId}#${e.queueOffset}`;
      assert.ok(!consumedAt.has(id) || consumedAt.get(id) === e.keys,
        `queue ${e.queueId} offset ${e.queueOffset} delivered as ${consumedAt.get(id)} and as ${e.keys}`);
      consumedAt.set(id, e.keys);
      if (byOffset.has(id)) assert.equal(e.keys, byOffset.get(id), `queue ${e.queueId} offset ${e.queueOffset}`);
    }
    assert.deepEqual(perQueueOrderViolations(log.entries), [], 'first deliveries in queue-offset order');
    const replays = log.entries.length - log.distinctKeys().size;
    t.diagnostic(`${acked.size} acknowledged, ${log.distinctKeys().size} distinct consumed, ${replays} ` +
      'redeliveries (at-least-once allows them: the new master\'s consumer offsets are its last copy)');
  });
}
