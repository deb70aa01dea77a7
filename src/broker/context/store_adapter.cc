#include "broker/context/store_adapter.h"

#include "dledger/dledger_server.h"

#include <charconv>

#include "base/config.h"
#include "store/consume_queue_unit.h"

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

void register_store_config(ConfigRegistry& r, store::MessageStoreConfig* c) {
    r.add_string("storePathCommitLog", &c->store_path_commit_log, c->store_path_commit_log,
                 "CommitLog directory (empty: <storePathRootDir>/commitlog)");
    r.add_int64("mappedFileSizeCommitLog", &c->mapped_file_size_commit_log,
                c->mapped_file_size_commit_log, "CommitLog segment size in bytes")
        .positive();
    r.add_int64("mappedFileSizeConsumeQueue", &c->mapped_file_size_consume_queue,
                c->mapped_file_size_consume_queue,
                "ConsumeQueue file size in bytes (multiple of 20)")
        .positive();
    // RocketMQ 4.x spelling of the two sizes, bound to the same members.
    r.add_int64("mapedFileSizeCommitLog", &c->mapped_file_size_commit_log,
                c->mapped_file_size_commit_log, "alias of mappedFileSizeCommitLog (4.x name)")
        .positive();
    r.add_int64("mapedFileSizeConsumeQueue", &c->mapped_file_size_consume_queue,
                c->mapped_file_size_consume_queue, "alias of mappedFileSizeConsumeQueue (4.x name)")
        .positive();
    r.add_int("flushIntervalCommitLog", &c->flush_interval_commit_log_ms,
              c->flush_interval_commit_log_ms, "async flush period (ms)")
        .positive();
    r.add_int("flushCommitLogLeastPages", &c->flush_commit_log_least_pages,
              c->flush_commit_log_least_pages, "pages an async flush waits for")
        .non_negative();
    r.add_int64("syncFlushTimeout", &c->sync_flush_timeout_ms, c->sync_flush_timeout_ms,
                "SYNC_FLUSH wait before FLUSH_DISK_TIMEOUT (ms)")
        .positive();
    // 0 is valid, as in RocketMQ: every segment but the active one is expired at once.
    r.add_int("fileReservedTime", &c->file_reserved_time_hours, c->file_reserved_time_hours,
              "hours CommitLog files are kept")
        .non_negative();
    r.add_string("deleteWhen", &c->delete_when, c->delete_when,
                 "hour(s) of day when expired files are deleted, e.g. 04");
    r.add_int("diskMaxUsedSpaceRatio", &c->disk_max_used_space_ratio, c->disk_max_used_space_ratio,
              "disk usage (%) that forces deletion")
        .range(10, 95);
    r.add_bool("checkCRCOnRecover", &c->check_crc_on_recover, c->check_crc_on_recover,
               "verify body CRCs during recovery");
    r.add_bool("messageIndexEnable", &c->message_index_enable, c->message_index_enable,
               "build the key index (QUERY_MESSAGE)");
    r.add_int("flushIntervalConsumeQueue", &c->flush_interval_consume_queue_ms,
              c->flush_interval_consume_queue_ms, "ConsumeQueue flush period (ms)")
        .positive();
    r.add_int("cleanResourceInterval", &c->clean_resource_interval_ms,
              c->clean_resource_interval_ms, "retention check period (ms)")
        .positive();
    r.add_int("maxTransferBytesOnMessageInDisk", &c->max_transfer_bytes_on_message_in_disk,
              c->max_transfer_bytes_on_message_in_disk, "pull batch byte cap when on disk")
        .positive();
    r.add_int("maxTransferCountOnMessageInDisk", &c->max_transfer_count_on_message_in_disk,
              c->max_transfer_count_on_message_in_disk, "pull batch count cap when on disk")
        .positive();
    r.add_int("accessMessageInMemoryMaxRatio", &c->access_message_in_memory_max_ratio,
              c->access_message_in_memory_max_ratio,
              "% of RAM behind the log's end still counted as in memory (pull batch caps, "
              "slave suggestion, QUERY_CONSUMER_OFFSET of a new group)")
        .range(0, 100);
    r.add_bool("warmMapedFileEnable", &c->warm_mapped_file_enable, c->warm_mapped_file_enable,
               "pre-touch new CommitLog segments");
    r.add_string("commitLogZeroFill", &c->commit_log_zero_fill, c->commit_log_zero_fill,
                 "auto|true|false: write new CommitLog segments with zeros so that syncs commit "
                 "no file system metadata (auto: on with DLedger)");
    r.add_int64("commitLogWriteBufferSize", &c->commit_log_write_buffer_bytes,
                c->commit_log_write_buffer_bytes,
                "CommitLog write buffer bytes (Comet; 0 = write through the mapping)")
        .non_negative();
    r.add_int("osPageCacheBusyTimeOutMills", &c->os_page_cache_busy_timeout_ms,
              c->os_page_cache_busy_timeout_ms,
              "a put waiting this long for CommitLog write-buffer space is refused "
              "(SYSTEM_BUSY [PC_SYNCHRONIZED]), and so are later ones until space frees (ms)")
        .non_negative();
    r.add_int64("testOnlyCommitStallMillis", &c->commit_stall_ms_for_test,
                c->commit_stall_ms_for_test,
                "TESTS ONLY: the CommitLog commit thread sleeps this long before each write, "
                "as on a stalled disk (0: off)")
        .non_negative();
    r.add_int("maxHashSlotNum", &c->max_hash_slot_num, c->max_hash_slot_num,
              "index file hash slots")
        .positive();
    r.add_int("maxIndexNum", &c->max_index_num, c->max_index_num, "index file entries").positive();
}

