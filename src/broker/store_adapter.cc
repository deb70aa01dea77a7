#include "broker/store_adapter.h"

#include <charconv>

namespace comet::broker {
namespace {

template <typename T>
Status parse_num(const std::string& key, const std::string& v, T* out) {
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
    if (ec != std::errc() || p != v.data() + v.size()) {
        return Status::error(Errc::kInvalidArgument, "{}: '{}' is not an integer", key, v);
    }
    return Status::ok();
}

Status parse_bool(const std::string& key, const std::string& v, bool* out) {
    if (v == "true") {
        *out = true;
    } else if (v == "false") {
        *out = false;
    } else {
        return Status::error(Errc::kInvalidArgument, "{}: '{}' is not true/false", key, v);
    }
    return Status::ok();
}

}  // namespace

Result<store::MessageStoreConfig> make_store_config(const BrokerConfig& config) {
    store::MessageStoreConfig c;
    c.store_path_root_dir = config.store_root();
    c.max_message_size = config.max_message_size;
    c.message_delay_level = config.message_delay_level;
    c.store_host = config.broker_addr();
    c.slave_role = config.broker_role == "SLAVE";
    if (config.flush_disk_type == "SYNC_FLUSH") {
        c.flush_disk_type = store::FlushDiskType::kSyncFlush;
    } else if (config.flush_disk_type == "ASYNC_FLUSH") {
        c.flush_disk_type = store::FlushDiskType::kAsyncFlush;
    } else {
        return Status::error(Errc::kInvalidArgument, "flushDiskType '{}' is not ASYNC_FLUSH/SYNC_FLUSH",
                             config.flush_disk_type);
    }
    c.max_transfer_bytes_on_message_in_memory = config.max_transfer_bytes;
    c.max_transfer_count_on_message_in_memory = config.max_msg_nums_batch;
    for (const auto& [k, v] : config.extra) {
        if (k == "storePathCommitLog") {
            c.store_path_commit_log = v;
        } else if (k == "mappedFileSizeCommitLog" || k == "mapedFileSizeCommitLog") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.mapped_file_size_commit_log));
        } else if (k == "mappedFileSizeConsumeQueue" || k == "mapedFileSizeConsumeQueue") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.mapped_file_size_consume_queue));
        } else if (k == "flushIntervalCommitLog") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.flush_interval_commit_log_ms));
        } else if (k == "flushCommitLogLeastPages") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.flush_commit_log_least_pages));
        } else if (k == "syncFlushTimeout") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.sync_flush_timeout_ms));
        } else if (k == "fileReservedTime") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.file_reserved_time_hours));
        } else if (k == "deleteWhen") {
            c.delete_when = v;
        } else if (k == "diskMaxUsedSpaceRatio") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.disk_max_used_space_ratio));
        } else if (k == "checkCRCOnRecover") {
            COMET_RETURN_IF_ERROR(parse_bool(k, v, &c.check_crc_on_recover));
        } else if (k == "messageIndexEnable") {
            COMET_RETURN_IF_ERROR(parse_bool(k, v, &c.message_index_enable));
        } else if (k == "flushIntervalConsumeQueue") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.flush_interval_consume_queue_ms));
        } else if (k == "cleanResourceInterval") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.clean_resource_interval_ms));
        } else if (k == "maxTransferBytesOnMessageInDisk") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.max_transfer_bytes_on_message_in_disk));
        } else if (k == "maxTransferCountOnMessageInDisk") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.max_transfer_count_on_message_in_disk));
        } else if (k == "warmMapedFileEnable") {
            COMET_RETURN_IF_ERROR(parse_bool(k, v, &c.warm_mapped_file_enable));
        }
    }
    return c;
}

StoreAdapter::StoreAdapter(std::unique_ptr<store::MessageStore> store) : store_(std::move(store)) {
    auto h = protocol::parse_host_address(store_->config().store_host);
    store_host_ = h.is_ok() ? h.value() : protocol::HostAddress::ipv4(127, 0, 0, 1, 10911);
}

StoreAdapter::~StoreAdapter() {
    store_->set_message_arriving_listener(nullptr);
}

void StoreAdapter::put_message(protocol::MessageExt msg, PutCallback done) {
    store_->put_message(std::move(msg), std::move(done));
}

