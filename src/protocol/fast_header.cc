#include "protocol/fast_header.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "protocol/header_codec.h"
#include "protocol/header_scan.h"
#include "protocol/json_text.h"
#include "protocol/request_code.h"

namespace comet::protocol {
namespace {

// extFields as views into the header bytes, in wire order. Fixed capacity: no allocation.
// One-byte keys (SEND_MESSAGE_V2's) have a slot each; longer ones are looked up through a small
// hash of (length, first and last byte) with a chain per bucket, newest first: a send reads 14
// fields from 14 pairs, and a linear scan with a memcmp per pair was a sixth of the decoder's
// time (issue 16).
class ExtViews {
public:
    static constexpr size_t kCapacity = 32;
    // A value's text; FieldReader reads it as a std::string_view.
    struct View {
        operator std::string_view() const { return {data, size}; }  // NOLINT: implicit by design
        const char* data;
        size_t size;
    };
    bool add(std::string_view key, std::string_view value) {
        if (n_ == kCapacity) {
            return false;
        }
        pairs_[n_] = Slot{key.data(), key.size(), View{value.data(), value.size()}};
        if (key.size() == 1 && static_cast<unsigned char>(key[0]) < kSingles) {
            // SEND_MESSAGE_V2's one-letter keys: one slot per letter, the later duplicate wins.
            single_[static_cast<unsigned char>(key[0])] = static_cast<uint8_t>(n_ + 1);
        } else {
            const size_t b = bucket(key);
            next_[n_] = head_[b];
            head_[b] = static_cast<uint8_t>(n_ + 1);
        }
        ++n_;
        return true;
    }
    // The last value for `key` (a later duplicate wins, as in the general map), or nullptr.
    const View* find(std::string_view key) const {
        if (key.size() == 1 && static_cast<unsigned char>(key[0]) < kSingles) {
            const uint8_t i = single_[static_cast<unsigned char>(key[0])];
            return i == 0 ? nullptr : &pairs_[i - 1].value;
        }
        for (uint8_t i = head_[bucket(key)]; i != 0; i = next_[i - 1]) {
            if (pairs_[i - 1].key() == key) {
                return &pairs_[i - 1].value;
            }
        }
        return nullptr;
    }
    void materialize(RemotingCommand* cmd) const {
        cmd->ext_fields.reserve(n_);  // one allocation for the table, not one per growth
        for (size_t i = 0; i < n_; ++i) {
            cmd->ext_fields[std::string(pairs_[i].key())] = std::string(pairs_[i].value);
        }
    }

    // Storage for JSON strings decoded from escapes, one per thread, kept with its capacity
    // (properties arrive escaped in every JSON send: issue 16). The scanner reserves it once to
    // the header size, so views into it stay valid; only a buffer grown by an unusually large
    // header is given back.
    class Arena {
    public:
        // Room for `bytes` more; invalidates earlier views only when it grows (the scanner
        // reserves the whole header before the first escape).
        void reserve(size_t bytes) {
            if (cap_ - size_ < bytes) {
                const size_t cap = std::max(size_ + bytes, 2 * cap_);
                auto grown = std::make_unique<char[]>(cap);
                if (size_ != 0) {
                    std::memcpy(grown.get(), data_.get(), size_);
                }
                data_ = std::move(grown);
                cap_ = cap;
            }
        }
        char* end() { return data_.get() + size_; }
        const char* data() const { return data_.get(); }
        size_t size() const { return size_; }
        void set_end(const char* end) { size_ = static_cast<size_t>(end - data_.get()); }
        void clear() { size_ = 0; }
        void trim(size_t keep) {
            if (cap_ > keep) {
                data_.reset();
                cap_ = size_ = 0;
            }
        }

