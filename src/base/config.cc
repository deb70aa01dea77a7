#include "base/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "base/strings.h"

namespace comet {

namespace {

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i];
        char y = b[i];
        if (x >= 'A' && x <= 'Z') {
            x = static_cast<char>(x - 'A' + 'a');
        }
        if (y >= 'A' && y <= 'Z') {
            y = static_cast<char>(y - 'A' + 'a');
        }
        if (x != y) {
            return false;
        }
    }
    return true;
}

// Decimal integer with optional sign, like Java's Long.parseLong.
Result<int64_t> parse_int64(std::string_view s) {
    std::string_view digits = s;
    if (!digits.empty() && digits.front() == '+') {
        digits.remove_prefix(1);  // from_chars rejects '+'; Java accepts it
        if (!digits.empty() && digits.front() == '-') {
            return Status(Errc::kInvalidArgument, "expected an integer");
        }
    }
    if (digits.empty()) {
        return Status(Errc::kInvalidArgument, "expected an integer");
    }
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec == std::errc::result_out_of_range) {
        return Status(Errc::kInvalidArgument, "integer out of the 64-bit range");
    }
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
        return Status(Errc::kInvalidArgument, "expected an integer");
    }
    return v;
}

Result<double> parse_double(std::string_view s) {
    std::string_view t = s;
    if (!t.empty() && t.front() == '+') {
        t.remove_prefix(1);
    }
    double v = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
        return Status(Errc::kInvalidArgument, "expected a number");
    }
    if (!std::isfinite(v)) {
        return Status(Errc::kInvalidArgument, "expected a finite number");
    }
    return v;
}

}  // namespace

std::string_view config_type_name(ConfigType t) {
    switch (t) {
        case ConfigType::kBool: return "bool";
        case ConfigType::kInt32: return "int32";
        case ConfigType::kInt64: return "int64";
        case ConfigType::kDouble: return "double";
        case ConfigType::kString: return "string";
        case ConfigType::kEnum: return "enum";
    }
    return "?";
}

std::string format_config_value(const ConfigValue& v) {
    if (const bool* b = std::get_if<bool>(&v)) {
        return *b ? "true" : "false";
    }
    if (const int64_t* i = std::get_if<int64_t>(&v)) {
        return std::to_string(*i);
    }
    if (const double* d = std::get_if<double>(&v)) {
        std::string s = fmt::format("{}", *d);
        if (s.find_first_of(".eEn") == std::string::npos) {
            s += ".0";  // Java's Double.toString always shows a fraction
        }
        return s;
    }
    return std::get<std::string>(v);
}

ConfigField::ConfigField(std::string name, ConfigType type, std::string description)
    : name_(std::move(name)), type_(type), description_(std::move(description)) {}

ConfigField& ConfigField::important() {
    important_ = true;
    return *this;
}

ConfigField& ConfigField::range(int64_t min, int64_t max) {
    COMET_CHECK(min <= max, "config {}: empty range [{}, {}]", name_, min, max);
    min_ = min;
    max_ = max;
    at_least(min);
    return *this;
}

ConfigField& ConfigField::at_least(int64_t min) {
    COMET_CHECK(type_ == ConfigType::kInt32 || type_ == ConfigType::kInt64 ||
                    type_ == ConfigType::kDouble,
                "config {}: bounds on a {} field", name_, config_type_name(type_));
    min_ = min;
    // The default must satisfy the bounds; a violation is a registration bug.
    Result<ConfigValue> v = parse(current_text());
    COMET_CHECK(v.is_ok(), "config {}: default {} outside its bounds: {}", name_, current_text(),
                v.status().message());
    return *this;
}

ConfigField& ConfigField::check(std::function<Status(const ConfigValue&)> fn) {
    checks_.push_back(std::move(fn));
    return *this;
}

Result<ConfigValue> ConfigField::parse(std::string_view text) const {
    ConfigValue value;
    switch (type_) {
        case ConfigType::kBool:
            if (iequals(text, "true")) {
                value = true;
            } else if (iequals(text, "false")) {
                value = false;
            } else {
                return Status(Errc::kInvalidArgument, "expected true or false");
            }
            break;
        case ConfigType::kInt32:
        case ConfigType::kInt64: {
            COMET_ASSIGN_OR_RETURN(int64_t i, parse_int64(text));
            if (type_ == ConfigType::kInt32 && (i < std::numeric_limits<int32_t>::min() ||
                                                i > std::numeric_limits<int32_t>::max())) {
                return Status(Errc::kInvalidArgument, "integer out of the 32-bit range");
            }
            if ((min_ && i < *min_) || (max_ && i > *max_)) {
                if (max_) {
                    return Status::error(Errc::kInvalidArgument, "must be between {} and {}",
                                         min_.value_or(std::numeric_limits<int64_t>::min()),
                                         *max_);
                }
                return Status::error(Errc::kInvalidArgument, "must be >= {}", *min_);
            }
            value = i;
            break;
        }
        case ConfigType::kDouble: {
            COMET_ASSIGN_OR_RETURN(double d, parse_double(text));
            if ((min_ && d < static_cast<double>(*min_)) ||
                (max_ && d > static_cast<double>(*max_))) {
                if (max_) {
                    return Status::error(Errc::kInvalidArgument, "must be between {} and {}",
                                         min_.value_or(std::numeric_limits<int64_t>::min()),
                                         *max_);
                }
                return Status::error(Errc::kInvalidArgument, "must be >= {}", *min_);
            }
            value = d;
            break;
        }
        case ConfigType::kString:
            value = std::string(text);
            break;
        case ConfigType::kEnum: {
            if (std::find(enum_names_.begin(), enum_names_.end(), text) == enum_names_.end()) {
                std::string allowed;
                for (const std::string& n : enum_names_) {
                    allowed += allowed.empty() ? n : "|" + n;
                }
                return Status::error(Errc::kInvalidArgument, "expected one of {}", allowed);
            }
            value = std::string(text);
            break;
        }
    }
    for (const auto& fn : checks_) {
        COMET_RETURN_IF_ERROR(fn(value));
    }
    return value;
}

