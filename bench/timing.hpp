// Wall-clock measurement: one timed call, and the median of repeated calls (the median
// ignores the occasional run disturbed by another process on a shared machine).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace fstitch::bench {

template <class F>
double seconds_of(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The median of the samples (the mean of the middle two for an even count); 0 when empty.
inline double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t mid = samples.size() / 2;
  return samples.size() % 2 == 1 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
}

template <class F>
double median_seconds(int runs, F&& f) {
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) samples.push_back(seconds_of(f));
  return median(std::move(samples));
}

}  // namespace fstitch::bench
