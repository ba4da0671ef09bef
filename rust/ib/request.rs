// SPDX-License-Identifier: GPL-2.0

//! The requests [`super::qp::Qp::post_atomic`] posts, from a per-QP pool:
//! no allocation and no DMA mapping per operation.
//!
//! A [`RequestPool`] hands out [`Request`]s from chunks of
//! [`CHUNK_SLOTS`] slots. A slot holds a request's `ib_cqe` and the
//! caller's state; its reply buffer is one of the chunk's, each in a DMA
//! cache line of its own (128 bytes: every architecture's
//! `ARCH_DMA_MINALIGN`), so that the CPU reading one reply never touches
//! the line of another the device may be writing, even where syncing for
//! the CPU invalidates nothing. The chunk's replies are mapped once
//! (`DMA_FROM_DEVICE`) when the chunk is made and unmapped when the pool
//! goes; around each use a reply is synced, to the device before its work
//! request is posted and back to the CPU at its completion. The CPU never
//! writes them.
//!
//! A pool starts with one chunk and grows by one when a request is taken
//! with none free, with the taker's allocation flags; chunks stay until the
//! pool goes. The taker's flags are a [`Gfp`], the `gfp_t` a ULP passed
//! as it passed it. So a QP allocates once per [`CHUNK_SLOTS`] of its peak of
//! operations pending at once, never per operation. A slot goes back to
//! the free list when its request is dropped or turned back into the
//! caller's state, before the caller's completion code runs: a ULP that
//! posts again from its `done` reuses the slot it just left.
//!
//! Every taken slot holds a reference to its pool, so a pool outlives its
//! requests whatever the caller's state holds.
//!
//! The counters [`stats`] reads serve the tests (debugfs `request_pool`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//! (`ib_dma_map_single`, `ib_dma_sync_single_for_cpu`/`_for_device`).

use super::bindings;
use crate::ib::sync::IrqSpinLock;
use core::{
    cell::UnsafeCell,
    mem::{align_of, offset_of, size_of, ManuallyDrop, MaybeUninit},
    ptr::{addr_of_mut, NonNull},
    sync::atomic::{AtomicU64, Ordering},
};
use kernel::{error::to_result, prelude::*, sync::Arc, types::Opaque};

/// A caller's allocation flags, the `gfp_t` it passed, bits it alone
/// knows included (`__GFP_NOWARN`, `__GFP_NORETRY`, `__GFP_ACCOUNT`): the
/// kernel crate's `alloc::Flags` names a few masks and cannot be made from
/// a `gfp_t`, so a pool's chunks are allocated through a C helper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gfp(bindings::gfp_t);

impl Gfp {
    /// `GFP_KERNEL`.
    pub const KERNEL: Gfp = Gfp(kernel::bindings::GFP_KERNEL);

    /// The flags a caller passed.
    pub fn from_raw(gfp: bindings::gfp_t) -> Self {
        Self(gfp)
    }

    /// Whether an allocation with these flags may sleep
    /// (`gfpflags_allow_blocking`): the caller is in process context.
    pub fn can_sleep(self) -> bool {
        // SAFETY: A test of bits.
        unsafe { bindings::mlx_ext_ib_gfp_can_sleep(self.0) }
    }
}

/// The slots of one chunk.
pub const CHUNK_SLOTS: usize = 8;

/// One reply buffer, in a DMA cache line of its own (128 bytes covers every
/// architecture's `ARCH_DMA_MINALIGN`; kmalloc aligns a chunk to it, since
/// it divides the chunk's size, and `mlx_ext_ib_alloc_chunk` checks it).
#[repr(C, align(128))]
struct ReplyLine(UnsafeCell<u64>);

/// The reply buffers of a chunk.
type Replies = [ReplyLine; CHUNK_SLOTS];

/// A chunk of a pool: its replies first, in lines no other field shares.
#[repr(C)]
struct Chunk<T: Handler> {
    replies: Replies,
    /// The DMA address of `replies`.
    dma: u64,
    /// The pool's next chunk.
    next: *mut Chunk<T>,
    slots: [Slot<T>; CHUNK_SLOTS],
}

