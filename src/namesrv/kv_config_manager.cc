#include "namesrv/kv_config_manager.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/logging.h"
#include "protocol/json_body.h"

namespace comet::namesrv {

namespace {

Status io_error(const std::string& what, const std::string& path, int err) {
    return Status::error(Errc::kIoError, "{} {}: {}", what, path, std::strerror(err));
}

Status write_all(int fd, const std::string& content, const std::string& path) {
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return io_error("write", path, errno);
        }
        done += static_cast<size_t>(n);
    }
    return Status::ok();
}

}  // namespace

Status write_file_atomically(const std::string& path, const std::string& content) {
    std::filesystem::path p(path);
    std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        return Status::error(Errc::kIoError, "create directory {}: {}", dir.string(),
                             ec.message());
    }
    const std::string tmp = path + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return io_error("open", tmp, errno);
    }
    Status st = write_all(fd, content, tmp);
    if (st.is_ok() && ::fsync(fd) != 0) {
        st = io_error("fsync", tmp, errno);
    }
    if (::close(fd) != 0 && st.is_ok()) {
        st = io_error("close", tmp, errno);
    }
    if (!st.is_ok()) {
        ::unlink(tmp.c_str());
        return st;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        return io_error("rename to", path, err);
    }
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);  // best effort: the rename is durable once the directory is
        ::close(dfd);
    }
    return Status::ok();
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
        return io_error("open", path_, errno);
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
