#pragma once
// InlineFunction<R(Args...), N>: a move-only callable holder that keeps callables of up to N
// bytes inside itself, so that passing a completion down a call chain allocates nothing (the
// send path's completions, issue 16). Larger callables still work: they go to the heap, as with
// std::function. Unlike std::function it is not copyable (a completion runs once, in one place)
// and it accepts move-only callables.
//
// A callable stored inline must be nothrow move constructible (moving the holder moves it).
// Invoking an empty InlineFunction is a checked error. operator() is const, as std::function's,
// and calls the stored callable as non-const (completions often move out of their captures).

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "base/check.h"

namespace comet {

template <typename Signature, size_t N>
class InlineFunction;

template <typename R, typename... Args, size_t N>
class InlineFunction<R(Args...), N> {
public:
    static constexpr size_t kCapacity = N;

    InlineFunction() noexcept = default;
    InlineFunction(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor)

    template <typename F, typename D = std::decay_t<F>,
              typename = std::enable_if_t<!std::is_same_v<D, InlineFunction> &&
                                          std::is_invocable_r_v<R, D&, Args...>>>
    InlineFunction(F&& f) {  // NOLINT(google-explicit-constructor)
        if constexpr (std::is_pointer_v<D> || std::is_member_pointer_v<D>) {
            if (f == nullptr) {
                return;
            }
        }
        if constexpr (fits_inline<D>()) {
            ::new (static_cast<void*>(storage_)) D(std::forward<F>(f));
            ops_ = &inline_ops<D>;
        } else {
            *reinterpret_cast<D**>(storage_) = new D(std::forward<F>(f));
            ops_ = &heap_ops<D>;
        }
    }

    InlineFunction(InlineFunction&& other) noexcept { take(other); }
    InlineFunction& operator=(InlineFunction&& other) noexcept {
        if (this != &other) {
            reset();
            take(other);
        }
        return *this;
    }
    InlineFunction& operator=(std::nullptr_t) noexcept {
        reset();
        return *this;
    }
    InlineFunction(const InlineFunction&) = delete;
    InlineFunction& operator=(const InlineFunction&) = delete;
    ~InlineFunction() { reset(); }

    explicit operator bool() const noexcept { return ops_ != nullptr; }

    R operator()(Args... args) const {
        COMET_CHECK(ops_ != nullptr, "call of an empty InlineFunction");
        return ops_->invoke(const_cast<unsigned char*>(storage_), std::forward<Args>(args)...);
    }

    // Whether a callable of type F would be kept inline (tests, static checks).
    template <typename F>
    static constexpr bool fits_inline() {
        return sizeof(F) <= N && alignof(F) <= alignof(std::max_align_t) &&
               std::is_nothrow_move_constructible_v<F>;
    }

private:
    struct Ops {
        R (*invoke)(void* storage, Args&&... args);
        // Moves the callable from `from` into the empty `to`, leaving `from` destroyed.
        void (*relocate)(void* from, void* to) noexcept;
        void (*destroy)(void* storage) noexcept;
    };

    template <typename D>
    static constexpr Ops inline_ops = {
        [](void* s, Args&&... args) -> R {
            return (*static_cast<D*>(s))(std::forward<Args>(args)...);
        },
        [](void* from, void* to) noexcept {
            ::new (to) D(std::move(*static_cast<D*>(from)));
            static_cast<D*>(from)->~D();
        },
        [](void* s) noexcept { static_cast<D*>(s)->~D(); },
    };

    template <typename D>
    static constexpr Ops heap_ops = {
        [](void* s, Args&&... args) -> R {
            return (**static_cast<D**>(s))(std::forward<Args>(args)...);
        },
        [](void* from, void* to) noexcept { *static_cast<D**>(to) = *static_cast<D**>(from); },
        [](void* s) noexcept { delete *static_cast<D**>(s); },
    };

    void take(InlineFunction& other) noexcept {
        if (other.ops_ != nullptr) {
            other.ops_->relocate(other.storage_, storage_);
            ops_ = other.ops_;
            other.ops_ = nullptr;
        }
    }
    void reset() noexcept {
        if (ops_ != nullptr) {
            const Ops* ops = ops_;
            ops_ = nullptr;
            ops->destroy(storage_);
        }
    }

    static_assert(N >= sizeof(void*), "InlineFunction needs room for at least a pointer");
    const Ops* ops_ = nullptr;
    alignas(std::max_align_t) unsigned char storage_[N];
};

}  // namespace comet