Result<store::MessageStoreConfig> make_store_config(const BrokerConfig& config,
                                                    store::MessageStoreConfig base) {
    store::MessageStoreConfig c = std::move(base);
    c.store_path_root_dir = config.store_root();
    c.max_message_size = config.max_message_size;
    c.message_delay_level = config.message_delay_level;
    c.store_host = config.broker_addr();
    // DLedger mode: the role is elected and changes at run time; the send gate (set_dledger)
    // refuses puts on followers, so the store itself never is a slave.
    // Controller mode likewise: the role comes from the controller; StoreAdapter's write gate
    // keeps a slave's log for replication only.
    c.slave_role = config.broker_role == "SLAVE" && !config.enable_dleger_commit_log &&
                   !config.enable_controller_mode;
    if (config.flush_disk_type == "SYNC_FLUSH") {
        c.flush_disk_type = store::FlushDiskType::kSyncFlush;
    } else if (config.flush_disk_type == "ASYNC_FLUSH") {
        c.flush_disk_type = store::FlushDiskType::kAsyncFlush;
    } else {
        return Status::error(Errc::kInvalidArgument,
                             "flushDiskType '{}' is not ASYNC_FLUSH/SYNC_FLUSH",
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
        } else if (k == "accessMessageInMemoryMaxRatio") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.access_message_in_memory_max_ratio));
            if (c.access_message_in_memory_max_ratio < 0 ||
                c.access_message_in_memory_max_ratio > 100) {
                return Status::error(Errc::kInvalidArgument,
                                     "accessMessageInMemoryMaxRatio {} is not within 0..100",
                                     c.access_message_in_memory_max_ratio);
            }
        } else if (k == "warmMapedFileEnable") {
            COMET_RETURN_IF_ERROR(parse_bool(k, v, &c.warm_mapped_file_enable));
        } else if (k == "osPageCacheBusyTimeOutMills") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.os_page_cache_busy_timeout_ms));
        } else if (k == "testOnlyCommitStallMillis") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.commit_stall_ms_for_test));
        } else if (k == "commitLogZeroFill") {
            c.commit_log_zero_fill = v;
        } else if (k == "commitLogWriteBufferSize") {
            COMET_RETURN_IF_ERROR(parse_num(k, v, &c.commit_log_write_buffer_bytes));
            if (c.commit_log_write_buffer_bytes < 0) {
                return Status::error(Errc::kInvalidArgument,
                                     "commitLogWriteBufferSize {} must be >= 0 (0 writes through "
                                     "the mapping)",
                                     c.commit_log_write_buffer_bytes);
            }
        }
    }
    if (c.commit_log_zero_fill == "auto") {
        // Not with SYNC_FLUSH alone: a group commit there batches enough that the zeros' CPU
        // and second write cost more than the metadata they save (decision 035).
        c.zero_fill_commit_log = config.enable_dleger_commit_log;
    } else if (c.commit_log_zero_fill == "true" || c.commit_log_zero_fill == "false") {
        c.zero_fill_commit_log = c.commit_log_zero_fill == "true";
    } else {
        return Status::error(Errc::kInvalidArgument,
                             "commitLogZeroFill: '{}' is not auto, true or false",
                             c.commit_log_zero_fill);
    }
    return c;
}

