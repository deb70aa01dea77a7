#pragma once
// Typed registry of configuration fields, the C++ side of RocketMQ's MixAll.properties2Object /
// Configuration classes. A module keeps its settings in a plain struct (BrokerConfig,
// MessageStoreConfig, NamesrvConfig...) and registers each member under RocketMQ's camelCase key:
//
//   void register_namesrv_config(ConfigRegistry& r, NamesrvConfig* c) {
//       r.add_int("listenPort", &c->listen_port, 9876, "TCP port to listen on")
//           .important().range(1, 65535);
//   }
//
// Several structs can be registered into one registry (the broker file mixes BrokerConfig,
// MessageStoreConfig and NettyServerConfig keys). Registering a field stores its default in the
// member at once.
//
// Value rules (decision 002-config): values are trimmed; booleans accept true/false in any case
// and reject anything else (Java's Boolean.parseBoolean would turn "yes" into false silently);
// integers are decimal with an optional sign and must fit the member's type; doubles must be
// finite; enums must be one of the listed names, case-sensitive like Java's Enum.valueOf.
//
// Thread-safety: the registry serialises set()/update()/to_properties_text()/get() on its own
// mutex. Before seal() the process is single-threaded (startup) and any field may be set. After
// seal() only fields bound to std::atomic members (add_bool/add_int/add_int64/add_double overloads
// taking std::atomic<T>*) can change; other keys answer kFailedPrecondition "restart required", so
// plain members are never written while other threads read them.
// Invariant: every registered member holds a value that passed its field's validation.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/mutex.h"
#include "base/properties.h"
#include "base/status.h"

namespace comet {

enum class ConfigType { kBool, kInt32, kInt64, kDouble, kString, kEnum };
std::string_view config_type_name(ConfigType t);

using ConfigValue = std::variant<bool, int64_t, double, std::string>;

// One registered field. Modifiers return *this so they chain after add_*().
class ConfigField {
public:
    ConfigField(std::string name, ConfigType type, std::string description);

    // Printed by `-m` (RocketMQ's @ImportantField).
    ConfigField& important();
    // Numeric bounds, inclusive. Requires: a numeric field and a default inside the bounds.
    ConfigField& range(int64_t min, int64_t max);
    ConfigField& at_least(int64_t min);
    ConfigField& non_negative() { return at_least(0); }
    ConfigField& positive() { return at_least(1); }
    // Extra check on the parsed value; return a non-OK Status naming the problem (its message is
    // wrapped with key, value and location by the registry).
    ConfigField& check(std::function<Status(const ConfigValue&)> fn);

    const std::string& name() const { return name_; }
    ConfigType type() const { return type_; }
    const std::string& description() const { return description_; }
    bool is_important() const { return important_; }
    bool is_runtime_updatable() const { return runtime_updatable_; }
    const std::string& default_text() const { return default_text_; }
    const std::vector<std::string>& enum_names() const { return enum_names_; }

    // Parses and validates text (already trimmed) without storing it.
    Result<ConfigValue> parse(std::string_view text) const;
    // Current value of the bound member, formatted like to_properties_text().
    std::string current_text() const;

private:
    friend class ConfigRegistry;

    std::string name_;
    ConfigType type_;
    std::string description_;
    bool important_ = false;
    bool runtime_updatable_ = false;
    std::optional<int64_t> min_;
    std::optional<int64_t> max_;
    std::vector<std::string> enum_names_;
    std::vector<std::function<Status(const ConfigValue&)>> checks_;
    std::string default_text_;
    std::function<void(const ConfigValue&)> store_;
    std::function<ConfigValue()> load_;
};

// Formats a value the way RocketMQ prints it: true/false, decimal integers, doubles with a
// fractional part ("1.0", "0.75").
std::string format_config_value(const ConfigValue& v);

class ConfigRegistry {
public:
    ConfigRegistry() = default;
    ConfigRegistry(const ConfigRegistry&) = delete;
    ConfigRegistry& operator=(const ConfigRegistry&) = delete;

