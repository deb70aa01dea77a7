#include "client/producer.h"

#include <unistd.h>

#include <future>

#include "net/io_loop.h"
#include "protocol/message_decoder.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "protocol/send_headers.h"

namespace comet::client {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using std::chrono::duration_cast;

namespace {
constexpr auto kPublishRecheck = std::chrono::seconds(1);

protocol::HostAddress host_of(const std::string& ip) {
    auto h = protocol::parse_host_address(ip + ":0");
    return h.is_ok() ? *h : protocol::HostAddress::ipv4(127, 0, 0, 1, 0);
}
}  // namespace

bool retryable_send_code(int32_t code) {
    return code == RC::kTopicNotExist || code == RC::kServiceNotAvailable ||
           code == RC::kSystemError || code == RC::kNoPermission || code == RC::kNoBuyerId ||
           code == RC::kNotInCurrentUnit || code == RC::kSystemBusy;
}

struct DefaultMqProducer::Prepared {
    std::string topic;
    std::string properties;  // encoded §5.3 string of the single message / batch wrapper
    std::string body;        // message body, or the encoded batch
    int32_t flag = 0;
    int32_t sys_flag = 0;  // TRANSACTION_PREPARED_TYPE for a TRAN_MSG=true message
    bool batch = false;
    std::string uniq_ids;    // comma-joined for a batch
    std::optional<MessageQueue> fixed_queue;
    int max_attempts = 1;
    int attempts = 0;
    TimePoint start;
    TimePoint deadline;
    std::string last_broker;
    Status last_error;
};

DefaultMqProducer::DefaultMqProducer(ProducerConfig config, Clock* clock)
    : config_(std::move(config)),
      clock_(clock),
      instance_(std::make_unique<MqClientInstance>(config_.client)),
      faults_(clock),
      id_setter_(host_of(config_.client.client_ip), static_cast<int16_t>(::getpid()),
                 static_cast<int32_t>(clock->now().time_since_epoch().count())) {
    instance_->set_producer_group(config_.group);
}

DefaultMqProducer::~DefaultMqProducer() { shutdown(); }

Status DefaultMqProducer::start() { return instance_->start(); }

void DefaultMqProducer::shutdown() { instance_->shutdown(); }

void DefaultMqProducer::refresh_route_in_background(const std::string& topic) {
    instance_->scheduler().schedule_after(Duration(0), [this, topic] {
        (void)instance_->fetch_route(topic);
    });
}

void DefaultMqProducer::on_master_lost(const std::string& topic) {
    constexpr Duration kMasterLostRefresh = std::chrono::milliseconds(50);
    const TimePoint now = clock_->now();
    {
        MutexLock lock(mu_);
        auto [it, fresh] = master_lost_refresh_.try_emplace(topic, now);
        if (!fresh) {
            if (now - it->second < kMasterLostRefresh) {
                return;
            }
            it->second = now;
        }
    }
    refresh_route_in_background(topic);
}

Result<std::shared_ptr<TopicPublishInfo>> DefaultMqProducer::publish_info(
    const std::string& topic, bool may_block) {
    const TimePoint now = clock_->now();
    std::shared_ptr<TopicPublishInfo> stale;
    {
        MutexLock lock(mu_);
        auto it = publish_.find(topic);
        if (it != publish_.end()) {
            if (now < it->second.expires) {
                return it->second.info;
            }
            stale = it->second.info;
        }
    }
    // Rebuild from the instance's cache (refreshed by its timer) without any RPC.
    if (auto cached = instance_->cached_route(topic)) {
        auto info = TopicPublishInfo::from_route(topic, *cached);
        if (info->ok()) {
            MutexLock lock(mu_);
            publish_[topic] = PublishEntry{info, now + kPublishRecheck};
            return info;
        }
    }
    if (stale != nullptr || !may_block) {
        refresh_route_in_background(topic);
        if (stale == nullptr) {
            return Status::error(Errc::kUnavailable, "route of topic {} not known yet", topic);
        }
        MutexLock lock(mu_);
        publish_[topic] = PublishEntry{stale, now + kPublishRecheck};
        return stale;
    }
    auto route = instance_->route(topic);
    std::shared_ptr<TopicPublishInfo> info;
    if (route.is_ok()) {
        info = TopicPublishInfo::from_route(topic, *route);
    } else if (route.status().code() == Errc::kNotFound) {
        // Java: fall back to the auto-create topic's route; the broker creates the topic. The
        // topic's own route is looked up again at the next recheck.
        COMET_ASSIGN_OR_RETURN(auto def, instance_->route(kAutoCreateTopicKey));
        for (auto& qd : def.queue_datas) {
            qd.read_queue_nums = std::min(qd.read_queue_nums, config_.default_topic_queue_nums);
            qd.write_queue_nums = std::min(qd.write_queue_nums, config_.default_topic_queue_nums);
        }
        info = TopicPublishInfo::from_route(topic, def);
    } else {
        return route.status();
    }
    if (!info->ok()) {
        return Status::error(Errc::kNotFound, "no writable queue of topic {} on any master",
                             topic);
    }
    MutexLock lock(mu_);
    publish_[topic] = PublishEntry{info, now + kPublishRecheck};
    return info;
}

Result<std::shared_ptr<DefaultMqProducer::Prepared>> DefaultMqProducer::prepare(
    std::vector<Message> msgs, bool batch) {
    if (msgs.empty()) {
        return Status::error(Errc::kInvalidArgument, "no message to send");
    }
    auto p = std::make_shared<Prepared>();
    p->topic = msgs.front().topic;
    p->batch = batch;
    if (p->topic.empty()) {
        return Status::error(Errc::kInvalidArgument, "message topic is empty");
    }
    const int64_t now_ms = clock_->wall_millis();
    size_t total = 0;
    for (auto& m : msgs) {
        if (m.topic != p->topic) {
            return Status::error(Errc::kInvalidArgument,
                                 "batch messages must share one topic ({} vs {})", m.topic,
                                 p->topic);
        }
        if (m.body.empty()) {
            return Status::error(Errc::kInvalidArgument, "message body is empty");
        }
        if (batch && m.properties.get(protocol::property::kDelayTimeLevel) != nullptr) {
            return Status::error(Errc::kInvalidArgument,
                                 "delay messages are not supported in a batch");
        }
        if (m.uniq_id().empty()) {
            m.properties.set(protocol::property::kUniqClientMessageIdKeyIdx,
                             id_setter_.create_uniq_id(now_ms));
        }
        if (m.properties.get(protocol::property::kWaitStoreMsgOk) == nullptr) {
            m.properties.set(protocol::property::kWaitStoreMsgOk, "true");
        }
        total += m.body.size();
        if (!p->uniq_ids.empty()) {
            p->uniq_ids += ",";
        }
        p->uniq_ids += m.uniq_id();
    }
    if (total > config_.max_message_size) {
        return Status::error(Errc::kInvalidArgument, "message body size {} over the limit {}",
                             total, config_.max_message_size);
    }
    if (batch) {
        for (const auto& m : msgs) {
            protocol::encode_batch_entry(
                m.flag, m.body, protocol::message_properties_to_string(m.properties), &p->body);
        }
        protocol::MessageProperties wrapper;
        wrapper.set(protocol::property::kWaitStoreMsgOk, "true");
        p->properties = protocol::message_properties_to_string(wrapper);
    } else {
        p->body = std::move(msgs.front().body);
        p->flag = msgs.front().flag;
        // Java sendKernelImpl: TRAN_MSG=true marks the send as a half (prepared) message.
        if (const std::string* tran =
                msgs.front().properties.get(protocol::property::kTransactionPrepared);
            tran != nullptr && *tran == "true") {
            p->sys_flag = protocol::sysflag::kTransactionPreparedType;
        }
        p->properties = protocol::message_properties_to_string(msgs.front().properties);
    }
    return p;
}

protocol::RemotingCommand DefaultMqProducer::build_request(const Prepared& p,
                                                           const MessageQueue& mq) const {
    protocol::SendMessageRequestHeaderV2 h;
    h.a = config_.group;
    h.b = p.topic;
    h.c = kAutoCreateTopicKey;
    h.d = config_.default_topic_queue_nums;
    h.e = mq.queue_id;
    h.f = p.sys_flag;
    h.g = clock_->wall_millis();
    h.h = p.flag;
    h.i = p.properties;
    h.j = 0;
    h.k = false;
    h.m = p.batch;
    h.n = mq.broker_name;
    auto req =
        protocol::RemotingCommand::request(p.batch ? Req::kSendBatchMessage : Req::kSendMessageV2);
    h.to_ext(req);
    req.body = p.body;
    return req;
}

Result<SendResult> DefaultMqProducer::process_response(const Prepared& p, const MessageQueue& mq,
                                                       const protocol::RemotingCommand& resp) const {
    SendResult r;
    const std::optional<SendStatus> status = send_status_of_code(resp.code);
    if (!status) {
        return response_error(fmt::format("send to {} queue {}", mq.broker_name, mq.queue_id),
                              resp);
    }
    r.status = *status;
    COMET_ASSIGN_OR_RETURN(auto h, protocol::SendMessageResponseHeader::from_ext(resp));
    r.msg_id = p.uniq_ids;
    r.offset_msg_id = h.msg_id;
    r.message_queue = MessageQueue{p.topic, mq.broker_name, h.queue_id};
    r.queue_offset = h.queue_offset;
    return r;
}

void DefaultMqProducer::update_fault(const std::string& broker, Duration elapsed,
                                     bool isolation) {
    if (!config_.send_latency_fault_enable) {
        return;
    }
    const auto latency = isolation ? milliseconds(30000) : duration_cast<milliseconds>(elapsed);
    faults_.update_fault_item(broker, latency,
                              LatencyFaultTolerance::not_available_duration(latency));
}

void DefaultMqProducer::attempt_async(std::shared_ptr<Prepared> p, SendCallback callback,
                                      bool may_block) {
    const TimePoint now = clock_->now();
    if (now >= p->deadline) {
        Status err = p->last_error.is_ok()
                         ? Status::error(Errc::kTimeout, "send of {} timed out", p->topic)
                         : Status::error(Errc::kTimeout, "send of {} timed out after {} attempts; "
                                         "last error: {}", p->topic, p->attempts,
                                         p->last_error.to_string());
        callback(std::move(err));
        return;
    }
    MessageQueue mq;
    if (p->fixed_queue) {
        mq = *p->fixed_queue;
    } else {
        auto info = publish_info(p->topic, may_block);
        if (!info.is_ok()) {
            callback(info.status());
            return;
        }
        mq = (*info)->select(p->last_broker, config_.send_latency_fault_enable ? &faults_ : nullptr);
    }
    auto addr = instance_->find_broker_master(mq.broker_name);
    if (!addr) {
        if (may_block) {
            (void)instance_->route(p->topic, true);
        } else {
            on_master_lost(p->topic);
        }
        addr = instance_->find_broker_master(mq.broker_name);
        if (!addr) {
            callback(Status::error(Errc::kNotFound, "no master address of broker {}",
                                   mq.broker_name));
            return;
        }
    }
    ++p->attempts;
    p->last_broker = mq.broker_name;
    const TimePoint sent_at = now;
    auto req = build_request(*p, mq);
    instance_->remoting().invoke_async(
        *addr, std::move(req), p->deadline - now,
        [this, p, mq, sent_at, callback = std::move(callback)](
            Result<protocol::RemotingCommand> resp) mutable {
            const Duration elapsed = clock_->now() - sent_at;
            bool retry = false;
            if (!resp.is_ok()) {
                update_fault(mq.broker_name, elapsed, true);
                p->last_error = resp.status();
                retry = true;
                if (resp.status().code() == Errc::kUnavailable) {
                    on_master_lost(p->topic);
                }
            } else {
                if (resp->code == protocol::ResponseCode::kServiceNotAvailable) {
                    on_master_lost(p->topic);
                }
                auto result = process_response(*p, mq, *resp);
                if (result.is_ok()) {
                    update_fault(mq.broker_name, elapsed, false);
                    callback(std::move(result));
                    return;
                }
                update_fault(mq.broker_name, elapsed, true);
                p->last_error = result.status();
                retry = retryable_send_code(resp->code);
            }
            if (retry && p->attempts < p->max_attempts && !p->fixed_queue &&
                clock_->now() < p->deadline) {
                attempt_async(std::move(p), std::move(callback), false);
                return;
            }
            callback(std::move(p->last_error));
        });
}

Result<SendResult> DefaultMqProducer::send(Message msg) {
    std::vector<Message> v;
    v.push_back(std::move(msg));
    COMET_ASSIGN_OR_RETURN(auto p, prepare(std::move(v), false));
    p->max_attempts = 1 + config_.retry_times_when_send_failed;
    p->start = clock_->now();
    p->deadline = p->start + config_.send_timeout;
    std::promise<Result<SendResult>> done;
    auto fut = done.get_future();
    attempt_async(p, [&done](Result<SendResult> r) { done.set_value(std::move(r)); }, true);
    return fut.get();
}

void DefaultMqProducer::send_async(Message msg, SendCallback callback) {
    std::vector<Message> v;
    v.push_back(std::move(msg));
    auto p = prepare(std::move(v), false);
    if (!p.is_ok()) {
        callback(p.status());
        return;
    }
    (*p)->max_attempts = 1 + config_.retry_times_when_send_async_failed;
    (*p)->start = clock_->now();
    (*p)->deadline = (*p)->start + config_.send_timeout;
    // From a send callback (a client I/O thread) nothing may block: an unknown route is then
    // fetched in the background and this send fails instead of waiting for it.
    attempt_async(std::move(*p), std::move(callback), !net::IoLoopGroup::on_io_thread());
}

Result<SendResult> DefaultMqProducer::send_to_queue(Message msg, const MessageQueue& mq) {
    std::vector<Message> v;
    v.push_back(std::move(msg));
    COMET_ASSIGN_OR_RETURN(auto p, prepare(std::move(v), false));
    if (!instance_->find_broker_master(mq.broker_name)) {
        COMET_RETURN_IF_ERROR(instance_->route(mq.topic).status());
    }
    p->fixed_queue = mq;
    p->start = clock_->now();
    p->deadline = p->start + config_.send_timeout;
    std::promise<Result<SendResult>> done;
    auto fut = done.get_future();
    attempt_async(p, [&done](Result<SendResult> r) { done.set_value(std::move(r)); }, true);
    return fut.get();
}

Status DefaultMqProducer::send_oneway(Message msg) {
    std::vector<Message> v;
    v.push_back(std::move(msg));
    COMET_ASSIGN_OR_RETURN(auto p, prepare(std::move(v), false));
    COMET_ASSIGN_OR_RETURN(auto info, publish_info(p->topic));
    const MessageQueue mq = info->select("", config_.send_latency_fault_enable ? &faults_ : nullptr);
    auto addr = instance_->find_broker_master(mq.broker_name);
    if (!addr) {
        return Status::error(Errc::kNotFound, "no master address of broker {}", mq.broker_name);
    }
    return instance_->remoting().invoke_oneway(*addr, build_request(*p, mq), config_.send_timeout);
}

Result<SendResult> DefaultMqProducer::send_batch(std::vector<Message> msgs) {
    std::promise<Result<SendResult>> done;
    auto fut = done.get_future();
    send_batch_async(std::move(msgs), [&done](Result<SendResult> r) { done.set_value(std::move(r)); });
    return fut.get();
}

void DefaultMqProducer::send_batch_async(std::vector<Message> msgs, SendCallback callback) {
    auto p = prepare(std::move(msgs), true);
    if (!p.is_ok()) {
        callback(p.status());
        return;
    }
    (*p)->max_attempts = 1 + config_.retry_times_when_send_failed;
    (*p)->start = clock_->now();
    (*p)->deadline = (*p)->start + config_.send_timeout;
    // From a send callback (a client I/O thread) nothing may block: an unknown route is then
    // fetched in the background and this send fails instead of waiting for it.
    attempt_async(std::move(*p), std::move(callback), !net::IoLoopGroup::on_io_thread());
}

}  // namespace comet::client
