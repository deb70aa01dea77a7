#include "broker/metadata/config_file.h"

#include "broker/metadata/json_file.h"

namespace comet::broker {

Status ConfigFile::load(const std::function<Status(std::string_view)>& decode) const {
    if (path_.empty()) {
        return Status::ok();
    }
    auto text = read_config_file(path_);
    if (!text.is_ok()) {
        return text.status().code() == Errc::kNotFound ? Status::ok() : text.status();
    }
    return decode(text.value());
}

Status ConfigFile::persist(const std::function<std::string()>& encode) {
    if (path_.empty()) {
        return Status::ok();
    }
    MutexLock l(persist_mu_);
    return write_file_atomic(path_, format_json(encode(), true));
}

}  // namespace comet::broker
