// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A custom back-end registered from outside the library: a pretend accelerator with its own name
// and limits, built on the CPU back-end. No library code knows about it.
#include <tensordiag/assertions/cpu_backend.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/core/backend.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "test_kernels.h"
#include "test_support.h"

namespace {

class pretend_accelerator final : public tdiag::backend {
public:
  pretend_accelerator() : inner_(options()) {}
  std::atomic<int> launches{0};

private:
  static tdiag::assertions::cpu_backend_options options() {
    tdiag::assertions::cpu_backend_options o;
    o.name = "pretend-inner";
    o.device_count = 2;
    o.properties.name = "Pretend Accelerator 9000";
    o.properties.max_threads_per_block = 256;
    return o;
  }
  std::string_view do_name() const noexcept override { return "pretend"; }
  int do_device_count() const override { return inner_.device_count(); }
  int do_current_device() const override { return 1; }
  tdiag::device_properties do_properties(int d) const override { return inner_.properties(d); }
  tdiag::mapped_buffer do_allocate_failure_buffer(int d, std::size_t n) override {
    return inner_.allocate_failure_buffer(d, n);
  }
  void do_free_failure_buffer(int d, const tdiag::mapped_buffer& b) override {
    inner_.free_failure_buffer(d, b);
  }
  void do_bind_failure_buffer(int d, const tdiag::mapped_buffer& b) override {
    inner_.bind_failure_buffer(d, b);
  }
  void do_read_device_memory(int d, const void* s, void* t, std::size_t n) const override {
    inner_.read_device_memory(d, s, t, n);
  }
  void do_write_device_memory(int d, void* t, const void* s, std::size_t n) override {
    inner_.write_device_memory(d, t, s, n);
  }
  tdiag::launch_status do_launch(const tdiag::launch_request& r) override {
    ++launches;
    return inner_.launch(r);
  }
  void do_synchronize(int d, tdiag::stream_handle s) override { inner_.synchronize(d, s); }
  tdiag::stream_handle do_create_stream(int d) override { return inner_.create_stream(d); }
  void do_destroy_stream(int d, tdiag::stream_handle s) override { inner_.destroy_stream(d, s); }

  tdiag::assertions::cpu_backend inner_;
};

} // namespace

class Backend : public tdiag::test::AssertionsFixture {
protected:
  void TearDown() override {
    tdiag::set_active_backend("");
    AssertionsFixture::TearDown();
  }
};

TEST_F(Backend, CustomBackendRunsFailsAndReportsUnderItsName) {
  auto pretend = std::make_shared<pretend_accelerator>();
  tdiag::register_backend(pretend, -200);
  tdiag::set_active_backend("pretend");
  EXPECT_EQ(tdiag::select_backend().get(), pretend.get());

  TDIAG_LAUNCH(always_fail_kernel, 2, 4, 0, nullptr);
  EXPECT_EQ(pretend->launches.load(), 1);
  auto r = tdiag::take_failures();
  ASSERT_TRUE(r.has_value());
  const auto& d = r->diagnostics.at(0);
  EXPECT_EQ(tdiag::test::string_field(d, "backend"), "pretend");
  EXPECT_EQ(tdiag::test::string_field(d, "device_name"), "Pretend Accelerator 9000");
  EXPECT_EQ(tdiag::test::int_field(d, "device"), 1);
  EXPECT_EQ(tdiag::test::int_field(d, "site_failures"), 8);
  EXPECT_THAT(d.message, ::testing::HasSubstr("on device 1"));

  // Its own limits apply: 512 threads are too many for it, fine for the CPU back-end.
  EXPECT_THROW(tdiag::launch(always_fail_kernel, 1, 512)(), tdiag::error);
  tdiag::set_active_backend("cpu");
  tdiag::launch(every_thread_fails_kernel, 1, 512)(512);
  EXPECT_FALSE(tdiag::take_failures().has_value());
}

TEST_F(Backend, UnknownBackendNamesAreRejected) {
  EXPECT_THROW(tdiag::set_active_backend("no-such-backend"), tdiag::error);
}
