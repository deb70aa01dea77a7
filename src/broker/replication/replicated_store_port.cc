#include "broker/replication/replicated_store_port.h"

#include "protocol/message_ext.h"

namespace comet::broker {
namespace {

// Java Message#isWaitStoreMsgOK: true unless WAIT is "false".
bool waits_for_store(const protocol::MessageExt& msg) {
    const std::string* wait = msg.property(protocol::property::kWaitStoreMsgOk);
    return wait == nullptr || *wait != "false";
}

// The replication service's answer handed to a store completion (durability is not reported on
// these internal writes).
ReplicationService::Done to_put_callback(MessageStorePort::PutCallback done) {
    return [done = std::move(done)](store::PutMessageResult r, SendDurability) mutable {
        done(std::move(r));
    };
}

}  // namespace

void ReplicatedStorePort::put_message(const protocol::MessageExt& msg, std::string_view body,
                                      PutCallback done) {
    // put() runs the append before it returns: msg and body are still the caller's then.
    replication_.put(
        waits_for_store(msg),
        [this, &msg, body](PutCallback cb) { store_.put_message(msg, body, std::move(cb)); },
        to_put_callback(std::move(done)));
}

void ReplicatedStorePort::put_messages(protocol::MessageExt batch, PutCallback done) {
    const bool wait = waits_for_store(batch);
    replication_.put(
        wait,
        [this, &batch](PutCallback cb) { store_.put_messages(std::move(batch), std::move(cb)); },
        to_put_callback(std::move(done)));
}

bool ReplicatedStorePort::put_acknowledged(store::PutMessageStatus status) const {
    if (replication_.dledger() != nullptr) {
        // RocketMQ's DLedgerCommitLog: anything short of a majority commit may be cut at the
        // next leader change.
        return status == store::PutMessageStatus::kPutOk;
    }
    return store_.put_acknowledged(status);
}

}  // namespace comet::broker
