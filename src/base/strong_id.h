#pragma once
// StrongId<T, Tag>: a number that cannot be mixed up with another kind of number.
//   using PhysicalOffset = StrongId<int64_t, struct PhysicalOffsetTag>;

#include <fmt/format.h>

#include <compare>
#include <cstddef>
#include <functional>

namespace comet {

template <typename T, typename Tag>
class StrongId {
public:
    using ValueType = T;
    constexpr StrongId() = default;
    constexpr explicit StrongId(T v) : v_(v) {}
    constexpr T value() const { return v_; }
    constexpr auto operator<=>(const StrongId&) const = default;
    constexpr StrongId& operator+=(T d) {
        v_ += d;
        return *this;
    }
    constexpr StrongId operator+(T d) const { return StrongId(v_ + d); }
    constexpr StrongId operator-(T d) const { return StrongId(v_ - d); }
    constexpr T operator-(StrongId o) const { return v_ - o.v_; }

private:
    T v_{};
};

}  // namespace comet

template <typename T, typename Tag>
struct std::hash<comet::StrongId<T, Tag>> {
    size_t operator()(const comet::StrongId<T, Tag>& id) const noexcept {
        return std::hash<T>()(id.value());
    }
};

template <typename T, typename Tag>
struct fmt::formatter<comet::StrongId<T, Tag>> : fmt::formatter<T> {
    template <typename Ctx>
    auto format(const comet::StrongId<T, Tag>& id, Ctx& ctx) const {
        return fmt::formatter<T>::format(id.value(), ctx);
    }
};
