#include "fake_store.h"

#include "broker/client/subscription_data.h"
#include "broker/metadata/topic_config.h"
#include "protocol/message_decoder.h"
#include "protocol/message_id.h"

namespace comet::broker::testing {

store::PutMessageResult FakeStore::append(protocol::MessageExt msg) {
    store::PutMessageResult r;
    r.status = next_status;
    if (!store::is_stored(next_status)) {
        return r;
    }
    auto& q = queues_[{msg.topic, msg.queue_id}];
    msg.queue_offset = static_cast<int64_t>(q.size());
    msg.commit_log_offset = next_phys_;
    msg.store_timestamp = now_ms;
    msg.store_host = store_host();
    std::string rec;
    Status st = protocol::encode_message(msg, &rec);
    if (!st.is_ok()) {
        r.status = store::PutMessageStatus::kMessageIllegal;
        r.remark = st.message();
        return r;
    }
    int64_t tags_code = java_string_hash(msg.tags());
    if (msg.topic == kScheduleTopic) {
        tags_code = now_ms + 1000;  // every level is 1 s in these tests
    }
    q.push_back(Unit{next_phys_, static_cast<int32_t>(rec.size()), tags_code, now_ms});
    records_[next_phys_] = rec;
    r.append.status = store::AppendMessageStatus::kPutOk;
    r.append.wrote_offset = store::PhysicalOffset(next_phys_);
    r.append.wrote_bytes = static_cast<int32_t>(rec.size());
    r.append.msg_id = protocol::create_offset_msg_id(store_host(), next_phys_);
    r.append.logics_offset = store::QueueOffset(msg.queue_offset);
    r.append.store_timestamp = now_ms;
    next_phys_ += static_cast<int64_t>(rec.size());
    puts.push_back(msg);
    if (listener_) {
        listener_(msg.topic, msg.queue_id, static_cast<int64_t>(q.size()), tags_code);
    }
    return r;
}

void FakeStore::put_message(const protocol::MessageExt& msg, std::string_view body,
                            PutCallback done) {
    // A copy that owns its body: the caller may reuse msg and body once this returns.
    protocol::MessageExt stored = msg;
    stored.body.assign(body);
    store::PutMessageResult r;
    {
        std::lock_guard<std::recursive_mutex> l(mu_);
        r = append(std::move(stored));
    }
    done(std::move(r));
}

void FakeStore::put_messages(protocol::MessageExt batch, PutCallback done) {
    auto entries = protocol::decode_batch_body(batch.body);
    store::PutMessageResult total;
    if (!entries.is_ok()) {
        total.status = store::PutMessageStatus::kMessageIllegal;
        done(std::move(total));
        return;
    }
    std::string ids;
    bool first = true;
    {
        std::lock_guard<std::recursive_mutex> l(mu_);
        for (const auto& e : entries.value()) {
            protocol::MessageExt m = batch;
            m.body = std::string(e.body);
            m.flag = e.flag;
            m.properties = protocol::string_to_message_properties(e.properties);
            for (const auto& [k, v] : batch.properties.entries()) {
                m.properties.set(k, v);
            }
            auto r = append(std::move(m));
            if (!store::is_stored(r.status)) {
                done(std::move(r));
                return;
            }
            if (first) {
                total = r;
                first = false;
            } else {
                total.append.msg_num++;
            }
            ids += ids.empty() ? "" : ",";
            ids += r.append.msg_id.view();
        }
    }
    total.append.msg_id = ids;
    done(std::move(total));
}

store::GetMessageResult FakeStore::get_message(const std::string& group, const std::string& topic,
                                               int32_t queue_id, int64_t offset,
                                               int32_t max_msg_nums,
                                               const store::MessageFilter* filter) {
    (void)group;
    std::lock_guard<std::recursive_mutex> l(mu_);
    store::GetMessageResult r;
    auto it = queues_.find({topic, queue_id});
    if (it == queues_.end()) {
        r.status = store::GetMessageStatus::kNoMatchedLogicQueue;
        return r;
    }
    const auto& q = it->second;
    const int64_t max = static_cast<int64_t>(q.size());
    r.min_offset = store::QueueOffset(0);
    r.max_offset = store::QueueOffset(max);
    if (max == 0) {
        r.status = store::GetMessageStatus::kNoMessageInQueue;
        return r;
    }
    if (offset == max) {
        r.status = store::GetMessageStatus::kOffsetOverflowOne;
        r.next_begin_offset = store::QueueOffset(offset);
        return r;
    }
    if (offset > max) {
        r.status = store::GetMessageStatus::kOffsetOverflowBadly;
        r.next_begin_offset = store::QueueOffset(max);
        return r;
    }
    int64_t o = offset;
    for (; o < max && r.message_count() < max_msg_nums; ++o) {
        const Unit& u = q[static_cast<size_t>(o)];
        if (filter != nullptr && !filter->is_matched_by_consume_queue(u.tags_code)) {
            continue;
        }
        store::MappedView v;
        const std::string& rec = records_[u.phys];
        if (filter != nullptr && !filter->is_matched_by_commit_log(rec)) {
            continue;
        }
        v.data = reinterpret_cast<const uint8_t*>(rec.data());
        v.size = rec.size();
        v.start_offset = u.phys;
        r.add_message(std::move(v), store::QueueOffset(o));
    }
    r.next_begin_offset = store::QueueOffset(o);
    r.status = r.messages.empty() ? store::GetMessageStatus::kNoMatchedMessage
                                  : store::GetMessageStatus::kFound;
    return r;
}

int64_t FakeStore::max_offset_in_queue(const std::string& topic, int32_t queue_id) {
    std::lock_guard<std::recursive_mutex> l(mu_);
    auto it = queues_.find({topic, queue_id});
    return it == queues_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

int64_t FakeStore::min_offset_in_queue(const std::string&, int32_t) { return 0; }

int64_t FakeStore::offset_in_queue_by_time(const std::string& topic, int32_t queue_id,
                                           int64_t timestamp, bool upper) {
    std::lock_guard<std::recursive_mutex> l(mu_);
    auto it = queues_.find({topic, queue_id});
    if (it == queues_.end()) {
        return 0;
    }
    const auto& q = it->second;
    for (size_t i = 0; i < q.size(); ++i) {
        if (q[i].store_ts >= timestamp) {
            return upper && q[i].store_ts > timestamp && i > 0 ? static_cast<int64_t>(i - 1)
                                                               : static_cast<int64_t>(i);
        }
    }
    return static_cast<int64_t>(q.size());
}

int64_t FakeStore::earliest_message_time(const std::string& topic, int32_t queue_id) {
    return message_store_time(topic, queue_id, 0);
}

int64_t FakeStore::message_store_time(const std::string& topic, int32_t queue_id, int64_t offset) {
    std::lock_guard<std::recursive_mutex> l(mu_);
    auto it = queues_.find({topic, queue_id});
    if (it == queues_.end() || offset < 0 || offset >= static_cast<int64_t>(it->second.size())) {
        return -1;
    }
    return it->second[static_cast<size_t>(offset)].store_ts;
}

std::optional<std::string> FakeStore::raw_message_at(int64_t physical_offset) {
    std::lock_guard<std::recursive_mutex> l(mu_);
    auto it = records_.find(physical_offset);
    if (it == records_.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::optional<protocol::MessageExt> FakeStore::look_message_by_offset(int64_t physical_offset) {
    auto raw = raw_message_at(physical_offset);
    if (!raw) {
        return std::nullopt;
    }
    auto m = protocol::decode_message(*raw);
    if (!m.is_ok()) {
        return std::nullopt;
    }
    return std::move(m).value();
}

std::optional<MessageStorePort::CqUnit> FakeStore::consume_queue_unit(const std::string& topic,
                                                                      int32_t queue_id,
                                                                      int64_t offset) {
    std::lock_guard<std::recursive_mutex> l(mu_);
    auto it = queues_.find({topic, queue_id});
    if (it == queues_.end() || offset < 0 || offset >= static_cast<int64_t>(it->second.size())) {
        return std::nullopt;
    }
    const Unit& u = it->second[static_cast<size_t>(offset)];
    return CqUnit{u.phys, u.size, u.tags_code};
}

store::QueryMessageResult FakeStore::query_message(const std::string& topic,
                                                   const std::string& key, int32_t max_num,
                                                   int64_t begin_ts, int64_t end_ts) {
    (void)begin_ts;
    (void)end_ts;
    std::lock_guard<std::recursive_mutex> l(mu_);
    store::QueryMessageResult r;
    for (auto it = records_.rbegin(); it != records_.rend(); ++it) {
        auto m = protocol::decode_message(it->second);
        if (m.is_ok() && m->topic == topic && m->keys().find(key) != std::string::npos &&
            static_cast<int32_t>(r.messages.size()) < max_num) {
            store::MappedView v;
            v.data = reinterpret_cast<const uint8_t*>(it->second.data());
            v.size = it->second.size();
            r.messages.push_back(v);
        }
    }
    return r;
}

void FakeStore::delete_topic(const std::string& topic) {
    std::lock_guard<std::recursive_mutex> l(mu_);
    for (auto it = queues_.begin(); it != queues_.end();) {
        it = it->first.first == topic ? queues_.erase(it) : std::next(it);
    }
}

}  // namespace comet::broker::testing
