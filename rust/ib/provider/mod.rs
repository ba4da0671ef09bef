// SPDX-License-Identifier: GPL-2.0

//! The provider side of ib_core, for a software RDMA device (the
//! simulator): the bus its adapters sit on, the driver that registers
//! their `ib_device`s, and the work queues its data path runs on.

pub mod bus;
pub mod driver;
pub mod wq;
