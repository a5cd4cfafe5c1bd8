// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <tensordiag/assertions/runtime.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tdiag::test {

/// Every test starts with a fresh, quiet runtime and leaves nothing pending.
class AssertionsFixture : public ::testing::Test {
protected:
  void SetUp() override { reset(); }
  void TearDown() override {
    assertions::set_failure_handler({});
    (void)take_failures();
  }
  static void reset(assertions::runtime_config config = quiet()) {
    assertions::set_failure_handler({});
    (void)take_failures();
    assertions::configure(config);
  }
  static assertions::runtime_config quiet() {
    assertions::runtime_config c;
    c.print = false;
    return c;
  }
};

inline const field_value& field_of(const diagnostic& d, std::string_view name) {
  const field_value* v = d.find_field(name);
  if (v == nullptr)
    throw std::runtime_error("no field " + std::string(name) + " in: " + d.message);
  return *v;
}
inline std::int64_t int_field(const diagnostic& d, std::string_view name) {
  return std::get<std::int64_t>(field_of(d, name).value);
}
inline std::string string_field(const diagnostic& d, std::string_view name) {
  return std::get<std::string>(field_of(d, name).value);
}
inline field_value triple(std::int64_t x, std::int64_t y, std::int64_t z) {
  return field_value(field_value::list{field_value(static_cast<long long>(x)),
                                       field_value(static_cast<long long>(y)),
                                       field_value(static_cast<long long>(z))});
}

/// What barrier_kernel (test_kernels.h) must leave in `out` when thread `victim` stopped before
/// its first barrier: every other thread read its neighbour's shared value and added one.
inline void expect_barrier_output(const std::vector<int>& out, unsigned victim) {
  for (unsigned t = 0; t < out.size(); ++t) {
    if (t == victim)
      continue;
    const unsigned other = (t + 1) % static_cast<unsigned>(out.size());
    EXPECT_EQ(out[t], other == victim ? 0 : static_cast<int>(other) * 2 + 1)
        << "thread " << t << ", victim " << victim;
  }
}

} // namespace tdiag::test