    private:
        std::unique_ptr<char[]> data_;
        size_t size_ = 0;
        size_t cap_ = 0;
    };
    Arena& arena() { return arena_; }
    ~ExtViews() { arena_.trim(kKeptArenaBytes); }

private:
    static constexpr size_t kBuckets = 64;
    static size_t bucket(std::string_view key) {
        if (key.empty()) {
            return 0;
        }
        const auto first = static_cast<unsigned char>(key.front());
        const auto last = static_cast<unsigned char>(key.back());
        return (first * 7u + last * 3u + key.size()) & (kBuckets - 1);
    }
    static constexpr size_t kKeptArenaBytes = 64 * 1024;
    static Arena& thread_arena() {
        thread_local Arena arena;
        arena.clear();
        return arena;
    }

    // Trivially constructible (a string_view zero-initializes): the kilobyte of slots is not
    // cleared for each frame, which mostly fills fourteen of them.
    struct Slot {
        std::string_view key() const { return {key_data, key_len}; }
        const char* key_data;
        size_t key_len;
        View value;
    };
    std::array<Slot, kCapacity> pairs_;
    std::array<uint8_t, kCapacity> next_;  // index + 1 of the older pair in the bucket, 0 = end
    std::array<uint8_t, kBuckets> head_{};
    static constexpr size_t kSingles = 128;  // one-byte ASCII keys
    std::array<uint8_t, kSingles> single_{};
    size_t n_ = 0;
    Arena& arena_ = thread_arena();
};

// The views read with the general path's FieldReader: same Java rules, same error texts.
template <typename T>
Result<T> read_views(const ExtViews& ext) {
    return read_fields<T>(ext);
}

// One-pass scanner for the JSON header shape clients write. Returns false ("fall back") on
// anything it does not reproduce exactly as RapidJSON + decode_json_header would.
class JsonScanner {
public:
    JsonScanner(std::string_view text, RemotingCommand* cmd, ExtViews* ext)
        : begin_(text.data()),
          p_(text.data()),
          end_(text.data() + text.size()),
          cmd_(cmd),
          ext_(ext) {}

    bool scan() {
        cmd_->serialize_type = SerializeType::kJson;
        cmd_->language = LanguageCode::kOther;
        cmd_->version = 0;
        skip_ws();
        if (!eat('{')) {
            return false;
        }
        skip_ws();
        if (eat('}')) {
            return trailing_ok();
        }
        for (;;) {
            skip_ws();
            std::string_view key;
            if (!string(&key)) {
                return false;
            }
            skip_ws();
            if (!eat(':')) {
                return false;
            }
            skip_ws();
            if (!member(key)) {
                return false;
            }
            skip_ws();
            if (eat(',')) {
                continue;
            }
            if (eat('}')) {
                return trailing_ok();
            }
            return false;
        }
    }

private:
    enum class Kind { kString, kNumber, kTrue, kFalse, kNull, kObject, kArray };
    enum Seen : unsigned {
        kCode = 1,
        kVersion = 2,
        kOpaque = 4,
        kFlag = 8,
        kLanguage = 16,
        kRemark = 32,
        kExt = 64,
    };

