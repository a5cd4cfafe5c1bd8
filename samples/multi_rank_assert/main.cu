// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The same program for CUDA GPUs (rank r on GPU r mod the number of GPUs).
#include "main.cpp"
