// SPDX-License-Identifier: GPL-2.0

//! A spinlock that disables interrupts while held, which the 6.12 kernel
//! crate lacks: for data that verbs may touch from any context (posting and
//! polling may happen in softirq or hardirq context, as ib_core's
//! `IB_POLL_SOFTIRQ` CQs do).
//!
//! Unlike `spin_lock_irqsave`/`spin_unlock_irqrestore` pairs, its guards
//! may be dropped in any order: interrupts go off with the first such lock
//! a CPU takes and come back with the last one it releases (a per-CPU depth,
//! `rust/helpers/ib.c`). With the irqsave pair, dropping an outer guard
//! before an inner one would turn interrupts on while the inner lock is
//! held, and an interrupt taking it on that CPU would spin forever.
//!
//! C header: [`include/linux/spinlock.h`](srctree/include/linux/spinlock.h).

use super::bindings;
use kernel::{
    prelude::*,
    sync::lock::{Backend, Lock},
    types::Opaque,
};

/// A spinlock taken with interrupts disabled.
pub type IrqSpinLock<T> = Lock<T, IrqSpinLockBackend>;

/// Makes an [`IrqSpinLock`] initialiser with a static lock class.
#[macro_export]
macro_rules! new_irq_spinlock {
    ($inner:expr, $name:literal $(,)?) => {
        $crate::ib::sync::IrqSpinLock::new(
            $inner,
            ::kernel::c_str!($name),
            ::kernel::static_lock_class!(),
        )
    };
}

/// The backend of [`IrqSpinLock`].
pub struct IrqSpinLockBackend;

// SAFETY: `lock` and `unlock` take and release the spinlock that `init` set
// up, with interrupts disabled in between: only one owner at a time.
unsafe impl Backend for IrqSpinLockBackend {
    type State = kernel::bindings::spinlock_t;
    type GuardState = ();

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut kernel::bindings::lock_class_key,
    ) {
        // SAFETY: Per the trait's contract, `ptr` is valid for writes and
        // `name` and `key` live forever.
        unsafe { kernel::bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: Initialised (the trait's contract); the two crates'
        // bindings name the same C type.
        unsafe { bindings::mlx_ext_spin_lock_irq_nested(ptr.cast()) }
    }

    unsafe fn unlock(ptr: *mut Self::State, (): &Self::GuardState) {
        // SAFETY: The caller owns the lock, taken by `lock` (the guard is
        // `!Send`: on this task, and with interrupts off, on this CPU).
        unsafe { bindings::mlx_ext_spin_unlock_irq_nested(ptr.cast()) }
    }

    crate::lock_backend_compat! {
        try_lock: bindings::mlx_ext_spin_trylock_irq_nested,
        assert_is_held: bindings::mlx_ext_spin_assert_held,
    }
}

/// Whether interrupts are disabled on this CPU (`irqs_disabled`).
pub fn irqs_disabled() -> bool {
    // SAFETY: Reads the CPU's interrupt flag.
    unsafe { bindings::mlx_ext_irqs_disabled() }
}

/// An RCU read-side critical section (`rcu_read_lock`), ended on drop.
/// Nothing may sleep while it lives. Not `Send`: it ends on the CPU and
/// task that began it.
pub struct RcuReadGuard(core::marker::PhantomData<*mut ()>);

/// Begins an RCU read-side critical section (the 6.12 kernel crate has no
/// RCU abstraction).
pub fn rcu_read_lock() -> RcuReadGuard {
    // SAFETY: Pairs with the `rcu_read_unlock` of the guard's drop.
    unsafe { bindings::mlx_ext_rcu_read_lock() };
    RcuReadGuard(core::marker::PhantomData)
}

impl Drop for RcuReadGuard {
    fn drop(&mut self) {
        // SAFETY: Begun by `rcu_read_lock`, on this task (`!Send`).
        unsafe { bindings::mlx_ext_rcu_read_unlock() };
    }
}

/// Waits until every RCU read-side critical section begun before the call
/// has ended. Sleeps.
pub fn synchronize_rcu() {
    // SAFETY: A plain C call, from process context (the callers').
    unsafe { bindings::synchronize_rcu() };
}

/// An event that, once signalled, stays signalled (`struct completion`
/// with `complete_all`): any context may signal it, process context waits
/// for it. The 6.12 kernel crate has no completion.
#[pin_data]
pub struct Event {
    #[pin]
    inner: Opaque<bindings::completion>,
}

// SAFETY: A completion is made to be signalled and waited for from any
// thread; its wait queue has its own lock.
unsafe impl Send for Event {}
// SAFETY: As above.
unsafe impl Sync for Event {}

impl Event {
    /// An event not signalled yet.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `init_completion` initialises the memory it is given.
            inner <- Opaque::ffi_init(|p| unsafe { bindings::mlx_ext_init_completion(p) }),
        })
    }

    /// Signals the event: every waiter, present and future, goes on. Any
    /// context.
    pub fn signal(&self) {
        // SAFETY: Initialised by `new`.
        unsafe { bindings::complete_all(self.inner.get()) };
    }

    /// Waits at most `ms` milliseconds for the event; whether it was
    /// signalled. Sleeps.
    pub fn wait_ms(&self, ms: u32) -> bool {
        // SAFETY: Initialised by `new`; the caller is in process context
        // (sleeping is the point).
        unsafe { bindings::mlx_ext_wait_for_completion_ms(self.inner.get(), ms) }
    }
}