    // Clients write compact JSON: the common case is one compare.
    [[gnu::always_inline]] void skip_ws() {
        while (p_ < end_ && static_cast<unsigned char>(*p_) <= ' ' &&
               (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
            ++p_;
        }
    }
    bool eat(char c) {
        if (p_ < end_ && *p_ == c) {
            ++p_;
            return true;
        }
        return false;
    }
    bool trailing_ok() {
        skip_ws();
        return p_ == end_;
    }
    // A string. Escapes are decoded into ext_->arena() (reserved once to the header size, so
    // earlier views stay valid); surrogate escapes are left to RapidJSON.
    bool string(std::string_view* out) {
        if (!eat('"')) {
            return false;
        }
        const char* start = p_;
        p_ += json_plain_prefix(p_, end_);
        if (p_ == end_) {
            return false;
        }
        if (*p_ == '"') {
            *out = std::string_view(start, static_cast<size_t>(p_ - start));
            ++p_;
            return true;
        }
        if (*p_ == '\\') {
            return escaped_string(start, out);
        }
        return false;  // a control character
    }
    bool escaped_string(const char* start, std::string_view* out) {
        ExtViews::Arena& arena = ext_->arena();
        // A decoded string is never longer than its escaped text, so room for the whole header,
        // made at the first escape, holds every string of it: the writes below need no bounds
        // checks, and earlier views stay valid.
        if (!arena_reserved_) {
            arena.reserve(static_cast<size_t>(end_ - begin_));
            arena_reserved_ = true;
        }
        const size_t first = arena.size();
        char* w = arena.end();
        std::memcpy(w, start, static_cast<size_t>(p_ - start));
        w += p_ - start;
        while (p_ < end_) {
            const size_t run = json_plain_prefix(p_, end_);
            std::memcpy(w, p_, run);
            w += run;
            p_ += run;
            if (p_ == end_) {
                return false;
            }
            const auto c = static_cast<unsigned char>(*p_);
            if (c == '"') {
                arena.set_end(w);
                *out = std::string_view(arena.data() + first, arena.size() - first);
                ++p_;
                return true;
            }
            if (c < 0x20) {
                return false;
            }
            if (end_ - p_ < 2) {
                return false;
            }
            char e = p_[1];
            p_ += 2;
            w = unescape(e, w);
            if (w == nullptr) {
                return false;
            }
        }
        return false;
    }
    // The escape `\e` (p_ is past it; a \u escape's digits follow) decoded at w. Returns the
    // write position after it, or nullptr for a bad escape.
    [[gnu::always_inline]] char* unescape(char e, char* w) {
        switch (e) {
            case '"':
                *w++ = '"';
                return w;
            case '\\':
                *w++ = '\\';
                return w;
            case '/':
                *w++ = '/';
                return w;
            case 'b':
                *w++ = '\b';
                return w;
            case 'f':
                *w++ = '\f';
                return w;
            case 'n':
                *w++ = '\n';
                return w;
            case 'r':
                *w++ = '\r';
                return w;
            case 't':
                *w++ = '\t';
                return w;
            case 'u':
                return unicode_escape(w);
            default:
                return nullptr;
        }
    }
    // The four hex digits of a \u escape at p_, as UTF-8 at w (six bytes of text decode to at
    // most three). Returns the write position after it, or nullptr for bad digits or a
    // surrogate (left to RapidJSON).
    char* unicode_escape(char* w) {
        uint32_t cp = 0;
        if (end_ - p_ < 4) {
            return nullptr;
        }
        for (int i = 0; i < 4; ++i) {
            char h = *p_++;
            uint32_t d = 0;
            if (h >= '0' && h <= '9') {
                d = static_cast<uint32_t>(h - '0');
            } else if (h >= 'a' && h <= 'f') {
                d = static_cast<uint32_t>(h - 'a' + 10);
            } else if (h >= 'A' && h <= 'F') {
                d = static_cast<uint32_t>(h - 'A' + 10);
            } else {
                return nullptr;
            }
            cp = cp * 16 + d;
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            return nullptr;
        }
        if (cp < 0x80) {
            *w++ = static_cast<char>(cp);
        } else if (cp < 0x800) {
            *w++ = static_cast<char>(0xC0 | (cp >> 6));
            *w++ = static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            *w++ = static_cast<char>(0xE0 | (cp >> 12));
            *w++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            *w++ = static_cast<char>(0x80 | (cp & 0x3F));
        }
        return w;
    }
    // An integer: -?(0|[1-9][0-9]*), at most 18 digits (no fraction, exponent or bignum).
    bool number(std::string_view* out) {
        const char* start = p_;
        eat('-');
        const char* digits = p_;
        while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
            ++p_;
        }
        size_t n = static_cast<size_t>(p_ - digits);
        if (n == 0 || n > 18 || (n > 1 && *digits == '0')) {
            return false;
        }
        if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) {
            return false;
        }
        *out = std::string_view(start, static_cast<size_t>(p_ - start));
        return true;
    }
    bool literal(std::string_view word) {
        if (static_cast<size_t>(end_ - p_) < word.size() ||
            std::string_view(p_, word.size()) != word) {
            return false;
        }
        p_ += word.size();
        return true;
    }
    // A scalar value; objects and arrays are reported (not consumed).
    bool scalar(Kind* kind, std::string_view* text) {
        if (p_ == end_) {
            return false;
        }
        switch (*p_) {
            case '"':
                *kind = Kind::kString;
                return string(text);
            case 't':
                *kind = Kind::kTrue;
                *text = "true";
                return literal("true");
            case 'f':
                *kind = Kind::kFalse;
                *text = "false";
                return literal("false");
            case 'n':
                *kind = Kind::kNull;
                return literal("null");
            case '{':
                *kind = Kind::kObject;
                return true;
            case '[':
                *kind = Kind::kArray;
                return true;
            default:
                *kind = Kind::kNumber;
                return number(text);
        }
    }
    bool first_time(unsigned bit) {
        if ((seen_ & bit) != 0) {
            return false;  // FindMember takes the first duplicate: leave that to RapidJSON
        }
        seen_ |= bit;
        return true;
    }
    // json_int_field: string or number text, int32 range; null keeps the default.
    static bool int_field(Kind kind, std::string_view s, int32_t* out) {
        if (kind == Kind::kNull) {
            return true;
        }
        if (kind != Kind::kString && kind != Kind::kNumber) {
            return false;  // general path reports "is not a number"
        }
        int64_t v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || p != s.data() + s.size() ||
            v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
            return false;  // general path reports "has bad value"
        }
        *out = static_cast<int32_t>(v);
        return true;
    }
    bool member(std::string_view key) {
        Kind kind{};
        std::string_view text;
        if (!scalar(&kind, &text)) {
            return false;
        }
        if (key == "extFields") {
            if (!first_time(kExt)) {
                return false;
            }
            if (kind == Kind::kNull) {
                return true;
            }
            return kind == Kind::kObject && ext_object();
        }
        if (kind == Kind::kObject || kind == Kind::kArray) {
            return false;  // nested value outside extFields (or a remark error): general path
        }
        if (key == "code") {
            return first_time(kCode) && int_field(kind, text, &cmd_->code);
        }
        if (key == "version") {
            return first_time(kVersion) && int_field(kind, text, &cmd_->version);
        }
        if (key == "opaque") {
            return first_time(kOpaque) && int_field(kind, text, &cmd_->opaque);
        }
        if (key == "flag") {
            return first_time(kFlag) && int_field(kind, text, &cmd_->flag);
        }
        if (key == "language") {
            if (!first_time(kLanguage)) {
                return false;
            }
            if (kind == Kind::kString || kind == Kind::kNumber) {
                uint32_t ordinal = 0;
                auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), ordinal);
                if (!text.empty() && ec == std::errc() && p == text.data() + text.size()) {
                    cmd_->language = detail::language_from_byte(
                        ordinal < 256 ? static_cast<uint8_t>(ordinal) : uint8_t{255});
                } else {
                    cmd_->language = language_from_name(text);
                }
            }
            return true;
        }
        if (key == "remark") {
            if (!first_time(kRemark)) {
                return false;
            }
            if (kind != Kind::kNull) {
                cmd_->remark = std::string(text);
            }
            return true;
        }
        return true;  // other scalar members (serializeTypeCurrentRPC, ...) are ignored
    }
    // The extFields object: flat, scalar values; null members skipped.
    bool ext_object() {
        if (!eat('{')) {
            return false;
        }
        skip_ws();
        if (eat('}')) {
            return true;
        }
        for (;;) {
            skip_ws();
            std::string_view key;
            if (!string(&key)) {
                return false;
            }
            skip_ws();
            if (!eat(':')) {
                return false;
            }
            skip_ws();
            Kind kind{};
            std::string_view text;
            if (!scalar(&kind, &text) || kind == Kind::kObject || kind == Kind::kArray) {
                return false;
            }
            if (kind != Kind::kNull && !ext_->add(key, text)) {
                return false;
            }
            skip_ws();
            if (eat(',')) {
                continue;
            }
            return eat('}');
        }
    }

    const char* begin_;
    const char* p_;
    const char* end_;
    RemotingCommand* cmd_;
    ExtViews* ext_;
    unsigned seen_ = 0;
    bool arena_reserved_ = false;
};

