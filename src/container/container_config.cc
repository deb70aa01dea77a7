#include "container/container_config.h"

#include <charconv>
#include <filesystem>
#include <map>

#include "base/strings.h"
#include "broker/context/store_adapter.h"
#include "broker/replication/replication_service.h"

namespace comet::container {
namespace {

// The store directory as compared between brokers: absolute and without "." / ".." parts.
std::string normalized_dir(const std::string& dir) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(dir, ec);
    if (ec) {
        p = dir;
    }
    std::string s = p.lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') {
        s.pop_back();
    }
    return s;
}

struct PortUse {
    int32_t port;
    std::string what;  // "listenPort", "haListenPort", "metricsPort"
};

std::vector<PortUse> ports_of(const broker::BrokerConfig& c) {
    std::vector<PortUse> out;
    if (c.listen_port > 0) {
        out.push_back({c.listen_port, "listenPort"});
    }
    if (const int32_t ha = c.effective_ha_listen_port(); ha > 0) {
        out.push_back({ha, "haListenPort"});
    }
    if (c.metrics_port > 0) {
        out.push_back({c.metrics_port, "metricsPort"});
    }
    return out;
}

}  // namespace

void register_container_config(ConfigRegistry& r, BrokerContainerConfig* c) {
    r.add_string("brokerConfigPaths", &c->broker_config_paths, "",
                 "each broker's properties file, ':'-separated")
        .important();
    r.add_int("listenPort", &c->listen_port, kDefaultContainerListenPort,
              "the container's port for ADD_BROKER / REMOVE_BROKER / GET_BROKER_CONFIG")
        .important()
        .range(0, 65535);
    r.add_string("listenHost", &c->listen_host, "0.0.0.0",
                 "bind address of the container's port (Comet)");
    r.add_string("namesrvAddr", &c->namesrv_addr, "",
                 "name servers every broker registers with (replaces each broker's own)")
        .important();
    r.add_string("logDir", &c->log_dir, "", "log directory (empty: ~/logs/comet)");
    r.add_int("serverSelectorThreads", &c->server_selector_threads, 0,
              "I/O threads shared by every broker of the container (0: one per core)")
        .range(0, 1024);
}

std::string container_config_text(const BrokerContainerConfig& c) {
    const std::map<std::string, std::string> kv = {
        {"brokerConfigPaths", c.broker_config_paths},
        {"listenHost", c.listen_host},
        {"listenPort", std::to_string(c.listen_port)},
        {"logDir", c.log_dir},
        {"namesrvAddr", c.namesrv_addr},
        {"serverSelectorThreads", std::to_string(c.server_selector_threads)},
    };
    std::string out;
    for (const auto& [k, v] : kv) {
        out += k;
        out += '=';
        out += v;
        out += '\n';
    }
    return out;
}

std::vector<std::string> split_broker_config_paths(std::string_view paths) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= paths.size()) {
        size_t end = paths.find(':', start);
        if (end == std::string_view::npos) {
            end = paths.size();
        }
        const std::string_view item = trim_whitespace(paths.substr(start, end - start));
        if (!item.empty()) {
            out.emplace_back(item);
        }
        start = end + 1;
    }
    return out;
}

std::string InstanceIdentity::to_string() const {
    return cluster_name + ":" + broker_name + ":" + std::to_string(broker_id);
}

Result<InstanceIdentity> parse_instance_identity(std::string_view text) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
        const size_t end = text.find(':', start);
        parts.push_back(
            trim_whitespace(text.substr(start, end == std::string_view::npos ? end : end - start)));
        if (end == std::string_view::npos) {
            break;
        }
        start = end + 1;
    }
    if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || parts[2].empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "broker identity '{}' is not clusterName:brokerName:brokerId", text);
    }
    InstanceIdentity id;
    id.cluster_name = std::string(parts[0]);
    id.broker_name = std::string(parts[1]);
    const std::string_view num = parts[2];
    const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), id.broker_id);
    if (ec != std::errc() || p != num.data() + num.size()) {
        return Status::error(Errc::kInvalidArgument, "brokerId '{}' in '{}' is not a number", num,
                             text);
    }
    if (id.broker_id < 0) {
        return Status::error(Errc::kInvalidArgument, "brokerId {} in '{}' is negative",
                             id.broker_id, text);
    }
    return id;
}

InstanceIdentity BrokerInstanceConfig::identity() const {
    return InstanceIdentity{broker.broker_cluster_name, broker.broker_name, broker.broker_id};
}

