#pragma once
// The JSON documents mqdashboard serves (docs/dashboard.md, "JSON endpoints"), rendered with
// RapidJSON from a ClusterSnapshot and the ChangeHistory. Pure functions.

#include <deque>
#include <string>
#include <vector>

#include "dashboard/change_history.h"
#include "dashboard/snapshot.h"

namespace comet::dashboard {

// /api/cluster: name servers, clusters, broker groups and members with roles and replication.
std::string cluster_json(const ClusterSnapshot& s, const std::vector<std::string>& namesrv_addrs);
// /api/topics: topics with routes, queues, TPS and the durability contract per broker group.
std::string topics_json(const ClusterSnapshot& s);
// /api/groups: consumer groups with their lag per queue.
std::string groups_json(const ClusterSnapshot& s);
// /api/history: observed role and membership changes, newest first.
std::string history_json(const std::deque<ChangeEvent>& events, uint64_t dropped);

}  // namespace comet::dashboard
