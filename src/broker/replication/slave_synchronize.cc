#include "broker/replication/slave_synchronize.h"

#include <rapidjson/document.h>
#include <spdlog/spdlog.h>

#include "broker/metadata/consumer_offset_manager.h"
#include "broker/metadata/json_file.h"
#include "broker/metadata/subscription_group_manager.h"
#include "broker/metadata/topic_config_manager.h"
#include "broker/schedule/schedule_message_service.h"
#include "protocol/pull_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;

namespace {

// The "dataVersion" of a wrapper body, or nullopt when absent.
Result<std::optional<DataVersion>> body_version(std::string_view body, std::string_view what) {
    rapidjson::Document doc;
    COMET_RETURN_IF_ERROR(parse_lenient_json(body, what, &doc));
    if (!doc.IsObject()) {
        return Status::error(Errc::kCorruption, "{}: the master's body is not a JSON object", what);
    }
    auto dv = doc.FindMember("dataVersion");
    if (dv == doc.MemberEnd() || !dv->value.IsObject()) {
        return std::optional<DataVersion>{};
    }
    auto version = DataVersion::from_json(dv->value);
    if (!version.is_ok()) {
        return Status::error(Errc::kCorruption, "{}: {}", what, version.status().message());
    }
    return std::optional<DataVersion>{std::move(version).value()};
}

using OffsetTable = std::map<std::string, std::map<int32_t, int64_t>>;

// The offsetTable of a GET_ALL_CONSUMER_OFFSET body, read by the same decoder as the broker's
// own consumerOffset.json.
Result<OffsetTable> parse_offset_table(std::string_view body) {
    ConsumerOffsetManager scratch("");
    COMET_RETURN_IF_ERROR(scratch.decode(body));
    return scratch.table();
}

}  // namespace

SlaveSynchronize::SlaveSynchronize(Tables tables, Invoke invoke)
    : tables_(std::move(tables)), invoke_(std::move(invoke)) {}

bool SlaveSynchronize::set_master_addr(const std::string& addr) {
    MutexLock l(mu_);
    if (master_addr_ == addr) {
        return false;
    }
    spdlog::info("slave synchronize: master address {} -> {}",
                 master_addr_.empty() ? "-" : master_addr_, addr.empty() ? "-" : addr);
    master_addr_ = addr;
    return true;
}

std::string SlaveSynchronize::master_addr() const {
    MutexLock l(mu_);
    return master_addr_;
}

SlaveSynchronize::Stats SlaveSynchronize::stats() const {
    MutexLock l(mu_);
    return stats_;
}

Result<protocol::RemotingCommand> SlaveSynchronize::call(const std::string& master, int32_t code) {
    auto req = protocol::RemotingCommand::request(code);
    req.language = protocol::LanguageCode::kJava;
    COMET_ASSIGN_OR_RETURN(auto resp, invoke_(master, std::move(req)));
    if (resp.code != RC::kSuccess) {
        return Status::error(Errc::kUnavailable, "{} from master {}: code {} {}",
                             protocol::request_code_name(code), master, resp.code,
                             resp.remark.value_or(""));
    }
    return resp;
}

Status SlaveSynchronize::sync_all() {
    const std::string master = master_addr();
    if (master.empty()) {
        return Status::ok();
    }
    Status first;
    int64_t failed = 0;
    for (auto fn : {&SlaveSynchronize::sync_topic_config, &SlaveSynchronize::sync_consumer_offset,
                    &SlaveSynchronize::sync_delay_offset,
                    &SlaveSynchronize::sync_subscription_group_config}) {
        Status st = (this->*fn)(master);
        if (!st.is_ok()) {
            spdlog::warn("slave synchronize from {}: {}", master, st.message());
            ++failed;
            if (first.is_ok()) {
                first = st;
            }
        }
    }
    MutexLock l(mu_);
    ++stats_.rounds;
    stats_.failures += failed;
    if (!first.is_ok()) {
        stats_.last_error = first.message();
    }
    return first;
}

Status SlaveSynchronize::sync_topic_config(const std::string& master) {
    COMET_ASSIGN_OR_RETURN(auto resp, call(master, Req::kGetAllTopicConfig));
    COMET_ASSIGN_OR_RETURN(auto version, body_version(resp.body, "GET_ALL_TOPIC_CONFIG"));
    if (version && *version == tables_.topics->data_version()) {
        return Status::ok();
    }
    COMET_RETURN_IF_ERROR(tables_.topics->decode(resp.body));
    COMET_RETURN_IF_ERROR(tables_.topics->persist());
    spdlog::info("update slave topic config from master, {}", master);
    MutexLock l(mu_);
    ++stats_.topic_replacements;
    return Status::ok();
}

