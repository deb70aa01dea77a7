#include "store/consume_queue_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "protocol/message_ext.h"

namespace comet::store {

namespace fs = std::filesystem;

bool is_valid_topic_name(std::string_view topic) {
    if (topic.empty() || topic.size() > 255) {
        return false;
    }
    return std::all_of(topic.begin(), topic.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '%' || c == '|' || c == '_' || c == '-';
    });
}

ConsumeQueueStore::ConsumeQueueStore(std::string root_dir, int64_t mapped_file_size,
                                     AllocateMappedFileService* allocator)
    : root_dir_(std::move(root_dir)), mapped_file_size_(mapped_file_size), allocator_(allocator) {}

Status ConsumeQueueStore::load() {
    std::error_code ec;
    fs::create_directories(root_dir_, ec);
    if (ec) {
        return Status::error(Errc::kIoError, "create {}: {}", root_dir_, ec.message());
    }
    std::map<std::string, std::map<int32_t, std::shared_ptr<ConsumeQueue>>, std::less<>> table;
    for (const auto& topic_dir : fs::directory_iterator(root_dir_, ec)) {
        if (!topic_dir.is_directory()) {
            continue;
        }
        const std::string topic = topic_dir.path().filename().string();
        if (!is_valid_topic_name(topic)) {
            spdlog::warn("consumequeue: ignoring directory {} (not a topic name)", topic);
            continue;
        }
        for (const auto& qdir : fs::directory_iterator(topic_dir.path(), ec)) {
            const std::string name = qdir.path().filename().string();
            int32_t queue_id = -1;
            const auto r = std::from_chars(name.data(), name.data() + name.size(), queue_id);
            if (!qdir.is_directory() || r.ec != std::errc() ||
                r.ptr != name.data() + name.size() || queue_id < 0) {
                spdlog::warn("consumequeue: ignoring {}/{} (not a queue id)", topic, name);
                continue;
            }
            auto cq = std::make_shared<ConsumeQueue>(topic, queue_id, root_dir_, mapped_file_size_,
                                                     allocator_);
            const Status st = cq->load();
            if (!st.is_ok()) {
                return Status::error(st.code(), "load ConsumeQueue {}-{}: {}", topic, queue_id,
                                     st.message());
            }
            table[topic][queue_id] = std::move(cq);
        }
    }
    if (ec) {
        return Status::error(Errc::kIoError, "list {}: {}", root_dir_, ec.message());
    }
    MutexLock l(mu_);
    table_ = std::move(table);
    return Status::ok();
}

std::vector<std::shared_ptr<ConsumeQueue>> ConsumeQueueStore::queues() const {
    std::vector<std::shared_ptr<ConsumeQueue>> out;
    MutexLock l(mu_);
    for (const auto& [topic, m] : table_) {
        for (const auto& [qid, cq] : m) {
            out.push_back(cq);
        }
    }
    return out;
}

Status ConsumeQueueStore::recover() {
    for (const auto& cq : queues()) {
        COMET_RETURN_IF_ERROR(cq->recover());
    }
    return Status::ok();
}

Status ConsumeQueueStore::truncate_dirty(PhysicalOffset phy_offset) {
    for (const auto& cq : queues()) {
        COMET_RETURN_IF_ERROR(cq->truncate_dirty_logic_files(phy_offset));
    }
    return Status::ok();
}

PhysicalOffset ConsumeQueueStore::max_physic_offset() const {
    int64_t max = -1;
    for (const auto& cq : queues()) {
        max = std::max(max, cq->max_physic_offset().value());
    }
    return PhysicalOffset(max);
}

std::shared_ptr<ConsumeQueue> ConsumeQueueStore::find(std::string_view topic,
                                                      int32_t queue_id) const {
    MutexLock l(mu_);
    auto it = table_.find(topic);
    if (it == table_.end()) {
        return nullptr;
    }
    auto q = it->second.find(queue_id);
    return q == it->second.end() ? nullptr : q->second;
}

Result<std::shared_ptr<ConsumeQueue>> ConsumeQueueStore::find_or_create(std::string_view topic,
                                                                        int32_t queue_id) {
    if (auto cq = find(topic, queue_id)) {
        return cq;
    }
    if (!is_valid_topic_name(topic) || queue_id < 0) {
        return Status::error(Errc::kInvalidArgument, "no ConsumeQueue for topic '{}' queue {}",
                             topic, queue_id);
    }
    MutexLock creating(create_mu_);
    if (auto cq = find(topic, queue_id)) {
        return cq;  // created by another thread meanwhile
    }
    auto cq = std::make_shared<ConsumeQueue>(std::string(topic), queue_id, root_dir_,
                                             mapped_file_size_, allocator_);
    COMET_RETURN_IF_ERROR(cq->load());  // creates the directory
    MutexLock l(mu_);
    auto& slot = table_[std::string(topic)][queue_id];
    if (slot == nullptr) {
        slot = std::move(cq);
    }
    return slot;
}

std::map<std::string, std::map<int32_t, int64_t>> ConsumeQueueStore::max_offsets() const {
    std::map<std::string, std::map<int32_t, int64_t>> out;
    for (const auto& cq : queues()) {
        out[cq->topic()][cq->queue_id()] = cq->max_offset_in_queue().value();
    }
    return out;
}

namespace {

// Prepared and rolled-back transaction records get no unit (Java
// CommitLogDispatcherBuildConsumeQueue).
bool builds_unit(const DispatchRequest& req) {
    const int32_t tran = protocol::sysflag::transaction_value(req.sys_flag);
    return tran != protocol::sysflag::kTransactionPreparedType &&
           tran != protocol::sysflag::kTransactionRollbackType;
}

}  // namespace

