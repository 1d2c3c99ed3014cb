//! A tokio runtime that a process makes once and a forked child makes
//! again.
//!
//! `fork` copies a process's memory but only the thread that called it: a
//! child of a Python process that had run a query (`multiprocessing`'s
//! default on Linux) holds the parent's runtime with none of its worker
//! threads, and a task spawned there would wait for ever. The runtime is
//! kept with the id of the process that made it; another process makes
//! its own. The parent's is left in the child, never dropped: dropping it
//! would wait for threads that are not there.

use std::sync::{Mutex, PoisonError};

use tokio::runtime::Runtime;

/// A runtime per process, made by `make` when a process first asks.
pub struct ProcessRuntime {
    made: Mutex<Option<(u32, &'static Runtime)>>,
    make: fn() -> std::io::Result<Runtime>,
}

impl ProcessRuntime {
    /// A runtime that `make` builds, in each process that asks for it.
    pub const fn new(make: fn() -> std::io::Result<Runtime>) -> ProcessRuntime {
        ProcessRuntime {
            made: Mutex::new(None),
            make,
        }
    }

    /// This process's runtime, made now if it has none.
    pub fn get(&self) -> std::io::Result<&'static Runtime> {
        let pid = std::process::id();
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((maker, runtime)) = *made
            && maker == pid
        {
            return Ok(runtime);
        }
        // Lives as long as the process: a task may hold it to its end.
        let runtime: &'static Runtime = Box::leak(Box::new((self.make)()?));
        *made = Some((pid, runtime));
        Ok(runtime)
    }
}