StoreAdapter::StoreAdapter(std::unique_ptr<store::MessageStore> store) : store_(std::move(store)) {
    auto h = protocol::parse_host_address(store_->config().store_host);
    store_host_ = h.is_ok() ? h.value() : protocol::HostAddress::ipv4(127, 0, 0, 1, 10911);
}

StoreAdapter::~StoreAdapter() { store_->set_message_arriving_listener(nullptr); }

namespace {

// Wraps a put for DLedger mode; false: refused (done already called).
bool gate_put(dledger::DLedgerServer* dl, bool writable, StoreAdapter::PutCallback* done) {
    if (!writable) {
        store::PutMessageResult r;
        r.status = store::PutMessageStatus::kServiceNotAvailable;
        r.remark = "this broker is not the master of its group now (controller mode): the "
                   "controller elects the master; send to it";
        (*done)(std::move(r));
        return false;
    }
    if (dl == nullptr) {
        return true;
    }
    if (!dl->begin_put()) {
        store::PutMessageResult r;
        r.status = store::PutMessageStatus::kServiceNotAvailable;
        const auto info = dl->role_info();
        r.remark = fmt::format(
            "DLedger peer {} of group {} is not the writable leader (role {}, leader {}){}{}",
            dl->config().self_id, dl->config().group, raft::role_name(info.role),
            info.leader_id.empty() ? "unknown" : info.leader_id,
            info.storage_error.empty() ? "" : ": its log storage failed, it restarts: ",
            info.storage_error);
        (*done)(std::move(r));
        return false;
    }
    *done = [dl, inner = std::move(*done)](store::PutMessageResult&& r) {
        inner(std::move(r));
        dl->end_put();
        dl->notify_appended();
    };
    return true;
}

}  // namespace

void StoreAdapter::put_message(const protocol::MessageExt& msg, std::string_view body,
                               PutCallback done) {
    if (!gate_put(dledger_, writable_.load(), &done)) {
        return;
    }
    store_->put_message(msg, body, std::move(done));
}

void StoreAdapter::put_messages(protocol::MessageExt batch, PutCallback done) {
    if (!gate_put(dledger_, writable_.load(), &done)) {
        return;
    }
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
        ->get_offset_in_queue_by_time(
            topic, queue_id, timestamp,
            upper ? store::BoundaryType::kUpper : store::BoundaryType::kLower)
        .value();
}

int64_t StoreAdapter::offset_in_queue_by_time_nearest(const std::string& topic, int32_t queue_id,
                                                      int64_t timestamp) {
    return store_->offset_in_queue_by_time_nearest(topic, queue_id, timestamp).value();
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

int StoreAdapter::clean_unused_topics(const std::set<std::string>& keep) {
    return store_->clean_unused_topics(keep);
}

int StoreAdapter::clean_expired_consume_queues() {
    return store_->clean_expired_consumer_queues();
}

std::optional<MessageStorePort::CqBounds> StoreAdapter::consume_queue_bounds(
    const std::string& topic, int32_t queue_id) {
    auto q = store_->consume_queues().find(topic, queue_id);
    if (!q) {
        return std::nullopt;
    }
    return CqBounds{q->min_offset_in_queue().value(), q->max_offset_in_queue().value()};
}

std::optional<std::vector<MessageStorePort::CqUnit>> StoreAdapter::consume_queue_index_buffer(
    const std::string& topic, int32_t queue_id, int64_t index, int32_t max_count) {
    auto q = store_->consume_queues().find(topic, queue_id);
    if (!q || index >= q->max_offset_in_queue().value()) {
        return std::nullopt;
    }
    auto view = q->get_index_buffer(store::QueueOffset(index));
    if (!view || view->empty()) {
        return std::nullopt;
    }
    std::vector<CqUnit> out;
    for (size_t at = 0; at + store::kCqStoreUnitSize <= view->size &&
                        static_cast<int64_t>(out.size()) < max_count;
         at += store::kCqStoreUnitSize) {
        const store::CqUnit u = store::decode_cq_unit(view->data + at);
        out.push_back(CqUnit{u.phy_offset.value(), u.size, u.tags_code});
    }
    return out;
}

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

bool StoreAdapter::is_in_memory(int64_t physical_offset) {
    return store_->is_in_memory(physical_offset);
}

}  // namespace comet::broker
