#include "dashboard/admin_source.h"

#include "protocol/admin_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::dashboard {

namespace Req = protocol::RequestCode;

AdminSource::AdminSource(client::ClientConfig config)
    : admin_(std::make_unique<client::AdminClient>(std::move(config))) {}

AdminSource::~AdminSource() { shutdown(); }

Status AdminSource::start() { return admin_->start(); }

void AdminSource::shutdown() { admin_->shutdown(); }

Result<protocol::RemotingCommand> AdminSource::call_ok(const std::string& addr,
                                                       protocol::RemotingCommand req,
                                                       std::string_view what) {
    COMET_ASSIGN_OR_RETURN(auto resp, admin_->instance().invoke(addr, std::move(req)));
    if (resp.code != protocol::ResponseCode::kSuccess) {
        return client::response_error(fmt::format("{} at {}", what, addr), resp);
    }
    return resp;
}

Result<protocol::ClusterInfo> AdminSource::cluster_info() { return admin_->cluster_info(); }

Result<std::vector<std::string>> AdminSource::topic_list() { return admin_->topic_list(); }

Result<protocol::TopicRouteData> AdminSource::topic_route(const std::string& topic) {
    return admin_->topic_route(topic);
}

Result<KvMap> AdminSource::runtime_info(const std::string& addr) {
    return admin_->broker_runtime_info(addr);
}

Result<KvMap> AdminSource::broker_config(const std::string& addr) {
    return admin_->broker_config(addr);
}

Result<protocol::TopicStatsTable> AdminSource::topic_stats(const std::string& addr,
                                                           const std::string& topic) {
    protocol::GetTopicStatsInfoRequestHeader h;
    h.topic = topic;
    auto req = protocol::RemotingCommand::request(Req::kGetTopicStatsInfo);
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(auto resp, call_ok(addr, std::move(req), "topic stats of " + topic));
    return protocol::TopicStatsTable::decode(resp.body);
}

Result<protocol::ConsumerOffsetSerializeWrapper> AdminSource::consumer_offsets(
    const std::string& addr) {
    COMET_ASSIGN_OR_RETURN(
        auto resp, call_ok(addr, protocol::RemotingCommand::request(Req::kGetAllConsumerOffset),
                           "consumer offsets"));
    return protocol::ConsumerOffsetSerializeWrapper::decode(resp.body);
}

Result<protocol::ConsumeStats> AdminSource::consume_stats(const std::string& addr,
                                                          const std::string& group) {
    protocol::GetConsumeStatsRequestHeader h;
    h.consumer_group = group;
    auto req = protocol::RemotingCommand::request(Req::kGetConsumeStats);
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(auto resp, call_ok(addr, std::move(req), "consume stats of " + group));
    return protocol::ConsumeStats::decode(resp.body);
}

}  // namespace comet::dashboard
