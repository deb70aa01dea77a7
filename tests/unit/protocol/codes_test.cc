#include <gtest/gtest.h>

#include "protocol/request_code.h"
#include "protocol/response_code.h"

namespace comet::protocol {
namespace {

TEST(CodesTest, RequestCodesMatchReference) {
    EXPECT_EQ(RequestCode::kSendMessage, 10);
    EXPECT_EQ(RequestCode::kSendMessageV2, 310);
    EXPECT_EQ(RequestCode::kSendBatchMessage, 320);
    EXPECT_EQ(RequestCode::kGetRouteinfoByTopic, 105);
    EXPECT_EQ(RequestCode::kBrokerHeartbeat, 904);
    EXPECT_EQ(RequestCode::kControllerApplyBrokerId, 1013);
    EXPECT_EQ(RequestCode::kDledgerPush, 51004);
    EXPECT_EQ(RequestCode::kBatchAckMessage, 200151);
    EXPECT_EQ(request_code_name(RequestCode::kPullMessage), "PULL_MESSAGE");
    EXPECT_EQ(request_code_name(41), "LOCK_BATCH_MQ");
    EXPECT_EQ(request_code_name(9999), "UNKNOWN");
}

TEST(CodesTest, ResponseCodesMatchReference) {
    EXPECT_EQ(ResponseCode::kTopicNotExist, 17);
    EXPECT_EQ(ResponseCode::kPullOffsetMoved, 21);
    EXPECT_EQ(ResponseCode::kGoAway, 1500);
    EXPECT_EQ(ResponseCode::kControllerBrokerLiveInfoNotExists, 2016);
    EXPECT_EQ(response_code_name(0), "SUCCESS");
    EXPECT_EQ(response_code_name(19), "PULL_NOT_FOUND");
    EXPECT_EQ(response_code_name(-5), "UNKNOWN");
}

}  // namespace
}  // namespace comet::protocol
