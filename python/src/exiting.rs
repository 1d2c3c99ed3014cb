//! How the module's threads meet the interpreter's exit.
//!
//! The core works with the interpreter released, on threads of its own
//! and on the caller's. They take the interpreter back now and then: to
//! check for signals (Ctrl-C), and `encode`'s reader to take a Python
//! iterable's items or a chunked array's chunks, running the iterator's
//! Python code. When the program ends while a daemon thread's call works
//! (Python stops daemon threads abruptly at exit), such a thread met the
//! finalizing interpreter:
//! - in Python code, CPython ends the thread with `pthread_exit` the next
//!   time it takes the interpreter back (a generator's `time.sleep`
//!   returning, say). The unwinding runs PyO3's guard, which releases an
//!   interpreter the thread no longer holds: "Fatal Python error:
//!   PyGILState_Release", and the process aborts;
//! - once the interpreter is gone, taking it back crashes in CPython
//!   (a segmentation fault in `PyGILState_Ensure`).
//!
//! So the module registers [`drain`] with `atexit`, which runs before the
//! interpreter finalizes, and after the `atexit` functions registered
//! after it (the last registered runs first): one of the program's that
//! ends a daemon thread's input and joins it, to flush its output, finds
//! the call still working and completing. From then on, such threads, and a call's own
//! thread coming back from its work ([`detach`]), no longer take the
//! interpreter: they are held for [`HOLD`], by when the process has
//! normally ended, as the daemon thread would have, and their call then
//! fails. `drain` waits for those holding the interpreter to release it,
//! for [`DRAIN_LIMIT`] at most. The work of a call from the main thread is
//! never held: it is all that runs once `atexit` has begun (another
//! `atexit` function encoding).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;

/// How long [`drain`] waits for threads to release the interpreter: an
/// iterator blocked on its own input (a socket, a queue) must not hold
/// the exit long.
const DRAIN_LIMIT: Duration = Duration::from_secs(1);

/// How long a thread that would take the interpreter back once it is
/// exiting is held before its call fails: long enough for the process to
/// end first (Python stops daemon threads abruptly at exit), short enough
/// that an `atexit` function that joins the thread does not hang.
const HOLD: Duration = Duration::from_secs(1);

/// Set once [`drain`] has run; read by readers between items.
static EXITING: AtomicBool = AtomicBool::new(false);
/// The threads, working for calls from other threads than the main one,
/// that hold the interpreter now. Counted under the lock under which
/// `EXITING` is set: a thread either is counted before `drain` waits or
/// sees that it must not take the interpreter.
static ATTACHED: Mutex<usize> = Mutex::new(0);
static LEFT: Condvar = Condvar::new();

fn attached() -> MutexGuard<'static, usize> {
    ATTACHED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Registered with `atexit` by the module: threads working for calls from
/// other threads than the main one stop taking the interpreter, and those
/// that hold it are waited for.
#[pyfunction]
pub fn drain(py: Python<'_>) {
    py.detach(|| {
        let count = attached();
        EXITING.store(true, Ordering::SeqCst);
        let _ = LEFT.wait_timeout_while(count, DRAIN_LIMIT, |count| *count > 0);
    });
}

/// How the threads working for one call take the interpreter back.
#[derive(Clone, Copy)]
pub struct Attach {
    /// Whether the call came from the main thread, whose work is never
    /// held.
    for_main_thread: bool,
}

impl Attach {
    /// For a call from the thread calling now.
    pub fn new(py: Python<'_>) -> Attach {
        let on_main = || -> PyResult<bool> {
            let threading = py.import("threading")?;
            let current = threading.call_method0("current_thread")?;
            Ok(current.is(&threading.call_method0("main_thread")?))
        };
        // Unknown: never held.
        Attach {
            for_main_thread: on_main().unwrap_or(true),
        }
    }

    /// `f` with the interpreter; `None` once the interpreter is exiting
    /// (and the call is not the main thread's), after holding the thread
    /// for [`HOLD`]: the caller's call then fails. The process normally
    /// ends first.
    pub fn attach<R>(&self, f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
        // Declared first, so dropped after the interpreter is released.
        let _entered = self.enter()?;
        Some(Python::attach(f))
    }

    /// Counts this thread as one about to hold the interpreter, unless
    /// the interpreter is exiting: then holds it for [`HOLD`] and gives
    /// `None`. Nothing for a main thread's call.
    fn enter(&self) -> Option<Option<Entered>> {
        if self.for_main_thread {
            return Some(None);
        }
        let mut count = attached();
        if EXITING.load(Ordering::SeqCst) {
            drop(count);
            std::thread::sleep(HOLD);
            return None;
        }
        *count += 1;
        Some(Some(Entered))
    }

    /// Whether a thread in Python code (a reader between items) should
    /// come out of it now.
    pub fn stopping(&self) -> bool {
        !self.for_main_thread && EXITING.load(Ordering::Relaxed)
    }
}

/// Runs `f` with the interpreter released, as `py.detach` does, for a
/// call of the module: the interpreter is taken back through the gate, so
/// that [`drain`] waits for a call that ends as the program does, and one
/// that ends after it is held for [`HOLD`] first.
pub fn detach<T, F>(py: Python<'_>, f: F) -> T
where
    // PyO3's `Ungil` is `Send` on a stable compiler.
    F: Send + FnOnce() -> T,
    T: Send,
{
    let gate = Attach::new(py);
    let (result, _entered) = py.detach(move || {
        let result = f();
        (result, gate.enter().flatten())
    });
    result
}

/// A thread counted as holding the interpreter; uncounts it when dropped,
/// waking [`drain`].
struct Entered;

impl Drop for Entered {
    fn drop(&mut self) {
        *attached() -= 1;
        LEFT.notify_all();
    }
}
