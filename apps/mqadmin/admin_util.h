#pragma once
// Helpers every mqadmin command file shares: the admin client, SUCCESS-or-error calls, and
// RocketMQ's text forms of times, permissions and properties.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "client/admin_client.h"
#include "client/client_config.h"
#include "mqadmin/commands.h"
#include "protocol/message_ext.h"
#include "protocol/remoting_command.h"

namespace comet::mqadmin {

// Error naming -n / NAMESRV_ADDR when the context has no name server address.
Status require_namesrv(const Context& ctx);
// Client settings for the context's name servers (instance "mqadmin-<pid>").
client::ClientConfig client_config(const Context& ctx);

// An AdminClient started against the context's name servers (error: none given).
Result<std::unique_ptr<client::AdminClient>> start_admin(const Context& ctx);

// A SUCCESS response from `addr`, else the RocketMQ code and remark as the error.
Result<protocol::RemotingCommand> call_ok(client::AdminClient& admin, const std::string& addr,
                                          protocol::RemotingCommand req, std::string_view what);

// Java UtilAll.timeMillisToHumanString2: local time "yyyy-MM-dd HH:mm:ss,SSS".
std::string human_time(int64_t ms);
// MQVersion#getVersionDesc for the versions clients commonly announce; others as the number.
std::string version_desc(int32_t v);
// Java's Map#toString of the properties: "{k=v, k2=v2}".
std::string properties_text(const protocol::MessageExt& msg);

// One option of a command's table.
OptionSpec opt(char c, std::string name, bool required, std::string help, bool has_arg = true);

}  // namespace comet::mqadmin
