// Package fileio is perfwh's file I/O driver ("fileio"), comparable to fio's
// psync engine: threads issue pread(2) or pwrite(2) of block_size bytes and
// every operation becomes one records.OpSample.
//
// # Parameters
//
// Workload: mode (read, write, randread, randwrite; default read),
// file_size (default 64MiB, per file), block_size (default 4KiB, at least
// 512), threads (1-256, default 1), fsync (write modes: fsync after every N
// writes of a thread; 0, the default, never), direct (O_DIRECT, default
// false), file_per_thread (default false). Target: dir (an existing
// directory for the files; default "", the trial's WorkDir).
//
// # Files
//
// Open lays out fileio.dat (or fileio.N.dat for thread N with
// file_per_thread) by writing it fully with incompressible pseudo-random
// data (ChaCha8 from the trial seed) and fsyncing it, unless a regular file
// of exactly file_size is already there, which is used as it is (like fio,
// which lays out only missing or short files). Open fails with a clear
// error when block_size exceeds file_size, when the file system lacks the
// space, or when direct=true and the file system refuses O_DIRECT (at open
// or at a probe read), naming the path: it never falls back to buffered
// I/O. Close removes the files it created in a target dir; files in the
// WorkDir are left for the runner, and pre-existing files are never removed.
//
// Nothing is dropped from the page cache, before or between phases (fio
// --invalidate=0): read modes on a file smaller than memory measure cached
// reads. With direct=true reads and writes bypass the cache. Buffers are
// 4096-byte aligned for O_DIRECT.
//
// # Offsets
//
// Sequential modes walk block_size steps and wrap. On a shared file
// (file_per_thread=false) thread i owns the disjoint region
// [i*R, (i+1)*R) with R = floor(file_size/block_size/threads)*block_size;
// that is fio's numjobs on one filename with size=R and offset_increment=R
// (plain numjobs would have every job read the same bytes from offset 0).
// With file_per_thread each thread walks its own whole file (fio numjobs
// without filename).
//
// Random modes draw block-aligned offsets uniformly over the whole file
// (shared or the thread's own), with replacement, from a math/rand/v2 PCG
// seeded with (Seed + thread index, a fixed stream constant): the same seed
// gives the same offsets. fio's equivalent is --norandommap (fio's default
// random map instead visits every block once per pass).
//
// Writes stamp the first 8 bytes of each block with its offset (little
// endian), so readers and tests can see where writes landed; the rest of
// the payload is incompressible and fixed per thread.
//
// # Phases and samples
//
// Run stops when the phase's duration has elapsed (checked after every
// operation on the monotonic clock), when its operation count is done
// (split across threads, the first Operations%threads threads doing one
// more; fsyncs do not count) or when ctx is done (then it records what was
// done and returns ctx's error). A failed or short read or write stops its
// thread and ends the phase, like fio without continue_on_error; the
// sample carries ErrorKind io, short_read or short_write and Run returns
// an error naming the path and offset. Thread state (offset, random
// stream, sequence numbers, writes since the last fsync) carries over from
// warmup to measure.
//
// Samples: Op read, write or fsync (fsyncs are their own samples with
// Bytes 0); IntendedNs = StartNs = offset of the issue from the trial
// origin (closed loop); LatencyNs = completion - start; Seq counts per
// thread over the trial.
//
// Recording: while a phase runs each thread writes compact, pointer-free
// samples into 4096-sample chunks, and the samples are converted and
// appended to the Recorder in one batch when the threads stop (also when
// ctx is done; if a thread is stuck in the kernel, Run waits a second and
// records what the others did). Appending to the Recorder during the phase
// made its slice grow and copy and the garbage collector scan it while the
// I/O ran, which cost about 30% of 4 KiB cached random-read IOPS on 2 cores
// (bench/README.md). A thread also yields to the Go scheduler every 2ms so
// that the runtime's sysmon thread does not force-preempt it and fall into
// fast polling (see yieldEvery).
//
// # Summary
//
// Run returns ops (reads or writes, failed ones included), bytes, errors,
// fsyncs, duration_s (phase wall time), throughput_mb_per_s (MB = 10^6
// bytes, like fio's MB/s), iops (ops/duration_s) and latency_p50_us,
// latency_p90_us, latency_p99_us, latency_p999_us over the phase's reads or
// writes (plus fsync_latency_p50_us and fsync_latency_p99_us when there were
// fsyncs). Percentiles are exact, by nearest rank: the p-th percentile of n
// sorted latencies is the one at rank ceil(p/100*n), the smallest value
// with at least p% of the values at or below it. fio reports completion
// latency (clat) percentiles from a log-linear histogram (about 1.5%
// resolution), so small differences between the two are expected.
package fileio
