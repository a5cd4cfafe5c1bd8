// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The same program for CUDA GPUs: main.cpp compiled by nvcc, so the kernel header is compiled for
// the device and tdiag::launch picks the CUDA back-end when a GPU is present.
#include "main.cpp"
