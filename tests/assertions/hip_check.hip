// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The test kernels compiled by hipcc for gfx90a and gfx1030 (compile check; no AMD GPU here).
#include "test_kernels.h"
