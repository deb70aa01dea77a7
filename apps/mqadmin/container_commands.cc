// mqadmin's broker container commands (RocketMQ 5 AddBrokerSubCommand / RemoveBrokerSubCommand):
// they talk to the container's own port (-c brokerContainerAddr), not to the name server.

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <string_view>

#include "base/strings.h"
#include "mqadmin/commands.h"
#include "net/remoting_client.h"
#include "protocol/admin_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::mqadmin {
namespace {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using protocol::RemotingCommand;

// Starting a broker recovers its store first: allow for a large one.
constexpr auto kTimeout = std::chrono::seconds(60);

// Sends `req` to the container; a non-SUCCESS code is an error carrying code and remark.
Status call_container(const std::string& addr, RemotingCommand req) {
    net::RemotingClientConfig c;
    c.name = "mqadmin";
    net::RemotingClient client(c);
    client.start();
    auto resp = client.invoke_sync(addr, std::move(req), kTimeout);
    client.shutdown();
    if (!resp.is_ok()) {
        return resp.status();
    }
    if (resp->code != RC::kSuccess) {
        return Status::error(Errc::kFailedPrecondition, "CODE: {} DESC: {}", resp->code,
                             resp->remark.value_or(""));
    }
    return Status::ok();
}

Status cmd_add_broker(Context& ctx) {
    const std::string addr(trim_whitespace(ctx.opts.get('c')));
    protocol::AddBrokerRequestHeader h;
    h.config_path = std::string(trim_whitespace(ctx.opts.get('b')));
    auto req = RemotingCommand::request(Req::kAddBroker);
    h.to_ext(req);
    COMET_RETURN_IF_ERROR(call_container(addr, std::move(req)));
    fmt::print(ctx.out, "add broker to {} success\n", addr);
    return Status::ok();
}

Status cmd_remove_broker(Context& ctx) {
    const std::string addr(trim_whitespace(ctx.opts.get('c')));
    const std::string text = ctx.opts.get('b');
    // clusterName:brokerName:brokerId, as RocketMQ's RemoveBrokerSubCommand splits it.
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
        const size_t end = text.find(':', start);
        parts.push_back(trim_whitespace(std::string_view(text).substr(
            start, end == std::string::npos ? std::string::npos : end - start)));
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
    if (parts.size() != 3 || parts[0].empty() || parts[1].empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "-b '{}' is not clusterName:brokerName:brokerId", text);
    }
    protocol::RemoveBrokerRequestHeader h;
    h.broker_cluster_name = std::string(parts[0]);
    h.broker_name = std::string(parts[1]);
    const std::string_view id = parts[2];
    const auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), h.broker_id);
    if (ec != std::errc() || p != id.data() + id.size()) {
        return Status::error(Errc::kInvalidArgument, "brokerId '{}' is not a number", id);
    }
    if (h.broker_id < 0) {
        return Status::error(Errc::kInvalidArgument, "brokerId can't be negative");
    }
    auto req = RemotingCommand::request(Req::kRemoveBroker);
    h.to_ext(req);
    COMET_RETURN_IF_ERROR(call_container(addr, std::move(req)));
    fmt::print(ctx.out, "remove broker from {} success\n", addr);
    return Status::ok();
}

OptionSpec copt(char c, std::string name, bool required, std::string help) {
    return OptionSpec{c, std::move(name), true, required, std::move(help)};
}

}  // namespace

std::vector<Command> container_commands() {
    const OptionSpec container = copt('c', "brokerContainerAddr", true, "Broker container address");
    return {
        {"addBroker",
         "Add a broker to specified container",
         {container, copt('b', "brokerConfigPath", true,
                          "Broker config path (a file on the container's host)")},
         cmd_add_broker},
        {"removeBroker",
         "Remove a broker from specified container",
         {container, copt('b', "brokerIdentity", true,
                          "Information to identify a broker: clusterName:brokerName:brokerId")},
         cmd_remove_broker},
    };
}

}  // namespace comet::mqadmin