    // Each add_* binds a member (which must outlive the registry), stores the default into it, and
    // returns the field for modifiers. Registering a name twice is a bug (COMET_CHECK).
    ConfigField& add_bool(std::string name, bool* target, bool def, std::string description);
    ConfigField& add_bool(std::string name, std::atomic<bool>* target, bool def,
                          std::string description);
    ConfigField& add_int(std::string name, int32_t* target, int32_t def, std::string description);
    ConfigField& add_int(std::string name, std::atomic<int32_t>* target, int32_t def,
                         std::string description);
    ConfigField& add_int64(std::string name, int64_t* target, int64_t def,
                           std::string description);
    ConfigField& add_int64(std::string name, std::atomic<int64_t>* target, int64_t def,
                           std::string description);
    ConfigField& add_double(std::string name, double* target, double def,
                            std::string description);
    ConfigField& add_double(std::string name, std::atomic<double>* target, double def,
                            std::string description);
    ConfigField& add_string(std::string name, std::string* target, std::string def,
                            std::string description);
    // String member restricted to `allowed` (e.g. ASYNC_FLUSH|SYNC_FLUSH).
    ConfigField& add_enum(std::string name, std::string* target, std::string def,
                          std::vector<std::string> allowed, std::string description);
    // C++ enum member; `names` maps each accepted text to its value (and back, for printing).
    template <typename E>
    ConfigField& add_enum(std::string name, E* target, E def,
                          std::vector<std::pair<std::string, E>> names, std::string description);

    bool contains(std::string_view key) const;
    // Null when absent. The pointer stays valid for the registry's lifetime.
    const ConfigField* field(std::string_view key) const;
    // All fields sorted by name.
    std::vector<const ConfigField*> fields() const;

    // Sets one key. `source` names where the value came from ("broker.conf:3", "command line").
    // Errors: kNotFound for an unknown key; kInvalidArgument naming key, value and source for a bad
    // value; kFailedPrecondition when sealed and the field is not runtime-updatable.
    Status set(std::string_view key, std::string_view value, std::string_view source);

    // Applies entries all-or-nothing: every value is validated first; on any bad value nothing
    // changes and the error lists every bad entry (one per line). Unknown keys are skipped and
    // described in *warnings ("unknown config key 'x' at broker.conf:7"), if warnings is set.
    Status update(const std::vector<PropertyEntry>& entries, std::vector<std::string>* warnings);
    // Keys `other` registers now are read from the same file by `other` (mqnamesrv's embedded
    // controller): update() skips them without a warning. Copies the names; no link remains.
    void share_file_with(const ConfigRegistry& other);
    // update() on a properties text, e.g. an UPDATE_BROKER_CONFIG body ("key=value\n" lines);
    // `source` names it in messages. Errors: those of update(), or a malformed \uXXXX escape.
    Status update_from_text(std::string_view text, std::string_view source,
                            std::vector<std::string>* warnings);

    // Current value of a key, formatted. Errors: kNotFound.
    Result<std::string> get(std::string_view key) const;

    // True once set() or update() stored a value for the key (a file line, a --key=value
    // override, a runtime update), even a value equal to the default: what the operator wrote,
    // as opposed to what registration filled in. Unknown keys: false.
    bool was_set(std::string_view key) const;

    // "key=value\n" for every field sorted by key (GET_BROKER_CONFIG body, `-p`).
    std::string to_properties_text() const;
    // Same, only fields marked important() (`-m`).
    std::string important_properties_text() const;

    // After seal(), only runtime-updatable fields may change. Call once startup config is final.
    void seal();
    bool sealed() const;

private:
    ConfigField& add_field(std::unique_ptr<ConfigField> f);
    Status set_locked(std::string_view key, std::string_view value, std::string_view source)
        REQUIRES(mu_);
    std::string text_locked(bool important_only) const REQUIRES(mu_);

    mutable Mutex mu_;
    bool sealed_ GUARDED_BY(mu_) = false;
    // Fields never move once added (unique_ptr), so field() pointers stay valid.
    std::map<std::string, std::unique_ptr<ConfigField>, std::less<>> fields_;
    std::set<std::string, std::less<>> shared_keys_ GUARDED_BY(mu_);  // share_file_with()
    std::set<std::string, std::less<>> set_keys_ GUARDED_BY(mu_);     // was_set()
};

template <typename E>
ConfigField& ConfigRegistry::add_enum(std::string name, E* target, E def,
                                      std::vector<std::pair<std::string, E>> names,
                                      std::string description) {
    auto f = std::make_unique<ConfigField>(std::move(name), ConfigType::kEnum,
                                           std::move(description));
    std::string def_name;
    for (const auto& [n, v] : names) {
        f->enum_names_.push_back(n);
        if (v == def) {
            def_name = n;
        }
    }
    COMET_CHECK(!def_name.empty(), "enum default of {} is not among its names", f->name());
    f->store_ = [target, names](const ConfigValue& v) {
        const std::string& s = std::get<std::string>(v);
        for (const auto& [n, e] : names) {
            if (n == s) {
                *target = e;
                return;
            }
        }
    };
    f->load_ = [target, names]() -> ConfigValue {
        for (const auto& [n, e] : names) {
            if (e == *target) {
                return n;
            }
        }
        return std::string();
    };
    *target = def;
    f->default_text_ = def_name;
    return add_field(std::move(f));
}

}  // namespace comet
