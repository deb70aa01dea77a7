'use strict';
// (4) Stop the consumer, produce more, start it again: it resumes from the committed offset
// (UPDATE_CONSUMER_OFFSET / QUERY_CONSUMER_OFFSET) without replaying acknowledged messages.

const assert = require('node:assert/strict');
const { DeliveryLog, Message, assignedQueues, sendAll, uniqueName, useCluster, waitFor } = require('./harness');

const h = useCluster('resume');
const PHASE_A = 300;
const PHASE_B = 300;

function makeMessages(topic, phase, count) {
  return Array.from({ length: count }, (_, i) => {
    const msg = new Message(topic, 'TagResume', `resume ${phase} ${i}`);
    msg.keys = [ `resume-${phase}-${i}` ];
    return msg;
  });
}

h.test('a restarted consumer resumes from the committed offsets without replaying acknowledged messages',
  { timeoutMs: 120000 }, async (t, cluster) => {
    const topic = uniqueName('CompatResume');
    const group = uniqueName('CompatResumeGroup');
    await cluster.createTopic(topic, 8);
    const producer = await cluster.newProducer({ instanceName: 'resume-producer', producerGroup: 'CompatResumeP' });

    // Phase A: default CONSUME_FROM_LAST_OFFSET — a new group starts at the queue ends (empty here).
    const logA = new DeliveryLog();
    const first = await cluster.newConsumer({ instanceName: 'resume-c', consumerGroup: group });
    first.subscribe(topic, '*', async msg => logA.record('first', msg));
    await waitFor('the first consumer to be assigned all 8 queues', () => assignedQueues(first, topic).length === 8,
      { timeoutMs: 30000 });

    const sentA = await sendAll(producer, makeMessages(topic, 'A', PHASE_A));
    assert.deepEqual(sentA.failures, [], 'phase A sends must succeed');
    await waitFor(`all ${PHASE_A} phase-A messages to be consumed`, () => {
      cluster.assertServersAlive();
      return logA.distinctKeys().size >= PHASE_A;
    }, { timeoutMs: 45000, intervalMs: 200 });

    const countPerQueue = new Map();
    for (const r of sentA.results) {
      const q = Number(r.messageQueue.queueId);
      countPerQueue.set(q, (countPerQueue.get(q) || 0) + 1);
    }

    // ali-ons commits every persistConsumerOffsetInterval (1 s here) with UPDATE_CONSUMER_OFFSET; the
    // broker must then report next-offset-to-consume = number of messages per queue.
    await waitFor('QUERY_CONSUMER_OFFSET to report the consumed offsets of every queue', async () => {
      for (const [ q, n ] of countPerQueue) {
        if ((await cluster.committedOffset(topic, group, q)) !== n) return false;
      }
      return true;
    }, { timeoutMs: 20000, intervalMs: 250 });

    await cluster.closeClient(first);
    const closedAt = Date.now();

    // Phase B: produced while no consumer of the group is running.
    const sentB = await sendAll(producer, makeMessages(topic, 'B', PHASE_B));
    assert.deepEqual(sentB.failures, [], 'phase B sends must succeed');
    for (const [ q, n ] of countPerQueue) {
      assert.equal(await cluster.committedOffset(topic, group, q), n, `queue ${q}: committed offset kept`);
    }

    const logB = new DeliveryLog();
    const second = await cluster.newConsumer({ instanceName: 'resume-c', consumerGroup: group });
    second.subscribe(topic, '*', async msg => logB.record('second', msg));
    await waitFor(`all ${PHASE_B} phase-B messages to be consumed after the restart`, () => {
      cluster.assertServersAlive();
      return [ ...logB.distinctKeys() ].filter(k => k.startsWith('resume-B-')).length >= PHASE_B;
    }, { timeoutMs: 45000, intervalMs: 200 });
    t.diagnostic(`consumer restarted and caught up ${Date.now() - closedAt} ms after the first one closed`);

    const replayed = logB.entries.filter(e => e.keys.startsWith('resume-A-'));
    assert.deepEqual(replayed.map(e => `${e.keys}@q${e.queueId}:${e.queueOffset}`).slice(0, 10), [],
      `${replayed.length} acknowledged phase-A messages were replayed after the restart`);
    for (const e of logB.entries) {
      assert.ok(e.queueOffset >= countPerQueue.get(e.queueId),
        `${e.keys} at offset ${e.queueOffset} of queue ${e.queueId} is below the committed offset`);
    }
  });
