'use strict';
// (2) A push consumer group with a tag subscription receives exactly the matching messages, each at
// least once, in per-queue order, with the bodies, keys, tags, queue ids/offsets and msgIds the
// producer saw.

const assert = require('node:assert/strict');
const {
  DeliveryLog, Message, assignedQueues, perQueueOrderViolations, sendAll, uniqueName, useCluster, waitFor,
} = require('./harness');

const h = useCluster('consume');
const BEFORE = 1000; // sent before the consumer starts (served from the store)
const AFTER = 1000; // sent while the consumer is long-polling
const TAGS = [ 'TagA', 'TagB', 'TagC' ];
const SUBSCRIPTION = 'TagA || TagC';
const WANTED = new Set([ 'TagA', 'TagC' ]);

function makeMessages(topic, from, count) {
  const out = [];
  for (let i = from; i < from + count; i++) {
    // Every 50th body is above ali-ons' 4 KiB compression threshold: sent zlib-compressed with sysFlag 1
    // and must come back with the flag so ali-ons inflates it.
    // Multi-byte UTF-8 in bodies and property values: lengths on the wire are byte counts.
    const body = i % 50 === 7 ? `big-${i}-` + 'abcdefghij'.repeat(600) : `consume body ${i} ✓ ü 世界`;
    // Every 11th message has no tag: ali-ons then sends the literal property TAGS=null (§9.3.9), which
    // must not match the subscription either.
    const tag = i % 11 === 5 ? null : TAGS[i % TAGS.length];
    const msg = new Message(topic, tag, body);
    msg.keys = [ `consume-key-${i}` ];
    const props = { compatSeq: String(i), compatNote: i % 10 === 0 ? `naïve ☃ ${i}` : 'plain' };
    Object.assign(msg.properties, props);
    out.push({ msg, key: `consume-key-${i}`, tag: tag === null ? 'null' : tag, body, props });
  }
  return out;
}

h.test('push consumer with tag subscription receives exactly the matching messages in per-queue order',
  { timeoutMs: 120000 }, async (t, cluster) => {
    const topic = uniqueName('CompatConsume');
    const group = uniqueName('CompatConsumeGroup');
    const { elapsedMs } = await cluster.createTopic(topic, 8);
    t.diagnostic(`UPDATE_AND_CREATE_TOPIC -> routable from the name server in ${elapsedMs} ms`);

    const producer = await cluster.newProducer({ instanceName: 'consume-producer', producerGroup: 'CompatConsumeP' });
    const first = makeMessages(topic, 0, BEFORE);
    const sent1 = await sendAll(producer, first.map(m => m.msg));
    assert.deepEqual(sent1.failures.slice(0, 5), [], 'sends before the consumer started must succeed');

    const log = new DeliveryLog();
    const pulledTags = [];
    const consumer = await cluster.newConsumer({
      instanceName: 'consume-c1',
      consumerGroup: group,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    // Observe what the broker returns to PULL_MESSAGE before ali-ons' own client-side tag check.
    const client = consumer._mqClient;
    const originalPull = client.pullMessage.bind(client);
    client.pullMessage = async (...args) => {
      const result = await originalPull(...args);
      for (const m of result.msgFoundList) pulledTags.push({ topic: m.topic, tags: m.tags, keys: m.keys });
      return result;
    };
    consumer.subscribe(topic, SUBSCRIPTION, async msg => {
      log.record('c1', msg);
    });

    await waitFor('the consumer to be assigned all 8 queues', () => assignedQueues(consumer, topic).length === 8,
      { timeoutMs: 30000 });

    const second = makeMessages(topic, BEFORE, AFTER);
    const sent2 = await sendAll(producer, second.map(m => m.msg));
    assert.deepEqual(sent2.failures.slice(0, 5), [], 'sends while the consumer runs must succeed');

    const all = first.concat(second);
    const results = sent1.results.concat(sent2.results);
    const expected = new Map();
    all.forEach((m, i) => {
      if (WANTED.has(m.tag)) expected.set(m.key, { ...m, result: results[i] });
    });

    await waitFor(`all ${expected.size} matching messages to be consumed`, () => {
      cluster.assertServersAlive();
      return log.distinctKeys().size >= expected.size;
    }, { timeoutMs: 60000, intervalMs: 200 });

    const deliveries = log.byKey();
    const unexpected = [ ...deliveries.keys() ].filter(k => !expected.has(k));
    assert.deepEqual(unexpected.slice(0, 10), [], 'the handler must only see messages matching the subscription');
    const missing = [ ...expected.keys() ].filter(k => !deliveries.has(k));
    assert.deepEqual(missing.slice(0, 10), [], 'every matching message must be delivered');

    let duplicates = 0;
    for (const [ key, entries ] of deliveries) {
      const want = expected.get(key);
      duplicates += entries.length - 1;
      for (const e of entries) {
        assert.equal(e.topic, topic);
        assert.equal(e.tags, want.tag, `${key}: tag`);
        assert.equal(e.body, want.body, `${key}: body (compressed bodies must round-trip)`);
        assert.equal(e.properties.compatSeq, want.props.compatSeq, `${key}: user property compatSeq`);
        assert.equal(e.properties.compatNote, want.props.compatNote, `${key}: UTF-8 user property compatNote`);
        assert.equal(e.queueId, Number(want.result.messageQueue.queueId), `${key}: queueId vs send result`);
        assert.equal(e.queueOffset, want.result.queueOffset, `${key}: queueOffset vs send result`);
        // ali-ons derives the msgId of a pulled message from STOREHOST + PHYSICALOFFSET (§9.3.8); it must
        // equal the msgId the broker returned for the send.
        assert.equal(e.msgId, want.result.msgId, `${key}: msgId of the pulled message vs the send response`);
        assert.equal(e.storeHost, cluster.brokerAddr, `${key}: STOREHOST must be the broker's IPv4 address`);
      }
    }
    t.diagnostic(`${expected.size} matching messages, ${duplicates} duplicate deliveries`);
    assert.deepEqual(perQueueOrderViolations(log.entries).slice(0, 10), [],
      'messages of one queue must be delivered in queue-offset order');

    // Server-side tag filtering (tag hash in the ConsumeQueue): TagA/TagB/TagC have distinct hash
    // codes, so a broker that filters never returns a TagB message to this subscription.
    const leaked = pulledTags.filter(p => p.topic === topic && !WANTED.has(p.tags));
    assert.equal(leaked.length, 0,
      `broker returned ${leaked.length} non-matching messages to PULL_MESSAGE with subscription ` +
      `"${SUBSCRIPTION}" (e.g. ${JSON.stringify(leaked.slice(0, 3))})`);
  });