std::string ConfigField::current_text() const { return format_config_value(load_()); }

namespace {

template <typename T>
T load_member(const T* p) {
    return *p;
}
template <typename T>
T load_member(const std::atomic<T>* p) {
    return p->load();
}

// Binds a numeric/bool member (plain or atomic) to a field.
template <typename Member, typename T>
void bind(Member* target, T def, std::function<void(const ConfigValue&)>* store,
          std::function<ConfigValue()>* load) {
    *store = [target](const ConfigValue& v) {
        if constexpr (std::is_same_v<T, bool>) {
            *target = std::get<bool>(v);
        } else if constexpr (std::is_same_v<T, double>) {
            *target = std::get<double>(v);
        } else {
            *target = static_cast<T>(std::get<int64_t>(v));
        }
    };
    *load = [target]() -> ConfigValue {
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double>) {
            return load_member(target);
        } else {
            return static_cast<int64_t>(load_member(target));
        }
    };
    *target = def;
}

}  // namespace

ConfigField& ConfigRegistry::add_field(std::unique_ptr<ConfigField> f) {
    COMET_CHECK(!f->name_.empty(), "config field without a name");
    COMET_CHECK(fields_.find(f->name_) == fields_.end(), "config key {} registered twice",
                f->name_);
    f->default_text_ = f->current_text();
    ConfigField& ref = *f;
    std::string name = f->name_;
    fields_.emplace(std::move(name), std::move(f));
    return ref;
}

#define COMET_CONFIG_ADD(method, Member, T, type_enum, runtime)                                 \
    ConfigField& ConfigRegistry::method(std::string name, Member* target, T def,                \
                                        std::string description) {                              \
        auto f = std::make_unique<ConfigField>(std::move(name), type_enum,                      \
                                               std::move(description));                         \
        f->runtime_updatable_ = runtime;                                                        \
        bind<Member, T>(target, def, &f->store_, &f->load_);                           \
        return add_field(std::move(f));                                                         \
    }

COMET_CONFIG_ADD(add_bool, bool, bool, ConfigType::kBool, false)
COMET_CONFIG_ADD(add_bool, std::atomic<bool>, bool, ConfigType::kBool, true)
COMET_CONFIG_ADD(add_int, int32_t, int32_t, ConfigType::kInt32, false)
COMET_CONFIG_ADD(add_int, std::atomic<int32_t>, int32_t, ConfigType::kInt32, true)
COMET_CONFIG_ADD(add_int64, int64_t, int64_t, ConfigType::kInt64, false)
COMET_CONFIG_ADD(add_int64, std::atomic<int64_t>, int64_t, ConfigType::kInt64, true)
COMET_CONFIG_ADD(add_double, double, double, ConfigType::kDouble, false)
COMET_CONFIG_ADD(add_double, std::atomic<double>, double, ConfigType::kDouble, true)
#undef COMET_CONFIG_ADD

ConfigField& ConfigRegistry::add_string(std::string name, std::string* target, std::string def,
                                        std::string description) {
    auto f = std::make_unique<ConfigField>(std::move(name), ConfigType::kString,
                                           std::move(description));
    f->store_ = [target](const ConfigValue& v) { *target = std::get<std::string>(v); };
    f->load_ = [target]() -> ConfigValue { return *target; };
    *target = std::move(def);
    return add_field(std::move(f));
}

ConfigField& ConfigRegistry::add_enum(std::string name, std::string* target, std::string def,
                                      std::vector<std::string> allowed,
                                      std::string description) {
    COMET_CHECK(std::find(allowed.begin(), allowed.end(), def) != allowed.end(),
                "enum default {} of {} is not among its names", def, name);
    auto f = std::make_unique<ConfigField>(std::move(name), ConfigType::kEnum,
                                           std::move(description));
    f->enum_names_ = std::move(allowed);
    f->store_ = [target](const ConfigValue& v) { *target = std::get<std::string>(v); };
    f->load_ = [target]() -> ConfigValue { return *target; };
    *target = std::move(def);
    return add_field(std::move(f));
}

