// SPDX-License-Identifier: GPL-2.0

//! The VF GUID tables (SPEC section 4, `Documentation/vf-guids.rst`): the
//! `iov` tree of a device whose ports get one, and behind each such port the
//! pure engine of `core/src/guid/`, driven by a delayed work item and
//! talking to the subnet manager through ib_sa.
//!
//! Per port, one [`PortGuids`] holds the engine behind a mutex, held across
//! the engine's `run()` and the SA calls it makes (see the locking section
//! of the documentation). Its users: the work item (which runs the engine,
//! takes the SA's answers and tells watchers of events), sysfs reads and
//! writes, and the device's port events. The SA's answers do not take the
//! mutex: they arrive on ib_mad's workers, shared by every MAD user of the
//! port, which must not wait for a submission sleeping in the allocator;
//! they are left in a mailbox for the work item. Teardown first deletes
//! the table's GUIDs at the SM (the engine's `retire`, waited for at most
//! [`RETIRE_WAIT_MS`]), then stops the users in that order: events, sysfs,
//! then the port itself (no new work, the outstanding query cancelled, the
//! work item cancelled, every answer waited for).

use crate::new_irq_spinlock;
use crate::{
    caps::DRIVER_MLX4,
    guid::{
        can_switch_on, function_name, guid_model, on_by_default, parse_switch, parse_vport_guid,
        pci_vf_count, placement, switch_text, AdminGuid, Answer, AnswerStatus, Config, Engine,
        EntryIdx, Gid, GuidModel, Method, NoTree, Parent, PciVfs, PortFacts, Request, SmBackend,
        SubmitError, VfsChanging, VportGuid, PORT_GUIDS,
    },
    ib::{
        iov::{
            self, DelayedRun, DelayedWork, DeviceRef, EventHandler, GuidInfo, Kicker, PortEvent,
            PortEvents, QueryError, SaAnswer, SaQuery, VfGuid, VfWatch,
        },
        sync::IrqSpinLock,
        sysfs::{Dir, Notifier},
        Device, DeviceName, DirOps, File, ShowBuf, Sriov,
    },
};
use core::fmt::Write;
use kernel::{
    c_str, new_condvar, new_mutex,
    prelude::*,
    str::CString,
    sync::{
        lock::{Backend as LockBackend, Guard, Lock},
        Arc, CondVar, CondVarTimeoutResult, Mutex,
    },
};

/// The SA timeout of a GuidInfoRecord query (ib_sa resends every tenth of
/// it), as mlx4's alias GUID code uses.
const SA_TIMEOUT_MS: u32 = 1000;
/// How long a teardown waits for the answers of a port's queries. ib_sa
/// answers each within its timeout ([`SA_TIMEOUT_MS`]), a cancelled one at
/// once: only a stuck MAD layer takes longer.
const ANSWER_WAIT_MS: u32 = 10_000;
/// How often a teardown whose task has a signal pending looks again.
const SIGNALLED_POLL_MS: u32 = 10;
/// How long a table that goes waits for the SM to delete its GUIDs
/// ([`Engine::retire`]), for all the device's ports at once: a healthy SA
/// answers in milliseconds; an SA that fails gets the first try and one
/// more after its 1 s backoff.
const RETIRE_WAIT_MS: u32 = 2000;

/// How long after a port event the engine sends again: ib_sa makes the
/// port's SM address again after the same event, from ib_wq.
const SM_ADDRESS_DELAY_MS: u64 = 200;

/// Nanoseconds on the monotonic clock: the engine's time.
fn now_ns() -> u64 {
    crate::ib::ktime_get_ns()
}

/// What one port's engine and its SA queries share.
struct PortState {
    engine: KBox<Engine>,
    /// Set by teardown: nothing runs the engine or submits any more.
    dying: bool,
    /// The request the engine waits for, and its query.
    outstanding: Option<(Request, SaQuery)>,
    /// Each function's `guid_events` and `state` files, once the tree is
    /// made.
    notifiers: KVec<(Notifier, Notifier)>,
}

/// A function whose GUIDs changed, to tell watchers once the lock is
/// dropped.
struct Changed {
    function: u16,
    up: bool,
    count: u32,
    /// Its `guid_events` and `state` files.
    files: Option<(Notifier, Notifier)>,
}

/// What the SA's answers leave for the work item.
struct Mailbox {
    /// Queries submitted whose answer has not come (cancelled ones too).
    inflight: u32,
    /// The answer not taken yet with the newest tag. The request the engine
    /// waits for is always the newest one sent, so its answer is never
    /// pushed out by a stale one.
    answer: Option<(u64, Result<GuidInfo, QueryError>)>,
}

/// One port's VF GUID table.
#[pin_data]
pub struct PortGuids {
    dev: DeviceRef,
    /// The device's name, for messages.
    name: DeviceName,
    port: u32,
    kick: Kicker,
    #[pin]
    state: Mutex<PortState>,
    #[pin]
    mailbox: IrqSpinLock<Mailbox>,
    /// Signalled when the mailbox's `inflight` drops to 0.
    #[pin]
    idle: CondVar,
    /// Signalled by the work item when a retired engine has nothing left
    /// to do.
    #[pin]
    retired: CondVar,
}

/// The SA backend of one `run()`: the port's query state, borrowed under
/// the port's lock.
struct Backend<'a> {
    port: &'a Arc<PortGuids>,
    outstanding: &'a mut Option<(Request, SaQuery)>,
}

