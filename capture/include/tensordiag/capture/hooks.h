/* SPDX-FileCopyrightText: 2026 tensordiag contributors
 * SPDX-License-Identifier: Apache-2.0
 *
 * The C entry points other tensordiag runtimes call without linking libtdiag_capture.so: they
 * look them up with dlsym(RTLD_DEFAULT, "tdiag_capture_record_launch") and call them when
 * found. The capture library makes its symbols global when the driver injects it (the driver
 * dlopens it RTLD_LOCAL), so the lookup also succeeds under CUDA_INJECTION64_PATH.
 * Dependency-free C; every function is a cheap no-op when no capture session is running. */
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A registered kernel launch, just before the launch call: `launch_id` is attached to the
 *  kernel record of the next kernel this thread launches. */
typedef void (*tdiag_capture_record_launch_fn)(uint64_t launch_id, const char* kernel_name);
/** A failed device assertion (site "file.cu:42: i < n", message may be NULL). */
typedef void (*tdiag_capture_record_assertion_fn)(uint64_t launch_id, int32_t device,
                                                  uint64_t stream, const char* site,
                                                  const char* message, const uint32_t block[3],
                                                  const uint32_t thread[3]);

__attribute__((visibility("default"))) void tdiag_capture_record_launch(uint64_t launch_id,
                                                                        const char* kernel_name);
__attribute__((visibility("default"))) void
tdiag_capture_record_assertion(uint64_t launch_id, int32_t device, uint64_t stream,
                               const char* site, const char* message, const uint32_t block[3],
                               const uint32_t thread[3]);

#ifdef __cplusplus
} /* extern "C" */
#endif