// Typed fast path only for requests: a response code may equal 10, 11, 310 or 320.
bool is_typed_send(const RemotingCommand& cmd) {
    return !cmd.is_response() &&
           (cmd.code == RequestCode::kSendMessage || cmd.code == RequestCode::kSendMessageV2 ||
            cmd.code == RequestCode::kSendBatchMessage);
}
// The requests whose body a caller may borrow: the sends (the broker reads their body only
// before the put returns).
bool is_send(const RemotingCommand& cmd) {
    return !cmd.is_response() &&
           (cmd.code == RequestCode::kSendMessage || cmd.code == RequestCode::kSendMessageV2 ||
            cmd.code == RequestCode::kSendBatchMessage);
}
bool is_pull(const RemotingCommand& cmd) {
    return !cmd.is_response() && cmd.code == RequestCode::kPullMessage;
}

// Fills the typed header (or ext_fields for every other code) from the scanned views.
void finish(const ExtViews& ext, FastFrame* out) {
    if (is_typed_send(out->cmd)) {
        // Into the strings of the last header the broker recycled on this thread (issue 16).
        SendMessageRequestHeaderV2 header = recycled_send_header_v2();
        Status st;
        if (out->cmd.code == RequestCode::kSendMessage) {
            // SEND_MESSAGE's long names, read with its own rules, carried in the V2 shape.
            SendMessageRequestHeader v1 = std::move(header).to_v1();
            st = read_fields_into(v1, ext);
            header = SendMessageRequestHeaderV2::from_v1(std::move(v1));
        } else {
            st = read_fields_into(header, ext);
        }
        if (st.is_ok()) {
            out->send_v2 = std::move(header);
        } else {
            out->send_v2 = std::move(st);
        }
    } else if (is_pull(out->cmd)) {
        out->pull = read_views<PullMessageRequestHeader>(ext);
    } else {
        ext.materialize(&out->cmd);
    }
}

