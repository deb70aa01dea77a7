#pragma once
// JSON bodies of the controller RPCs (reference §7.2): SyncStateSet and ElectMasterResponseBody.
// Codec functions: COMET_JSON_BODY in json_body.h. Plain values, no threads.

#include <cstdint>
#include <optional>
#include <set>

#include "protocol/json_body.h"
#include "protocol/route_bodies.h"

namespace comet::protocol {

struct SyncStateSet {
    std::set<int64_t> sync_state_set;  // broker ids
    int32_t sync_state_set_epoch = 0;
    bool operator==(const SyncStateSet&) const = default;
    COMET_JSON_BODY(SyncStateSet)
};

struct ElectMasterResponseBody {
    std::optional<BrokerMemberGroup> broker_member_group;
    std::set<int64_t> sync_state_set;
    bool operator==(const ElectMasterResponseBody&) const = default;
    COMET_JSON_BODY(ElectMasterResponseBody)
};

}  // namespace comet::protocol