/// One request's place in a chunk.
struct Slot<T: Handler> {
    /// Its `done` is [`done_callback::<T>`], set when the chunk is made.
    cqe: Opaque<bindings::ib_cqe>,
    chunk: *mut Chunk<T>,
    /// Its reply is `replies[index]` of its chunk.
    index: usize,
    /// While taken, the pool (which the request keeps alive); `None` while
    /// free.
    pool: Option<Arc<PoolInner<T>>>,
    /// While free, the next free slot.
    next_free: *mut Slot<T>,
    /// While taken, the caller's state.
    data: MaybeUninit<T>,
}

/// The bytes of a chunk of `RequestPool<T>`: a caller keeps it within a
/// page with a compile-time assertion (so that a growth from softirq with
/// `GFP_ATOMIC` asks kmalloc for no more than kmalloc-4k's objects).
pub const fn chunk_bytes<T: Handler>() -> usize {
    size_of::<Chunk<T>>()
}

/// A pool's free slots and its chunks.
struct Lists<T: Handler> {
    free: *mut Slot<T>,
    chunks: *mut Chunk<T>,
}

// SAFETY: The lists are only reached under the pool's lock; the slots and
// chunks they point to are the pool's, and a slot's `T` is `Send`.
unsafe impl<T: Handler> Send for Lists<T> {}

impl<T: Handler> Lists<T> {
    /// Takes the first free slot, if any.
    fn pop_free(&mut self) -> Option<NonNull<Slot<T>>> {
        let head = NonNull::new(self.free)?;
        // SAFETY: A free slot of a live chunk, linked under the pool's lock.
        self.free = unsafe { (*head.as_ptr()).next_free };
        Some(head)
    }

    /// Puts `slot` at the head of the free list.
    ///
    /// # Safety
    ///
    /// `slot` is a slot of one of the pool's chunks that nothing uses.
    unsafe fn push_free(&mut self, slot: NonNull<Slot<T>>) {
        // SAFETY: The caller's contract.
        unsafe { (*slot.as_ptr()).next_free = self.free };
        self.free = slot.as_ptr();
    }
}

/// Unmaps the replies of `chunk` on `dev` and frees it.
///
/// # Safety
///
/// `chunk` was made by [`PoolInner::grow`] and mapped on `dev`, and nothing
/// refers to it or its slots any more. Its fields need no drop: a free
/// slot's `pool` is `None` and its `data` uninitialised.
unsafe fn free_chunk<T: Handler>(dev: *mut bindings::ib_device, chunk: *mut Chunk<T>) {
    // SAFETY: The caller's contract.
    unsafe {
        bindings::mlx_ext_ib_dma_unmap_replies(dev, (*chunk).dma, size_of::<Replies>());
        bindings::mlx_ext_ib_free_chunk(chunk.cast());
    }
}

#[pin_data(PinnedDrop)]
struct PoolInner<T: Handler> {
    /// The device the replies are mapped for; it outlives its QPs' pools.
    dev: *mut bindings::ib_device,
    #[pin]
    lists: IrqSpinLock<Lists<T>>,
}

// SAFETY: `dev` is used for DMA calls only, which may come from any
// thread; the rest is under the lock.
unsafe impl<T: Handler> Send for PoolInner<T> {}
// SAFETY: As above.
unsafe impl<T: Handler> Sync for PoolInner<T> {}

/// Chunks made, chunks freed, requests taken and work requests posted,
/// since the module loaded.
static CHUNKS_MADE: AtomicU64 = AtomicU64::new(0);
static CHUNKS_FREED: AtomicU64 = AtomicU64::new(0);
static TAKEN: AtomicU64 = AtomicU64::new(0);
static POSTED: AtomicU64 = AtomicU64::new(0);

/// What every pool did since the module loaded.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    /// Chunks allocated (and mapped).
    pub chunks_made: u64,
    /// Chunks still allocated.
    pub chunks_live: u64,
    /// Requests taken.
    pub taken: u64,
    /// Work requests posted (a request may be posted more than once: an
    /// emulation's compare-and-swaps).
    pub posted: u64,
}

/// The counters of every pool.
pub fn stats() -> Stats {
    let made = CHUNKS_MADE.load(Ordering::Relaxed);
    Stats {
        chunks_made: made,
        chunks_live: made.saturating_sub(CHUNKS_FREED.load(Ordering::Relaxed)),
        taken: TAKEN.load(Ordering::Relaxed),
        posted: POSTED.load(Ordering::Relaxed),
    }
}

