#pragma once
// The RocketMQ response codes the controller state machine answers with (reference §2.2, Java
// ResponseCode 2000-2016), gathered in one place. The numbers are protocol::ResponseCode's; the
// static_asserts pin them to the values in RocketMQ's ResponseCode.java so a typo in either
// table fails the build.

#include <cstdint>

#include "protocol/response_code.h"

namespace comet::controller::code {

inline constexpr int32_t kSuccess = protocol::ResponseCode::kSuccess;
inline constexpr int32_t kFencedMasterEpoch = protocol::ResponseCode::kControllerFencedMasterEpoch;
inline constexpr int32_t kFencedSyncStateSetEpoch =
    protocol::ResponseCode::kControllerFencedSyncStateSetEpoch;
inline constexpr int32_t kInvalidMaster = protocol::ResponseCode::kControllerInvalidMaster;
inline constexpr int32_t kInvalidReplicas = protocol::ResponseCode::kControllerInvalidReplicas;
inline constexpr int32_t kMasterNotAvailable =
    protocol::ResponseCode::kControllerMasterNotAvailable;
inline constexpr int32_t kInvalidRequest = protocol::ResponseCode::kControllerInvalidRequest;
inline constexpr int32_t kBrokerNotAlive = protocol::ResponseCode::kControllerBrokerNotAlive;
inline constexpr int32_t kNotLeader = protocol::ResponseCode::kControllerNotLeader;
inline constexpr int32_t kBrokerMetadataNotExist =
    protocol::ResponseCode::kControllerBrokerMetadataNotExist;
inline constexpr int32_t kInvalidCleanBrokerMetadata =
    protocol::ResponseCode::kControllerInvalidCleanBrokerMetadata;
inline constexpr int32_t kBrokerNeedToBeRegistered =
    protocol::ResponseCode::kControllerBrokerNeedToBeRegistered;
inline constexpr int32_t kMasterStillExist = protocol::ResponseCode::kControllerMasterStillExist;
inline constexpr int32_t kElectMasterFailed = protocol::ResponseCode::kControllerElectMasterFailed;
inline constexpr int32_t kAlterSyncStateSetFailed =
    protocol::ResponseCode::kControllerAlterSyncStateSetFailed;
inline constexpr int32_t kBrokerIdInvalid = protocol::ResponseCode::kControllerBrokerIdInvalid;

static_assert(kSuccess == 0);
static_assert(kFencedMasterEpoch == 2000);
static_assert(kFencedSyncStateSetEpoch == 2001);
static_assert(kInvalidMaster == 2002);
static_assert(kInvalidReplicas == 2003);
static_assert(kMasterNotAvailable == 2004);
static_assert(kInvalidRequest == 2005);
static_assert(kBrokerNotAlive == 2006);
static_assert(kNotLeader == 2007);
static_assert(kBrokerMetadataNotExist == 2008);
static_assert(kInvalidCleanBrokerMetadata == 2009);
static_assert(kBrokerNeedToBeRegistered == 2010);
static_assert(kMasterStillExist == 2011);
static_assert(kElectMasterFailed == 2012);
static_assert(kAlterSyncStateSetFailed == 2013);
static_assert(kBrokerIdInvalid == 2014);

}  // namespace comet::controller::code
