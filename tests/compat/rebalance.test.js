'use strict';
// (5) Two consumers in one group split the queues between them (GET_CONSUMER_LIST_BY_GROUP + ali-ons'
// "averagely" allocation), each consuming only its own queues; when one leaves (UNREGISTER_CLIENT)
// the other takes all queues back.

const assert = require('node:assert/strict');
const { DeliveryLog, Message, assignedQueues, sendAll, uniqueName, useCluster, waitFor } = require('./harness');

const h = useCluster('rebalance');
const TOTAL = 400;

h.test('two consumers of one group split the 8 queues and each consumes only its own',
  { timeoutMs: 120000 }, async (t, cluster) => {
    const topic = uniqueName('CompatRebalance');
    const group = uniqueName('CompatRebalanceGroup');
    await cluster.createTopic(topic, 8);

    const log = new DeliveryLog();
    const options = { consumerGroup: group, consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET' };
    const c1 = await cluster.newConsumer({ instanceName: 'rebalance-1', ...options });
    c1.subscribe(topic, '*', async msg => log.record('c1', msg));
    await waitFor('c1 alone to be assigned all 8 queues', () => assignedQueues(c1, topic).length === 8,
      { timeoutMs: 30000 });

    const c2 = await cluster.newConsumer({ instanceName: 'rebalance-2', ...options });
    c2.subscribe(topic, '*', async msg => log.record('c2', msg));

    const ids = await waitFor('GET_CONSUMER_LIST_BY_GROUP to list both consumers', async () => {
      const list = await cluster.admin.getConsumerIdListByGroup(cluster.brokerAddr, group, 3000);
      return list && list.length === 2 && list;
    }, { timeoutMs: 20000, intervalMs: 200 });
    assert.deepEqual(ids.slice().sort(), [ c1._mqClient.clientId, c2._mqClient.clientId ].sort(),
      'the consumer id list holds the clientIDs sent in HEART_BEAT');

    await waitFor('c1 and c2 to hold 4 disjoint queues each', () => {
      const a = assignedQueues(c1, topic);
      const b = assignedQueues(c2, topic);
      return a.length === 4 && b.length === 4 && new Set([ ...a, ...b ]).size === 8;
    }, { timeoutMs: 30000, intervalMs: 200 });
    const queuesOf = { c1: new Set(assignedQueues(c1, topic)), c2: new Set(assignedQueues(c2, topic)) };
    t.diagnostic(`c1 queues ${[ ...queuesOf.c1 ]}, c2 queues ${[ ...queuesOf.c2 ]}`);

    const producer = await cluster.newProducer({ instanceName: 'rebalance-producer', producerGroup: 'CompatRbP' });
    const messages = Array.from({ length: TOTAL }, (_, i) => {
      const msg = new Message(topic, 'TagRb', `rebalance ${i}`);
      msg.keys = [ `rebalance-${i}` ];
      return msg;
    });
    const { failures } = await sendAll(producer, messages);
    assert.deepEqual(failures, [], 'sends must succeed');

    await waitFor(`all ${TOTAL} messages to be consumed by the pair`, () => {
      cluster.assertServersAlive();
      return log.distinctKeys().size >= TOTAL;
    }, { timeoutMs: 45000, intervalMs: 200 });

    const wrongConsumer = log.entries.filter(e => !queuesOf[e.consumer].has(e.queueId));
    assert.deepEqual(wrongConsumer.map(e => `${e.keys} q${e.queueId} -> ${e.consumer}`).slice(0, 10), [],
      'a message must be consumed by the consumer that owns its queue');
    const perConsumer = { c1: 0, c2: 0 };
    for (const e of log.entries) perConsumer[e.consumer]++;
    t.diagnostic(`deliveries: c1 ${perConsumer.c1}, c2 ${perConsumer.c2}`);
    assert.ok(perConsumer.c1 > 0 && perConsumer.c2 > 0, 'both consumers receive messages');

    // c2 leaves: UNREGISTER_CLIENT, then c1's next rebalance must take every queue back.
    await cluster.closeClient(c2);
    await waitFor('c1 to own all 8 queues again after c2 left', () => assignedQueues(c1, topic).length === 8,
      { timeoutMs: 30000, intervalMs: 200 });
  });
