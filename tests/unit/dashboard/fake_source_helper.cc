#include "fake_source_helper.h"

#include <fmt/format.h>

namespace comet::dashboard::testing {

namespace {

template <typename M, typename K>
auto find_or(const M& m, const K& k, const std::string& what) -> Result<typename M::mapped_type> {
    auto it = m.find(k);
    if (it == m.end()) {
        return Status::error(Errc::kNotFound, "{} not found", what);
    }
    return it->second;
}

}  // namespace

Result<protocol::ClusterInfo> FakeSource::cluster_info() {
    if (namesrv_down) {
        return Status::error(Errc::kUnavailable, "name server down");
    }
    return info;
}

Result<std::vector<std::string>> FakeSource::topic_list() {
    if (namesrv_down) {
        return Status::error(Errc::kUnavailable, "name server down");
    }
    return topics;
}

Result<protocol::TopicRouteData> FakeSource::topic_route(const std::string& topic) {
    return find_or(routes, topic, "route of " + topic);
}

Result<KvMap> FakeSource::runtime_info(const std::string& addr) {
    if (down.count(addr) != 0) {
        return Status::error(Errc::kTimeout, "{} timed out", addr);
    }
    return find_or(runtime, addr, "runtime of " + addr);
}

Result<KvMap> FakeSource::broker_config(const std::string& addr) {
    if (down.count(addr) != 0) {
        return Status::error(Errc::kTimeout, "{} timed out", addr);
    }
    return find_or(config, addr, "config of " + addr);
}

Result<protocol::TopicStatsTable> FakeSource::topic_stats(const std::string& addr,
                                                          const std::string& topic) {
    return find_or(stats, std::make_pair(addr, topic), "stats of " + topic);
}

Result<protocol::ConsumerOffsetSerializeWrapper> FakeSource::consumer_offsets(
    const std::string& addr) {
    auto it = offsets.find(addr);
    return it == offsets.end() ? protocol::ConsumerOffsetSerializeWrapper{} : it->second;
}

Result<protocol::ConsumeStats> FakeSource::consume_stats(const std::string& addr,
                                                         const std::string& group) {
    return find_or(consume, std::make_pair(addr, group), "consume stats of " + group);
}

void FakeSource::add_group(const std::string& cluster, const std::string& name,
                           std::map<int64_t, std::string> addrs) {
    info.cluster_addr_table[cluster].insert(name);
    protocol::BrokerData bd;
    bd.cluster = cluster;
    bd.broker_name = name;
    bd.broker_addrs = std::move(addrs);
    info.broker_addr_table[name] = bd;
}

std::string ha_connection(int64_t broker_id, int64_t diff, bool in_sync) {
    return fmt::format(
        R"({{"addr":"127.0.0.1:5{}","brokerId":{},"slaveAckOffset":0,"diff":{},"inSync":{},"transferFromWhere":0}})",
        broker_id, broker_id, diff, in_sync ? "true" : "false");
}

}  // namespace comet::dashboard::testing
