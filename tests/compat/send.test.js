'use strict';
// (1) An ali-ons producer sends 10,000 messages with keys and tags to an auto-created 8-queue topic;
// every send must return SEND_OK with a consistent (msgId, queueId, queueOffset).

const assert = require('node:assert/strict');
const { Message, sendAll, uniqueName, useCluster, waitFor } = require('./harness');

const h = useCluster('send');
const TOTAL = 10000;
const TAGS = [ 'TagA', 'TagB', 'TagC', 'TagD' ];

h.test('producer: 10,000 sends with keys and tags to an auto-created 8-queue topic all return SEND_OK',
  { timeoutMs: 150000 }, async (t, cluster) => {
    const topic = uniqueName('CompatAutoCreate');
    // The name server must answer TOPIC_NOT_EXIST (17) for an unknown topic: routeOf() maps exactly
    // that code to null and throws on anything else.
    assert.equal(await cluster.routeOf(topic), null, `${topic} must not exist before the first send`);

    const producer = await cluster.newProducer({
      instanceName: 'send-producer',
      producerGroup: 'CompatSendGroup',
      defaultTopicQueueNums: 8,
    });
    // ali-ons rethrows the TOPIC_NOT_EXIST of its first route lookup out of send() (reference §9.3.3)
    // instead of falling back to the default topic like the Java client does. The fall-back itself is
    // ali-ons code: refresh the route from TBW102 ("isDefault") exactly as its tryToFindTopicPublishInfo
    // would, then every SEND_MESSAGE_V2 carries defaultTopic=TBW102, defaultTopicQueueNums=8 and the
    // broker must create the topic on the first one.
    await producer._mqClient.updateTopicRouteInfoFromNameServer(topic, true, producer);
    const publishInfo = producer._topicPublishInfoTable.get(topic);
    assert.ok(publishInfo && publishInfo.messageQueueList.length === 8,
      `TBW102 must route 8 writable queues to the producer (got ${publishInfo &&
        publishInfo.messageQueueList.length})`);

    const messages = [];
    for (let i = 0; i < TOTAL; i++) {
      const msg = new Message(topic, TAGS[i % TAGS.length], `compat send body ${i} ${'x'.repeat(i % 97)}`);
      msg.keys = [ `send-key-${i}` ];
      messages.push(msg);
    }

    const started = Date.now();
    const { results, failures } = await sendAll(producer, messages, 64);
    const elapsedMs = Date.now() - started;
    t.diagnostic(`${TOTAL} sends in ${elapsedMs} ms (${Math.round(TOTAL * 1000 / elapsedMs)} msg/s, ` +
      '64 in flight, one connection)');

    assert.deepEqual(failures.slice(0, 5), [], `${failures.length} sends failed; first ones shown`);
    const notOk = results.filter(r => !r || r.sendStatus !== 'SEND_OK');
    assert.equal(notOk.length, 0, `sends without SEND_OK: ${JSON.stringify(notOk.slice(0, 3))}`);

    // Response header: msgId / queueId / queueOffset must be present and consistent.
    const msgIds = new Set();
    const offsetsByQueue = new Map();
    for (const r of results) {
      assert.match(String(r.msgId), /^[0-9A-F]{32}$/, `msgId must be 32 upper-case hex chars: ${r.msgId}`);
      msgIds.add(r.msgId);
      const queueId = Number(r.messageQueue.queueId);
      assert.ok(Number.isInteger(queueId) && queueId >= 0 && queueId < 8, `bad queueId ${r.messageQueue.queueId}`);
      assert.ok(Number.isInteger(r.queueOffset), `bad queueOffset ${r.queueOffset}`);
      if (!offsetsByQueue.has(queueId)) offsetsByQueue.set(queueId, []);
      offsetsByQueue.get(queueId).push(r.queueOffset);
    }
    assert.equal(msgIds.size, TOTAL, 'every send must return a distinct msgId');
    assert.equal(offsetsByQueue.size, 8, 'ali-ons spreads sends round-robin over all 8 queues');
    for (const [ queueId, offsets ] of offsetsByQueue) {
      const sorted = offsets.slice().sort((a, b) => a - b);
      const expected = Array.from({ length: sorted.length }, (_, i) => i);
      assert.deepEqual(sorted, expected, `queue ${queueId}: queue offsets must be exactly 0..n-1`);
    }

    // The broker created the topic with 8 queues and registered it with the name server.
    const { route, elapsedMs: routeMs } = await cluster.waitForRoute(topic, 8);
    t.diagnostic(`auto-created topic routable from the name server ${routeMs} ms after the sends`);
    const queueData = route.queueDatas.find(q => q.brokerName === cluster.brokerName);
    assert.ok((queueData.perm & 6) === 6, `auto-created topic must be readable and writable (perm ${queueData.perm})`);
    const brokerData = route.brokerDatas.find(b => b.brokerName === cluster.brokerName);
    assert.equal(brokerData.brokerAddrs['0'], cluster.brokerAddr, 'brokerAddrs["0"] must be the master address');

    // GET_MAX_OFFSET agrees with what the sends returned.
    for (const [ queueId, offsets ] of offsetsByQueue) {
      const max = await waitFor(`max offset of queue ${queueId} to reach ${offsets.length}`, async () => {
        const m = await cluster.maxOffset(topic, queueId);
        return m === offsets.length ? m : null;
      }, { timeoutMs: 10000, intervalMs: 100 });
      assert.equal(max, offsets.length);
    }
  });
