#include "broker/controller/controller_link.h"

#include <algorithm>
#include <optional>

#include "base/logging.h"
#include "protocol/ha_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::broker {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using protocol::RemotingCommand;

ControllerLink::ControllerLink(std::vector<std::string> controllers, Duration timeout,
                               Clock& clock)
    : controllers_(std::move(controllers)), timeout_(timeout) {
    net::RemotingClientConfig cc;
    cc.name = "BrokerToController";
    client_ = std::make_unique<net::RemotingClient>(cc, &clock);
}

ControllerLink::~ControllerLink() { shutdown(); }

void ControllerLink::start() { client_->start(); }

void ControllerLink::shutdown() { client_->shutdown(); }

Result<std::string> ControllerLink::find_leader() {
    Status last = Status::error(Errc::kUnavailable, "controllerAddr names no controller");
    // The leader is reached by the address controllerAddr names it by when it can be: a
    // controller that says it leads is the leader at the address just used, and a reported
    // leader address outside controllerAddr (a NAT or a proxy between broker and controllers)
    // is used only when no listed controller says it leads.
    std::optional<std::string> reported;
    for (const std::string& addr : controllers_) {
        RemotingCommand req = RemotingCommand::request(Req::kControllerGetMetadataInfo);
        auto r = client_->invoke_sync(addr, std::move(req), timeout_);
        if (!r.is_ok()) {
            last = Status::error(Errc::kUnavailable, "controller {}: {}", addr,
                                 r.status().message());
            continue;
        }
        auto h = protocol::GetMetaDataResponseHeader::from_ext(*r);
        if (r->code != RC::kSuccess || !h.is_ok()) {
            last = Status::error(Errc::kUnavailable, "controller {} knows no leader yet", addr);
            continue;
        }
        if (h->is_leader.value_or(false)) {
            return addr;
        }
        const std::string leader = h->controller_leader_address.value_or("");
        if (leader.empty()) {
            last = Status::error(Errc::kUnavailable, "controller {} knows no leader yet", addr);
            continue;
        }
        if (std::find(controllers_.begin(), controllers_.end(), leader) != controllers_.end()) {
            return leader;
        }
        if (!reported) {
            reported = leader;
        }
    }
    if (reported) {
        return *reported;
    }
    return last;
}

Result<RemotingCommand> ControllerLink::call_leader(const RemotingCommand& req) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (leader_.empty()) {
            COMET_ASSIGN_OR_RETURN(leader_, find_leader());
        }
        auto r = client_->invoke_sync(leader_, req, timeout_);
        if (r.is_ok() && r->code != RC::kControllerNotLeader) {
            return r;
        }
        spdlog::debug("controller {} {}; looking for the leader again", leader_,
                      r.is_ok() ? "is not the leader" : r.status().message());
        leader_.clear();
        if (attempt == 1) {
            if (!r.is_ok()) {
                return r.status();
            }
            return Status::error(Errc::kUnavailable, "no controller leader answered");
        }
    }
    return Status::error(Errc::kUnavailable, "no controller leader answered");
}

void ControllerLink::send_to_all(const RemotingCommand& req, Duration timeout,
                                 AnswerFn on_answer) {
    auto shared = std::make_shared<AnswerFn>(std::move(on_answer));
    for (const std::string& addr : controllers_) {
        client_->invoke_async(addr, req, timeout,
                              [addr, shared](Result<RemotingCommand> r) {
                                  if (!r.is_ok()) {
                                      spdlog::debug("heartbeat to controller {}: {}", addr,
                                                    r.status().message());
                                      return;
                                  }
                                  (*shared)(*r);
                              });
    }
}

}  // namespace comet::broker
