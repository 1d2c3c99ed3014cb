//! The threads of an encode: this thread reads lines a batch at a time,
//! one thread per core shreds batches into column arrays, and one more
//! writes them (Parquet encoding, compression) in input order. Where a file
//! ends (a number of lines or bytes) is decided by the writer and depends
//! on the data alone.

use std::collections::VecDeque;

use arrow::array::RecordBatch;

use super::EncodeOptions;
use super::lines::{LineTallies, Lines, Source};
use super::rows::RowEncoder;
use crate::error::{Error, ErrorKind, Result};
use crate::parquet::{ColumnSpec, ParquetWriter, WriteSummary};

/// Where [`write_lines`] ends a file: after `rows` lines, or after the
/// first batch with which its size reaches `bytes`
/// ([`ParquetWriter::reached`]); with neither, at the end of the input.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FileLimit {
    pub(super) rows: Option<u64>,
    pub(super) bytes: Option<u64>,
}

/// A batch encoded, with what its lines came to; or the error of its
/// first bad line.
type Encoded = Result<(RecordBatch, LineTallies)>;

/// Writes `first` and then lines of `source` into `writer` until `limit`
/// or the end of the input, and finishes the file; or, when lines were
/// read and every one was bad (and skipped), drops it, so that no file
/// appears, and returns `None`.
///
/// Batches of lines are encoded on one thread per core, round-robin, and
/// written (Parquet encoding, compression) on one more, in input order;
/// this thread reads the lines and keeps the order. In flight at once:
/// the batch this thread reads, one per encoder (being encoded, or done
/// and waiting to be taken in order) and one waiting for the writer. More
/// made no encode faster and held more memory: a second batch per
/// encoder 15 MB more on 1M event rows, a second one waiting for the
/// writer 7 MB more.
///
/// With a byte limit, the writer ends the file after the first batch with
/// which its size reaches the limit. It knows only once that batch is
/// written, when later batches are encoded already: those are put back
/// into `source`, to be encoded again for the next file (whose layout may
/// differ). Lines are tallied only in the batches written, so none is
/// counted twice, and where a file ends depends on the data alone, never
/// on how the threads ran.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_lines(
    source: &mut Source<'_>,
    first: Lines,
    columns: &[ColumnSpec],
    writer: ParquetWriter,
    options: &EncodeOptions,
    limit: FileLimit,
    tallies: &mut LineTallies,
    progress: &mut dyn FnMut(u64),
) -> Result<Option<WriteSummary>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let schema = writer.schema().clone();
    let threads = crate::parquet::cores();
    let names = RowEncoder::starting_names(&first, columns, options);
    let first = source.first_batch(first);
    let batch_rows = options.batch_rows.max(1);
    let mut rows_left = limit.rows.map(|r| r.saturating_sub(first.len() as u64));
    // The first lines are read before any others: none means no input.
    let read_lines = !first.is_empty();
    let skip = tallies.skip;
    // Set by the writer when the file is full: this thread stops reading.
    let full = &AtomicBool::new(false);
    // Batches written, whose buffers this thread may reuse.
    let written = &AtomicUsize::new(0);
    let panicked = |what: &str| Error::new(ErrorKind::Io, format!("{what} panicked"));
    let template = &*tallies;
    let (writer, counted, count, rows, mut forwarded, reused) = std::thread::scope(|scope| {
        let (batches, received) = std::sync::mpsc::sync_channel::<Encoded>(1);
        let writing = crate::threads::spawn_scoped(
            scope,
            move || -> Result<(ParquetWriter, LineTallies, usize, usize)> {
                let mut writer = writer;
                let mut counted = LineTallies::new(skip);
                let (mut count, mut rows) = (0, 0);
                for encoded in received {
                    if full.load(Ordering::Acquire) {
                        continue; // past the end of the file: for the next one
                    }
                    let (batch, tally) = encoded?;
                    writer.write_made(&batch)?;
                    rows += batch.num_rows();
                    counted.merge(tally);
                    count += 1;
                    written.store(count, Ordering::Release);
                    if let Some(bytes) = limit.bytes
                        && writer.reached(bytes)?
                    {
                        full.store(true, Ordering::Release);
                    }
                }
                Ok((writer, counted, count, rows))
            },
        );
        let (encoders, handles): (Vec<_>, Vec<_>) = (0..threads)
            .map(|_| {
                let (to_encoder, lines_in) = std::sync::mpsc::sync_channel::<Lines>(1);
                let (encoded_out, from_encoder) =
                    std::sync::mpsc::sync_channel::<(Encoded, Lines)>(1);
                let mut encoder = RowEncoder::new(columns, options, &names);
                let worker = template.for_worker();
                let schema = schema.clone();
                let handle = crate::threads::spawn_scoped(scope, move || {
                    for lines in lines_in {
                        // Tallied per batch: only the batches written count.
                        let mut tally = worker.for_worker();
                        let batch = encoder
                            .encode_batch(&lines, &mut tally)
                            .and_then(|columns| {
                                RecordBatch::try_new(schema.clone(), columns).map_err(|e| {
                                    Error::new(ErrorKind::Schema, format!("building a batch: {e}"))
                                })
                            })
                            .map(|batch| (batch, tally));
                        if encoded_out.send((batch, lines)).is_err() {
                            break;
                        }
                    }
                });
                ((to_encoder, from_encoder), handle)
            })
            .unzip();
        // Lines handed to the writer, from batch `reused` on, kept with a
        // byte limit until written (they may be needed for the next file);
        // the buffers of those written are reused for reading.
        let mut forwarded: VecDeque<Lines> = VecDeque::new();
        let mut reused = 0;
        let mut spare: Vec<Lines> = Vec::new();
        // Batch `k` goes to encoder `k % threads`; its result is taken
        // (and handed to the writer) just before that encoder gets batch
        // `k + threads`, so that results reach the writer in input order.
        let mut take = |k: usize, spare: &mut Vec<Lines>| -> Result<bool> {
            let (encoded, lines) = encoders[k % threads]
                .1
                .recv()
                .map_err(|_| panicked("an encoding thread"))?;
            if limit.bytes.is_none() {
                // Every batch will be written: its buffer is free now.
                spare.push(lines);
                reused += 1;
            } else {
                forwarded.push_back(lines);
                while reused < written.load(Ordering::Acquire) {
                    spare.extend(forwarded.pop_front());
                    reused += 1;
                }
            }
            // A closed channel means the writer stopped: its error says why.
            Ok(batches.send(encoded).is_ok())
        };
        let read = (|| -> Result<()> {
            let mut lines = first;
            let mut sent = 0;
            // A read error waits until the batches before it are written,
            // so that a bad line among them is reported first.
            let mut failed = Ok(());
            while !lines.is_empty() {
                if sent >= threads && !take(sent - threads, &mut spare)? {
                    return Ok(());
                }
                if encoders[sent % threads].0.send(lines).is_err() {
                    break; // the encoder panicked: reported when joined
                }
                sent += 1;
                progress(source.consumed());
                let n = rows_left.map_or(batch_rows, |left| left.min(batch_rows as u64) as usize);
                if n == 0 || full.load(Ordering::Acquire) {
                    break;
                }
                lines = spare.pop().unwrap_or_default();
                lines.clear();
                if let Err(e) = source.fill(&mut lines, n) {
                    failed = Err(e);
                    break;
                }
                if let Some(left) = &mut rows_left {
                    *left -= lines.len() as u64;
                }
            }
            for k in sent.saturating_sub(threads)..sent {
                if !take(k, &mut spare)? {
                    return Ok(());
                }
            }
            failed
        })();
        // Closing the channels stops the encoders and then the writer.
        drop(encoders);
        // A thread's panic is a bug: raised again here, it reaches the
        // caller with its message (the CLI reports it as an internal error).
        for handle in handles {
            if let Err(panic) = handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
        drop(batches);
        let writer = writing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        // The writer's error comes from an earlier line than a read error.
        // An error drops the writer, which removes its temporary file.
        let (writer, counted, count, rows) = writer?;
        read?;
        Ok::<_, Error>((writer, counted, count, rows, forwarded, reused))
    })?;
    tallies.merge(counted);
    // Batches read past the end of the file go back, in order.
    forwarded.drain(..count - reused);
    source.put_back(forwarded);
    if read_lines && rows == 0 {
        // Dropped, the file is removed: an empty file in place of what was
        // at the path, or among a dataset's, would say the lines were
        // read when not one of them was.
        return Ok(None);
    }
    writer.finish().map(Some)
}

/// The error of an input whose every line is bad (and was skipped): it is
/// an input given for the output, or the wrong input.
pub(super) fn every_line_bad(tallies: &LineTallies) -> Error {
    let counts = tallies.counts();
    Error::new(
        // The first line's: `invalid JSON` for one the columns could not
        // hold called valid JSON invalid.
        tallies.first_bad_kind().unwrap_or(ErrorKind::Json),
        format!(
            "every line is bad ({} skipped); the first: {}",
            counts.bad_lines,
            counts.first_bad_line.unwrap_or_default()
        ),
    )
}
