#include "ha/autoswitch_codec.h"

#include <algorithm>

#include "base/bytes.h"
#include "ha/stream_buffer.h"

namespace comet::ha {
namespace {

using detail::at;
using detail::compact;

constexpr int32_t kStateHandshake = static_cast<int32_t>(HaConnectionState::kHandshake);
constexpr int32_t kStateTransfer = static_cast<int32_t>(HaConnectionState::kTransfer);

// End of entry i: the next entry's start, the list's max offset for the last one.
int64_t entry_end(const std::vector<store::EpochEntry>& list, size_t i, int64_t max_offset) {
    return i + 1 < list.size() ? list[i + 1].start_offset : max_offset;
}

}  // namespace

std::string encode_autoswitch_slave_handshake(const AutoSwitchSlaveHandshake& hs) {
    std::string out;
    ByteWriter w(&out);
    w.be32(static_cast<uint32_t>(kStateHandshake));
    w.be16(hs.sync_from_last_file ? 1 : 0);
    w.be16(hs.async_learner ? 1 : 0);
    w.be64(static_cast<uint64_t>(hs.broker_id));
    return out;
}

std::string encode_autoswitch_report(int64_t max_offset) {
    std::string out;
    ByteWriter w(&out);
    w.be32(static_cast<uint32_t>(kStateTransfer));
    w.be64(static_cast<uint64_t>(max_offset));
    return out;
}

std::string encode_autoswitch_master_handshake(const AutoSwitchMasterHandshake& hs) {
    std::string out;
    out.reserve(kAutoSwitchMasterHandshakeHeaderSize +
                hs.epochs.size() * kAutoSwitchEpochEntrySize);
    ByteWriter w(&out);
    w.be32(static_cast<uint32_t>(kStateHandshake));
    w.be32(static_cast<uint32_t>(hs.epochs.size() * kAutoSwitchEpochEntrySize));
    w.be64(static_cast<uint64_t>(hs.max_offset));
    w.be32(static_cast<uint32_t>(hs.last_epoch));
    for (const auto& e : hs.epochs) {
        w.be32(static_cast<uint32_t>(static_cast<int32_t>(e.epoch)));
        w.be64(static_cast<uint64_t>(e.start_offset));
    }
    return out;
}

std::string encode_autoswitch_transfer_header(const AutoSwitchTransferHeader& h,
                                              int32_t body_size) {
    std::string out;
    out.reserve(kAutoSwitchTransferHeaderSize);
    ByteWriter w(&out);
    w.be32(static_cast<uint32_t>(kStateTransfer));
    w.be32(static_cast<uint32_t>(body_size));
    w.be64(static_cast<uint64_t>(h.offset));
    w.be32(static_cast<uint32_t>(h.epoch));
    w.be64(static_cast<uint64_t>(h.epoch_start_offset));
    w.be64(static_cast<uint64_t>(h.confirm_offset));
    return out;
}

Result<std::optional<AutoSwitchSlaveStreamDecoder::Event>> AutoSwitchSlaveStreamDecoder::next() {
    compact(buf_, pos_);
    size_t avail = buf_.size() - pos_;
    if (avail < 4) {
        return std::optional<Event>();
    }
    auto state = static_cast<int32_t>(get_be32(at(buf_, pos_)));
    if (state == kStateHandshake) {
        if (avail < kAutoSwitchSlaveHandshakeSize) {
            return std::optional<Event>();
        }
        uint16_t from_last = get_be16(at(buf_, pos_ + 4));
        uint16_t learner = get_be16(at(buf_, pos_ + 6));
        if (from_last > 1 || learner > 1) {
            return Status::error(Errc::kCorruption,
                                 "AutoSwitch HA handshake flags isSyncFromLastFile={} "
                                 "isAsyncLearner={} (must be 0 or 1)",
                                 from_last, learner);
        }
        Event ev{Event::Kind::kHandshake, {}, 0};
        ev.handshake.sync_from_last_file = from_last == 1;
        ev.handshake.async_learner = learner == 1;
        ev.handshake.broker_id = static_cast<int64_t>(get_be64(at(buf_, pos_ + 8)));
        pos_ += kAutoSwitchSlaveHandshakeSize;
        return std::optional<Event>(ev);
    }
    if (state == kStateTransfer) {
        if (avail < kAutoSwitchReportSize) {
            return std::optional<Event>();
        }
        auto offset = static_cast<int64_t>(get_be64(at(buf_, pos_ + 4)));
        if (offset < 0) {
            return Status::error(Errc::kCorruption, "AutoSwitch HA report with negative offset {}",
                                 offset);
        }
        pos_ += kAutoSwitchReportSize;
        return std::optional<Event>(Event{Event::Kind::kReport, {}, offset});
    }
    return Status::error(Errc::kCorruption,
                         "AutoSwitch HA slave message with state {} (want 1 HANDSHAKE or 2 "
                         "TRANSFER)",
                         state);
}

Result<std::optional<AutoSwitchMasterStreamDecoder::Message>>
AutoSwitchMasterStreamDecoder::next_view() {
    size_t avail = buf_.size();
    if (avail < 8) {
        return std::optional<Message>();
    }
    auto state = static_cast<int32_t>(get_be32(buf_.at(0)));
    auto body = static_cast<int32_t>(get_be32(buf_.at(4)));
    if (state != kStateHandshake && state != kStateTransfer) {
        return Status::error(Errc::kCorruption,
                             "AutoSwitch HA master message with state {} (want 1 HANDSHAKE or 2 "
                             "TRANSFER)",
                             state);
    }
    if (body < 0 || body > max_body_bytes_) {
        return Status::error(Errc::kCorruption,
                             "AutoSwitch HA master message (state {}) has body size {} (limit {})",
                             state, body, max_body_bytes_);
    }
    const size_t body_size = static_cast<size_t>(body);
    if (state == kStateHandshake) {
        if (body_size % kAutoSwitchEpochEntrySize != 0) {
            return Status::error(Errc::kCorruption,
                                 "AutoSwitch HA master handshake body size {} is not a multiple "
                                 "of {}",
                                 body, kAutoSwitchEpochEntrySize);
        }
        if (avail < kAutoSwitchMasterHandshakeHeaderSize + body_size) {
            return std::optional<Message>();
        }
        Message m{Message::Kind::kHandshake, {}, {}, {}, {}};
        m.handshake.max_offset = static_cast<int64_t>(get_be64(buf_.at(8)));
        m.handshake.last_epoch = static_cast<int32_t>(get_be32(buf_.at(16)));
        if (m.handshake.max_offset < 0) {
            return Status::error(Errc::kCorruption,
                                 "AutoSwitch HA master handshake with negative max offset {}",
                                 m.handshake.max_offset);
        }
        const size_t n = body_size / kAutoSwitchEpochEntrySize;
        m.handshake.epochs.reserve(n);
        const uint8_t* p = buf_.at(kAutoSwitchMasterHandshakeHeaderSize);
        for (size_t i = 0; i < n; ++i, p += kAutoSwitchEpochEntrySize) {
            store::EpochEntry e;
            e.epoch = static_cast<int32_t>(get_be32(p));
            e.start_offset = static_cast<int64_t>(get_be64(p + 4));
            if (e.start_offset < 0) {
                return Status::error(Errc::kCorruption,
                                     "AutoSwitch HA master handshake entry {} (epoch {}) has "
                                     "negative start offset {}",
                                     i, e.epoch, e.start_offset);
            }
            m.handshake.epochs.push_back(e);
        }
        buf_.consume(kAutoSwitchMasterHandshakeHeaderSize + body_size);
        return std::optional<Message>(std::move(m));
    }
    if (avail < kAutoSwitchTransferHeaderSize) {
        return std::optional<Message>();
    }
    Message m{Message::Kind::kTransfer, {}, {}, {}, {}};
    AutoSwitchTransferHeader& h = m.header;
    h.offset = static_cast<int64_t>(get_be64(buf_.at(8)));
    h.epoch = static_cast<int32_t>(get_be32(buf_.at(16)));
    h.epoch_start_offset = static_cast<int64_t>(get_be64(buf_.at(20)));
    h.confirm_offset = static_cast<int64_t>(get_be64(buf_.at(28)));
    if (h.offset < 0 || h.epoch_start_offset < 0 || h.confirm_offset < -1) {
        return Status::error(Errc::kCorruption,
                             "AutoSwitch HA transfer frame with offset {} epoch {} "
                             "epochStartOffset {} confirmOffset {} (negative)",
                             h.offset, h.epoch, h.epoch_start_offset, h.confirm_offset);
    }
    if (avail < kAutoSwitchTransferHeaderSize + body_size) {
        return std::optional<Message>();
    }
    m.body = buf_.view(kAutoSwitchTransferHeaderSize, body_size);
    buf_.consume(kAutoSwitchTransferHeaderSize + body_size);
    return std::optional<Message>(std::move(m));
}

Result<std::optional<AutoSwitchMasterStreamDecoder::Message>>
AutoSwitchMasterStreamDecoder::next() {
    auto r = next_view();
    if (r.is_ok() && r.value() && r.value()->kind == Message::Kind::kTransfer) {
        r.value()->data.assign(r.value()->body);
    }
    return r;
}

std::optional<int64_t> compute_consistent_point(const std::vector<store::EpochEntry>& local,
                                                int64_t local_max_offset,
                                                const std::vector<store::EpochEntry>& master,
                                                int64_t master_max_offset) {
    if (local.empty()) {
        return int64_t{0};
    }
    // Epochs that start at the local end hold no bytes (a slave notes a new epoch from the
    // master's heartbeat before any of its data arrives): nothing of theirs can conflict. When
    // every local epoch is such a one the slave holds nothing to keep or cut.
    size_t holding = local.size();
    while (holding > 0 && local[holding - 1].start_offset >= local_max_offset) {
        --holding;
    }
    if (holding == 0) {
        if (local_max_offset <= master_max_offset) {
            return local_max_offset;
        }
        return std::nullopt;
    }
    for (size_t i = holding; i-- > 0;) {
        for (size_t j = 0; j < master.size(); ++j) {
            if (master[j].epoch != local[i].epoch) {
                continue;
            }
            if (master[j].start_offset != local[i].start_offset) {
                break;  // same epoch, other history: keep walking older local epochs
            }
            return std::min(entry_end(local, i, local_max_offset),
                            entry_end(master, j, master_max_offset));
        }
    }
    return std::nullopt;
}

std::string format_epochs(const std::vector<store::EpochEntry>& epochs) {
    std::string out = "[";
    for (size_t i = 0; i < epochs.size(); ++i) {
        if (i > 0) {
            out += ", ";
        }
        out += std::to_string(epochs[i].epoch) + "@" + std::to_string(epochs[i].start_offset);
    }
    out += "]";
    return out;
}

}  // namespace comet::ha
