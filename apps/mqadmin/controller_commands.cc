// mqadmin's controller-mode commands (RocketMQ 5's names and options): they talk to the
// controller group named by -a (one address or a ';'-separated list), find its leader with
// CONTROLLER_GET_METADATA_INFO and send the request there.

#include <fmt/format.h>

#include <sstream>

#include "controller/replicas_bodies.h"
#include "mqadmin/commands.h"
#include "net/remoting_client.h"
#include "protocol/ha_bodies.h"
#include "protocol/ha_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::mqadmin {
namespace {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using protocol::RemotingCommand;

constexpr auto kTimeout = std::chrono::seconds(5);

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, sep)) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    return out;
}

class ControllerLink {
public:
    ControllerLink() : client_(config()) { client_.start(); }
    ~ControllerLink() { client_.shutdown(); }

    Result<protocol::GetMetaDataResponseHeader> metadata(const std::string& addr) {
        COMET_ASSIGN_OR_RETURN(auto resp,
                               client_.invoke_sync(addr,
                                                   RemotingCommand::request(
                                                       Req::kControllerGetMetadataInfo),
                                                   kTimeout));
        if (resp.code != RC::kSuccess) {
            return Status::error(Errc::kUnavailable, "{} answered {} {}", addr, resp.code,
                                 resp.remark.value_or(""));
        }
        return protocol::GetMetaDataResponseHeader::from_ext(resp);
    }

    // The leader's address, asking each listed controller in turn.
    Result<std::string> leader(const std::string& addrs) {
        Status last = Status::error(Errc::kInvalidArgument, "-a names no controller");
        for (const std::string& a : split(addrs, ';')) {
            auto md = metadata(a);
            if (!md.is_ok()) {
                last = md.status();
                continue;
            }
            if (md->controller_leader_address.has_value() &&
                !md->controller_leader_address->empty()) {
                return *md->controller_leader_address;
            }
            last = Status::error(Errc::kUnavailable, "{} knows no controller leader", a);
        }
        return last;
    }

    // Sends to the leader; a non-SUCCESS code is an error naming it.
    Result<RemotingCommand> call_leader(const std::string& addrs, RemotingCommand req) {
        COMET_ASSIGN_OR_RETURN(std::string leader_addr, leader(addrs));
        return call(leader_addr, std::move(req));
    }

    Result<RemotingCommand> call(const std::string& addr, RemotingCommand req) {
        COMET_ASSIGN_OR_RETURN(auto resp, client_.invoke_sync(addr, std::move(req), kTimeout));
        if (resp.code != RC::kSuccess) {
            return Status::error(Errc::kFailedPrecondition, "CODE: {} DESC: {}", resp.code,
                                 resp.remark.value_or(""));
        }
        return resp;
    }

private:
    static net::RemotingClientConfig config() {
        net::RemotingClientConfig c;
        c.name = "mqadmin";
        return c;
    }

    net::RemotingClient client_;
};

Status cmd_get_controller_metadata(Context& ctx) {
    ControllerLink link;
    for (const std::string& a : split(ctx.opts.get('a'), ';')) {
        COMET_ASSIGN_OR_RETURN(auto md, link.metadata(a));
        fmt::print(ctx.out, "\n#ControllerGroup\t{}", md.group.value_or(""));
        fmt::print(ctx.out, "\n#ControllerLeaderId\t{}", md.controller_leader_id.value_or(""));
        fmt::print(ctx.out, "\n#ControllerLeaderAddress\t{}",
                   md.controller_leader_address.value_or(""));
        for (const std::string& p : split(md.peers.value_or(""), ';')) {
            fmt::print(ctx.out, "\n#Peer:\t{}", p);
        }
        fmt::print(ctx.out, "\n");
    }
    return Status::ok();
}

Status cmd_get_sync_state_set(Context& ctx) {
    ControllerLink link;
    auto req = RemotingCommand::request(Req::kControllerGetSyncStateData);
    std::string body = "[";
    for (const std::string& name : split(ctx.opts.get('b'), ',')) {
        body += (body.size() > 1 ? ",\"" : "\"") + name + "\"";
    }
    req.body = body + "]";
    COMET_ASSIGN_OR_RETURN(auto resp, link.call_leader(ctx.opts.get('a'), std::move(req)));
    COMET_ASSIGN_OR_RETURN(auto info, controller::BrokerReplicasInfo::decode(resp.body));
    for (const auto& [name, ri] : info.replicas_info_table) {
        fmt::print(ctx.out,
                   "\n#brokerName\t{}\n#MasterBrokerId\t{}\n#MasterAddr\t{}\n#MasterEpoch\t{}\n"
                   "#SyncStateSetEpoch\t{}\n#SyncStateSetNums\t{}\n",
                   name, ri.master_broker_id.value_or(-1), ri.master_address.value_or(""),
                   ri.master_epoch, ri.sync_state_set_epoch, ri.in_sync_replicas.size());
        for (const auto& r : ri.in_sync_replicas) {
            fmt::print(ctx.out, "\nInSyncReplica:\tbrokerId={} brokerAddress={} alive={}\n",
                       r.broker_id, r.broker_address, r.alive);
        }
        for (const auto& r : ri.not_in_sync_replicas) {
            fmt::print(ctx.out, "\nNotInSyncReplica:\tbrokerId={} brokerAddress={} alive={}\n",
                       r.broker_id, r.broker_address, r.alive);
        }
    }
    return Status::ok();
}