/// Counts a work request the driver accepted.
pub(super) fn count_posted() {
    POSTED.fetch_add(1, Ordering::Relaxed);
}

impl<T: Handler> PoolInner<T> {
    /// Allocates, maps and links a chunk; returns its first slot and links
    /// the others as a list (for the free list).
    fn grow(&self, gfp: Gfp) -> Result<NonNull<Slot<T>>> {
        // SAFETY: kmalloc, with the alignment of `Chunk<T>` (128), which
        // divides its size as every type's alignment divides its size.
        let chunk = unsafe {
            bindings::mlx_ext_ib_alloc_chunk(size_of::<Chunk<T>>(), align_of::<Chunk<T>>(), gfp.0)
        }
        .cast::<Chunk<T>>();
        if chunk.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: `chunk` is valid for writes (just allocated); every field
        // is written before it is read, through raw pointers.
        unsafe {
            addr_of_mut!((*chunk).next).write(core::ptr::null_mut());
            for i in 0..CHUNK_SLOTS {
                addr_of_mut!((*chunk).replies[i]).write(ReplyLine(UnsafeCell::new(0)));
                let slot = addr_of_mut!((*chunk).slots[i]);
                // `Opaque` is `repr(transparent)`.
                let cqe = addr_of_mut!((*slot).cqe).cast::<bindings::ib_cqe>();
                cqe.write(bindings::ib_cqe {
                    done: Some(done_callback::<T>),
                });
                addr_of_mut!((*slot).chunk).write(chunk);
                addr_of_mut!((*slot).index).write(i);
                addr_of_mut!((*slot).pool).write(None);
                let next = if i + 1 < CHUNK_SLOTS {
                    addr_of_mut!((*chunk).slots[i + 1])
                } else {
                    core::ptr::null_mut()
                };
                addr_of_mut!((*slot).next_free).write(next);
            }
        }
        let mut dma = 0u64;
        // SAFETY: `replies` is `size_of::<Replies>()` bytes in lines of their
        // own, alive until the pool unmaps and frees the chunk.
        let mapped = to_result(unsafe {
            bindings::mlx_ext_ib_dma_map_replies(
                self.dev,
                addr_of_mut!((*chunk).replies).cast(),
                size_of::<Replies>(),
                &mut dma,
            )
        });
        if let Err(e) = mapped {
            // SAFETY: Allocated above, never mapped nor linked.
            unsafe { bindings::mlx_ext_ib_free_chunk(chunk.cast()) };
            return Err(e);
        }
        // SAFETY: As above; the last field.
        unsafe { addr_of_mut!((*chunk).dma).write(dma) };
        let mut lists = self.lists.lock();
        if let Some(freed) = lists.pop_free() {
            // A slot came back (or another taker grew the pool) meanwhile:
            // take it, and give the new chunk back, so that the pool holds
            // no more chunks than its peak of requests needs.
            drop(lists);
            // SAFETY: `chunk` was mapped above on `dev` and never linked.
            unsafe { free_chunk(self.dev, chunk) };
            return Ok(freed);
        }
        CHUNKS_MADE.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `chunk` is valid; its first slot is free.
        let first = unsafe { addr_of_mut!((*chunk).slots[0]) };
        // SAFETY: `chunk` is ours until linked here.
        unsafe { (*chunk).next = lists.chunks };
        lists.chunks = chunk;
        // SAFETY: The slots of `chunk` after the first are free and linked
        // among themselves; the last one is linked to the old free list.
        unsafe {
            let last = addr_of_mut!((*chunk).slots[CHUNK_SLOTS - 1]);
            (*last).next_free = lists.free;
            lists.free = (*first).next_free;
            (*first).next_free = core::ptr::null_mut();
        }
        // SAFETY: A slot of a live chunk.
        Ok(unsafe { NonNull::new_unchecked(first) })
    }

    /// A free slot, growing the pool if none is.
    fn take(&self, gfp: Gfp) -> Result<NonNull<Slot<T>>> {
        let slot = self.lists.lock().pop_free();
        match slot {
            Some(s) => Ok(s),
            None => self.grow(gfp),
        }
    }
}

