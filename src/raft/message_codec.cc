#include "raft/message_codec.h"

#include "base/bytes.h"

namespace comet::raft {
namespace {

constexpr uint8_t kVersion = 1;
constexpr uint8_t kReject = 1;
constexpr uint8_t kTransfer = 2;
constexpr uint8_t kRegressed = 4;

class Reader {
public:
    Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
    bool ok() const { return ok_; }
    bool at_end() const { return p_ == end_; }
    const uint8_t* take(size_t n) {
        if (!ok_ || static_cast<size_t>(end_ - p_) < n) {
            ok_ = false;
            return nullptr;
        }
        const uint8_t* r = p_;
        p_ += n;
        return r;
    }
    uint8_t u8() {
        const uint8_t* b = take(1);
        return b != nullptr ? b[0] : 0;
    }
    uint32_t u32() {
        const uint8_t* b = take(4);
        return b != nullptr ? get_be32(b) : 0;
    }
    int64_t i64() {
        const uint8_t* b = take(8);
        return b != nullptr ? static_cast<int64_t>(get_be64(b)) : 0;
    }

private:
    const uint8_t* p_;
    const uint8_t* end_;
    bool ok_ = true;
};

// The fixed part of every message, up to and including the entry count.
void encode_header(const Message& m, int64_t tag, std::string* out) {
    ByteWriter w(out);
    w.u8(kVersion);
    w.u8(static_cast<uint8_t>(m.type));
    w.be32(static_cast<uint32_t>(m.from.value()));
    w.be32(static_cast<uint32_t>(m.to.value()));
    w.be64(static_cast<uint64_t>(m.term.value()));
    w.be64(static_cast<uint64_t>(m.index.value()));
    w.be64(static_cast<uint64_t>(m.log_term.value()));
    w.be64(static_cast<uint64_t>(m.commit.value()));
    w.u8(static_cast<uint8_t>((m.reject ? kReject : 0) | (m.transfer ? kTransfer : 0) |
                               (m.regressed ? kRegressed : 0)));
    w.be64(static_cast<uint64_t>(m.reject_hint.value()));
    w.be64(static_cast<uint64_t>(m.conflict_term.value()));
    w.be64(static_cast<uint64_t>(tag));
    w.be32(static_cast<uint32_t>(m.entries.size()));
}

void encode_entry_header(const Entry& e, std::string* out) {
    ByteWriter w(out);
    w.be64(static_cast<uint64_t>(e.term.value()));
    w.be64(static_cast<uint64_t>(e.index.value()));
    w.u8(static_cast<uint8_t>(e.type));
    w.be32(static_cast<uint32_t>(e.payload.size()));
}

bool has_snapshot_part(const Message& m) {
    return m.type == MessageType::kInstallSnapshot ||
           m.type == MessageType::kInstallSnapshotResponse;
}

void encode_snapshot_header(const Message& m, std::string* out) {
    ByteWriter w(out);
    w.be64(static_cast<uint64_t>(m.snapshot_offset));
    w.be64(static_cast<uint64_t>(m.snapshot_size));
    w.u8(m.snapshot_done ? 1 : 0);
    w.be32(static_cast<uint32_t>(m.data.size()));
}

}  // namespace

void encode_message(const Message& m, int64_t tag, std::string* out) {
    encode_header(m, tag, out);
    for (const Entry& e : m.entries) {
        encode_entry_header(e, out);
        out->append(e.payload.view());
    }
    if (has_snapshot_part(m)) {
        encode_snapshot_header(m, out);
        out->append(m.data.view());
    }
}

void encode_message_parts(const Message& m, int64_t tag, std::string* head,
                          std::vector<SharedBytes>* tail) {
    encode_header(m, tag, head);
    // Until the first referenced piece, prefixes go into *head. After it, the bytes between
    // two pieces (entry headers, the snapshot header) go into one buffer, made only then, and
    // are referenced by slices once it is complete (it may move while it grows).
    struct Part {
        size_t gap_from = 0;  // the gap before `piece` in *gaps
        size_t gap_to = 0;
        const SharedBytes* piece = nullptr;  // null: a trailing gap (empty payload)
    };
    std::shared_ptr<std::string> gaps;
    std::vector<Part> parts;
    auto add = [&](const SharedBytes& piece, auto&& write_prefix) {
        if (!gaps) {
            write_prefix(head);
            if (!piece.empty()) {
                parts.push_back({0, 0, &piece});
                gaps = std::make_shared<std::string>();
            }
            return;
        }
        const size_t from = gaps->size();
        write_prefix(gaps.get());
        parts.push_back({from, gaps->size(), piece.empty() ? nullptr : &piece});
    };
    for (const Entry& e : m.entries) {
        add(e.payload, [&](std::string* out) { encode_entry_header(e, out); });
    }
    if (has_snapshot_part(m)) {
        add(m.data, [&](std::string* out) { encode_snapshot_header(m, out); });
    }
    for (const Part& p : parts) {
        if (p.gap_to > p.gap_from) {
            tail->emplace_back(gaps, reinterpret_cast<const uint8_t*>(gaps->data()) + p.gap_from,
                               p.gap_to - p.gap_from);
        }
        if (p.piece != nullptr) {
            tail->push_back(*p.piece);
        }
    }
}

Result<Message> decode_message(std::shared_ptr<const std::string> owner, int64_t* tag) {
    Reader r(reinterpret_cast<const uint8_t*>(owner->data()), owner->size());
    if (const uint8_t v = r.u8(); v != kVersion) {
        return Status::error(Errc::kCorruption, "raft message: version {} (want {})", v, kVersion);
    }
    Message m;
    const uint8_t type = r.u8();
    if (type > static_cast<uint8_t>(MessageType::kInstallSnapshotResponse)) {
        return Status::error(Errc::kCorruption, "raft message: unknown type {}", type);
    }
    m.type = static_cast<MessageType>(type);
    m.from = NodeId(static_cast<int32_t>(r.u32()));
    m.to = NodeId(static_cast<int32_t>(r.u32()));
    m.term = Term(r.i64());
    m.index = LogIndex(r.i64());
    m.log_term = Term(r.i64());
    m.commit = LogIndex(r.i64());
    const uint8_t flags = r.u8();
    m.reject = (flags & kReject) != 0;
    m.transfer = (flags & kTransfer) != 0;
    m.regressed = (flags & kRegressed) != 0;
    m.reject_hint = LogIndex(r.i64());
    m.conflict_term = Term(r.i64());
    const int64_t t = r.i64();
    const uint32_t n = r.u32();
    if (!r.ok() || n > owner->size()) {
        return Status::error(Errc::kCorruption, "raft message: truncated header");
    }
    m.entries.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
        Entry e;
        e.term = Term(r.i64());
        e.index = LogIndex(r.i64());
        const uint8_t et = r.u8();
        if (et > static_cast<uint8_t>(EntryType::kNoOp)) {
            return Status::error(Errc::kCorruption, "raft message: entry {} has type {}", i, et);
        }
        e.type = static_cast<EntryType>(et);
        const uint32_t size = r.u32();
        const uint8_t* data = r.take(size);
        if (!r.ok()) {
            return Status::error(Errc::kCorruption, "raft message: entry {} truncated", i);
        }
        e.payload = SharedBytes(owner, data, size);
        m.entries.push_back(std::move(e));
    }
    if (m.type == MessageType::kInstallSnapshot ||
        m.type == MessageType::kInstallSnapshotResponse) {
        m.snapshot_offset = r.i64();
        m.snapshot_size = r.i64();
        m.snapshot_done = r.u8() != 0;
        const uint32_t size = r.u32();
        const uint8_t* data = r.take(size);
        if (!r.ok()) {
            return Status::error(Errc::kCorruption, "raft message: snapshot chunk truncated");
        }
        m.data = SharedBytes(owner, data, size);
    }
    if (!r.at_end()) {
        return Status::error(Errc::kCorruption, "raft message: trailing bytes");
    }
    if (tag != nullptr) {
        *tag = t;
    }
    return m;
}

}  // namespace comet::raft
