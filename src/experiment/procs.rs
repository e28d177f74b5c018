//! The processes a run is spread over: MPI ranks (`--features mpi`, launched by `mpirun` or
//! `srun --mpi=pmix`), as the windowed kernel's [`Procs`].
//!
//! Every rank runs the same experiment: the same runs in the same order, each split into
//! partitions dealt round-robin to the ranks; rank 0 merges each run and writes every
//! output, the others write nothing. MPI is called by one thread at a time (the run's
//! coordinator), so the library is initialised for serialised calls.
//!
//! Not here: runs of an experiment on different ranks at once (`-j` is 1 on MPI; `--shard`
//! splits an experiment over jobs instead), and fault tolerance (a rank that dies ends the
//! job, as MPI does).

use crate::sim::window::Procs;
use std::sync::{Arc, OnceLock};

static PROCS: OnceLock<Arc<dyn Procs>> = OnceLock::new();

/// The run's processes, when there are several (MPI).
pub fn procs() -> Option<Arc<dyn Procs>> {
    PROCS.get().cloned()
}

/// The size of the job this process was launched in, from the launcher's environment
/// (OpenMPI's `mpirun`, PMIx as under `srun --mpi=pmix`, MPICH's PMI): None outside one.
fn launched_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// What keeps MPI up while the program runs (finalised when dropped).
pub struct Session {
    #[cfg(feature = "mpi")]
    _universe: Option<mpi::environment::Universe>,
}

impl Session {
    /// Leaves without finalising MPI: after an error, when the other ranks may be waiting in
    /// a collective for this one (finalising would wait with them); the process then exits
    /// with the error and the launcher ends the job.
    pub fn abandon(self) {
        #[cfg(feature = "mpi")]
        std::mem::forget(self);
    }
}

/// Joins the MPI job this process was launched in, if any: afterwards [`procs`] gives the
/// ranks. An error when launched in a job of several processes by a build without MPI
/// (each would run the whole experiment and write the same files).
pub fn init() -> Result<Session, String> {
    let size = launched_size().unwrap_or(1);
    #[cfg(feature = "mpi")]
    {
        if size > 1 || std::env::var_os("PMIX_RANK").is_some() {
            let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Serialized)
                .ok_or("MPI was initialised twice")?;
            if level < mpi::Threading::Serialized {
                return Err(format!(
                    "this MPI library gives only {level:?} thread support; dcsim needs \
                     serialised calls from a run's coordinating thread"
                ));
            }
            let world = universe.world();
            if mpi::traits::Communicator::size(&world) > 1 {
                let _ = PROCS.set(Arc::new(Mpi { world }));
            }
            return Ok(Session {
                _universe: Some(universe),
            });
        }
        Ok(Session { _universe: None })
    }
    #[cfg(not(feature = "mpi"))]
    {
        if size > 1 {
            return Err(format!(
                "launched as one of {size} MPI processes, but this dcsim was built without \
                 MPI: build it with `cargo build --release --features mpi` (needs an MPI \
                 library, e.g. Debian's openmpi-bin, libopenmpi-dev and libclang-dev)"
            ));
        }
        Ok(Session {})
    }
}

/// A byte buffer of `len` zeros that owns an allocation even when empty: an empty `Vec`'s
/// pointer is 1, which Open MPI reads as `MPI_IN_PLACE`.
#[cfg(feature = "mpi")]
fn bytes(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len.max(1));
    v.resize(len, 0);
    v
}

/// Offsets of consecutive blocks of `counts` elements.
#[cfg(feature = "mpi")]
fn displacements(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0, |a, &x| {
            let d = *a;
            *a += x;
            Some(d)
        })
        .collect()
}

/// `all` cut into consecutive blocks of `counts` bytes.
#[cfg(feature = "mpi")]
fn blocks(all: &[u8], counts: &[i32]) -> Vec<Vec<u8>> {
    let mut at = 0;
    counts
        .iter()
        .map(|&c| {
            let b = all[at..at + c as usize].to_vec();
            at += c as usize;
            b
        })
        .collect()
}

/// A buffer's length as MPI counts it.
#[cfg(feature = "mpi")]
fn count(len: usize) -> i32 {
    i32::try_from(len).expect("a buffer between MPI ranks under 2 GiB")
}

#[cfg(feature = "mpi")]
struct Mpi {
    world: mpi::topology::SimpleCommunicator,
}

// SAFETY: MPI is initialised for serialised calls (checked in `init`), and the windowed
// kernel calls it from one thread at a time (each run's coordinator; one run at a time on
// MPI), never concurrently.
#[cfg(feature = "mpi")]
unsafe impl Send for Mpi {}
#[cfg(feature = "mpi")]
unsafe impl Sync for Mpi {}

#[cfg(feature = "mpi")]
impl Procs for Mpi {
    fn rank(&self) -> usize {
        mpi::traits::Communicator::rank(&self.world) as usize
    }

    fn size(&self) -> usize {
        mpi::traits::Communicator::size(&self.world) as usize
    }

    fn all_to_all(&self, out: &[Vec<u8>]) -> Vec<Vec<u8>> {
        use mpi::datatype::{Partition, PartitionMut};
        use mpi::traits::*;
        let n = self.size();
        let me = self.rank();
        let counts: Vec<i32> = (0..n)
            .map(|r| if r == me { 0 } else { count(out[r].len()) })
            .collect();
        let mut got = vec![0i32; n];
        self.world.all_to_all_into(&counts[..], &mut got[..]);
        let mut send = bytes(0);
        for (_, o) in out.iter().enumerate().filter(|&(r, _)| r != me) {
            send.extend_from_slice(o);
        }
        let mut recv = bytes(got.iter().map(|&c| c as usize).sum());
        {
            let (sd, rd) = (displacements(&counts), displacements(&got));
            let s = Partition::new(&send[..], &counts[..], &sd[..]);
            let mut r = PartitionMut::new(&mut recv[..], &got[..], &rd[..]);
            self.world.all_to_all_varcount_into(&s, &mut r);
        }
        blocks(&recv, &got)
    }

    fn min(&self, v: &mut [u64]) {
        use mpi::collective::SystemOperation;
        use mpi::traits::*;
        let mine = v.to_vec();
        self.world
            .all_reduce_into(&mine[..], v, SystemOperation::min());
    }

    fn sum(&self, v: &mut [u64]) {
        use mpi::collective::SystemOperation;
        use mpi::traits::*;
        let mine = v.to_vec();
        self.world
            .all_reduce_into(&mine[..], v, SystemOperation::sum());
    }

    fn gather(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        use mpi::datatype::PartitionMut;
        use mpi::traits::*;
        let root = self.world.process_at_rank(0);
        let len = count(mine.len());
        let mut buf = bytes(0);
        buf.extend_from_slice(mine);
        if self.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(&buf[..]);
            return None;
        }
        let mut lens = vec![0i32; self.size()];
        root.gather_into_root(&len, &mut lens[..]);
        let displs = displacements(&lens);
        let mut all = bytes(lens.iter().map(|&c| c as usize).sum());
        {
            let mut r = PartitionMut::new(&mut all[..], &lens[..], &displs[..]);
            root.gather_varcount_into_root(&buf[..], &mut r);
        }
        Some(blocks(&all, &lens))
    }
}