Status SlaveSynchronize::sync_subscription_group_config(const std::string& master) {
    COMET_ASSIGN_OR_RETURN(auto resp, call(master, Req::kGetAllSubscriptionGroupConfig));
    COMET_ASSIGN_OR_RETURN(auto version,
                           body_version(resp.body, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG"));
    if (version && *version == tables_.groups->data_version()) {
        return Status::ok();
    }
    COMET_RETURN_IF_ERROR(tables_.groups->decode(resp.body));
    COMET_RETURN_IF_ERROR(tables_.groups->persist());
    spdlog::info("update slave subscription group from master, {}", master);
    MutexLock l(mu_);
    ++stats_.group_replacements;
    return Status::ok();
}

Status SlaveSynchronize::sync_consumer_offset(const std::string& master) {
    COMET_ASSIGN_OR_RETURN(auto resp, call(master, Req::kGetAllConsumerOffset));
    rapidjson::Document theirs;
    COMET_RETURN_IF_ERROR(parse_lenient_json(resp.body, "GET_ALL_CONSUMER_OFFSET", &theirs));
    if (!theirs.IsObject()) {
        return Status::error(Errc::kCorruption, "GET_ALL_CONSUMER_OFFSET: not a JSON object");
    }
    auto& a = theirs.GetAllocator();
    auto table = theirs.FindMember("offsetTable");
    if (table == theirs.MemberEnd()) {
        theirs.AddMember("offsetTable", rapidjson::Value(rapidjson::kObjectType), a);
        table = theirs.FindMember("offsetTable");
    }
    if (!table->value.IsObject()) {
        return Status::error(Errc::kCorruption,
                             "GET_ALL_CONSUMER_OFFSET: offsetTable is not "
                             "an object");
    }
    // putAll: keep the topic@group entries only this slave has.
    rapidjson::Document ours;
    COMET_RETURN_IF_ERROR(
        parse_lenient_json(tables_.offsets->encode(false), "local consumer offsets", &ours));
    auto mine = ours.FindMember("offsetTable");
    if (mine != ours.MemberEnd() && mine->value.IsObject()) {
        for (auto& m : mine->value.GetObject()) {
            if (!table->value.HasMember(m.name)) {
                table->value.AddMember(rapidjson::Value(m.name, a), rapidjson::Value(m.value, a),
                                       a);
            }
        }
    }
    COMET_RETURN_IF_ERROR(tables_.offsets->decode(to_json(theirs)));
    COMET_RETURN_IF_ERROR(tables_.offsets->persist());
    spdlog::debug("update slave consumer offset from master, {}", master);
    return Status::ok();
}

Result<int64_t> SlaveSynchronize::take_higher_offsets_from(const std::string& peer) {
    COMET_ASSIGN_OR_RETURN(auto resp, call(peer, Req::kGetAllConsumerOffset));
    COMET_ASSIGN_OR_RETURN(OffsetTable theirs, parse_offset_table(resp.body));
    int64_t moved = 0;
    for (const auto& [key, queues] : theirs) {
        const size_t at = key.find('@');
        if (at == std::string::npos) {
            continue;
        }
        const std::string topic = key.substr(0, at);
        const std::string group = key.substr(at + 1);
        for (const auto& [qid, offset] : queues) {
            if (offset > tables_.offsets->query_offset(group, topic, qid)) {
                tables_.offsets->commit_offset(group, topic, qid, offset);
                ++moved;
            }
        }
    }
    if (moved > 0) {
        COMET_RETURN_IF_ERROR(tables_.offsets->persist());
        spdlog::info("took {} higher consumer offsets from {}", moved, peer);
    }
    return moved;
}

Result<int64_t> SlaveSynchronize::push_higher_offsets_to(const std::string& master) {
    COMET_ASSIGN_OR_RETURN(auto resp, call(master, Req::kGetAllConsumerOffset));
    COMET_ASSIGN_OR_RETURN(OffsetTable theirs, parse_offset_table(resp.body));
    int64_t pushed = 0;
    for (const auto& [key, queues] : tables_.offsets->table()) {
        const size_t at = key.find('@');
        if (at == std::string::npos) {
            continue;
        }
        const auto their_queues = theirs.find(key);
        for (const auto& [qid, offset] : queues) {
            int64_t their_offset = -1;
            if (their_queues != theirs.end()) {
                if (auto q = their_queues->second.find(qid); q != their_queues->second.end()) {
                    their_offset = q->second;
                }
            }
            if (offset <= their_offset) {
                continue;
            }
            protocol::UpdateConsumerOffsetRequestHeader h;
            h.topic = key.substr(0, at);
            h.consumer_group = key.substr(at + 1);
            h.queue_id = qid;
            h.commit_offset = offset;
            auto req = protocol::RemotingCommand::request(Req::kUpdateConsumerOffset);
            req.language = protocol::LanguageCode::kJava;
            h.to_ext(req);
            COMET_ASSIGN_OR_RETURN(auto r, invoke_(master, std::move(req)));
            if (r.code != RC::kSuccess) {
                return Status::error(Errc::kUnavailable,
                                     "UPDATE_CONSUMER_OFFSET {} queue {} to {}: code {} {}", key,
                                     qid, master, r.code, r.remark.value_or(""));
            }
            ++pushed;
        }
    }
    spdlog::info("handed {} consumer offsets above the master's to {}", pushed, master);
    return pushed;
}

Status SlaveSynchronize::sync_delay_offset(const std::string& master) {
    if (tables_.schedule == nullptr || tables_.delay_offset_path.empty()) {
        return Status::ok();
    }
    COMET_ASSIGN_OR_RETURN(auto resp, call(master, Req::kGetAllDelayOffset));
    if (resp.body.empty()) {
        return Status::ok();
    }
    // Validate before replacing the file.
    COMET_RETURN_IF_ERROR(decode_int_offset_table(resp.body, "GET_ALL_DELAY_OFFSET").status());
    COMET_RETURN_IF_ERROR(write_file_atomic(tables_.delay_offset_path, resp.body));
    COMET_RETURN_IF_ERROR(tables_.schedule->load());
    spdlog::debug("update slave delay offset from master, {}", master);
    return Status::ok();
}

}  // namespace comet::broker
