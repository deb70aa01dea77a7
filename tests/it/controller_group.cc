#include "controller_group.h"

#include <fmt/format.h>

#include "protocol/ha_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::it {

using namespace std::chrono_literals;
namespace RC = protocol::ResponseCode;
namespace Req = protocol::RequestCode;

ControllerGroup::ControllerGroup(const TempDir& dir, std::map<std::string, std::string> extra,
                                 ControllerHost host)
    : dir_(dir) {
    std::string peers;
    for (int i = 0; i < 3; ++i) {
        ports_.push_back(free_port());
        peers += (i > 0 ? ";" : "") + fmt::format("n{}-127.0.0.1:{}", i, ports_.back());
    }
    for (int i = 0; i < 3; ++i) {
        ProcessOptions o;
        o.name = fmt::format("ctl-n{}", i);
        o.binary = binary_path("mqcontroller");
        o.config = {{"controllerDLegerGroup", "CtlGroup"},
                    {"controllerDLegerPeers", peers},
                    {"controllerDLegerSelfId", fmt::format("n{}", i)},
                    {"controllerStorePath", dir.sub(o.name + "/store")},
                    {"logDir", dir.sub(o.name + "/logs")}};
        if (host == ControllerHost::kNamesrv) {
            o.name = fmt::format("ns-ctl-n{}", i);
            o.binary = binary_path("mqnamesrv");
            namesrv_ports_.push_back(free_port());
            o.config["controllerStorePath"] = dir.sub(o.name + "/store");
            o.config["logDir"] = dir.sub(o.name + "/logs");
            o.config["enableControllerInNamesrv"] = "true";
            o.config["listenPort"] = std::to_string(namesrv_ports_.back());
            o.config["listenHost"] = "127.0.0.1";
            o.config["kvConfigPath"] = dir.sub(o.name + "/kvConfig.json");
        }
        for (const auto& [k, v] : extra) {
            o.config[k] = v;
        }
        options_.push_back(o);
        procs_.emplace_back();
    }
}

Status ControllerGroup::start(int i) {
    const auto k = static_cast<size_t>(i);
    COMET_ASSIGN_OR_RETURN(procs_[k], Process::start(options_[k], dir_.path()));
    if (!namesrv_ports_.empty()) {
        COMET_RETURN_IF_ERROR(procs_[k]->wait_for_port(namesrv_ports_[k], guard(10000ms)));
    }
    return procs_[k]->wait_for_port(ports_[k], guard(10000ms));
}

Status ControllerGroup::start_all() {
    for (int i = 0; i < 3; ++i) {
        COMET_RETURN_IF_ERROR(start(i));
    }
    return Status::ok();
}

void ControllerGroup::kill(int i) {
    procs_[static_cast<size_t>(i)]->sigkill();
    (void)procs_[static_cast<size_t>(i)]->wait_exit(guard(5000ms));
}

std::string ControllerGroup::addrs() const {
    return fmt::format("{};{};{}", addr(ports_[0]), addr(ports_[1]), addr(ports_[2]));
}

std::string ControllerGroup::namesrv_addrs() const {
    return fmt::format("{};{};{}", addr(namesrv_ports_.at(0)), addr(namesrv_ports_.at(1)),
                       addr(namesrv_ports_.at(2)));
}

std::string ControllerGroup::logs() const {
    std::string out;
    for (const auto& p : procs_) {
        if (p) {
            out += "---- " + p->log_path() + "\n" + p->log_tail(3000);
        }
    }
    return out;
}

std::string ControllerGroup::store(int i) const {
    return options_[static_cast<size_t>(i)].config.at("controllerStorePath");
}

bool ControllerGroup::running(int i) {
    const auto k = static_cast<size_t>(i);
    return procs_[k] && procs_[k]->running();
}

std::optional<int> wait_leader(net::RemotingClient& client, ControllerGroup& g,
                               std::set<int> running) {
    std::optional<int> leader;
    eventually(
        [&] {
            std::set<int> leaders;
            std::set<std::string> named;
            for (int i : running) {
                auto r = call(client, g.port(i), request(Req::kControllerGetMetadataInfo), 1000ms);
                if (!r.is_ok() || r->code != RC::kSuccess) {
                    return false;
                }
                auto h = protocol::GetMetaDataResponseHeader::from_ext(*r);
                if (!h.is_ok()) {
                    return false;
                }
                if (h->is_leader.value_or(false)) {
                    leaders.insert(i);
                }
                named.insert(h->controller_leader_address.value_or(""));
            }
            if (leaders.size() != 1 || named.size() != 1 ||
                *named.begin() != addr(g.port(*leaders.begin()))) {
                return false;
            }
            leader = *leaders.begin();
            return true;
        },
        guard(15000ms));
    return leader;
}

}  // namespace comet::it