Status ConsumeQueueStore::put_message_position_info(const DispatchRequest& req) {
    if (!builds_unit(req)) {
        return Status::ok();
    }
    COMET_ASSIGN_OR_RETURN(auto cq, find_or_create(req.topic, req.queue_id));
    return cq->put_message_position_info(
        CqUnit{req.commit_log_offset, req.msg_size, req.tags_code}, req.consume_queue_offset);
}

Status ConsumeQueueStore::stage_message_position_info(const DispatchRequest& req,
                                                      ConsumeQueue** cq_out) {
    *cq_out = nullptr;
    if (!builds_unit(req)) {
        return Status::ok();
    }
    // A pass usually writes to a few queues: look among them first (no lock).
    constexpr size_t kScan = 8;
    ConsumeQueue* cq = nullptr;
    for (size_t i = 0; i < staged_.size() && i < kScan && cq == nullptr; ++i) {
        if (staged_[i]->queue_id() == req.queue_id && staged_[i]->topic() == req.topic) {
            cq = staged_[i].get();
        }
    }
    std::shared_ptr<ConsumeQueue> found;
    if (cq == nullptr) {
        COMET_ASSIGN_OR_RETURN(found, find_or_create(req.topic, req.queue_id));
        cq = found.get();
    }
    bool registered = false;
    COMET_RETURN_IF_ERROR(cq->stage_message_position_info(
        CqUnit{req.commit_log_offset, req.msg_size, req.tags_code}, req.consume_queue_offset,
        &registered));
    if (registered) {
        staged_.push_back(std::move(found));  // not in the pass before: found, not cached
    }
    // Held by staged_ until end_pass() whenever it has units in this pass.
    *cq_out = cq->in_pass() ? cq : nullptr;
    return Status::ok();
}

Status ConsumeQueueStore::commit_staged() {
    Status first_error = Status::ok();
    for (const auto& cq : staged_) {
        Status st = cq->commit_staged();
        if (!st.is_ok() && first_error.is_ok()) {
            first_error = std::move(st);
        }
    }
    return first_error;
}

void ConsumeQueueStore::end_pass() {
    for (const auto& cq : staged_) {
        cq->end_pass();
    }
    staged_.clear();
}

Result<bool> ConsumeQueueStore::flush(int32_t least_pages) {
    bool any = false;
    for (const auto& cq : queues()) {
        COMET_ASSIGN_OR_RETURN(bool progressed, cq->flush(least_pages));
        any = any || progressed;
    }
    return any;
}

int ConsumeQueueStore::delete_expired_files(PhysicalOffset min_phy_offset) {
    int n = 0;
    for (const auto& cq : queues()) {
        n += cq->delete_expired_file(min_phy_offset);
    }
    return n;
}

void ConsumeQueueStore::correct_min_offsets(PhysicalOffset min_phy_offset) {
    for (const auto& cq : queues()) {
        cq->correct_min_offset(min_phy_offset);
    }
}

int ConsumeQueueStore::destroy_topic(std::string_view topic) {
    std::map<int32_t, std::shared_ptr<ConsumeQueue>> doomed;
    {
        MutexLock l(mu_);
        auto it = table_.find(topic);
        if (it == table_.end()) {
            return 0;
        }
        doomed = std::move(it->second);
        table_.erase(it);
    }
    for (auto& [qid, cq] : doomed) {
        cq->destroy();
    }
    std::error_code ec;
    fs::remove_all(fs::path(root_dir_) / std::string(topic), ec);
    spdlog::info("consumequeue: topic {} removed ({} queue(s))", topic, doomed.size());
    return static_cast<int>(doomed.size());
}

int ConsumeQueueStore::clean_expired(
    PhysicalOffset min_phy_offset,
    const std::function<void(const std::string&, int32_t)>& removed) {
    std::vector<std::shared_ptr<ConsumeQueue>> doomed;
    {
        MutexLock l(mu_);
        for (auto t = table_.begin(); t != table_.end();) {
            if (t->first == "SCHEDULE_TOPIC_XXXX") {
                ++t;
                continue;
            }
            for (auto q = t->second.begin(); q != t->second.end();) {
                const int64_t last = q->second->last_offset();
                if (last == -1) {
                    spdlog::warn("cleanExpiredConsumerQueue: {}-{} has no unit in its last segment "
                                 "(created or rolled just now), kept",
                                 t->first, q->first);
                    ++q;
                } else if (last < min_phy_offset.value()) {
                    spdlog::info("cleanExpiredConsumerQueue: {}-{} destroyed, CommitLog min {}, "
                                 "queue's last offset {}",
                                 t->first, q->first, min_phy_offset.value(), last);
                    doomed.push_back(q->second);
                    q = t->second.erase(q);
                } else {
                    ++q;
                }
            }
            if (t->second.empty()) {
                spdlog::info("cleanExpiredConsumerQueue: topic {} has no queue left", t->first);
                t = table_.erase(t);
            } else {
                ++t;
            }
        }
    }
    for (auto& cq : doomed) {
        if (removed) {
            removed(cq->topic(), cq->queue_id());
        }
        cq->destroy();
        std::error_code ec;
        fs::remove(fs::path(root_dir_) / cq->topic(), ec);  // only when empty
    }
    return static_cast<int>(doomed.size());
}

int ConsumeQueueStore::clean_unused_topics(const std::vector<std::string>& keep) {
    std::vector<std::string> unused;
    {
        MutexLock l(mu_);
        for (const auto& [topic, m] : table_) {
            if (std::find(keep.begin(), keep.end(), topic) == keep.end()) {
                unused.push_back(topic);
            }
        }
    }
    int n = 0;
    for (const auto& t : unused) {
        n += destroy_topic(t);
    }
    return n;
}

}  // namespace comet::store
