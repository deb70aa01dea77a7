#include "broker/controller/broker_identity.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/file_io.h"

namespace comet::broker {
namespace {

std::string file_of(const std::string& path, bool temp) { return temp ? path + "-temp" : path; }

std::vector<std::string> split_hash(const std::string& s) {
    std::vector<std::string> out;
    size_t from = 0;
    while (true) {
        const size_t p = s.find('#', from);
        out.push_back(s.substr(from, p == std::string::npos ? std::string::npos : p - from));
        if (p == std::string::npos) {
            return out;
        }
        from = p + 1;
    }
}

}  // namespace

Result<std::optional<BrokerIdentity>> load_broker_identity(const std::string& path, bool temp,
                                                           const std::string& cluster,
                                                           const std::string& broker) {
    const std::string file = file_of(path, temp);
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        return std::optional<BrokerIdentity>();
    }
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in && !in.eof()) {
        return Status::error(Errc::kIoError, "read {} failed", file);
    }
    std::string text = ss.str();
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
        text.pop_back();
    }
    const std::vector<std::string> parts = split_hash(text);
    const size_t want = temp ? 4 : 3;
    BrokerIdentity id;
    const char* end = nullptr;
    if (parts.size() == want) {
        const std::string& n = parts[2];
        auto r = std::from_chars(n.data(), n.data() + n.size(), id.broker_id);
        end = r.ec == std::errc() ? r.ptr : nullptr;
    }
    if (parts.size() != want || end != parts[2].data() + parts[2].size() || id.broker_id <= 0) {
        return Status::error(Errc::kCorruption,
                             "{}: expected \"clusterName#brokerName#brokerId{}\" with brokerId > 0, "
                             "found \"{}\"",
                             file, temp ? "#registerCheckCode" : "", text);
    }
    id.cluster_name = parts[0];
    id.broker_name = parts[1];
    if (temp) {
        id.register_check_code = parts[3];
    }
    if (id.cluster_name != cluster || id.broker_name != broker) {
        return Status::error(Errc::kInvalidArgument,
                             "{} belongs to {}/{} but this broker is {}/{} (brokerClusterName, "
                             "brokerName): the store is another broker's",
                             file, id.cluster_name, id.broker_name, cluster, broker);
    }
    return std::optional<BrokerIdentity>(std::move(id));
}

Status save_broker_identity(const std::string& path, bool temp, const BrokerIdentity& id) {
    std::string text = id.cluster_name + "#" + id.broker_name + "#" + std::to_string(id.broker_id);
    if (temp) {
        text += "#" + id.register_check_code;
    }
    ReplaceOptions o;
    o.create_dirs = true;
    return replace_file_durably(file_of(path, temp), text, o);
}

Status remove_broker_identity(const std::string& path) {
    const std::string file = file_of(path, true);
    std::error_code ec;
    std::filesystem::remove(file, ec);
    if (ec) {
        return Status::error(Errc::kIoError, "remove {}: {}", file, ec.message());
    }
    const std::string dir = std::filesystem::path(file).parent_path().string();
    return fsync_dir(dir.empty() ? "." : dir);
}

}  // namespace comet::broker