// The general decoder, shaped like the fast result.
Result<FastFrame> decode_general(std::string_view payload, size_t max_frame_bytes,
                                 bool json_fallback) {
    FastFrame out;
    out.json_fallback = json_fallback;
    COMET_ASSIGN_OR_RETURN(out.cmd, decode_frame_payload(payload, max_frame_bytes));
    if (is_typed_send(out.cmd)) {
        // Either field naming, read as the processors read it (a rare path: no fast shape).
        Result<SendMessageRequestHeader> h = decode_send_message_header(out.cmd);
        if (h.is_ok()) {
            out.send_v2 = SendMessageRequestHeaderV2::from_v1(std::move(h).value());
        } else {
            out.send_v2 = h.status();
        }
        out.cmd.ext_fields.clear();
    } else if (is_pull(out.cmd)) {
        out.pull = PullMessageRequestHeader::from_ext(out.cmd);
        out.cmd.ext_fields.clear();
    }
    return out;
}

}  // namespace

Result<FastFrame> decode_frame_payload_fast(std::string_view payload, size_t max_frame_bytes,
                                            bool borrow_send_body) {
    COMET_ASSIGN_OR_RETURN(detail::PayloadParts parts,
                           detail::split_payload(payload, max_frame_bytes));
    FastFrame out;
    ExtViews ext;
    if (parts.type == static_cast<uint32_t>(SerializeType::kRocketMq)) {
        bool overflow = false;
        COMET_RETURN_IF_ERROR(detail::scan_rocketmq_header(
            parts.header, &out.cmd, [&](std::string_view key, std::string_view value) {
                if (!overflow && !ext.add(key, value)) {
                    overflow = true;
                }
            }));
        if (overflow) {
            // More pairs than the view table holds (not a client shape): general decoder.
            return decode_general(payload, max_frame_bytes, false);
        }
    } else if (parts.type == static_cast<uint32_t>(SerializeType::kJson)) {
        if (!JsonScanner(parts.header, &out.cmd, &ext).scan()) {
            return decode_general(payload, max_frame_bytes, true);
        }
    } else {
        return Status::error(Errc::kCorruption, "unknown serialization type {}", parts.type);
    }
    finish(ext, &out);
    if (borrow_send_body && is_send(out.cmd)) {
        out.cmd.borrowed_body = parts.body;
    } else {
        out.cmd.body = std::string(parts.body);
    }
    return out;
}