impl SmBackend for Backend<'_> {
    fn submit(&mut self, request: &Request) -> Result<(), SubmitError> {
        let p = self.port;
        let info = p.dev.port_info(p.port).map_err(|_| SubmitError::Failed)?;
        if !info.active {
            return Err(SubmitError::PortDown);
        }
        let lid = u16::try_from(info.lid).map_err(|_| SubmitError::Failed)?;
        let rec = GuidInfo {
            block: request.record.get(),
            guids: request.guids,
        };
        // Counted first: the answer may come before the call returns.
        p.mailbox.lock().inflight += 1;
        let query = iov::guid_info(
            &p.dev,
            p.port,
            lid,
            request.method == Method::Delete,
            &rec,
            request.mask,
            SA_TIMEOUT_MS,
            p.clone(),
            request.id.get(),
        )
        .inspect_err(|_| p.answered(None))
        .map_err(|_| SubmitError::Failed)?;
        *self.outstanding = Some((*request, query));
        Ok(())
    }

    fn cancel(&mut self, request: &Request) {
        if let Some((r, q)) = self.outstanding.take() {
            if r.id == request.id {
                // Its answer still comes, as EINTR: stale.
                q.cancel();
            } else {
                *self.outstanding = Some((r, q));
            }
        }
    }
}

impl PortGuids {
    fn new(dev: DeviceRef, name: &DeviceName, port: u32, config: Config) -> Result<Arc<Self>> {
        let mut engine = KBox::new(Engine::EMPTY, GFP_KERNEL)?;
        engine
            .reset(config)
            .map_err(|e| Error::from_errno(e.errno()))?;
        let kick = Kicker::new()?;
        Arc::pin_init(
            pin_init!(Self {
                dev,
                name: name.clone(),
                port,
                kick,
                state <- new_mutex!(
                    PortState {
                        engine,
                        dying: false,
                        outstanding: None,
                        notifiers: KVec::new(),
                    },
                    "mlx_ext::vf_guids::PortGuids::state"
                ),
                mailbox <- new_irq_spinlock!(
                    Mailbox {
                        inflight: 0,
                        answer: None,
                    },
                    "mlx_ext::vf_guids::PortGuids::mailbox"
                ),
                idle <- new_condvar!("mlx_ext::vf_guids::PortGuids::idle"),
                retired <- new_condvar!("mlx_ext::vf_guids::PortGuids::retired"),
            }),
            GFP_KERNEL,
        )
    }

    /// Runs the engine until it sleeps; returns when to run again, and adds
    /// to `wake` the functions whose GUIDs changed.
    fn run_locked(
        this: &Arc<Self>,
        s: &mut PortState,
        now: u64,
        wake: &mut KVec<Changed>,
    ) -> Option<u64> {
        if s.dying {
            return None;
        }
        let mail = this.mailbox.lock().answer.take();
        if let Some((tag, result)) = mail {
            Self::take_answer(s, tag, result, now);
        }
        let PortState {
            engine,
            outstanding,
            notifiers,
            ..
        } = s;
        let mut backend = Backend {
            port: this,
            outstanding,
        };
        let next = engine.run(&mut backend, now);
        for function in engine.take_events().iter() {
            let changed = Changed {
                function,
                up: engine.function_up(function),
                count: engine.event_count(function),
                files: notifiers.get(usize::from(function)).cloned(),
            };
            // Without room a watcher misses a wake-up, not the count.
            let _ = wake.push(changed, GFP_KERNEL);
        }
        next
    }

    /// Gives the engine the answer to query `tag`, if it is the one it
    /// waits for (a stale one changes nothing).
    fn take_answer(s: &mut PortState, tag: u64, result: Result<GuidInfo, QueryError>, now: u64) {
        let request = match &s.outstanding {
            Some((r, _)) if r.id.get() == tag => *r,
            // Cancelled, given up or dropped: stale.
            _ => return,
        };
        s.outstanding = None;
        let answer = match result {
            // An answer for another record is an SA error, as one past the
            // port's records.
            Ok(rec) if rec.block == request.record.get() => Answer {
                id: request.id,
                record: request.record,
                status: AnswerStatus::Ok,
                guids: rec.guids,
            },
            Ok(_) => Answer::failed(&request, AnswerStatus::Error),
            Err(QueryError::TimedOut) => Answer::failed(&request, AnswerStatus::Timeout),
            Err(_) => Answer::failed(&request, AnswerStatus::Error),
        };
        let _ = s.engine.answer(&answer, now);
    }

    /// A query is done: its answer came (and is left for the work item,
    /// unless a newer one is there), or its submission failed (`None`).
    fn answered(&self, answer: Option<(u64, Result<GuidInfo, QueryError>)>) {
        let mut m = self.mailbox.lock();
        if let Some((tag, result)) = answer {
            if !matches!(&m.answer, Some((t, _)) if *t > tag) {
                m.answer = Some((tag, result));
            }
        }
        m.inflight = m.inflight.saturating_sub(1);
        if m.inflight == 0 {
            self.idle.notify_all();
        }
    }

    /// Starts deleting the table's GUIDs at the SM ([`Engine::retire`]):
    /// admin writes are refused from now on.
    fn retire(&self) {
        self.state.lock().engine.retire(now_ns());
        self.kick.kick(0);
    }

    /// Waits until the SM has answered for every GUID [`PortGuids::retire`]
    /// deletes, at most `ms`; says how many it has not.
    /// A port whose link is down is not waited for: nothing can reach the
    /// SM, and OpenSM drops the alias GUIDs of a port it no longer finds
    /// (`osm_drop_mgr.c`, `drop_mgr_remove_port()`).
    fn wait_retired(&self, ms: u32) {
        let down = self.dev.port_info(self.port).is_ok_and(|i| i.down);
        let ms = if down { 0 } else { ms };
        let s = wait_while(&self.state, &self.retired, ms, |s| !s.engine.is_idle());
        let left = s.engine.pending_count();
        drop(s);
        if left > 0 && down {
            pr_info!(
                "{}: port {}: down: {} GUID(s) left to the SM, which drops a port's alias GUIDs once it no longer finds the port\n",
                self.name,
                self.port,
                left
            );
        } else if left > 0 {
            pr_warn!(
                "{}: port {}: {} GUID(s) not deleted at the SM within {} ms; the SM may keep them\n",
                self.name,
                self.port,
                left,
                // Every port started at once: each had all of it.
                RETIRE_WAIT_MS
            );
        }
    }