#[pinned_drop]
impl<T: Handler> PinnedDrop for PoolInner<T> {
    fn drop(self: Pin<&mut Self>) {
        // Every taken slot holds a reference: every slot is free.
        let mut chunk = self.lists.lock().chunks;
        while !chunk.is_null() {
            // SAFETY: A chunk this pool made and mapped on `dev`; no slot of
            // it is taken, so nothing refers to it.
            let next = unsafe {
                let next = (*chunk).next;
                free_chunk(self.dev, chunk);
                next
            };
            CHUNKS_FREED.fetch_add(1, Ordering::Relaxed);
            chunk = next;
        }
    }
}

/// The requests of one QP (see the module comment).
pub struct RequestPool<T: Handler>(Arc<PoolInner<T>>);

impl<T: Handler> RequestPool<T> {
    /// A pool for requests posted on QPs of `dev`, with one chunk. Process
    /// context.
    ///
    /// # Safety
    ///
    /// `dev` is a registered device that outlives the pool and its
    /// requests (which the QPs they are posted on guarantee).
    pub(super) unsafe fn new(dev: *mut bindings::ib_device) -> Result<Self> {
        let inner = Arc::pin_init(
            pin_init!(PoolInner {
                dev,
                lists <- crate::new_irq_spinlock!(
                    Lists {
                        free: core::ptr::null_mut(),
                        chunks: core::ptr::null_mut(),
                    },
                    "mlx_ext::RequestPool"
                ),
            }),
            GFP_KERNEL,
        )?;
        let first = inner.grow(Gfp::KERNEL)?;
        // SAFETY: `first` was just handed out and nothing uses it.
        unsafe { inner.lists.lock().push_free(first) };
        Ok(Self(inner))
    }

    /// A request holding `data`: a free slot, or one of a new chunk
    /// allocated with `gfp` when none is free.
    pub fn take(&self, data: T, gfp: Gfp) -> Result<Request<T>> {
        let slot = self.0.take(gfp)?;
        // SAFETY: The slot is free, so ours: its pool and data are unset.
        unsafe {
            let s = slot.as_ptr();
            (*s).pool = Some(self.0.clone());
            (*s).data.write(data);
        }
        TAKEN.fetch_add(1, Ordering::Relaxed);
        Ok(Request(slot))
    }
}

/// A work request's own state while it is posted: its `ib_cqe`, its reply
/// buffer, and the caller's `T`. Goes back to its pool when dropped.
///
/// # Invariants
///
/// `self.0` is a taken slot: its `pool` is `Some` and its `data`
/// initialised; it belongs to this request alone.
pub struct Request<T: Handler>(NonNull<Slot<T>>);

// SAFETY: A request owns its slot and `T: Send`; the slot's pool is
// `Send + Sync`.
unsafe impl<T: Handler> Send for Request<T> {}

impl<T: Handler> Request<T> {
    /// The caller's state.
    pub fn data(&self) -> &T {
        // SAFETY: Initialised (the type's invariant).
        unsafe { (*self.0.as_ptr()).data.assume_init_ref() }
    }

    /// The caller's state, mutably.
    pub fn data_mut(&mut self) -> &mut T {
        // SAFETY: As above, and ours alone.
        unsafe { (*self.0.as_ptr()).data.assume_init_mut() }
    }

    /// Frees the request, returning the caller's state.
    pub fn into_data(self) -> T {
        let this = ManuallyDrop::new(self);
        // SAFETY: Initialised; the slot is released without dropping it.
        let data = unsafe { (*this.0.as_ptr()).data.assume_init_read() };
        // SAFETY: The data was moved out; the slot is released once.
        unsafe { release(this.0) };
        data
    }

    /// The request's `ib_cqe`, to post with.
    pub(super) fn cqe(&self) -> *mut bindings::ib_cqe {
        // SAFETY: The slot is valid (the type's invariant). `Opaque` is
        // `repr(transparent)`.
        unsafe { addr_of_mut!((*self.0.as_ptr()).cqe) }.cast()
    }

    /// The device its reply is mapped on, and its reply's DMA address.
    pub(super) fn reply_dma(&self) -> (*mut bindings::ib_device, u64) {
        // SAFETY: The slot is taken (its pool is set) in a live chunk.
        unsafe {
            let s = self.0.as_ptr();
            let dev = (*s).pool.as_ref().map_or(core::ptr::null_mut(), |p| p.dev);
            (
                dev,
                (*(*s).chunk).dma + ((*s).index * size_of::<ReplyLine>()) as u64,
            )
        }
    }

