#include "ha/quorum_policy.h"

#include <algorithm>

namespace comet::ha {

std::string_view broker_role_name(BrokerRole role) {
    switch (role) {
        case BrokerRole::kAsyncMaster: return "ASYNC_MASTER";
        case BrokerRole::kSyncMaster: return "SYNC_MASTER";
        case BrokerRole::kSlave: return "SLAVE";
    }
    return "UNKNOWN";
}

Result<BrokerRole> parse_broker_role(std::string_view text) {
    if (text == "ASYNC_MASTER") return BrokerRole::kAsyncMaster;
    if (text == "SYNC_MASTER") return BrokerRole::kSyncMaster;
    if (text == "SLAVE") return BrokerRole::kSlave;
    return Status::error(Errc::kInvalidArgument,
                         "brokerRole '{}' is not one of ASYNC_MASTER, SYNC_MASTER, SLAVE", text);
}

std::string_view quorum_rules_name(QuorumRules rules) {
    return rules == QuorumRules::kRocketMq4 ? "RocketMQ 4.9.8" : "RocketMQ 5";
}

std::string_view quorum_rules_value(QuorumRules rules) {
    return rules == QuorumRules::kRocketMq4 ? "4.9.8" : "5";
}

Result<QuorumRules> parse_quorum_rules(std::string_view value) {
    if (value == "4.9.8") {
        return QuorumRules::kRocketMq4;
    }
    if (value == "5") {
        return QuorumRules::kRocketMq5;
    }
    return Status::error(Errc::kInvalidArgument, "quorumRules '{}' is not one of 4.9.8, 5", value);
}

std::string_view quorum_verdict_name(QuorumVerdict v) {
    switch (v) {
        case QuorumVerdict::kPutOkNow: return "PUT_OK_NOW";
        case QuorumVerdict::kWaitForSlaves: return "WAIT_FOR_SLAVES";
        case QuorumVerdict::kInSyncReplicasNotEnough: return "IN_SYNC_REPLICAS_NOT_ENOUGH";
        case QuorumVerdict::kSlaveNotAvailable: return "SLAVE_NOT_AVAILABLE";
    }
    return "UNKNOWN";
}

Status validate_quorum_config(const QuorumConfig& c, std::vector<std::string>* warnings) {
    if (c.total_replicas < 1) {
        return Status::error(Errc::kInvalidArgument, "totalReplicas={} must be >= 1",
                             c.total_replicas);
    }
    if (c.in_sync_replicas < 1) {
        return Status::error(Errc::kInvalidArgument, "inSyncReplicas={} must be >= 1",
                             c.in_sync_replicas);
    }
    if (c.min_in_sync_replicas < 1) {
        return Status::error(Errc::kInvalidArgument, "minInSyncReplicas={} must be >= 1",
                             c.min_in_sync_replicas);
    }
    if (c.in_sync_replicas > c.total_replicas) {
        return Status::error(Errc::kInvalidArgument,
                             "inSyncReplicas={} is greater than totalReplicas={}",
                             c.in_sync_replicas, c.total_replicas);
    }
    if (c.min_in_sync_replicas > c.in_sync_replicas) {
        return Status::error(Errc::kInvalidArgument,
                             "minInSyncReplicas={} is greater than inSyncReplicas={}",
                             c.min_in_sync_replicas, c.in_sync_replicas);
    }
    if (c.ha_max_gap_not_in_sync <= 0) {
        return Status::error(Errc::kInvalidArgument, "haMaxGapNotInSync={} must be > 0",
                             c.ha_max_gap_not_in_sync);
    }
    if (c.ha_slave_fallbehind_max <= 0) {
        return Status::error(Errc::kInvalidArgument, "haSlaveFallbehindMax={} must be > 0",
                             c.ha_slave_fallbehind_max);
    }
    if (warnings != nullptr && c.rules == QuorumRules::kRocketMq5 &&
        c.broker_role == BrokerRole::kSyncMaster && c.in_sync_replicas == 1) {
        warnings->push_back(
            "brokerRole=SYNC_MASTER with inSyncReplicas=1: sends do not wait for any slave "
            "(asynchronous replication, as in RocketMQ 5); set inSyncReplicas=2 or more to wait");
    }
    if (warnings != nullptr && c.enable_auto_in_sync_replicas && !c.enable_slave_acting_master) {
        warnings->push_back(
            "enableAutoInSyncReplicas=true has no effect without enableSlaveActingMaster=true");
    }
    return Status::ok();
}

int32_t in_sync_replica_nums(const QuorumConfig& config, int64_t master_put_offset,
                             std::span<const int64_t> slave_ack_offsets) {
    int32_t n = 1;
    for (int64_t ack : slave_ack_offsets) {
        if (master_put_offset - ack < config.ha_max_gap_not_in_sync) {
            ++n;
        }
    }
    return n;
}

namespace {

// RocketMQ 4.9.8 CommitLog#submitReplicaRequest + HAService#isSlaveOK. 4.9.8 checks the slave
// after the append (masterPutWhere = the put's end); this runs before it, so the gap compared
// is short of that by this one message.
QuorumDecision decide_rocketmq4(const QuorumConfig& c, const QuorumInput& in) {
    QuorumDecision d;
    d.need_handle_ha = in.wait_store_msg_ok && c.broker_role == BrokerRole::kSyncMaster;
    d.need_ack_nums = c.broker_role == BrokerRole::kSyncMaster ? 2 : 1;  // the master + one slave
    d.in_sync = in_sync_replica_nums(c, in.master_put_offset, in.slave_ack_offsets);
    if (!d.need_handle_ha) {
        d.verdict = QuorumVerdict::kPutOkNow;
        return d;
    }
    // push2SlaveMaxOffset: the furthest ack of any connected slave.
    const auto nearest = std::max_element(in.slave_ack_offsets.begin(), in.slave_ack_offsets.end());
    const bool slave_ok = nearest != in.slave_ack_offsets.end() &&
                          in.master_put_offset - *nearest < c.ha_slave_fallbehind_max;
    d.verdict = slave_ok ? QuorumVerdict::kWaitForSlaves : QuorumVerdict::kSlaveNotAvailable;
    return d;
}

}  // namespace

QuorumDecision decide_quorum(const QuorumConfig& c, const QuorumInput& in) {
    if (c.rules == QuorumRules::kRocketMq4) {
        return decide_rocketmq4(c, in);
    }
    QuorumDecision d;
    // CommitLog#needHandleHA: WAIT property, duplication off, SYNC_MASTER only.
    d.need_handle_ha = in.wait_store_msg_ok && !in.duplication_enable &&
                       c.broker_role == BrokerRole::kSyncMaster;
    d.need_ack_nums = c.in_sync_replicas;
    d.in_sync = in_sync_replica_nums(c, in.master_put_offset, in.slave_ack_offsets);
    if (d.need_handle_ha && c.enable_slave_acting_master) {
        d.in_sync = std::min(in.alive_replica_num, d.in_sync);
        // CommitLog#calcNeedAckNums.
        int32_t need = c.in_sync_replicas;
        if (c.enable_auto_in_sync_replicas) {
            need = std::min(need, d.in_sync);
            need = std::max(need, c.min_in_sync_replicas);
        }
        d.need_ack_nums = need;
        d.degraded = need < c.in_sync_replicas;
        if (need > d.in_sync) {
            d.verdict = QuorumVerdict::kInSyncReplicasNotEnough;
            return d;
        }
    }
    // handleDiskFlushAndHA only calls handleHA when needHandleHA; handleHA returns at once for
    // needAckNums in [0, 1].
    if (!d.need_handle_ha || d.need_ack_nums <= 1) {
        d.verdict = QuorumVerdict::kPutOkNow;
        return d;
    }
    if (c.slave_not_available_fast_fail && in.slave_ack_offsets.empty()) {
        d.verdict = QuorumVerdict::kSlaveNotAvailable;
        return d;
    }
    d.verdict = QuorumVerdict::kWaitForSlaves;
    return d;
}

}  // namespace comet::ha
