// rng.h — counter-based random numbers: a value is a pure function of (seed, stream,
// index), so initialisation and dropout masks do not depend on how work is split over
// ranks, on the order it runs in, or on what ran before (a resumed run sees the same
// numbers as one that never stopped).
#pragma once

#include <cmath>
#include <cstdint>

// The CUDA backend draws the same numbers on the GPU (engine/cuda): the mixers compile for
// both sides.
#ifdef __CUDACC__
#define CC_HOST_DEVICE __host__ __device__
#else
#define CC_HOST_DEVICE
#endif

namespace cc::engine {

// SplitMix64's finaliser: a bijective 64-bit mixer with good avalanche.
CC_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

CC_HOST_DEVICE inline std::uint64_t hash3(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return mix64(mix64(mix64(a) ^ b) ^ c);
}

// Uniform in [0, 1) with 53 random bits.
CC_HOST_DEVICE inline double uniform01(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return static_cast<double>(hash3(seed, stream, index) >> 11) * 0x1.0p-53;
}

// Standard normal via Box-Muller on two independent uniforms.
inline double normal01(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const double u1 = uniform01(seed, stream, 2 * index) + 0x1.0p-54;  // (0, 1]
  const double u2 = uniform01(seed, stream, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace cc::engine
