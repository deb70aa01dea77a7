#include "controller/events.h"

#include <fmt/format.h>

#include "controller/codec_util.h"

namespace comet::controller {
namespace {

constexpr uint8_t kEventVersion = 1;

struct TypeOf {
    EventType operator()(const AlterSyncStateSetEvent&) const { return EventType::kAlterSyncStateSet; }
    EventType operator()(const ApplyBrokerIdEvent&) const { return EventType::kApplyBrokerId; }
    EventType operator()(const ElectMasterEvent&) const { return EventType::kElectMaster; }
    EventType operator()(const CleanBrokerDataEvent&) const { return EventType::kCleanBrokerData; }
    EventType operator()(const UpdateBrokerAddressEvent&) const {
        return EventType::kUpdateBrokerAddress;
    }
};

void put_id_set(ByteWriter& w, const std::set<BrokerId>& ids) {
    w.be32(static_cast<uint32_t>(ids.size()));
    for (BrokerId id : ids) {
        w.be64(static_cast<uint64_t>(id.value()));
    }
}

bool get_id_set(ByteReader& r, std::set<BrokerId>* out) {
    uint32_t n = 0;
    if (!detail::get_count(r, 8, &n)) {
        return false;
    }
    for (uint32_t i = 0; i < n; ++i) {
        int64_t v = 0;
        // Encoded in ascending order; anything else (duplicates included) is not ours.
        if (!detail::get_i64(r, &v) || (!out->empty() && BrokerId(v) <= *out->rbegin())) {
            return false;
        }
        out->insert(BrokerId(v));
    }
    return true;
}

struct Encoder {
    ByteWriter& w;
    void operator()(const AlterSyncStateSetEvent& e) const {
        detail::put_string(w, e.broker_name);
        put_id_set(w, e.new_sync_state_set);
        w.be32(static_cast<uint32_t>(e.expected_epoch.value()));
    }
    void operator()(const ApplyBrokerIdEvent& e) const {
        detail::put_string(w, e.cluster_name);
        detail::put_string(w, e.broker_name);
        detail::put_string(w, e.broker_address);
        w.be64(static_cast<uint64_t>(e.broker_id.value()));
        detail::put_string(w, e.register_check_code);
    }
    void operator()(const ElectMasterEvent& e) const {
        detail::put_string(w, e.broker_name);
        w.u8(e.new_master_elected ? 1 : 0);
        w.be64(static_cast<uint64_t>(e.new_master.value()));
        w.be32(static_cast<uint32_t>(e.expected_master_epoch.value()));
        w.be32(static_cast<uint32_t>(e.expected_sync_state_set_epoch.value()));
    }
    void operator()(const CleanBrokerDataEvent& e) const {
        detail::put_string(w, e.broker_name);
        put_id_set(w, e.ids_to_clean);
    }
    void operator()(const UpdateBrokerAddressEvent& e) const {
        detail::put_string(w, e.cluster_name);
        detail::put_string(w, e.broker_name);
        detail::put_string(w, e.broker_address);
        w.be64(static_cast<uint64_t>(e.broker_id.value()));
    }
};

// Each returns false on truncated or malformed input.
bool decode_body(ByteReader& r, AlterSyncStateSetEvent* e) {
    int32_t epoch = 0;
    if (!detail::get_string(r, &e->broker_name) || !get_id_set(r, &e->new_sync_state_set) ||
        !detail::get_i32(r, &epoch)) {
        return false;
    }
    e->expected_epoch = SyncStateSetEpoch(epoch);
    return true;
}

bool decode_body(ByteReader& r, ApplyBrokerIdEvent* e) {
    int64_t id = 0;
    if (!detail::get_string(r, &e->cluster_name) || !detail::get_string(r, &e->broker_name) ||
        !detail::get_string(r, &e->broker_address) || !detail::get_i64(r, &id) ||
        !detail::get_string(r, &e->register_check_code)) {
        return false;
    }
    e->broker_id = BrokerId(id);
    return true;
}

bool decode_body(ByteReader& r, ElectMasterEvent* e) {
    uint8_t elected = 0;
    int64_t id = 0;
    int32_t me = 0;
    int32_t sse = 0;
    if (!detail::get_string(r, &e->broker_name) || !r.u8(&elected) || elected > 1 ||
        !detail::get_i64(r, &id) || !detail::get_i32(r, &me) || !detail::get_i32(r, &sse)) {
        return false;
    }
    e->new_master_elected = elected == 1;
    e->new_master = BrokerId(id);
    e->expected_master_epoch = MasterEpoch(me);
    e->expected_sync_state_set_epoch = SyncStateSetEpoch(sse);
    return true;
}

bool decode_body(ByteReader& r, CleanBrokerDataEvent* e) {
    return detail::get_string(r, &e->broker_name) && get_id_set(r, &e->ids_to_clean);
}

bool decode_body(ByteReader& r, UpdateBrokerAddressEvent* e) {
    int64_t id = 0;
    if (!detail::get_string(r, &e->cluster_name) || !detail::get_string(r, &e->broker_name) ||
        !detail::get_string(r, &e->broker_address) || !detail::get_i64(r, &id)) {
        return false;
    }
    e->broker_id = BrokerId(id);
    return true;
}

template <typename T>
Result<Event> decode_as(ByteReader& r) {
    T e;
    if (!decode_body(r, &e)) {
        return Status::error(Errc::kCorruption, "controller event {}: truncated or malformed",
                             event_type_name(TypeOf{}(e)));
    }
    if (r.remaining() != 0) {
        return Status::error(Errc::kCorruption, "controller event {}: {} trailing bytes",
                             event_type_name(TypeOf{}(e)), r.remaining());
    }
    return Event(std::move(e));
}

std::string ids_text(const std::set<BrokerId>& ids) {
    std::string s = "{";
    for (BrokerId id : ids) {
        if (s.size() > 1) {
            s += ',';
        }
        s += std::to_string(id.value());
    }
    return s + "}";
}

}  // namespace

EventType event_type(const Event& e) { return std::visit(TypeOf{}, e); }

std::string_view event_type_name(EventType t) {
    switch (t) {
        case EventType::kAlterSyncStateSet:
            return "AlterSyncStateSet";
        case EventType::kApplyBrokerId:
            return "ApplyBrokerId";
        case EventType::kElectMaster:
            return "ElectMaster";
        case EventType::kCleanBrokerData:
            return "CleanBrokerData";
        case EventType::kUpdateBrokerAddress:
            return "UpdateBrokerAddress";
    }
    return "Unknown";
}

std::string describe(const Event& e) {
    struct Describer {
        std::string operator()(const AlterSyncStateSetEvent& v) const {
            return fmt::format("AlterSyncStateSet {} set={} expect_sse={}", v.broker_name,
                               ids_text(v.new_sync_state_set), v.expected_epoch);
        }
        std::string operator()(const ApplyBrokerIdEvent& v) const {
            return fmt::format("ApplyBrokerId {}/{} id={} addr={} check={}", v.cluster_name,
                               v.broker_name, v.broker_id, v.broker_address, v.register_check_code);
        }
        std::string operator()(const ElectMasterEvent& v) const {
            return fmt::format("ElectMaster {} elected={} master={} expect_me={} expect_sse={}",
                               v.broker_name, v.new_master_elected ? 1 : 0, v.new_master,
                               v.expected_master_epoch, v.expected_sync_state_set_epoch);
        }
        std::string operator()(const CleanBrokerDataEvent& v) const {
            return fmt::format("CleanBrokerData {} ids={}", v.broker_name, ids_text(v.ids_to_clean));
        }
        std::string operator()(const UpdateBrokerAddressEvent& v) const {
            return fmt::format("UpdateBrokerAddress {}/{} id={} addr={}", v.cluster_name,
                               v.broker_name, v.broker_id, v.broker_address);
        }
    };
    return std::visit(Describer{}, e);
}

std::string encode(const Event& e) {
    std::string out;
    ByteWriter w(&out);
    w.u8(kEventVersion);
    w.u8(static_cast<uint8_t>(event_type(e)));
    std::visit(Encoder{w}, e);
    return out;
}

Result<Event> decode(std::string_view bytes) {
    ByteReader r(bytes);
    uint8_t version = 0;
    uint8_t type = 0;
    if (!r.u8(&version) || !r.u8(&type)) {
        return Status::error(Errc::kCorruption, "controller event: {} bytes, need at least 2",
                             bytes.size());
    }
    if (version != kEventVersion) {
        return Status::error(Errc::kUnsupported, "controller event: version {} (expected {})",
                             version, kEventVersion);
    }
    switch (static_cast<EventType>(type)) {
        case EventType::kAlterSyncStateSet:
            return decode_as<AlterSyncStateSetEvent>(r);
        case EventType::kApplyBrokerId:
            return decode_as<ApplyBrokerIdEvent>(r);
        case EventType::kElectMaster:
            return decode_as<ElectMasterEvent>(r);
        case EventType::kCleanBrokerData:
            return decode_as<CleanBrokerDataEvent>(r);
        case EventType::kUpdateBrokerAddress:
            return decode_as<UpdateBrokerAddressEvent>(r);
    }
    return Status::error(Errc::kUnsupported, "controller event: unknown type {}", type);
}

}  // namespace comet::controller
