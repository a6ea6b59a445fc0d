// Lock-free single-producer/single-consumer ring buffer and a small audio resampler built on it.
// Header-only; C++17.
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace audio {

constexpr std::size_t kCacheLine = 64;

enum class Overflow { kDrop, kOverwrite };

template <typename T, std::size_t Capacity>
class SpscRing {
  static_assert(Capacity >= 2, "capacity must be at least 2");
  static_assert((Capacity & (Capacity - 1)) == 0, "capacity must be a power of two");
  static_assert(std::is_nothrow_move_assignable_v<T>, "T must move without throwing");

 public:
  SpscRing() = default;
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  // Producer side. Returns false when full (and the value is dropped).
  bool push(T value) noexcept {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    const std::size_t next = (head + 1) & kMask;
    if (next == tail_.load(std::memory_order_acquire)) {
      ++dropped_;
      return false;
    }
    slots_[head] = std::move(value);
    head_.store(next, std::memory_order_release);
    return true;
  }

  // Consumer side.
  std::optional<T> pop() noexcept {
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_.load(std::memory_order_acquire)) {
      return std::nullopt;
    }
    T value = std::move(slots_[tail]);
    tail_.store((tail + 1) & kMask, std::memory_order_release);
    return value;
  }

  std::size_t size() const noexcept {
    const std::size_t head = head_.load(std::memory_order_acquire);
    const std::size_t tail = tail_.load(std::memory_order_acquire);
    return (head - tail) & kMask;
  }

  bool empty() const noexcept { return size() == 0; }

  static constexpr std::size_t capacity() noexcept { return Capacity - 1; }

  std::size_t dropped() const noexcept { return dropped_; }

 private:
  static constexpr std::size_t kMask = Capacity - 1;

  std::array<T, Capacity> slots_{};
  alignas(kCacheLine) std::atomic<std::size_t> head_{0};
  alignas(kCacheLine) std::atomic<std::size_t> tail_{0};
  std::size_t dropped_ = 0;
};

struct ResamplerConfig {
  double input_rate = 48000.0;
  double output_rate = 44100.0;
  int taps = 16;
  double cutoff = 0.95;
};

// Windowed-sinc resampler for mono float samples.
class Resampler {
 public:
  explicit Resampler(const ResamplerConfig& config);

  // Consumes input samples, appends output samples; returns how many were produced.
  std::size_t process(const float* input, std::size_t count, std::vector<float>& output);

  void reset();

  double ratio() const { return config_.output_rate / config_.input_rate; }

 private:
  float tap(double phase, int index) const;

  ResamplerConfig config_;
  std::vector<float> history_;
  double position_ = 0.0;
};

inline Resampler::Resampler(const ResamplerConfig& config) : config_(config) {
  if (config.input_rate <= 0 || config.output_rate <= 0) {
    throw std::invalid_argument("sample rates must be positive");
  }
  if (config.taps < 2 || config.taps % 2 != 0) {
    throw std::invalid_argument("taps must be an even number >= 2");
  }
  history_.assign(static_cast<std::size_t>(config.taps), 0.0f);
}

inline void Resampler::reset() {
  std::fill(history_.begin(), history_.end(), 0.0f);
  position_ = 0.0;
}

inline float Resampler::tap(double phase, int index) const {
  const double x = (index - config_.taps / 2 + 1) - phase;
  const double cutoff = std::min(1.0, ratio()) * config_.cutoff;
  double sinc = 1.0;
  if (std::abs(x) > 1e-9) {
    sinc = std::sin(M_PI * x * cutoff) / (M_PI * x * cutoff);
  }
  // Blackman window over the taps.
  const double n = static_cast<double>(index) / (config_.taps - 1);
  const double window = 0.42 - 0.5 * std::cos(2 * M_PI * n) + 0.08 * std::cos(4 * M_PI * n);
  return static_cast<float>(sinc * window * cutoff);
}

inline std::size_t Resampler::process(const float* input, std::size_t count,
                                      std::vector<float>& output) {
  const double step = 1.0 / ratio();
  std::size_t produced = 0;
  for (std::size_t i = 0; i < count; ++i) {
    history_.erase(history_.begin());
    history_.push_back(input[i]);
    while (position_ < 1.0) {
      float sample = 0.0f;
      for (int t = 0; t < config_.taps; ++t) {
        sample += history_[static_cast<std::size_t>(t)] * tap(position_, t);
      }
      output.push_back(sample);
      ++produced;
      position_ += step;
    }
    position_ -= 1.0;
  }
  return produced;
}

}  // namespace audio
