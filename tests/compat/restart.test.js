'use strict';
// Broker restart under live ali-ons clients: a clean SIGTERM stop, a restart on the same port and store,
// then the same producer and push consumer carry on. Nothing acknowledged is lost: stored messages,
// queue offsets and committed consumer offsets survive, and messages sent after the restart arrive.

const assert = require('node:assert/strict');
const { DeliveryLog, Message, assignedQueues, sendAll, uniqueName, useCluster, waitFor } = require('./harness');

const h = useCluster('restart');
const PER_PHASE = 200;

function makeMessages(topic, phase) {
  return Array.from({ length: PER_PHASE }, (_, i) => {
    const msg = new Message(topic, 'TagRestart', `restart ${phase} ${i}`);
    msg.keys = [ `restart-${phase}-${i}` ];
    return msg;
  });
}

h.test('producer and consumer carry on across a broker restart without losing acknowledged data',
  { timeoutMs: 120000 }, async (t, cluster) => {
    const topic = uniqueName('CompatRestart');
    const group = uniqueName('CompatRestartGroup');
    await cluster.createTopic(topic, 8);

    const log = new DeliveryLog();
    const consumer = await cluster.newConsumer({
      instanceName: 'restart-c', consumerGroup: group, consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    consumer.subscribe(topic, '*', async msg => log.record('c', msg));
    await waitFor('the consumer to be assigned all 8 queues', () => assignedQueues(consumer, topic).length === 8,
      { timeoutMs: 30000 });
    const producer = await cluster.newProducer({ instanceName: 'restart-p', producerGroup: 'CompatRestartP' });

    const before = await sendAll(producer, makeMessages(topic, 'before'));
    assert.deepEqual(before.failures, [], 'sends before the restart must succeed');
    const countPerQueue = new Map();
    for (const r of before.results) {
      const q = Number(r.messageQueue.queueId);
      countPerQueue.set(q, (countPerQueue.get(q) || 0) + 1);
    }
    await waitFor('the messages sent before the restart to be consumed and committed', async () => {
      if (log.distinctKeys().size < PER_PHASE) return false;
      for (const [ q, n ] of countPerQueue) {
        if ((await cluster.committedOffset(topic, group, q)) !== n) return false;
      }
      return true;
    }, { timeoutMs: 45000, intervalMs: 250 });

    const { exit, stopMs, startMs } = await cluster.restartBroker();
    t.diagnostic(`broker stopped in ${stopMs} ms (${exit.forced ? 'SIGKILLed after SIGTERM grace' :
      `exit code ${exit.code}`}), restarted and registered in ${startMs} ms`);
    assert.ok(!exit.forced, 'the broker must stop within 10 s of SIGTERM');
    assert.equal(exit.code, 0, 'a SIGTERM stop is a clean exit (status 0)');

    // Store and offsets survived the restart.
    for (const [ q, n ] of countPerQueue) {
      assert.equal(await cluster.maxOffset(topic, q), n, `queue ${q}: max offset after the restart`);
      assert.equal(await cluster.committedOffset(topic, group, q), n, `queue ${q}: committed offset after the restart`);
    }

    // The same clients keep working: ali-ons reconnects on the next request.
    const after = await sendAll(producer, makeMessages(topic, 'after'), 8);
    assert.deepEqual(after.failures.slice(0, 5), [], 'sends after the restart must succeed');
    for (const [ i, r ] of after.results.entries()) {
      const q = Number(r.messageQueue.queueId);
      assert.ok(r.queueOffset >= (countPerQueue.get(q) || 0),
        `message ${i} after the restart got offset ${r.queueOffset} in queue ${q}: offsets must continue`);
    }
    await waitFor('the messages sent after the restart to be consumed', () => {
      cluster.assertServersAlive();
      return [ ...log.distinctKeys() ].filter(k => k.startsWith('restart-after-')).length >= PER_PHASE;
    }, { timeoutMs: 45000, intervalMs: 250 });
    const replays = log.entries.length - log.distinctKeys().size;
    t.diagnostic(`${replays} redeliveries across the restart (at-least-once allows them)`);
  });
