#pragma once
// Shared by the HA unit tests.

#include <chrono>
#include <thread>

namespace comet::ha::testing {

// Polls `pred` every 5 ms until it holds or `limit` passes; returns its last value.
template <typename Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return pred();
}

}  // namespace comet::ha::testing
