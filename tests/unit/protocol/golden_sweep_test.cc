// Sweeps every captured frame: each request's typed header decodes by its code, and each body
// with a known type decodes, re-encodes and decodes to the same value.

#include <gtest/gtest.h>

#include <map>

#include "protocol/admin_bodies.h"
#include "protocol/admin_headers.h"
#include "protocol/heartbeat_body.h"
#include "protocol/namesrv_headers.h"
#include "protocol/pull_headers.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "protocol/route_bodies.h"
#include "protocol/send_headers.h"
#include "vectors_helper.h"

namespace comet::protocol {
namespace {

template <typename H>
Status header_ok(const RemotingCommand& cmd) {
    return H::from_ext(cmd).status();
}

template <typename B>
Status body_round_trip(std::string_view body) {
    COMET_ASSIGN_OR_RETURN(B b, B::decode(body));
    COMET_ASSIGN_OR_RETURN(B again, B::decode(b.encode()));
    if (!(again == b)) {
        return Status(Errc::kInternal, "round trip changed the value");
    }
    return Status::ok();
}

Status check_request(const RemotingCommand& cmd) {
    switch (cmd.code) {
        case RequestCode::kSendMessageV2:
        case RequestCode::kSendBatchMessage:
            return decode_send_message_header(cmd).status();
        case RequestCode::kPullMessage:
            return header_ok<PullMessageRequestHeader>(cmd);
        case RequestCode::kQueryConsumerOffset:
            return header_ok<QueryConsumerOffsetRequestHeader>(cmd);
        case RequestCode::kUpdateConsumerOffset:
            return header_ok<UpdateConsumerOffsetRequestHeader>(cmd);
        case RequestCode::kGetMaxOffset:
            return header_ok<GetMaxOffsetRequestHeader>(cmd);
        case RequestCode::kUnregisterClient:
            return header_ok<UnregisterClientRequestHeader>(cmd);
        case RequestCode::kConsumerSendMsgBack:
            return header_ok<ConsumerSendMsgBackRequestHeader>(cmd);
        case RequestCode::kGetConsumerListByGroup:
        case RequestCode::kNotifyConsumerIdsChanged:
            return header_ok<ConsumerGroupRequestHeader>(cmd);
        case RequestCode::kGetRouteinfoByTopic:
            return header_ok<GetRouteInfoRequestHeader>(cmd);
        case RequestCode::kUnregisterBroker:
            return header_ok<UnRegisterBrokerRequestHeader>(cmd);
        case RequestCode::kUpdateAndCreateTopic:
            return header_ok<CreateTopicRequestHeader>(cmd);
        case RequestCode::kHeartBeat:
            return body_round_trip<HeartbeatData>(cmd.body);
        case RequestCode::kRegisterBroker: {
            COMET_ASSIGN_OR_RETURN(auto h, RegisterBrokerRequestHeader::from_ext(cmd));
            return RegisterBrokerBody::decode_body(cmd.body, h.compressed, cmd.version).status();
        }
        default:
            return Status(Errc::kNotFound, "no check for this code");
    }
}

TEST(GoldenSweepTest, EveryCapturedFrameHeaderAndBodyDecodes) {
    std::map<std::string, int> checked;
    for (const auto& name : testing::all_frame_names()) {
        std::string frame = testing::read_frame(name);
        auto cmd = decode_frame_payload(std::string_view(frame).substr(4));
        ASSERT_TRUE(cmd.is_ok()) << name;
        if (!cmd->is_response()) {
            Status st = check_request(*cmd);
            ASSERT_TRUE(st.is_ok() || st.code() == Errc::kNotFound) << name << ": " << st.to_string();
            if (st.is_ok()) {
                ++checked[std::string(request_code_name(cmd->code))];
            }
            continue;
        }
        bool is_pull = name.find("PULL_MESSAGE") != std::string::npos;
        if (cmd->code != ResponseCode::kSuccess && !is_pull) {
            continue;  // error responses carry no typed header
        }
        Status st(Errc::kNotFound, "");
        if (name.find("GET_ROUTEINFO_BY_TOPIC") != std::string::npos) {
            st = body_round_trip<TopicRouteData>(cmd->body);
        } else if (name.find("GET_CONSUMER_LIST_BY_GROUP") != std::string::npos) {
            st = body_round_trip<ConsumerListBody>(cmd->body);
        } else if (is_pull) {  // codes 0, 19, 20, 21 all carry the header
            st = header_ok<PullMessageResponseHeader>(*cmd);
        } else if (name.find("-SEND_MESSAGE") != std::string::npos ||
                   name.find("-SEND_BATCH") != std::string::npos) {
            st = header_ok<SendMessageResponseHeader>(*cmd);
        } else if (name.find("QUERY_CONSUMER_OFFSET") != std::string::npos ||
                   name.find("GET_MAX_OFFSET") != std::string::npos) {
            st = header_ok<OffsetResponseHeader>(*cmd);
        } else if (name.find("REGISTER_BROKER") != std::string::npos) {
            st = RegisterBrokerResult::from_response(*cmd).status();
        }
        ASSERT_TRUE(st.is_ok() || st.code() == Errc::kNotFound) << name << ": " << st.to_string();
        if (st.is_ok()) {
            ++checked[name.substr(name.find('-', 5) + 1)];
        }
    }
    for (const char* code : {"SEND_MESSAGE_V2", "SEND_BATCH_MESSAGE", "PULL_MESSAGE", "HEART_BEAT",
                             "REGISTER_BROKER", "UNREGISTER_BROKER", "GET_ROUTEINFO_BY_TOPIC",
                             "QUERY_CONSUMER_OFFSET", "UPDATE_CONSUMER_OFFSET",
                             "CONSUMER_SEND_MSG_BACK", "UNREGISTER_CLIENT",
                             "NOTIFY_CONSUMER_IDS_CHANGED", "GET_CONSUMER_LIST_BY_GROUP",
                             "GET_MAX_OFFSET", "UPDATE_AND_CREATE_TOPIC"}) {
        EXPECT_GT(checked[code], 0) << code;
    }
    EXPECT_GE(checked["GET_ROUTEINFO_BY_TOPIC-resp-SUCCESS.bin"], 20);
    EXPECT_GE(checked["PULL_MESSAGE-resp-SUCCESS.bin"], 8);
    EXPECT_GE(checked["PULL_MESSAGE-resp-PULL_NOT_FOUND.bin"], 7);
}

}  // namespace
}  // namespace comet::protocol