    /// The first half of teardown: nothing runs the engine or submits any
    /// more, and the outstanding query is cancelled.
    fn stop(&self) {
        let mut s = self.state.lock();
        s.dying = true;
        if let Some((_, q)) = s.outstanding.take() {
            q.cancel();
        }
    }

    /// The second half, once the work item is gone: returns when every
    /// query the port made has been answered, or after [`ANSWER_WAIT_MS`]
    /// with a warning. Giving up is safe: each query's context holds an
    /// `Arc` of the port (and so a reference to the device), ib_sa answers
    /// every query in the end, and the module's ib_sa client waits for them
    /// all before the module goes (`ib_sa_unregister_client`). A signal
    /// does not cut the wait short.
    fn wait_answers(&self) {
        let m = wait_while(&self.mailbox, &self.idle, ANSWER_WAIT_MS, |m| {
            m.inflight > 0
        });
        let n = m.inflight;
        drop(m);
        if n > 0 {
            pr_warn!(
                "{}: port {}: {} SA queries unanswered after {} ms; ib_sa will end them\n",
                self.name,
                self.port,
                n,
                ANSWER_WAIT_MS
            );
        }
    }
}

/// Waits on `cv` while `busy` says so of what `lock` guards, at most `ms`,
/// and returns the lock's guard: `busy` is false of it unless the time ran
/// out. A signal does not cut the wait short: teardown runs to its end.
fn wait_while<'a, T, B: LockBackend>(
    lock: &'a Lock<T, B>,
    cv: &CondVar,
    ms: u32,
    busy: impl Fn(&T) -> bool,
) -> Guard<'a, T, B> {
    let mut left = kernel::time::msecs_to_jiffies(ms);
    let mut g = lock.lock();
    while left > 0 && busy(&g) {
        left = match cv.wait_interruptible_timeout(&mut g, left) {
            CondVarTimeoutResult::Timeout => 0,
            CondVarTimeoutResult::Woken { jiffies } => jiffies,
            CondVarTimeoutResult::Signal { jiffies } => {
                // Interruptible waits return at once now: sleep instead.
                drop(g);
                crate::ib::msleep(SIGNALLED_POLL_MS);
                g = lock.lock();
                jiffies.saturating_sub(kernel::time::msecs_to_jiffies(SIGNALLED_POLL_MS))
            }
        };
    }
    g
}

impl DelayedRun for PortGuids {
    fn run(this: &Arc<Self>) {
        let mut wake = KVec::new();
        let now = now_ns();
        let (next, retired) = {
            let mut s = this.state.lock();
            let next = Self::run_locked(this, &mut s, now, &mut wake);
            (next, s.engine.is_retired() && s.engine.is_idle())
        };
        if retired {
            this.retired.notify_all();
        }
        for c in wake.iter() {
            if let Some((events, state)) = &c.files {
                events.notify();
                state.notify();
            }
            this.dev.guid_event(this.port, c.function, c.up, c.count);
        }
        if let Some(t) = next {
            this.kick.kick(t.saturating_sub(now).div_ceil(1_000_000));
        }
    }
}

impl SaAnswer for PortGuids {
    fn guid_info_done(&self, tag: u64, result: Result<GuidInfo, QueryError>) {
        self.answered(Some((tag, result)));
        // The work item gives it to the engine, and sends the next request.
        self.kick.kick(0);
    }
}

/// The port events of a device, for its ports' engines.
struct DeviceEvents {
    ports: KVec<Arc<PortGuids>>,
}

impl PortEvents for DeviceEvents {
    fn port_event(&self, port: u32, event: PortEvent) {
        // A port going down makes sends fail as PortDown, which the engine
        // retries after 5 s. Back up, or with another SM (or one that asks
        // its clients to register again), the SM may have lost what it
        // granted: everything is sent again, as mlx4 does. ib_sa makes its
        // SM address again from its own handler of the same event, on
        // ib_wq: the requests go a little later, not to fail at once.
        if !matches!(event, PortEvent::Active | PortEvent::SmChanged) {
            return;
        }
        for p in self.ports.iter().filter(|p| p.port == port) {
            let now = now_ns();
            let mut s = p.state.lock();
            s.engine.invalidate_all(now);
            s.engine.retry_all(now);
            drop(s);
            p.kick.kick(SM_ADDRESS_DELAY_MS);
        }
    }
}

/// A directory with no files of its own.
struct NoFiles;

impl DirOps for NoFiles {
    fn show(&self, _id: u32, _out: &mut ShowBuf<'_>) -> Result {
        Err(EINVAL)
    }
}

/// What the files of a port's `admin_guids/` and `gids/` show.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TableKind {
    Admin,
    Gids,
}

/// `iov/ports/<p>/admin_guids/` or `gids/`: file `n` is entry `n`.
struct TableFiles {
    port: Arc<PortGuids>,
    kind: TableKind,
}

impl DirOps for TableFiles {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let entry = entry_of(id)?;
        match self.kind {
            TableKind::Admin => {
                let admin = self.port.state.lock().engine.admin(entry);
                writeln!(out, "{}", AdminGuid(admin))
            }
            // The port's own table, as mlx4's `gids/` reads it: what the
            // SM programmed, which is the engine's `oper` once both agree.
            TableKind::Gids => {
                let gid = self.port.dev.port_gid(self.port.port, id)?;
                writeln!(out, "{}", Gid::from_raw(gid))
            }
        }
        .map_err(|_| ENOSPC)
    }

    fn store(&self, id: u32, data: &[u8]) -> Result {
        if self.kind != TableKind::Admin {
            return Err(EPERM);
        }
        let entry = entry_of(id)?;
        self.port
            .state
            .lock()
            .engine
            .write_admin(entry, data, now_ns())
            .map_err(|e| Error::from_errno(e.errno()))?;
        // Carried out at once.
        self.port.kick.kick(0);
        Ok(())
    }
}

