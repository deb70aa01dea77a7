#include "mqadmin/admin_util.h"

#include <fmt/format.h>
#include <unistd.h>

#include <ctime>
#include <map>

#include "protocol/response_code.h"
#include "protocol/route_bodies.h"

namespace comet::mqadmin {

std::string version_desc(int32_t v) {
    static const std::map<int32_t, const char*> kKnown = {
        {28, "V3_0_7_SNAPSHOT"}, {395, "V4_9_1"}, {401, "V4_9_4"}, {405, "V4_9_6"},
        {407, "V4_9_7"},         {409, "V4_9_8"}, {479, "V5_3_3"}};
    auto it = kKnown.find(v);
    return it != kKnown.end() ? it->second : std::to_string(v);
}

Status require_namesrv(const Context& ctx) {
    if (ctx.namesrv_addr.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "no name server address: use -n host:port or set NAMESRV_ADDR");
    }
    return Status::ok();
}

client::ClientConfig client_config(const Context& ctx) {
    client::ClientConfig c;
    c.namesrv_addr = ctx.namesrv_addr;
    c.instance_name = fmt::format("mqadmin-{}", ::getpid());
    return c;
}

Result<std::unique_ptr<client::AdminClient>> start_admin(const Context& ctx) {
    COMET_RETURN_IF_ERROR(require_namesrv(ctx));
    auto admin = std::make_unique<client::AdminClient>(client_config(ctx));
    COMET_RETURN_IF_ERROR(admin->start());
    return admin;
}

Result<protocol::RemotingCommand> call_ok(client::AdminClient& admin, const std::string& addr,
                                          protocol::RemotingCommand req, std::string_view what) {
    COMET_ASSIGN_OR_RETURN(auto resp, admin.instance().invoke(addr, std::move(req)));
    if (resp.code != protocol::ResponseCode::kSuccess) {
        return client::response_error(fmt::format("{} at {}", what, addr), resp);
    }
    return resp;
}

std::string human_time(int64_t ms) {
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    localtime_r(&secs, &tm);
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02},{:03}", tm.tm_year + 1900,
                       tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                       static_cast<int>(ms % 1000));
}

std::string properties_text(const protocol::MessageExt& msg) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : msg.properties.entries()) {
        out += fmt::format("{}{}={}", first ? "" : ", ", k, v);
        first = false;
    }
    return out + "}";
}

OptionSpec opt(char c, std::string name, bool required, std::string help, bool has_arg) {
    return OptionSpec{c, std::move(name), has_arg, required, std::move(help)};
}

}  // namespace comet::mqadmin
