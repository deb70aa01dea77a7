'use strict';
// (4) Stop the consumer, produce more, start it again: it resumes from the committed offset
// (UPDATE_CONSUMER_OFFSET / QUERY_CONSUMER_OFFSET) without replaying acknowledged messages.

const assert = require('node:assert/strict');
const {
  DeliveryLog, Message, assignedQueues, sendAll, uniqueName, useCluster, waitFor, wireLog,
} = require('./harness');

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

// ali-ons quirk (reference §9.2, UPDATE_CONSUMER_OFFSET): it persists `offset || -1`, so a queue whose
// consume offset is still 0 is committed as -1. A Java broker then answers QUERY_CONSUMER_OFFSET with
// 0 while message 0 is still in the queue (§4.3 QUERY_CONSUMER_OFFSET), so a restarted
// CONSUME_FROM_LAST_OFFSET consumer starts at 0. If the broker handed -1 back, ali-ons would treat the
// group as new and jump to the queue end: everything produced while it was down would be skipped.
h.test('a consumer that committed -1 (nothing consumed yet) still gets what was produced while it was down',
  { timeoutMs: 90000 }, async (t, cluster) => {
    const topic = uniqueName('CompatResumeEmpty');
    const group = uniqueName('CompatResumeEmptyGroup');
    const TOTAL = 80;
    await cluster.createTopic(topic, 8);

    const first = await cluster.newConsumer({ instanceName: 'resume-empty-c', consumerGroup: group });
    first.subscribe(topic, '*', async () => {});
    await waitFor('the first consumer to be assigned all 8 queues', () => assignedQueues(first, topic).length === 8,
      { timeoutMs: 30000 });
    // Let at least two persist rounds (1 s) commit the untouched queues, then stop (close persists too).
    await new Promise(resolve => setTimeout(resolve, 2500));
    await cluster.closeClient(first);
    const minusOne = wireLog.filter(e => e.code === 15 && e.ext && e.ext.topic === topic && e.ext.commitOffset === -1);
    assert.ok(minusOne.length > 0, 'ali-ons must have sent UPDATE_CONSUMER_OFFSET with commitOffset -1 (the quirk)');
    const committed = [];
    for (let q = 0; q < 8; q++) committed.push(await cluster.committedOffset(topic, group, q));
    t.diagnostic(`QUERY_CONSUMER_OFFSET after ali-ons committed -1 on empty queues: ${committed.join(',')}`);

    const producer = await cluster.newProducer({ instanceName: 'resume-empty-producer', producerGroup: 'CompatRep' });
    const { failures } = await sendAll(producer, makeMessages(topic, 'E', TOTAL));
    assert.deepEqual(failures, [], 'sends must succeed');

    const log = new DeliveryLog();
    const second = await cluster.newConsumer({ instanceName: 'resume-empty-c', consumerGroup: group });
    second.subscribe(topic, '*', async msg => log.record('second', msg));
    try {
      await waitFor(`all ${TOTAL} messages produced while the group was down to be consumed`, () => {
        cluster.assertServersAlive();
        return log.distinctKeys().size >= TOTAL;
      }, { timeoutMs: 30000, intervalMs: 200 });
    } catch (err) {
      err.message += ` (got ${log.distinctKeys().size}; committed offsets before the restart: ${committed.join(',')})`;
      throw err;
    }
  });

// SEARCH_OFFSET_BY_TIMESTAMP (29), the request behind ali-ons' CONSUME_FROM_TIMESTAMP. (A brand-new group
// on a young topic never gets there: QUERY_CONSUMER_OFFSET answers 0 while message 0 is still in memory,
// as a Java broker does for clients that do not send setZeroIfNotFound — ali-ons does not — so the
// request is sent here through ali-ons' own MQClientAPI.searchOffset.) The timestamp lies ≥ 2 s after
// the first batch and < 1.2 s before the second, so both the 5.x rule (first message stored at or after
// it) and 4.9.8's "nearest message" give the first offset of the second batch in every queue.
h.test('SEARCH_OFFSET_BY_TIMESTAMP finds the first message stored after the timestamp',
  { timeoutMs: 60000 }, async (t, cluster) => {
    const topic = uniqueName('CompatTimestamp');
    await cluster.createTopic(topic, 4);
    const producer = await cluster.newProducer({ instanceName: 'ts-producer', producerGroup: 'CompatTsP' });
    const early = await sendAll(producer, makeMessages(topic, 'early', 40));
    assert.deepEqual(early.failures, [], 'early sends must succeed');
    const earlyPerQueue = new Map();
    for (const r of early.results) {
      const q = Number(r.messageQueue.queueId);
      earlyPerQueue.set(q, (earlyPerQueue.get(q) || 0) + 1);
    }

    await new Promise(resolve => setTimeout(resolve, 2500));
    const stamp = Date.now();
    await new Promise(resolve => setTimeout(resolve, 200));
    const late = await sendAll(producer, makeMessages(topic, 'late', 40));
    assert.deepEqual(late.failures, [], 'late sends must succeed');
    const perQueue = new Map(earlyPerQueue);
    for (const r of late.results) {
      const q = Number(r.messageQueue.queueId);
      perQueue.set(q, (perQueue.get(q) || 0) + 1);
    }
    // A send is acknowledged before its ConsumeQueue entry is written (dispatch runs behind the
    // CommitLog, as in RocketMQ): search once every queue shows the whole second batch.
    for (let q = 0; q < 4; q++) {
      await waitFor(`queue ${q} to show ${perQueue.get(q) || 0} messages`,
        async () => (await cluster.maxOffset(topic, q)) === (perQueue.get(q) || 0));
    }

    for (let q = 0; q < 4; q++) {
      const offset = await cluster.admin.searchOffset(cluster.brokerAddr, topic, q, stamp, 3000);
      assert.equal(offset, earlyPerQueue.get(q) || 0,
        `queue ${q}: SEARCH_OFFSET_BY_TIMESTAMP(${stamp}) must return the first offset of the second batch`);
    }
  });
