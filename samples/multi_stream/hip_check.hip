// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The sample's kernel source compiled by hipcc (gfx90a, gfx1030): the same header as main.cpp.
#include "scale_kernel.h"
