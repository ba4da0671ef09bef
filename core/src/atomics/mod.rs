// SPDX-License-Identifier: GPL-2.0

//! Masked atomics arithmetic (placeholder until issue 3 lands).