fn entry_of(id: u32) -> Result<EntryIdx> {
    u8::try_from(id).ok().and_then(EntryIdx::new).ok_or(EINVAL)
}

/// `iov/<function>/ports/<p>/`: the function's port state and its GUID
/// change events.
struct FunctionPortFiles {
    port: Arc<PortGuids>,
    function: u16,
}

const FILE_STATE: u32 = 0;
const FILE_EVENTS: u32 = 1;

static FUNCTION_PORT_FILES: [File<'static>; 2] = [
    File {
        name: c_str!("state"),
        mode: 0o444,
        id: FILE_STATE,
    },
    File {
        name: c_str!("guid_events"),
        mode: 0o444,
        id: FILE_EVENTS,
    },
];

impl DirOps for FunctionPortFiles {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let s = self.port.state.lock();
        match id {
            FILE_STATE => writeln!(
                out,
                "{}",
                if s.engine.function_up(self.function) {
                    "up"
                } else {
                    "down"
                }
            ),
            FILE_EVENTS => writeln!(out, "{}", s.engine.event_count(self.function)),
            _ => return Err(EINVAL),
        }
        .map_err(|_| ENOSPC)
    }
}

/// `iov/<function>/ports/<p>/gid_idx/`: file `n` is the physical index of
/// the function's entry `n`.
struct GidIdxFiles {
    port: Arc<PortGuids>,
    function: u16,
}

impl DirOps for GidIdxFiles {
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let n = u8::try_from(id).map_err(|_| EINVAL)?;
        let index = self
            .port
            .state
            .lock()
            .engine
            .split()
            .physical_index(self.function, n)
            .ok_or(EINVAL)?;
        writeln!(out, "{}", index).map_err(|_| ENOSPC)
    }
}

/// The names `0` to `127`.
fn index_names() -> Result<KVec<CString>> {
    let mut names = KVec::with_capacity(PORT_GUIDS, GFP_KERNEL)?;
    for n in 0..PORT_GUIDS {
        names.push(CString::try_from_fmt(format_args!("{}", n))?, GFP_KERNEL)?;
    }
    Ok(names)
}

