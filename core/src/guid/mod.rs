// SPDX-License-Identifier: GPL-2.0

//! The VF GUID engine (placeholder until issue 4 lands).