    /// Gives up the request for a post: [`Request::from_posted`] takes it
    /// back.
    pub(super) fn into_posted(self) -> *mut bindings::ib_cqe {
        let cqe = self.cqe();
        core::mem::forget(self);
        cqe
    }

    /// The request whose [`Request::cqe`] `cqe` is, given up by
    /// [`Request::into_posted`].
    ///
    /// # Safety
    ///
    /// `cqe` came from `into_posted` of a `Request<T>`, and this is the only
    /// call that takes it back.
    pub(super) unsafe fn from_posted(cqe: *mut bindings::ib_cqe) -> Self {
        // SAFETY: `cqe` is the `cqe` field of a taken slot (the caller's
        // contract).
        let slot = unsafe { cqe.cast::<u8>().sub(offset_of!(Slot<T>, cqe)) }.cast::<Slot<T>>();
        // SAFETY: Not null: derived from a valid pointer.
        Request(unsafe { NonNull::new_unchecked(slot) })
    }
}

impl<T: Handler> Drop for Request<T> {
    fn drop(&mut self) {
        // SAFETY: Initialised (the type's invariant); dropped once.
        unsafe { (*self.0.as_ptr()).data.assume_init_drop() };
        // SAFETY: The data is gone; the slot is released once.
        unsafe { release(self.0) };
    }
}

/// Puts `slot` back on its pool's free list, then lets go of the pool.
///
/// # Safety
///
/// `slot` is taken, its data already moved out or dropped, and nothing
/// uses it afterwards.
unsafe fn release<T: Handler>(slot: NonNull<Slot<T>>) {
    let s = slot.as_ptr();
    // SAFETY: A taken slot has its pool (the caller's contract).
    let Some(pool) = (unsafe { (*s).pool.take() }) else {
        return;
    };
    // SAFETY: The slot is ours, and unused from now on.
    unsafe { pool.lists.lock().push_free(slot) };
    // The last reference frees the chunks, this one's included: the slot
    // is no longer used.
    drop(pool);
}

/// The outcome of a posted work request.
#[derive(Clone, Copy)]
pub struct Completion {
    /// `enum ib_wc_status`.
    pub status: u32,
    /// The reply buffer as the adapter left it (on success; 0 otherwise).
    pub raw_reply: u64,
}

/// What happens when a [`Request`] completes.
pub trait Handler: Sized + Send + 'static {
    /// Called once per posted request, from the send CQ's context (softirq
    /// or work item): may post again, may not sleep.
    fn done(req: Request<Self>, completion: Completion);
}

/// `ib_cqe.done` of every request of a `RequestPool<T>`.
///
/// # Safety
///
/// Called by ib_core's CQ code only, with a work completion whose `wr_cqe`
/// is the `cqe` of a `Request<T>` given up by [`Request::into_posted`].
unsafe extern "C" fn done_callback<T: Handler>(
    _cq: *mut bindings::ib_cq,
    wc: *mut bindings::ib_wc,
) {
    // SAFETY: ib_core passes a valid work completion.
    let wc = unsafe { &*wc };
    // SAFETY: Every completion of a signalled send work request carries the
    // `wr_cqe` it was posted with (`wr_id` is the other member of the union).
    let cqe = unsafe { wc.__bindgen_anon_1.wr_cqe };
    // SAFETY: Posted once, completed once: ours again.
    let req = unsafe { Request::<T>::from_posted(cqe) };
    let raw_reply = if wc.status == bindings::ib_wc_status_IB_WC_SUCCESS {
        let (dev, dma) = req.reply_dma();
        // SAFETY: The reply is mapped on `dev`; the adapter is done with it
        // (the work request completed).
        unsafe { bindings::mlx_ext_ib_dma_sync_reply(dev, dma, true) };
        // SAFETY: The slot's reply, in its live chunk, synced for the CPU.
        // Volatile: the adapter wrote it behind the compiler.
        unsafe {
            let s = req.0.as_ptr();
            core::ptr::read_volatile((*(*s).chunk).replies[(*s).index].0.get())
        }
    } else {
        0
    };
    T::done(
        req,
        Completion {
            status: wc.status,
            raw_reply,
        },
    );
}
