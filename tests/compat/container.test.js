'use strict';
// Container mode only (run.sh --group container): the tests' broker is taken out of its running
// container with `mqadmin removeBroker` and put back with `mqadmin addBroker` (REMOVE_BROKER /
// ADD_BROKER on the container's port) under live ali-ons clients, while the container process and
// its other broker (the slave of group B) keep running. The removed broker leaves the routes at
// once; added back, it serves its store again: stored messages, queue offsets and committed
// consumer offsets survive, and the same producer and consumer carry on.

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { DeliveryLog, Message, assignedQueues, canConnect, sendAll, uniqueName, useCluster, waitFor } =
  require('./harness');

const PER_PHASE = 200;

function makeMessages(topic, phase) {
  return Array.from({ length: PER_PHASE }, (_, i) => {
    const msg = new Message(topic, 'TagContainer', `container ${phase} ${i}`);
    msg.keys = [ `container-${phase}-${i}` ];
    return msg;
  });
}

if (process.env.COMPAT_GROUP !== 'container') {
  test('removeBroker / addBroker of the tests\' broker in its container under live ali-ons clients',
    { skip: 'needs the broker container (run.sh --group container)' }, () => {});
} else {
  const h = useCluster('container');

  h.test('removeBroker / addBroker of the tests\' broker in its container: the other broker keeps ' +
    'running, ali-ons carries on, nothing acknowledged is lost', { timeoutMs: 120000 }, async (t, cluster) => {
    const topic = uniqueName('CompatContainer');
    const group = uniqueName('CompatContainerGroup');
    await cluster.createTopic(topic, 8);

    const log = new DeliveryLog();
    const consumer = await cluster.newConsumer({
      instanceName: 'container-c', consumerGroup: group, consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    consumer.subscribe(topic, '*', async msg => log.record('c', msg));
    await waitFor('the consumer to be assigned all 8 queues', () => assignedQueues(consumer, topic).length === 8,
      { timeoutMs: 30000 });
    const producer = await cluster.newProducer({ instanceName: 'container-p', producerGroup: 'CompatContainerP' });

    const before = await sendAll(producer, makeMessages(topic, 'before'));
    assert.deepEqual(before.failures, [], 'sends before the removal must succeed');
    const countPerQueue = new Map();
    for (const r of before.results) {
      const q = Number(r.messageQueue.queueId);
      countPerQueue.set(q, (countPerQueue.get(q) || 0) + 1);
    }
    await waitFor('the messages sent before the removal to be consumed and committed', async () => {
      if (log.distinctKeys().size < PER_PHASE) return false;
      for (const [ q, n ] of countPerQueue) {
        if ((await cluster.committedOffset(topic, group, q)) !== n) return false;
      }
      return true;
    }, { timeoutMs: 45000, intervalMs: 250 });

    const containerPid = cluster.broker.pid;
    const removed = await cluster.mqadmin([ 'removeBroker', '-c', cluster.containerAddr, '-b', cluster.brokerIdentity ]);
    assert.equal(removed.code, 0, `mqadmin removeBroker failed:\n${removed.output}`);
    t.diagnostic(`removeBroker: ${removed.output.trim()}`);
    // It unregistered on its way out: no waiting for the name server's expiry.
    const route = await cluster.routeOf(topic);
    assert.ok(!route || !route.brokerDatas.some(b => b.brokerName === cluster.brokerName),
      `the name server still routes ${topic} to the removed broker: ${JSON.stringify(route)}`);
    assert.equal(await canConnect(cluster.brokerPort), false, 'the removed broker\'s port must be closed');
    // The container and its other broker are untouched.
    cluster.assertServersAlive();
    assert.equal(cluster.broker.pid, containerPid);
    const peerRoute = await cluster.routeOf(cluster.peerGroup.name);
    const peer = peerRoute && peerRoute.brokerDatas.find(b => b.brokerName === cluster.peerGroup.name);
    assert.ok(peer && peer.brokerAddrs['1'] === cluster.peerGroup.slaveAddr,
      `the slave of ${cluster.peerGroup.name} in the container must stay routed: ${JSON.stringify(peerRoute)}`);

    const again = await cluster.mqadmin([ 'removeBroker', '-c', cluster.containerAddr, '-b', cluster.brokerIdentity ]);
    assert.notEqual(again.code, 0, `removing the broker twice must fail:\n${again.output}`);

    const added = await cluster.mqadmin([ 'addBroker', '-c', cluster.containerAddr, '-b', cluster.containerBrokerConf ]);
    assert.equal(added.code, 0, `mqadmin addBroker failed:\n${added.output}`);
    t.diagnostic(`addBroker: ${added.output.trim()}`);
    const { elapsedMs } = await cluster.waitForRoute(topic, 8);
    t.diagnostic(`routable again ${elapsedMs} ms after addBroker returned`);

    // Its store came back with it.
    for (const [ q, n ] of countPerQueue) {
      assert.equal(await cluster.maxOffset(topic, q), n, `queue ${q}: max offset after addBroker`);
      assert.equal(await cluster.committedOffset(topic, group, q), n, `queue ${q}: committed offset after addBroker`);
    }

    // The same clients keep working: ali-ons reconnects on the next request.
    const after = await sendAll(producer, makeMessages(topic, 'after'), 8);
    assert.deepEqual(after.failures.slice(0, 5), [], 'sends after addBroker must succeed');
    for (const [ i, r ] of after.results.entries()) {
      const q = Number(r.messageQueue.queueId);
      assert.ok(r.queueOffset >= (countPerQueue.get(q) || 0),
        `message ${i} after addBroker got offset ${r.queueOffset} in queue ${q}: offsets must continue`);
    }
    await waitFor('the messages sent after addBroker to be consumed', () => {
      cluster.assertServersAlive();
      return [ ...log.distinctKeys() ].filter(k => k.startsWith('container-after-')).length >= PER_PHASE;
    }, { timeoutMs: 45000, intervalMs: 250 });
    const replays = log.entries.length - log.distinctKeys().size;
    t.diagnostic(`${replays} redeliveries across the removal (at-least-once allows them)`);

    // The slave of group B kept replicating all along (probe through its master).
    await cluster._waitForGroup();
  });
}
