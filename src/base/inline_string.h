#pragma once
// InlineString<N>: a string of up to N characters held inside the object, longer ones on the
// heap, read as a std::string_view. For short values that ride a send's completion or result
// (an offset message id, a UNIQ_KEY), so that carrying one allocates nothing (issue 16).
// A value type: copies and moves copy the characters.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace comet {

template <size_t N>
class InlineString {
    static_assert(N <= 255, "the inline length is kept in one byte");

public:
    static constexpr size_t kInlineChars = N;

    InlineString() = default;
    InlineString(std::string_view s) { append(s); }  // NOLINT(google-explicit-constructor)
    InlineString& operator=(std::string_view s) {
        clear();
        append(s);
        return *this;
    }

    void clear() {
        inline_size_ = 0;
        heap_.clear();
        on_heap_ = false;
    }
    void append(std::string_view s) {
        if (!on_heap_ && inline_size_ + s.size() <= N) {
            std::memcpy(inline_ + inline_size_, s.data(), s.size());
            inline_size_ = static_cast<uint8_t>(inline_size_ + s.size());
            return;
        }
        move_to_heap();
        heap_.append(s);
    }
    // Room for `n` characters in all (beyond the inline room: on the heap at once).
    void reserve(size_t n) {
        if (n > N) {
            move_to_heap();
            heap_.reserve(n);
        }
    }

    std::string_view view() const {
        return on_heap_ ? std::string_view(heap_) : std::string_view(inline_, inline_size_);
    }
    operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)
    std::string str() const { return std::string(view()); }
    size_t size() const { return view().size(); }
    bool empty() const { return size() == 0; }
    const char* begin() const { return view().data(); }
    const char* end() const { return view().data() + view().size(); }

    friend bool operator==(const InlineString& a, std::string_view b) { return a.view() == b; }
    friend bool operator==(const InlineString& a, const InlineString& b) {
        return a.view() == b.view();
    }
    // Any output stream (gtest's printer, fmt's ostream support); no <ostream> here.
    template <typename Os>
    friend Os& operator<<(Os& os, const InlineString& s) {
        os << s.view();
        return os;
    }

private:
    void move_to_heap() {
        if (!on_heap_) {
            heap_.assign(inline_, inline_size_);
            on_heap_ = true;
        }
    }

    char inline_[N];
    uint8_t inline_size_ = 0;
    bool on_heap_ = false;
    std::string heap_;
};

}  // namespace comet