namespace {

std::string status_text(const Status& s) { return s.is_ok() ? std::string("OK") : s.to_string(); }

// SEND_MESSAGE's header is carried in the V2 shape: compared in its own (v1) form.
Result<SendMessageRequestHeader> as_v1(const Result<SendMessageRequestHeaderV2>& h) {
    if (!h.is_ok()) {
        return h.status();
    }
    return h.value().to_v1();
}

template <typename H>
std::optional<std::string> header_mismatch(const char* what, const RemotingCommand& general,
                                           const std::optional<Result<H>>& fast) {
    Result<H> want = H::from_ext(general);
    if (!fast) {
        return std::string(what) + ": fast path gave no typed header";
    }
    if (want.status().code() != fast->status().code() ||
        want.status().message() != fast->status().message()) {
        return std::string(what) + ": general " + status_text(want.status()) + " vs fast " +
               status_text(fast->status());
    }
    if (want.is_ok()) {
        RemotingCommand a;
        RemotingCommand b;
        want->to_ext(a);
        fast->value().to_ext(b);
        if (a.ext_fields != b.ext_fields) {
            return std::string(what) + ": typed headers differ";
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> fast_header_mismatch(std::string_view payload, size_t max_frame_bytes) {
    Result<RemotingCommand> general = decode_frame_payload(payload, max_frame_bytes);
    Result<FastFrame> fast = decode_frame_payload_fast(payload, max_frame_bytes);
    if (general.status().code() != fast.status().code() ||
        general.status().message() != fast.status().message()) {
        return "frame: general " + status_text(general.status()) + " vs fast " +
               status_text(fast.status());
    }
    if (!general.is_ok()) {
        return std::nullopt;
    }
    const RemotingCommand& g = *general;
    const RemotingCommand& f = fast->cmd;
    if (g.code != f.code || g.language != f.language || g.version != f.version ||
        g.opaque != f.opaque || g.flag != f.flag || g.remark != f.remark ||
        g.serialize_type != f.serialize_type || g.body != f.body) {
        return std::string("command fields differ");
    }
    if (is_typed_send(g)) {
        if (!f.ext_fields.empty() || fast->pull) {
            return std::string("send: ext_fields or pull header set");
        }
        if (g.code == RequestCode::kSendMessage) {
            std::optional<Result<SendMessageRequestHeader>> v1;
            if (fast->send_v2) {
                v1 = as_v1(*fast->send_v2);
            }
            return header_mismatch<SendMessageRequestHeader>("send v1", g, v1);
        }
        return header_mismatch<SendMessageRequestHeaderV2>("send", g, fast->send_v2);
    }
    if (is_pull(g)) {
        if (!f.ext_fields.empty() || fast->send_v2) {
            return std::string("pull: ext_fields or send header set");
        }
        return header_mismatch<PullMessageRequestHeader>("pull", g, fast->pull);
    }
    if (fast->send_v2 || fast->pull) {
        return std::string("typed header set for another code");
    }
    if (g.ext_fields != f.ext_fields) {
        return std::string("ext_fields differ");
    }
    return std::nullopt;
}

}  // namespace comet::protocol
