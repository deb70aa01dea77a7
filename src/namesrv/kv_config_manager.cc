#include "namesrv/kv_config_manager.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/file_io.h"
#include "base/logging.h"
#include "protocol/json_body.h"

namespace comet::namesrv {

Status write_file_atomically(const std::string& path, const std::string& content) {
    return replace_file_durably(path, content, ReplaceOptions{.backup_suffix = "", .create_dirs = true});
}

KvConfigManager::KvConfigManager(std::string path) : path_(std::move(path)) {}

Status KvConfigManager::load() {
    if (path_.empty()) {
        return Status::ok();
    }
    std::error_code ec;
    if (!std::filesystem::exists(path_, ec)) {
        spdlog::info("kv config {} does not exist yet; starting empty", path_);
        return Status::ok();
    }
    std::ifstream in(path_, std::ios::binary);
    if (!in) {
        return io_error("open", path_);
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    std::string text = buf.str();
    Table table;
    if (!text.empty()) {
        auto doc = protocol::parse_json_body(text);
        if (!doc.is_ok()) {
            return Status::error(Errc::kCorruption, "kv config {}: {}", path_,
                                 doc.status().message());
        }
        const protocol::JsonValue* ct = protocol::find_member(doc.value(), "configTable");
        if (ct != nullptr) {
            if (!ct->IsObject()) {
                return Status::error(Errc::kCorruption,
                                     "kv config {}: configTable is not an object", path_);
            }
            for (auto it = ct->MemberBegin(); it != ct->MemberEnd(); ++it) {
                std::string ns(it->name.GetString(), it->name.GetStringLength());
                rapidjson::Document one;
                one.SetObject();
                protocol::JsonValue copy(it->value, one.GetAllocator());
                one.AddMember("t", copy, one.GetAllocator());
                std::map<std::string, std::string> kv;
                Status st = protocol::read_string_map(one, "t", &kv);
                if (!st.is_ok()) {
                    return Status::error(Errc::kCorruption, "kv config {} namespace {}: {}", path_,
                                         ns, st.message());
                }
                if (!kv.empty()) {
                    table[ns] = std::move(kv);
                }
            }
        }
    }
    size_t n = 0;
    for (const auto& [ns, kv] : table) {
        n += kv.size();
    }
    spdlog::info("kv config loaded from {}: {} namespaces, {} keys", path_, table.size(), n);
    MutexLock lock(mu_);
    table_ = std::move(table);
    return Status::ok();
}

Status KvConfigManager::put(const std::string& ns, const std::string& key,
                            const std::string& value) {
    {
        MutexLock lock(mu_);
        auto& kv = table_[ns];
        auto [it, inserted] = kv.insert_or_assign(key, value);
        (void)it;
        spdlog::info("{} kv config: namespace {} key {} value {}", inserted ? "put new" : "update",
                     ns, key, value);
    }
    return persist();
}

Status KvConfigManager::remove(const std::string& ns, const std::string& key) {
    {
        MutexLock lock(mu_);
        auto it = table_.find(ns);
        if (it == table_.end() || it->second.erase(key) == 0) {
            return Status::ok();  // nothing to delete (RocketMQ answers SUCCESS too)
        }
        if (it->second.empty()) {
            table_.erase(it);
        }
        spdlog::info("delete kv config: namespace {} key {}", ns, key);
    }
    return persist();
}

std::optional<std::string> KvConfigManager::get(const std::string& ns,
                                                const std::string& key) const {
    MutexLock lock(mu_);
    auto it = table_.find(ns);
    if (it == table_.end()) {
        return std::nullopt;
    }
    auto kv = it->second.find(key);
    if (kv == it->second.end()) {
        return std::nullopt;
    }
    return kv->second;
}

std::optional<std::map<std::string, std::string>> KvConfigManager::list(
    const std::string& ns) const {
    MutexLock lock(mu_);
    auto it = table_.find(ns);
    if (it == table_.end() || it->second.empty()) {
        return std::nullopt;
    }
    return it->second;
}

Status KvConfigManager::persist() {
    if (path_.empty()) {
        return Status::ok();
    }
    MutexLock plock(persist_mu_);
    protocol::JsonWriter w;
    {
        MutexLock lock(mu_);
        w.begin_object();
        w.key("configTable").begin_object();
        for (const auto& [ns, kv] : table_) {
            w.key(ns).begin_object();
            for (const auto& [k, v] : kv) {
                w.member(k, v);
            }
            w.end_object();
        }
        w.end_object();
        w.end_object();
    }
    Status st = write_file_atomically(path_, w.take());
    if (!st.is_ok()) {
        spdlog::error("persist kv config failed: {}", st.message());
    }
    return st;
}

}  // namespace comet::namesrv