Result<BrokerInstanceConfig> make_broker_instance_config(const std::string& path,
                                                         const std::vector<PropertyEntry>& entries,
                                                         const BrokerContainerConfig& container) {
    BrokerInstanceConfig out;
    out.config_path = path;
    {
        // The registry binds the members of `out`; it is gone before `out` moves.
        ConfigRegistry registry;
        broker::register_broker_config(registry, &out.broker);
        broker::register_store_config(registry, &out.store);
        if (Status st = registry.update(entries, &out.warnings); !st.is_ok()) {
            return Status::error(Errc::kInvalidArgument, "{}: {}", path, st.message());
        }
        broker::note_keys_set(registry, &out.broker);  // the quorum rules (docs/durability.md)
    }
    for (const PropertyEntry& e : entries) {
        if (e.key == "logDir") {
            out.warnings.push_back(fmt::format(
                "{}: logDir is not used inside a broker container (the process has one log, in "
                "the container's logDir)",
                e.location()));
        } else if (e.key == "serverSelectorThreads") {
            out.warnings.push_back(fmt::format(
                "{}: serverSelectorThreads is not used inside a broker container (its brokers "
                "share the container's serverSelectorThreads I/O threads)",
                e.location()));
        }
    }
    if (!container.namesrv_addr.empty()) {
        if (!out.broker.namesrv_addr.empty() && out.broker.namesrv_addr != container.namesrv_addr) {
            out.warnings.push_back(
                fmt::format("{}: namesrvAddr={} replaced by the container's namesrvAddr={}", path,
                            out.broker.namesrv_addr, container.namesrv_addr));
        }
        out.broker.namesrv_addr = container.namesrv_addr;
    }
    if (Status st = out.broker.validate(); !st.is_ok()) {
        return Status::error(Errc::kInvalidArgument, "{}: {}", path, st.message());
    }
    std::vector<std::string> repl_warnings;
    if (auto repl = broker::make_replication_config(out.broker, &repl_warnings); !repl.is_ok()) {
        return Status::error(Errc::kInvalidArgument, "{}: {}", path, repl.status().message());
    }
    if (auto store = broker::make_store_config(out.broker, out.store); !store.is_ok()) {
        return Status::error(Errc::kInvalidArgument, "{}: {}", path, store.status().message());
    }
    for (std::string& w : repl_warnings) {
        out.warnings.push_back(fmt::format("{}: {}", path, w));
    }
    return out;
}

Result<BrokerInstanceConfig> load_broker_instance_config(const std::string& path,
                                                         const BrokerContainerConfig& container) {
    auto entries = load_properties_file(path);
    if (!entries.is_ok()) {
        return Status::error(entries.status().code(), "{}: {}", path, entries.status().message());
    }
    return make_broker_instance_config(path, entries.value(), container);
}

Status check_instance_conflicts(const BrokerInstanceConfig& candidate,
                                const std::vector<const BrokerInstanceConfig*>& running,
                                int32_t container_port) {
    const std::string cand_name = candidate.identity().to_string();
    const std::vector<PortUse> cand_ports = ports_of(candidate.broker);
    for (const PortUse& p : cand_ports) {
        if (container_port > 0 && p.port == container_port) {
            return Status::error(Errc::kAlreadyExists,
                                 "{}: {} {} of broker {} is the container's own listenPort",
                                 candidate.config_path, p.what, p.port, cand_name);
        }
    }
    // Two ports of the candidate itself (listenPort + 1 is the default HA port).
    for (size_t i = 0; i < cand_ports.size(); ++i) {
        for (size_t j = i + 1; j < cand_ports.size(); ++j) {
            if (cand_ports[i].port == cand_ports[j].port) {
                return Status::error(Errc::kAlreadyExists, "{}: {} and {} are both {}",
                                     candidate.config_path, cand_ports[i].what, cand_ports[j].what,
                                     cand_ports[i].port);
            }
        }
    }
    const std::string cand_store = normalized_dir(candidate.broker.store_root());
    for (const BrokerInstanceConfig* other : running) {
        const std::string other_name = other->identity().to_string();
        if (other->identity() == candidate.identity()) {
            return Status::error(Errc::kAlreadyExists,
                                 "{}: broker {} has already been added to this container (from {})",
                                 candidate.config_path, cand_name, other->config_path);
        }
        if (normalized_dir(other->broker.store_root()) == cand_store) {
            return Status::error(Errc::kAlreadyExists,
                                 "{}: storePathRootDir {} is already used by broker {} (from {})",
                                 candidate.config_path, cand_store, other_name, other->config_path);
        }
        for (const PortUse& mine : cand_ports) {
            for (const PortUse& theirs : ports_of(other->broker)) {
                if (mine.port == theirs.port) {
                    return Status::error(Errc::kAlreadyExists,
                                         "{}: {} {} is already used as {} by broker {} (from {})",
                                         candidate.config_path, mine.what, mine.port, theirs.what,
                                         other_name, other->config_path);
                }
            }
        }
    }
    return Status::ok();
}

}  // namespace comet::container
