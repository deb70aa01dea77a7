#pragma once
// Rng: injectable, seedable random source (xoshiro256**). Deterministic for a given seed, so the
// simulator and the Raft core replay exactly. Not thread-safe: one per owner.

#include <cstdint>

namespace comet {

class Rng {
public:
    explicit Rng(uint64_t seed) { reseed(seed); }
    void reseed(uint64_t seed) {
        uint64_t x = seed;
        for (auto& s : s_) {
            s = splitmix(x);
        }
    }
    uint64_t next() {
        const uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    // Uniform in [lo, hi] inclusive. Requires lo <= hi.
    int64_t uniform(int64_t lo, int64_t hi) {
        const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
        if (span == 0) {
            return static_cast<int64_t>(next());
        }
        return lo + static_cast<int64_t>(next() % span);
    }
    // True with probability p (0..1).
    bool chance(double p) { return (next() >> 11) * 0x1.0p-53 < p; }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static uint64_t splitmix(uint64_t& x) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    uint64_t s_[4]{};
};

}  // namespace comet
