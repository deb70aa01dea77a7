#pragma once
// ClientChannelInfo: one client connection as the broker's client tables see it (Java
// ClientChannelInfo). ChannelId is the broker's handle for a network connection; BrokerController
// maps it to the net layer's connection so the tables stay free of socket types.

#include <cstdint>
#include <string>

#include "base/clock.h"
#include "base/strong_id.h"
#include "protocol/remoting_command.h"

namespace comet::broker {

using ChannelId = StrongId<uint64_t, struct ChannelIdTag>;

struct ClientChannelInfo {
    ChannelId channel;
    std::string client_id;  // "<ip>@<pid>" as sent in HeartbeatData.clientID
    protocol::LanguageCode language = protocol::LanguageCode::kJava;
    int32_t version = 0;
    TimePoint last_update{};
};

}  // namespace comet::broker
