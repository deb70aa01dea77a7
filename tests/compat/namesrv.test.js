'use strict';
// (extra) Two name servers side by side: the broker registers with both (`namesrvAddr=a;b`), ali-ons
// is given both (`nameSrv: [a, b]`) and spreads its route lookups over them; with one of them stopped it
// still finds routes through the other.

const assert = require('node:assert/strict');
const {
  DeliveryLog, Message, assignedQueues, sendAll, uniqueName, useCluster, waitFor, wireLog,
} = require('./harness');

const h = useCluster('twons', { namesrvCount: 2 });

function messages(topic, prefix, count) {
  return Array.from({ length: count }, (_, i) => {
    const msg = new Message(topic, 'TagNs', `${prefix} ${i}`);
    msg.keys = [ `${prefix}-${i}` ];
    return msg;
  });
}

function routedByAll(routes, cluster, queueNums) {
  return routes.every(r => r && !(r instanceof Error) && r.queueDatas.some(q =>
    q.brokerName === cluster.brokerName && Number(q.writeQueueNums) === queueNums));
}

h.test('the broker registers with every name server and ali-ons uses all of them',
  { timeoutMs: 120000 }, async (t, cluster) => {
    const [ nsA, nsB ] = cluster.namesrvAddrs;
    assert.ok(routedByAll(await cluster.routeFromEach('TBW102'), cluster, 8),
      'both name servers route TBW102 to the broker after start-up');

    const topic = uniqueName('CompatTwoNs');
    await cluster.createTopic(topic, 8);
    await waitFor(`both name servers to route ${topic}`, async () => routedByAll(await cluster.routeFromEach(topic),
      cluster, 8), { timeoutMs: 45000, intervalMs: 250 });

    const log = new DeliveryLog();
    const consumer = await cluster.newConsumer({
      instanceName: 'twons-c', consumerGroup: uniqueName('CompatTwoNsGroup'), consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    consumer.subscribe(topic, '*', async msg => log.record('c', msg));
    await waitFor('the consumer to be assigned all 8 queues', () => assignedQueues(consumer, topic).length === 8,
      { timeoutMs: 30000 });
    const producer = await cluster.newProducer({ instanceName: 'twons-p', producerGroup: 'CompatTwoNsP' });
    const first = await sendAll(producer, messages(topic, 'twons-a', 100));
    assert.deepEqual(first.failures, [], 'sends must succeed');
    await waitFor('100 messages to be consumed', () => log.distinctKeys().size >= 100, { timeoutMs: 30000 });

    const lookups = wireLog.filter(e => e.code === 105 && e.response && e.response.code === 0);
    assert.ok(lookups.some(e => e.addr === nsA) && lookups.some(e => e.addr === nsB),
      'ali-ons spreads GET_ROUTEINFO_BY_TOPIC over both name servers and both answer');

    // One name server goes away: a brand-new topic is still found through the other one.
    const exit = await cluster.stopNamesrv(0);
    t.diagnostic(`name server ${nsA} stopped (${exit.forced ? 'SIGKILLed' : `exit code ${exit.code}`})`);
    const topic2 = uniqueName('CompatTwoNsLate');
    await cluster.admin.createTopic(cluster.brokerAddr, 'TBW102', {
      topicName: topic2, readQueueNums: 4, writeQueueNums: 4, perm: 6, topicFilterType: 'SINGLE_TAG',
      topicSysFlag: 0, order: false,
    }, 5000);
    await waitFor(`${nsB} to route ${topic2}`, async () => {
      const routes = await cluster.routeFromEach(topic2);
      return routedByAll([ routes[1] ], cluster, 4);
    }, { timeoutMs: 45000, intervalMs: 250 });
    // ali-ons tries each name server once per lookup, but its round-robin index is shared by every
    // concurrent lookup of the client, so one lookup can land on the dead server twice: a send may fail
    // with ECONNREFUSED and is retried here (that is ali-ons' weakness, not the server's).
    const late = await cluster.newProducer({ instanceName: 'twons-p2', producerGroup: 'CompatTwoNsP2' });
    let lookupRetries = 0;
    for (const msg of messages(topic2, 'twons-b', 20)) {
      for (let attempt = 1; ; attempt++) {
        try {
          const r = await late.send(msg);
          assert.equal(r.sendStatus, 'SEND_OK');
          break;
        } catch (err) {
          if (attempt >= 4 || !/ECONNREFUSED/.test(err.message)) throw err;
          lookupRetries++;
        }
      }
    }
    t.diagnostic(`20 sends through the remaining name server, ${lookupRetries} retried after ali-ons hit the dead one`);
  });