/// Files `0` to `count - 1` of `names`, with `mode`.
fn index_files<'a>(names: &'a [CString], count: usize, mode: u16) -> Result<KVec<File<'a>>> {
    let mut files = KVec::with_capacity(count, GFP_KERNEL)?;
    for (n, name) in names.iter().take(count).enumerate() {
        files.push(
            File {
                name,
                mode,
                id: u32::try_from(n)?,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(files)
}

/// The sysfs directories of one port, children first (the order they go).
struct PortDirs {
    /// Per function: `iov/<function>/ports/<p>/gid_idx/` and
    /// `iov/<function>/ports/<p>/`.
    _functions: KVec<(Dir<GidIdxFiles>, Dir<FunctionPortFiles>)>,
    _admin: Dir<TableFiles>,
    _gids: Dir<TableFiles>,
    /// `iov/ports/<p>/`.
    _port: Dir<NoFiles>,
}

/// A function's directories: `iov/<function>/ports/` and `iov/<function>/`.
struct FunctionDirs {
    ports: Dir<NoFiles>,
    _function: Dir<NoFiles>,
}

/// `iov/<function>/ports/<port>/` of the vport model: the function's
/// node and port GUID.
struct VportFiles {
    dev: DeviceRef,
    port: u32,
    function: u16,
}

const FILE_NODE_GUID: u32 = 0;
const FILE_PORT_GUID: u32 = 1;

/// A VF's files: root writes them.
static VPORT_FILES: [File<'static>; 2] = [
    File {
        name: c_str!("node_guid"),
        mode: 0o644,
        id: FILE_NODE_GUID,
    },
    File {
        name: c_str!("port_guid"),
        mode: 0o644,
        id: FILE_PORT_GUID,
    },
];

/// The PF's: its own GUIDs, read-only.
static PF_VPORT_FILES: [File<'static>; 2] = [
    File {
        name: c_str!("node_guid"),
        mode: 0o444,
        id: FILE_NODE_GUID,
    },
    File {
        name: c_str!("port_guid"),
        mode: 0o444,
        id: FILE_PORT_GUID,
    },
];

impl VportFiles {
    /// Which GUID file `id` is.
    fn which(id: u32) -> Result<VfGuid> {
        match id {
            FILE_NODE_GUID => Ok(VfGuid::Node),
            FILE_PORT_GUID => Ok(VfGuid::Port),
            _ => Err(EINVAL),
        }
    }
}

impl DirOps for VportFiles {
    /// A VF's GUID as its driver's `get_vf_guid` answers (0: none set);
    /// the PF's, the device's node GUID and the port's GUID.
    fn show(&self, id: u32, out: &mut ShowBuf<'_>) -> Result {
        let which = Self::which(id)?;
        let guid = match self.function.checked_sub(1) {
            None => match which {
                VfGuid::Node => self.dev.device().node_guid(),
                VfGuid::Port => self.dev.port_guid(self.port)?,
            },
            Some(vf) => {
                let (node, port) = self.dev.get_vf_guids(vf, self.port)?;
                match which {
                    VfGuid::Node => node,
                    VfGuid::Port => port,
                }
            }
        };
        writeln!(out, "{}", VportGuid(guid)).map_err(|_| ENOSPC)
    }

    /// Sets a VF's GUID through its driver's `set_vf_guid`, as `ip link set
    /// <pf> vf N node_guid|port_guid` does: any value, 0 and all ones
    /// included (what the clients release a VF's GUID with), in hex or
    /// the colon form (`parse_vport_guid`); malformed input is `-EINVAL`
    /// and sets nothing; the driver's error as it is.
    /// The PF's are read-only.
    fn store(&self, id: u32, data: &[u8]) -> Result {
        let which = Self::which(id)?;
        let vf = self.function.checked_sub(1).ok_or(EPERM)?;
        let guid = parse_vport_guid(data).map_err(|e| Error::from_errno(e.errno()))?;
        self.dev.set_vf_guid(vf, self.port, guid, which)
    }
}

/// The vport model's tree of a device (Connect-IB, ConnectX-4 and later,
/// as mlx5 gives each VF a vport): `iov/<function>/ports/<port>/node_guid`
/// and `port_guid`. Nothing in it talks to the SM, and nothing is set but
/// what an administrator writes. Fields drop in order: children first.
struct VportIov {
    made_for: KVec<TreePort>,
    _ports: KVec<Dir<VportFiles>>,
    _functions: KVec<FunctionDirs>,
    _iov: Dir<NoFiles>,
}

impl VportIov {
    fn build(
        devref: &DeviceRef,
        name: &DeviceName,
        sriov: &Sriov,
        tree: &[TreePort],
    ) -> Result<Self> {
        let Some(&TreePort { num_vfs, .. }) = tree.first() else {
            return Err(EINVAL);
        };
        let made_for = copy_tree(tree)?;
        let iov = Dir::new_empty(devref.device(), c_str!("iov"), NoFiles)?;
        let functions = function_dirs(
            devref.device(),
            name,
            &iov,
            sriov,
            num_vfs.saturating_add(1),
        )?;
        let mut ports = KVec::new();
        // mlx5 keeps one node and one port GUID per VF whatever the port
        // (ib_virt.c: `vfs_ctx[vf]`, the firmware command on port 1): one
        // pair of files, under the first port, not one per port that
        // would show and set the same pair.
        for t in tree.iter().take(1) {
            let pname = CString::try_from_fmt(format_args!("{}", t.port))?;
            for (f, fd) in functions.iter().enumerate() {
                let function = u16::try_from(f)?;
                let files: &[File<'_>] = if function == 0 {
                    &PF_VPORT_FILES
                } else {
                    &VPORT_FILES
                };
                let dir = Dir::new(
                    &fd.ports,
                    &pname,
                    VportFiles {
                        dev: devref.clone(),
                        port: t.port,
                        function,
                    },
                    files,
                    crate::attr_class!(),
                )?;
                ports.push(dir, GFP_KERNEL)?;
            }
            pr_info!(
                "{}: port {}: VF GUIDs on vports for {} VFs, one pair per VF (set through the driver's set_vf_guid; nothing sent to the SM)\n",
                name,
                t.port,
                num_vfs
            );
        }
        Ok(Self {
            made_for,
            _ports: ports,
            _functions: functions,
            _iov: iov,
        })
    }
}

/// The function directories `iov/<function>/` and their `ports/`, for
/// `count` functions (the PF first): a PCI PF's and its VFs' own PCI names
/// (`pci_name()`), or on a simulated adapter the names mlx4 would make from
/// its PF's.
fn function_dirs(
    dev: &Device,
    name: &DeviceName,
    iov: &Dir<NoFiles>,
    sriov: &Sriov,
    count: u16,
) -> Result<KVec<FunctionDirs>> {
    let pf_name = match sriov {
        Sriov::Sim { name, .. } | Sriov::PciPf { name, .. } => name.as_bytes(),
        Sriov::None => &[],
    };
    let mut dirs = KVec::with_capacity(usize::from(count), GFP_KERNEL)?;
    for f in 0..count {
        let mut buf = [0u8; 24];
        let bytes = match (sriov, f) {
            (Sriov::PciPf { .. }, 0) => pf_name,
            (Sriov::PciPf { .. }, vf) => {
                let Some(n) = dev.pci_vf_name(vf - 1) else {
                    // Gone since it was counted: the watch kicks again.
                    pr_info!("{}: VF {} is not on the PCI bus any more\n", name, vf - 1);
                    return Err(ENODEV);
                };
                let b = n.as_bytes();
                let dst = buf.get_mut(..b.len()).ok_or(EINVAL)?;
                dst.copy_from_slice(b);
                buf.get(..b.len()).unwrap_or(&[])
            }
            _ => {
                let n = function_name(pf_name, f, &mut buf).ok_or(EINVAL)?;
                buf.get(..n).unwrap_or(&[])
            }
        };
        let fname = CString::try_from_fmt(format_args!(
            "{}",
            core::str::from_utf8(bytes).map_err(|_| EINVAL)?
        ))?;
        let function = Dir::new_empty(iov, &fname, NoFiles)?;
        let ports = Dir::new_empty(&function, c_str!("ports"), NoFiles)?;
        dirs.push(
            FunctionDirs {
                ports,
                _function: function,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(dirs)
}

/// What a device's tables are made for, kept to compare with what the
/// switch and the VFs ask for later.
fn copy_tree(tree: &[TreePort]) -> Result<KVec<TreePort>> {
    let mut made_for = KVec::with_capacity(tree.len(), GFP_KERNEL)?;
    for &t in tree.iter() {
        made_for.push(t, GFP_KERNEL)?;
    }
    Ok(made_for)
}

/// A device's tables, of its model.
enum Tables {
    Alias(DeviceIov),
    Vport(VportIov),
}

impl Tables {
    /// Whether they are what `tree` asks for.
    fn is(&self, tree: &[TreePort]) -> bool {
        self.made_for() == tree
    }

    fn made_for(&self) -> &[TreePort] {
        match self {
            Self::Alias(t) => t.made_for.as_slice(),
            Self::Vport(t) => t.made_for.as_slice(),
        }
    }

    /// The number of VFs they were made for.
    fn num_vfs(&self) -> u16 {
        self.made_for().first().map_or(0, |t| t.num_vfs)
    }
}

/// The VF GUID tables of a device for one number of VFs: its `iov` tree
/// and its ports' engines. Dropping it tears them down.
struct DeviceIov {
    /// The ports it was made for, with their VFs and GUIDs.
    made_for: KVec<TreePort>,
    events: Option<EventHandler<DeviceEvents>>,
    works: KVec<DelayedWork<PortGuids>>,
    port_dirs: KVec<PortDirs>,
    functions: KVec<FunctionDirs>,
    ports_dir: Option<Dir<NoFiles>>,
    iov: Option<Dir<NoFiles>>,
    ports: KVec<Arc<PortGuids>>,
}

impl Drop for DeviceIov {
    fn drop(&mut self) {
        // The SM deletes the GUIDs first, while the tree still shows them
        // going (admin writes are refused): once the tree is gone, so are
        // they, or the wait has said which were not.
        let start = now_ns();
        for p in self.ports.iter() {
            p.retire();
        }
        for p in self.ports.iter() {
            let spent = u32::try_from(now_ns().saturating_sub(start) / 1_000_000);
            p.wait_retired(RETIRE_WAIT_MS.saturating_sub(spent.unwrap_or(u32::MAX)));
        }
        // No port event, then no sysfs access, runs from here on.
        drop(self.events.take());
        drop(core::mem::take(&mut self.port_dirs));
        drop(core::mem::take(&mut self.functions));
        drop(self.ports_dir.take());
        drop(self.iov.take());
        // The ports: no new work, no query left, no work item running,
        // every answer in.
        for p in self.ports.iter() {
            p.stop();
        }
        drop(core::mem::take(&mut self.works));
        for p in self.ports.iter() {
            p.wait_answers();
        }
    }
}

/// A port that gets a tree.
#[derive(Clone, Copy, PartialEq, Eq)]
struct TreePort {
    port: u32,
    num_vfs: u16,
    /// Its GUID entries (its GID table length).
    port_guids: u16,
}

/// What [`tree_ports`] finds.
struct TreePorts {
    sriov: Sriov,
    /// A PCI PF's VFs in the middle of a change (counted as none).
    changing: Option<VfsChanging>,
    /// The ports that get a tree.
    tree: KVec<TreePort>,
    /// Why the others do not.
    why_not: KVec<(u32, NoTree)>,
}

/// Which ports of `dev` get a tree, with the device's switch `on`; a PCI
/// PF's VFs as its watch saw them (`pci`), when it has one.
fn tree_ports(dev: &Device, name: &DeviceName, on: bool, pci: Option<PciVfs>) -> TreePorts {
    let mut sriov = dev.sriov();
    let mut changing = None;
    if let (Sriov::PciPf { num_vfs, .. }, Some(pci)) = (&mut sriov, pci) {
        *num_vfs = pci_vf_count(&pci).unwrap_or_else(|c| {
            changing = Some(c);
            0
        });
    }
    let parent = parent_of(&sriov);
    let driver_iov = driver_iov(dev, &sriov);
    let mut ports = KVec::new();
    let mut why_not = KVec::new();
    for port in 1..=dev.port_count() {
        let facts = PortFacts {
            parent,
            driver_iov,
            infiniband: dev.port_is_ib(port),
            switched_on: on,
            port_guids: port_guids(dev, port),
            model: model_of(dev),
        };
        match placement(&facts) {
            Ok(num_vfs) => {
                let tp = TreePort {
                    port,
                    num_vfs,
                    port_guids: facts.port_guids,
                };
                if ports.push(tp, GFP_KERNEL).is_err() {
                    pr_warn!("{}: port {}: no VF GUID tree: no memory\n", name, port);
                }
            }
            Err(why) => {
                // Without room, a reason is not told.
                let _ = why_not.push((port, why), GFP_KERNEL);
            }
        }
    }
    TreePorts {
        sriov,
        changing,
        tree: ports,
        why_not,
    }
}

/// The device's GUID model, by its identity.
fn model_of(dev: &Device) -> GuidModel {
    guid_model(dev.vendor_id(), dev.vendor_part_id())
}

/// The GUID entries of `port`: its GID table length.
fn port_guids(dev: &Device, port: u32) -> u16 {
    u16::try_from(dev.port_gid_tbl_len(port)).unwrap_or(u16::MAX)
}

fn parent_of(sriov: &Sriov) -> Parent {
    match sriov {
        Sriov::Sim { num_vfs, .. } => Parent::Sim { num_vfs: *num_vfs },
        Sriov::PciPf { num_vfs, .. } => Parent::PciPf { num_vfs: *num_vfs },
        Sriov::None => Parent::Other,
    }
}

/// mlx4_ib runs its own engine on an SR-IOV master: a PF with VFs.
fn driver_iov(dev: &Device, sriov: &Sriov) -> bool {
    dev.driver_id() == DRIVER_MLX4 && matches!(sriov, Sriov::PciPf { num_vfs, .. } if *num_vfs > 0)
}

impl DeviceIov {
    /// Makes the tables of `dev` on the ports of `tree`.
    fn build(
        devref: DeviceRef,
        name: &DeviceName,
        sriov: &Sriov,
        tree: &[TreePort],
    ) -> Result<Self> {
        let dev = devref.device();
        // Every port has the device's VFs.
        let Some(&TreePort { num_vfs, .. }) = tree.first() else {
            return Err(EINVAL);
        };
        let num_functions = num_vfs.saturating_add(1);
        let sm_guid_assign = iov::sm_guid_assign();
        let made_for = copy_tree(tree)?;
        let mut d = DeviceIov {
            made_for,
            events: None,
            works: KVec::new(),
            port_dirs: KVec::new(),
            functions: KVec::new(),
            ports_dir: None,
            iov: None,
            ports: KVec::new(),
        };
        // The engines first: the tree shows them.
        for t in tree.iter() {
            let hw_guid = devref.port_guid(t.port).unwrap_or(0);
            let p = PortGuids::new(
                devref.clone(),
                name,
                t.port,
                Config {
                    port_guids: t.port_guids,
                    num_vfs: t.num_vfs,
                    sm_guid_assign,
                    hw_guid,
                },
            )?;
            d.works.push(
                DelayedWork::new(
                    p.clone(),
                    &p.kick,
                    c_str!("mlx_ext::vf_guids::PortGuids::work"),
                    kernel::static_lock_class!(),
                )?,
                GFP_KERNEL,
            )?;
            d.ports.push(p, GFP_KERNEL)?;
        }
        // The tree.
        let names = index_names()?;
        let iov_dir = Dir::new_empty(dev, c_str!("iov"), NoFiles)?;
        let ports_dir = Dir::new_empty(&iov_dir, c_str!("ports"), NoFiles)?;
        d.functions = function_dirs(dev, name, &iov_dir, sriov, num_functions)?;
        for p in d.ports.iter() {
            let split = *p.state.lock().engine.split();
            let entries = usize::from(split.port_guids());
            let admin_files = index_files(&names, entries, 0o644)?;
            let gid_files = index_files(&names, entries, 0o444)?;
            let pname = CString::try_from_fmt(format_args!("{}", p.port))?;
            let port_dir = Dir::new_empty(&ports_dir, &pname, NoFiles)?;
            let admin = Dir::new(
                &port_dir,
                c_str!("admin_guids"),
                TableFiles {
                    port: p.clone(),
                    kind: TableKind::Admin,
                },
                &admin_files,
                crate::attr_class!(),
            )?;
            let gids = Dir::new(
                &port_dir,
                c_str!("gids"),
                TableFiles {
                    port: p.clone(),
                    kind: TableKind::Gids,
                },
                &gid_files,
                crate::attr_class!(),
            )?;
            let mut functions = KVec::new();
            let mut notifiers = KVec::new();
            for (f, fd) in d.functions.iter().enumerate() {
                let function = u16::try_from(f)?;
                let fp = Dir::new(
                    &fd.ports,
                    &pname,
                    FunctionPortFiles {
                        port: p.clone(),
                        function,
                    },
                    &FUNCTION_PORT_FILES,
                    crate::attr_class!(),
                )?;
                let idx_files = index_files(&names, usize::from(split.count(function)), 0o444)?;
                let idx = Dir::new(
                    &fp,
                    c_str!("gid_idx"),
                    GidIdxFiles {
                        port: p.clone(),
                        function,
                    },
                    &idx_files,
                    crate::attr_class!(),
                )?;
                notifiers.push(
                    (fp.notifier(FILE_EVENTS), fp.notifier(FILE_STATE)),
                    GFP_KERNEL,
                )?;
                functions.push((idx, fp), GFP_KERNEL)?;
            }
            p.state.lock().notifiers = notifiers;
            d.port_dirs.push(
                PortDirs {
                    _functions: functions,
                    _admin: admin,
                    _gids: gids,
                    _port: port_dir,
                },
                GFP_KERNEL,
            )?;
        }
        d.ports_dir = Some(ports_dir);
        d.iov = Some(iov_dir);
        // The engines start: each asks the SM for what it needs.
        let mut ports = KVec::new();
        for p in d.ports.iter() {
            ports.push(p.clone(), GFP_KERNEL)?;
        }
        d.events = Some(EventHandler::new(
            &devref,
            Arc::new(DeviceEvents { ports }, GFP_KERNEL)?,
        )?);
        for p in d.ports.iter() {
            p.kick.kick(0);
        }
        for p in d.ports.iter() {
            let split = *p.state.lock().engine.split();
            pr_info!(
                "{}: port {}: VF GUID table of {} GUIDs for {} VFs: the PF has {}, VF1 {}, VF{} {}\n",
                name,
                p.port,
                split.port_guids(),
                num_vfs,
                split.count(0),
                split.count(1),
                num_vfs,
                split.count(num_vfs)
            );
        }
        Ok(d)
    }
}

/// A device's VF GUID tables as its switch and its parent's number of VFs
/// make them, at any time from the device's `add` to its `remove`: made,
/// made again for another number of VFs (a new tree with the new split,
/// every admin value dropped with the VFs they were for), removed.
pub struct DeviceGuids {
    slot: Arc<Slot>,
    /// The rebuild after a change of VFs.
    work: Option<DelayedWork<Slot>>,
}

/// What [`DeviceGuids`], its switch file and its work item share.
#[pin_data]
pub struct Slot {
    dev: DeviceRef,
    name: DeviceName,
    kick: Kicker,
    #[pin]
    inner: Mutex<SlotInner>,
}

struct SlotInner {
    /// The device's switch, `mlx_ext/vf_guid_tables`.
    on: bool,
    /// Set by teardown: nothing is made any more.
    gone: bool,
    /// What kicks the work when the VFs change; taken by teardown first.
    watch: Option<VfWatch>,
    tables: Option<Tables>,
}

impl DeviceGuids {
    /// Starts watching `dev` and makes its tables if it gets any now.
    pub fn new(dev: &Device, name: &DeviceName) -> Result<Self> {
        let devref = DeviceRef::new(dev)?;
        let slot_dev = devref.clone();
        let kick = Kicker::new()?;
        let on = on_by_default(&parent_of(&dev.sriov()));
        let slot = Arc::pin_init(
            pin_init!(Slot {
                dev: slot_dev,
                name: name.clone(),
                kick,
                inner <- new_mutex!(
                    SlotInner {
                        on,
                        gone: false,
                        watch: None,
                        tables: None,
                    },
                    "mlx_ext::vf_guids::Slot::inner"
                ),
            }),
            GFP_KERNEL,
        )?;
        let work = DelayedWork::new(
            slot.clone(),
            &slot.kick,
            c_str!("mlx_ext::vf_guids::Slot::work"),
            kernel::static_lock_class!(),
        )?;
        {
            // Registered under the lock, which the work takes first: no
            // update runs without it. Without a watch the tables stay as
            // they are made now.
            let mut inner = slot.inner.lock();
            inner.watch = VfWatch::new(&devref, &slot.kick)
                .inspect_err(|e| {
                    pr_warn!(
                        "{}: changes of the number of VFs will not be seen ({:?})\n",
                        name,
                        e
                    )
                })
                .ok()
                .flatten();
            // Said by `update`; the device is fine without.
            let _ = slot.update(&mut inner, true);
        }
        Ok(Self {
            slot,
            work: Some(work),
        })
    }

    /// What the device's `mlx_ext/vf_guid_tables` file acts on.
    pub fn slot(&self) -> &Arc<Slot> {
        &self.slot
    }
}

impl Drop for DeviceGuids {
    fn drop(&mut self) {
        // No change of VFs kicks the work any more.
        let watch = self.slot.inner.lock().watch.take();
        drop(watch);
        drop(self.work.take());
        let tables = {
            let mut inner = self.slot.inner.lock();
            inner.gone = true;
            inner.tables.take()
        };
        drop(tables);
    }
}

impl Slot {
    /// Makes the tables again if they are not what the switch and the VFs
    /// ask for now; says why a device has none when it changed, or always
    /// with `tell`. An error if new tables could not be made (and were
    /// not: the device is otherwise fine).
    fn update(&self, inner: &mut SlotInner, tell: bool) -> Result {
        if inner.gone {
            return Ok(());
        }
        let name = &self.name;
        // A PCI PF's watch that cannot read the PF (its capability gone, a
        // surprise removal) counts no VFs; a simulated adapter's has none.
        let pci = inner
            .watch
            .as_ref()
            .map(|w| w.pci_vfs().unwrap_or_default());
        let TreePorts {
            sriov,
            changing,
            tree,
            why_not,
        } = tree_ports(self.dev.device(), name, inner.on, pci);
        let same = match &inner.tables {
            Some(t) => t.is(&tree),
            None => tree.is_empty(),
        };
        if same && !tell {
            return Ok(());
        }
        let (changed, removed) = match inner.tables.take() {
            Some(old) if !same => {
                let n = old.num_vfs();
                drop(old);
                (true, Some(n))
            }
            t => {
                inner.tables = t;
                (!same, None)
            }
        };
        if let Some(n) = removed {
            pr_info!(
                "{}: VF GUID tables for {} VFs removed (their admin values with them)\n",
                name,
                n
            );
        }
        if let Some(c) = changing {
            if changed || tell {
                pr_info!("{}: no VF GUID tables while {}\n", name, c);
            }
        }
        for &(port, why) in why_not.iter() {
            if why.is_logged() && (changed || tell) {
                pr_info!("{}: port {}: no VF GUID tree: {}\n", name, port, why);
            }
        }
        if !changed || tree.is_empty() {
            return Ok(());
        }
        let t = match model_of(self.dev.device()) {
            GuidModel::Alias => {
                DeviceIov::build(self.dev.clone(), name, &sriov, &tree).map(Tables::Alias)
            }
            GuidModel::Vport => VportIov::build(&self.dev, name, &sriov, &tree).map(Tables::Vport),
        }
        .inspect_err(|e| pr_warn!("{}: no VF GUID tables ({:?})\n", name, e))?;
        inner.tables = Some(t);
        Ok(())
    }

    /// The switch, as `mlx_ext/vf_guid_tables` shows it.
    pub fn switch(&self) -> bool {
        self.inner.lock().on
    }

    /// An administrator wrote the switch: `-EINVAL` for anything but
    /// `on`, `off`, `1`, `0`; `-EOPNOTSUPP` to switch on a device none of
    /// whose ports could ever have tables; the error of making them if they
    /// cannot be (and the switch as it was).
    pub fn write_switch(&self, data: &[u8]) -> Result {
        let on = parse_switch(data).ok_or(EINVAL)?;
        let name = &self.name;
        let dev = self.dev.device();
        if on {
            let sriov = dev.sriov();
            let parent = parent_of(&sriov);
            let driver_iov = driver_iov(dev, &sriov);
            let mut first = None;
            let mut ok = false;
            for port in 1..=dev.port_count() {
                let facts = PortFacts {
                    parent,
                    driver_iov,
                    infiniband: dev.port_is_ib(port),
                    switched_on: true,
                    port_guids: port_guids(dev, port),
                    model: model_of(dev),
                };
                match can_switch_on(&facts) {
                    Ok(()) => ok = true,
                    Err(why) => {
                        first.get_or_insert(why);
                    }
                }
            }
            if !ok {
                pr_info!(
                    "{}: vf_guid_tables: cannot be switched on: {}\n",
                    name,
                    first.map_or("the device has no ports", |w| w.text())
                );
                return Err(crate::ib::eopnotsupp());
            }
        }
        let mut inner = self.inner.lock();
        if inner.gone {
            return Err(ENODEV);
        }
        if inner.on == on {
            return Ok(());
        }
        let was = inner.on;
        inner.on = on;
        pr_info!("{}: vf_guid_tables switched {}\n", name, switch_text(on));
        self.update(&mut inner, true)
            .inspect_err(|_| inner.on = was)
    }
}

impl DelayedRun for Slot {
    fn run(this: &Arc<Self>) {
        let mut inner = this.inner.lock();
        // Said by `update`; the next change tries again.
        let _ = this.update(&mut inner, false);
    }
}
