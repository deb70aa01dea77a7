#pragma once
// Generic extFields <-> typed custom header codec (Java RemotingCommand#decodeCommandCustomHeader
// and #makeCustomHeaderToNet, reference §1.7). Pure, stateless.
//
// A header struct lists its fields once:
//   template <typename Self, typename V> static void fields(Self& s, V& v) {
//       v.required("topic", s.topic);      // @CFNotNull: missing -> "the custom field topic is
//       null" v.optional("queueId", s.queue_id); // may be absent: std::optional stays empty, plain
//       keeps
//   }                                      // its default
// and gets to_ext()/from_ext() from COMET_EXT_HEADER(Type).
// Encoding writes every plain field and every engaged optional as text (ints in decimal, bools
// "true"/"false"). Decoding parses Java-style: Integer/Long decimal (leading '+' allowed),
// Boolean = case-insensitive "true", anything else false.

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "protocol/remoting_command.h"

namespace comet::protocol {

// Parsers shared with the body codecs. Errors name `field` and the offending text.
Result<int32_t> parse_ext_int32(std::string_view field, std::string_view text);
Result<int64_t> parse_ext_int64(std::string_view field, std::string_view text);
bool parse_java_bool(std::string_view text);

// Visitor that writes fields into RemotingCommand::ext_fields.
class ExtWriter {
public:
    explicit ExtWriter(RemotingCommand* cmd) : cmd_(cmd) {}
    template <typename T>
    void required(const char* name, const T& value) {
        put(name, value);
    }
    template <typename T>
    void optional(const char* name, const T& value) {
        put(name, value);
    }

private:
    void put(const char* name, const std::string& v) { cmd_->set_ext(name, v); }
    void put(const char* name, int32_t v) { put(name, static_cast<int64_t>(v)); }
    void put(const char* name, int64_t v) {
        char buf[24];
        auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
        cmd_->set_ext(name, std::string(buf, static_cast<size_t>(end - buf)));
    }
    void put(const char* name, bool v) { cmd_->set_ext(name, v ? "true" : "false"); }
    template <typename T>
    void put(const char* name, const std::optional<T>& v) {
        if (v) {
            put(name, *v);
        }
    }
    RemotingCommand* cmd_;
};

// Visitor that reads header fields with Java's extFields rules and error texts; keeps the first
// error. `Source::find(name)` returns a pointer to the field's text (anything convertible to
// std::string_view) or null: the ext_fields map of a command, or the fast path's views
// (fast_header.cc) — one set of rules for both.
template <typename Source>
class FieldReader {
public:
    explicit FieldReader(const Source& source) : source_(source) {}
    template <typename T>
    void required(const char* name, T& out) {
        if (!status_.is_ok()) {
            return;
        }
        const auto* v = source_.find(name);
        if (v == nullptr) {
            status_ = Status::error(Errc::kInvalidArgument, "the custom field {} is null", name);
            return;
        }
        get(name, std::string_view(*v), out);
    }
    // A plain field with a default: left as it is when absent.
    template <typename T>
    void optional(const char* name, T& out) {
        if (!status_.is_ok()) {
            return;
        }
        if (const auto* v = source_.find(name)) {
            get(name, std::string_view(*v), out);
        }
    }
    // Absent: `out` is reset, so that a header read into a used object (read_fields_into)
    // keeps no value of the previous one.
    template <typename T>
    void optional(const char* name, std::optional<T>& out) {
        if (!status_.is_ok()) {
            return;
        }
        if (const auto* v = source_.find(name)) {
            get(name, std::string_view(*v), out);
        } else {
            out.reset();
        }
    }
    const Status& status() const { return status_; }

private:
    void get(const char*, std::string_view v, std::string& out) { out.assign(v); }
    void get(const char* name, std::string_view v, int32_t& out) {
        auto r = parse_ext_int32(name, v);
        if (r.is_ok()) {
            out = *r;
        } else {
            status_ = r.status();
        }
    }
    void get(const char* name, std::string_view v, int64_t& out) {
        auto r = parse_ext_int64(name, v);
        if (r.is_ok()) {
            out = *r;
        } else {
            status_ = r.status();
        }
    }
    void get(const char*, std::string_view v, bool& out) { out = parse_java_bool(v); }
    // In place: a string already there keeps its capacity. After an error `out` is unspecified
    // (the whole header is an error then).
    template <typename T>
    void get(const char* name, std::string_view v, std::optional<T>& out) {
        if (!out) {
            out.emplace();
        }
        get(name, v, *out);
    }

    const Source& source_;
    Status status_;
};

// Reads T's fields through FieldReader<Source>.
template <typename T, typename Source>
Result<T> read_fields(const Source& source) {
    T header{};
    FieldReader<Source> r(source);
    T::fields(header, r);
    if (!r.status().is_ok()) {
        return r.status();
    }
    return header;
}

// The same into `header`, overwriting every field (an absent std::optional one is reset; a
// plain field read with optional() keeps its value when absent, so use a default-valued header
// for those); strings are assigned, so a header read into a used object reuses their capacity.
// On error `header` holds an unspecified mix of old and new values.
template <typename T, typename Source>
Status read_fields_into(T& header, const Source& source) {
    FieldReader<Source> r(source);
    T::fields(header, r);
    return r.status();
}

// RemotingCommand::ext_fields as a FieldReader source.
struct CommandExtSource {
    const RemotingCommand& cmd;
    const std::string* find(const char* name) const { return cmd.ext(name); }
};

template <typename T>
void write_ext_fields(const T& header, RemotingCommand* cmd) {
    ExtWriter w(cmd);
    T::fields(header, w);
}

template <typename T>
Result<T> read_ext_fields(const RemotingCommand& cmd) {
    return read_fields<T>(CommandExtSource{cmd});
}

}  // namespace comet::protocol

// Declares to_ext()/from_ext() for a header struct that has a static fields() template.
#define COMET_EXT_HEADER(Type)                                                             \
    void to_ext(::comet::protocol::RemotingCommand& cmd) const {                           \
        ::comet::protocol::write_ext_fields(*this, &cmd);                                  \
    }                                                                                      \
    static ::comet::Result<Type> from_ext(const ::comet::protocol::RemotingCommand& cmd) { \
        return ::comet::protocol::read_ext_fields<Type>(cmd);                              \
    }