Status cmd_elect_master(Context& ctx) {
    ControllerLink link;
    protocol::ElectMasterRequestHeader h;
    h.cluster_name = ctx.opts.get('c');
    h.broker_name = ctx.opts.get('b');
    COMET_ASSIGN_OR_RETURN(h.broker_id, ctx.opts.get_int('i', -1));
    h.designate_elect = true;
    auto req = RemotingCommand::request(Req::kControllerElectMaster);
    h.to_ext(req);
    COMET_ASSIGN_OR_RETURN(auto resp, link.call_leader(ctx.opts.get('a'), std::move(req)));
    COMET_ASSIGN_OR_RETURN(auto r, protocol::ElectMasterResponseHeader::from_ext(resp));
    fmt::print(ctx.out,
               "\n#clusterName\t{}\n#brokerName\t{}\n#BrokerMasterAddr\t{}\n#MasterBrokerId\t{}\n"
               "#MasterEpoch\t{}\n#SyncStateSetEpoch\t{}\n",
               h.cluster_name, h.broker_name, r.master_address.value_or(""),
               r.master_broker_id.value_or(-1), r.master_epoch.value_or(0),
               r.sync_state_set_epoch.value_or(0));
    return Status::ok();
}

Status cmd_clean_broker_metadata(Context& ctx) {
    ControllerLink link;
    protocol::CleanBrokerDataRequestHeader h;
    if (ctx.opts.has('c')) {
        h.cluster_name = ctx.opts.get('c');
    }
    h.broker_name = ctx.opts.get('b');
    if (ctx.opts.has('i')) {
        h.broker_controller_ids_to_clean = ctx.opts.get('i');
    }
    h.is_clean_living_broker = ctx.opts.has('l');
    auto req = RemotingCommand::request(Req::kCleanBrokerData);
    h.to_ext(req);
    COMET_RETURN_IF_ERROR(link.call_leader(ctx.opts.get('a'), std::move(req)).status());
    fmt::print(ctx.out, "clear broker {} metadata from controller success!\n", h.broker_name);
    return Status::ok();
}

Status cmd_get_controller_config(Context& ctx) {
    ControllerLink link;
    for (const std::string& a : split(ctx.opts.get('a'), ';')) {
        auto req = RemotingCommand::request(Req::kGetControllerConfig);
        COMET_ASSIGN_OR_RETURN(auto resp, link.call(a, std::move(req)));
        fmt::print(ctx.out, "============{}============\n", a);
        std::stringstream in(resp.body);
        std::string line;
        while (std::getline(in, line)) {
            const size_t eq = line.find('=');
            if (eq != std::string::npos) {
                fmt::print(ctx.out, "{:<50}=  {}\n", line.substr(0, eq), line.substr(eq + 1));
            }
        }
    }
    return Status::ok();
}

OptionSpec copt(char c, std::string name, bool required, std::string help, bool has_arg = true) {
    return OptionSpec{c, std::move(name), has_arg, required, std::move(help)};
}

}  // namespace

std::vector<Command> controller_commands() {
    const OptionSpec addr =
        copt('a', "controllerAddress", true, "the address of controller (';'-separated list)");
    return {
        {"getControllerMetaData", "Get controller cluster's metadata", {addr},
         cmd_get_controller_metadata},
        {"getSyncStateSet",
         "Fetch syncStateSet for target brokers",
         {addr, copt('b', "brokerName", true, "which broker(s), ','-separated")},
         cmd_get_sync_state_set},
        {"electMaster",
         "Re-elect the specified broker as master",
         {addr, copt('c', "clusterName", true, "the clusterName of broker"),
          copt('b', "brokerName", true, "the brokerName of broker"),
          copt('i', "brokerId", true, "the brokerId to elect")},
         cmd_elect_master},
        {"cleanBrokerMetadata",
         "Clean metadata of broker on controller",
         {addr, copt('b', "brokerName", true, "the broker name"),
          copt('c', "clusterName", false, "the cluster name"),
          copt('i', "brokerControllerIdsToClean", false, "the ids to clean, ';'-separated"),
          copt('l', "cleanLivingBroker", false, "also clean living brokers", false)},
         cmd_clean_broker_metadata},
        {"getControllerConfig", "Get controller config", {addr}, cmd_get_controller_config},
    };
}

}  // namespace comet::mqadmin
