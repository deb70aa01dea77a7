#include "protocol/ha_bodies.h"

#include "protocol/json_lists.h"

namespace comet::protocol {
namespace {

Status read_id_set(const JsonValue& v, const char* key, std::set<int64_t>* out) {
    const JsonValue* a = find_member(v, key);
    if (a == nullptr) {
        return Status::ok();
    }
    if (!a->IsArray()) {
        return Status::error(Errc::kInvalidArgument, "JSON body: {} is not an array", key);
    }
    for (const auto& e : a->GetArray()) {
        COMET_ASSIGN_OR_RETURN(int64_t id, json_to_int64(e, key));
        out->insert(id);
    }
    return Status::ok();
}

}  // namespace

void SyncStateSet::write_json(JsonWriter& w) const {
    w.begin_object().key("syncStateSet");
    write_value_list(w, sync_state_set);
    w.member("syncStateSetEpoch", sync_state_set_epoch).end_object();
}

Result<SyncStateSet> SyncStateSet::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "SyncStateSet"));
    SyncStateSet s;
    COMET_RETURN_IF_ERROR(read_id_set(v, "syncStateSet", &s.sync_state_set));
    COMET_RETURN_IF_ERROR(read_int32(v, "syncStateSetEpoch", &s.sync_state_set_epoch));
    return s;
}

void ElectMasterResponseBody::write_json(JsonWriter& w) const {
    w.begin_object();
    if (broker_member_group) {
        w.key("brokerMemberGroup");
        broker_member_group->write_json(w);
    }
    w.key("syncStateSet");
    write_value_list(w, sync_state_set);
    w.end_object();
}

Result<ElectMasterResponseBody> ElectMasterResponseBody::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(expect_object(v, "ElectMasterResponseBody"));
    ElectMasterResponseBody b;
    if (const JsonValue* g = find_member(v, "brokerMemberGroup")) {
        COMET_ASSIGN_OR_RETURN(b.broker_member_group, BrokerMemberGroup::from_json(*g));
    }
    COMET_RETURN_IF_ERROR(read_id_set(v, "syncStateSet", &b.sync_state_set));
    return b;
}

}  // namespace comet::protocol
