#include "controller/replicas_bodies.h"

namespace comet::controller {
namespace {

using protocol::JsonValue;
using protocol::JsonWriter;

void write_replicas(JsonWriter& w, const std::vector<ReplicaIdentity>& list) {
    w.begin_array();
    for (const auto& r : list) {
        w.begin_object()
            .member("alive", r.alive)
            .member("brokerAddress", r.broker_address)
            .member("brokerId", r.broker_id)
            .member("brokerName", r.broker_name)
            .end_object();
    }
    w.end_array();
}

Status read_replicas(const JsonValue& obj, const char* key, std::vector<ReplicaIdentity>* out) {
    const JsonValue* a = protocol::find_member(obj, key);
    if (a == nullptr) {
        return Status::ok();
    }
    if (!a->IsArray()) {
        return Status::error(Errc::kInvalidArgument, "BrokerReplicasInfo: {} is not an array", key);
    }
    for (const auto& e : a->GetArray()) {
        COMET_RETURN_IF_ERROR(protocol::expect_object(e, "ReplicaIdentity"));
        ReplicaIdentity r;
        COMET_RETURN_IF_ERROR(protocol::read_bool(e, "alive", &r.alive));
        COMET_RETURN_IF_ERROR(protocol::read_string(e, "brokerAddress", &r.broker_address));
        COMET_RETURN_IF_ERROR(protocol::read_int64(e, "brokerId", &r.broker_id));
        COMET_RETURN_IF_ERROR(protocol::read_string(e, "brokerName", &r.broker_name));
        out->push_back(std::move(r));
    }
    return Status::ok();
}

}  // namespace

void BrokerReplicasInfo::write_json(JsonWriter& w) const {
    w.begin_object().key("replicasInfoTable").begin_object();
    for (const auto& [name, info] : replicas_info_table) {
        w.key(name).begin_object().key("inSyncReplicas");
        write_replicas(w, info.in_sync_replicas);
        if (info.master_address) {
            w.member("masterAddress", *info.master_address);
        }
        if (info.master_broker_id) {
            w.member("masterBrokerId", *info.master_broker_id);
        }
        w.member("masterEpoch", info.master_epoch).key("notInSyncReplicas");
        write_replicas(w, info.not_in_sync_replicas);
        w.member("syncStateSetEpoch", info.sync_state_set_epoch).end_object();
    }
    w.end_object().end_object();
}

Result<BrokerReplicasInfo> BrokerReplicasInfo::from_json(const JsonValue& v) {
    COMET_RETURN_IF_ERROR(protocol::expect_object(v, "BrokerReplicasInfo"));
    BrokerReplicasInfo b;
    const JsonValue* table = protocol::find_member(v, "replicasInfoTable");
    if (table == nullptr) {
        return b;
    }
    COMET_RETURN_IF_ERROR(protocol::expect_object(*table, "replicasInfoTable"));
    for (const auto& m : table->GetObject()) {
        COMET_RETURN_IF_ERROR(protocol::expect_object(m.value, "ReplicasInfo"));
        ReplicasInfo info;
        COMET_RETURN_IF_ERROR(read_replicas(m.value, "inSyncReplicas", &info.in_sync_replicas));
        COMET_RETURN_IF_ERROR(protocol::read_string(m.value, "masterAddress", &info.master_address));
        if (protocol::find_member(m.value, "masterBrokerId") != nullptr) {
            int64_t id = 0;
            COMET_RETURN_IF_ERROR(protocol::read_int64(m.value, "masterBrokerId", &id));
            info.master_broker_id = id;
        }
        COMET_RETURN_IF_ERROR(protocol::read_int32(m.value, "masterEpoch", &info.master_epoch));
        COMET_RETURN_IF_ERROR(
            read_replicas(m.value, "notInSyncReplicas", &info.not_in_sync_replicas));
        COMET_RETURN_IF_ERROR(
            protocol::read_int32(m.value, "syncStateSetEpoch", &info.sync_state_set_epoch));
        b.replicas_info_table.emplace(std::string(m.name.GetString(), m.name.GetStringLength()),
                                      std::move(info));
    }
    return b;
}

}  // namespace comet::controller