bool ConfigRegistry::contains(std::string_view key) const { return field(key) != nullptr; }

const ConfigField* ConfigRegistry::field(std::string_view key) const {
    auto it = fields_.find(key);
    return it == fields_.end() ? nullptr : it->second.get();
}

std::vector<const ConfigField*> ConfigRegistry::fields() const {
    std::vector<const ConfigField*> out;
    out.reserve(fields_.size());
    for (const auto& [name, f] : fields_) {
        out.push_back(f.get());
    }
    return out;
}

Status ConfigRegistry::set(std::string_view key, std::string_view value, std::string_view source) {
    MutexLock lock(mu_);
    return set_locked(key, value, source);
}

Status ConfigRegistry::set_locked(std::string_view key, std::string_view value,
                                  std::string_view source) {
    auto it = fields_.find(key);
    if (it == fields_.end()) {
        return Status::error(Errc::kNotFound, "unknown config key '{}' at {}", key, source);
    }
    ConfigField& f = *it->second;
    std::string_view text = trim_whitespace(value);
    if (sealed_ && !f.runtime_updatable_) {
        return Status::error(Errc::kFailedPrecondition,
                             "config key '{}' cannot be changed at runtime (restart required)",
                             key);
    }
    Result<ConfigValue> parsed = f.parse(text);
    if (!parsed.is_ok()) {
        return Status::error(Errc::kInvalidArgument,
                             "invalid value \"{}\" for config key '{}' at {}: {}", text, key,
                             source, parsed.status().message());
    }
    f.store_(parsed.value());
    set_keys_.insert(f.name_);
    return Status::ok();
}

Status ConfigRegistry::update(const std::vector<PropertyEntry>& entries,
                              std::vector<std::string>* warnings) {
    MutexLock lock(mu_);
    std::string errors;
    bool any_invalid = false;
    std::vector<std::pair<const ConfigField*, ConfigValue>> staged;
    for (const PropertyEntry& e : entries) {
        auto it = fields_.find(e.key);
        if (it == fields_.end()) {
            if (warnings != nullptr && !shared_keys_.contains(e.key)) {
                warnings->push_back(
                    fmt::format("unknown config key '{}' at {} (ignored)", e.key, e.location()));
            }
            continue;
        }
        const ConfigField& f = *it->second;
        std::string_view text = trim_whitespace(e.value);
        if (sealed_ && !f.runtime_updatable_) {
            errors += fmt::format("{}config key '{}' at {} cannot be changed at runtime "
                                  "(restart required)",
                                  errors.empty() ? "" : "\n", e.key, e.location());
            continue;
        }
        Result<ConfigValue> parsed = f.parse(text);
        if (!parsed.is_ok()) {
            any_invalid = true;
            errors += fmt::format("{}invalid value \"{}\" for config key '{}' at {}: {}",
                                  errors.empty() ? "" : "\n", text, e.key, e.location(),
                                  parsed.status().message());
            continue;
        }
        staged.emplace_back(&f, std::move(parsed).value());
    }
    if (!errors.empty()) {
        return Status(any_invalid ? Errc::kInvalidArgument : Errc::kFailedPrecondition,
                      std::move(errors));
    }
    for (const auto& [f, v] : staged) {
        f->store_(v);
        set_keys_.insert(f->name_);
    }
    return Status::ok();
}

void ConfigRegistry::share_file_with(const ConfigRegistry& other) {
    std::vector<const ConfigField*> theirs = other.fields();
    MutexLock lock(mu_);
    for (const ConfigField* f : theirs) {
        shared_keys_.insert(f->name());
    }
}

Status ConfigRegistry::update_from_text(std::string_view text, std::string_view source,
                                        std::vector<std::string>* warnings) {
    COMET_ASSIGN_OR_RETURN(std::vector<PropertyEntry> entries, parse_properties(text, source));
    return update(entries, warnings);
}

Result<std::string> ConfigRegistry::get(std::string_view key) const {
    MutexLock lock(mu_);
    const ConfigField* f = field(key);
    if (f == nullptr) {
        return Status::error(Errc::kNotFound, "unknown config key '{}'", key);
    }
    return f->current_text();
}

bool ConfigRegistry::was_set(std::string_view key) const {
    MutexLock lock(mu_);
    return set_keys_.contains(key);
}

std::string ConfigRegistry::text_locked(bool important_only) const {
    std::string out;
    for (const auto& [name, f] : fields_) {
        if (important_only && !f->important_) {
            continue;
        }
        out.append(name).append("=").append(f->current_text()).append("\n");
    }
    return out;
}

std::string ConfigRegistry::to_properties_text() const {
    MutexLock lock(mu_);
    return text_locked(false);
}

std::string ConfigRegistry::important_properties_text() const {
    MutexLock lock(mu_);
    return text_locked(true);
}

void ConfigRegistry::seal() {
    MutexLock lock(mu_);
    sealed_ = true;
}

bool ConfigRegistry::sealed() const {
    MutexLock lock(mu_);
    return sealed_;
}

}  // namespace comet