void StoreAdapter::put_messages(protocol::MessageExt batch, PutCallback done) {
    store::MessageBatch b;
    b.topic = std::move(batch.topic);
    b.queue_id = batch.queue_id;
    b.sys_flag = batch.sys_flag;
    b.born_timestamp = batch.born_timestamp;
    b.born_host = batch.born_host;
    b.body = std::move(batch.body);
    b.properties = std::move(batch.properties);
    store_->put_messages(std::move(b), std::move(done));
}

store::GetMessageResult StoreAdapter::get_message(const std::string& group,
                                                  const std::string& topic, int32_t queue_id,
                                                  int64_t offset, int32_t max_msg_nums,
                                                  const store::MessageFilter* filter) {
    return store_->get_message(group, topic, queue_id, store::QueueOffset(offset), max_msg_nums, 0,
                               filter);
}

int64_t StoreAdapter::max_offset_in_queue(const std::string& topic, int32_t queue_id) {
    return store_->get_max_offset_in_queue(topic, queue_id).value();
}

int64_t StoreAdapter::min_offset_in_queue(const std::string& topic, int32_t queue_id) {
    return store_->get_min_offset_in_queue(topic, queue_id).value();
}

int64_t StoreAdapter::offset_in_queue_by_time(const std::string& topic, int32_t queue_id,
                                              int64_t timestamp, bool upper) {
    return store_
        ->get_offset_in_queue_by_time(topic, queue_id, timestamp,
                                      upper ? store::BoundaryType::kUpper
                                            : store::BoundaryType::kLower)
        .value();
}

int64_t StoreAdapter::earliest_message_time(const std::string& topic, int32_t queue_id) {
    return store_->get_earliest_message_time(topic, queue_id);
}

int64_t StoreAdapter::message_store_time(const std::string& topic, int32_t queue_id,
                                         int64_t offset) {
    return store_->get_message_store_timestamp(topic, queue_id, store::QueueOffset(offset));
}

std::optional<std::string> StoreAdapter::raw_message_at(int64_t physical_offset) {
    if (physical_offset < 0) {
        return std::nullopt;
    }
    auto v = store_->select_one_message_by_offset(store::PhysicalOffset(physical_offset));
    if (!v) {
        return std::nullopt;
    }
    return std::string(v->bytes());
}

std::optional<protocol::MessageExt> StoreAdapter::look_message_by_offset(int64_t physical_offset) {
    if (physical_offset < 0) {
        return std::nullopt;
    }
    auto m = store_->look_message_by_offset(store::PhysicalOffset(physical_offset));
    if (!m.is_ok()) {
        return std::nullopt;
    }
    return std::move(m).value();
}

std::optional<MessageStorePort::CqUnit> StoreAdapter::consume_queue_unit(const std::string& topic,
                                                                         int32_t queue_id,
                                                                         int64_t offset) {
    auto q = store_->consume_queues().find(topic, queue_id);
    if (!q) {
        return std::nullopt;
    }
    auto u = q->get_unit(store::QueueOffset(offset));
    if (!u || !u->is_valid()) {
        return std::nullopt;
    }
    return CqUnit{u->phy_offset.value(), u->size, u->tags_code};
}

store::QueryMessageResult StoreAdapter::query_message(const std::string& topic,
                                                      const std::string& key, int32_t max_num,
                                                      int64_t begin_ts, int64_t end_ts) {
    return store_->query_message(topic, key, max_num, begin_ts, end_ts);
}

void StoreAdapter::delete_topic(const std::string& topic) { store_->delete_topics({topic}); }

void StoreAdapter::set_arrival_listener(ArrivalListener listener) {
    listener_ = std::move(listener);
    store_->set_message_arriving_listener(this);
}

std::map<std::string, std::string> StoreAdapter::runtime_info() { return store_->runtime_info(); }

void StoreAdapter::arriving(const std::string& topic, int32_t queue_id,
                            store::QueueOffset logic_offset, int64_t tags_code,
                            int64_t store_timestamp) {
    (void)store_timestamp;
    if (listener_) {
        listener_(topic, queue_id, logic_offset.value(), tags_code);
    }
}

}  // namespace comet::broker
