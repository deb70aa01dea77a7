'use strict';
// (3) A consumer whose handler fails a message gets it redelivered through the retry topic
// %RETRY%<group>: ali-ons sends CONSUMER_SEND_MSG_BACK (delayLevel 0 = "server decides"), the broker
// re-stores the message in the retry topic (after its delay level), and the consumer's automatic
// subscription to that topic hands it to the original handler with reconsumeTimes 1.

const assert = require('node:assert/strict');
const { DeliveryLog, Message, assignedQueues, sendAll, uniqueName, useCluster, waitFor } = require('./harness');

const h = useCluster('retry');
const TOTAL = 40;
const FAILING = new Set([ 'retry-key-3', 'retry-key-17', 'retry-key-30' ]);

h.test('a message whose handler throws is redelivered through the %RETRY% topic',
  { timeoutMs: 120000 }, async (t, cluster) => {
    const topic = uniqueName('CompatRetry');
    const group = uniqueName('CompatRetryGroup');
    const retryTopic = `%RETRY%${group}`;
    await cluster.createTopic(topic, 8);

    const log = new DeliveryLog();
    const failedAt = new Map();
    const sendBacks = [];
    const pulled = [];
    const consumer = await cluster.newConsumer({
      instanceName: 'retry-c1',
      consumerGroup: group,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    const client = consumer._mqClient;
    const originalSendBack = client.consumerSendMessageBack.bind(client);
    client.consumerSendMessageBack = async (addr, msg, ...rest) => {
      const record = { addr, msgId: msg.msgId, keys: msg.keys, topic: msg.topic, ok: false };
      sendBacks.push(record);
      try {
        await originalSendBack(addr, msg, ...rest);
        record.ok = true;
      } catch (err) {
        record.error = `${err.name} code=${err.code}: ${err.message}`;
        throw err;
      }
    };
    const originalPull = client.pullMessage.bind(client);
    client.pullMessage = async (addr, header, ...rest) => {
      const result = await originalPull(addr, header, ...rest);
      for (const m of result.msgFoundList) pulled.push({ requestTopic: header.topic, topic: m.topic, keys: m.keys });
      return result;
    };

    consumer.subscribe(topic, '*', async msg => {
      log.record('c1', msg);
      if (FAILING.has(msg.keys) && msg.reconsumeTimes === 0) {
        failedAt.set(msg.keys, Date.now());
        throw new Error(`compat test: deliberate failure of ${msg.keys}`);
      }
    });
    await waitFor('the consumer to be assigned all 8 queues', () => assignedQueues(consumer, topic).length === 8,
      { timeoutMs: 30000 });

    const producer = await cluster.newProducer({ instanceName: 'retry-producer', producerGroup: 'CompatRetryP' });
    const messages = [];
    for (let i = 0; i < TOTAL; i++) {
      const msg = new Message(topic, 'TagR', `retry body ${i}`);
      msg.keys = [ `retry-key-${i}` ];
      messages.push(msg);
    }
    const { results, failures } = await sendAll(producer, messages, 8);
    assert.deepEqual(failures, [], 'sends must succeed');
    const sentByKey = new Map(messages.map((m, i) => [ `retry-key-${i}`, results[i] ]));

    await waitFor('every failed message to come back with reconsumeTimes >= 1', () => {
      cluster.assertServersAlive();
      const byKey = log.byKey();
      return [ ...FAILING ].every(k => (byKey.get(k) || []).some(e => e.reconsumeTimes >= 1));
    }, { timeoutMs: 75000, intervalMs: 250 });

    // CONSUMER_SEND_MSG_BACK must have succeeded: if it fails, ali-ons silently falls back to
    // re-sending the message itself, which would hide a broker problem.
    const failedSendBacks = sendBacks.filter(s => !s.ok);
    assert.deepEqual(failedSendBacks, [], 'CONSUMER_SEND_MSG_BACK must answer SUCCESS');
    assert.deepEqual([ ...new Set(sendBacks.map(s => s.keys)) ].sort(), [ ...FAILING ].sort(),
      'send-backs happen for the failed messages and only for them');

    const byKey = log.byKey();
    for (const key of FAILING) {
      const original = sentByKey.get(key);
      const entries = byKey.get(key);
      const retried = entries.find(e => e.reconsumeTimes >= 1);
      assert.equal(retried.reconsumeTimes, 1, `${key}: first redelivery has reconsumeTimes 1`);
      assert.equal(retried.body, entries[0].body, `${key}: body unchanged`);
      assert.equal(retried.tags, 'TagR', `${key}: tag unchanged`);
      assert.equal(retried.retryTopic, topic, `${key}: RETRY_TOPIC property names the original topic`);
      assert.equal(retried.topic, topic, `${key}: ali-ons resets the topic to the original one`);
      assert.equal(retried.originMessageId, original.msgId, `${key}: ORIGIN_MESSAGE_ID is the original msgId`);
      assert.notEqual(retried.msgId, original.msgId, `${key}: the retry copy is a new CommitLog record`);
      t.diagnostic(`${key}: redelivered ${retried.at - failedAt.get(key)} ms after the failure`);
    }
    // The redelivery came from a PULL_MESSAGE on %RETRY%<group>.
    for (const key of FAILING) {
      assert.ok(pulled.some(p => p.requestTopic === retryTopic && p.keys === key),
        `${key} must be pulled from ${retryTopic}`);
    }
    // Messages that did not fail are not redelivered through the retry topic.
    const spurious = log.entries.filter(e => !FAILING.has(e.keys) && e.reconsumeTimes > 0);
    assert.deepEqual(spurious.map(e => e.keys), [], 'only failed messages are retried');
    const missing = [ ...sentByKey.keys() ].filter(k => !byKey.has(k));
    assert.deepEqual(missing, [], 'every message is delivered');
  });
