// Package host provides the "host" collector: host-wide CPU, memory, disk,
// network and scheduler telemetry read through gopsutil (/proc and /sys on
// Linux) at every tick of a trial's sampling interval.
//
// The first sample is taken as Run starts and then one on every tick of a
// time.Ticker. Every point of a sample carries the same TimeUnixNs (wall
// clock, UTC) and OffsetNs (monotonic nanoseconds since the trial origin).
//
// Cumulative kernel counters are emitted as they are read, with the suffix
// _total; they count since boot (or since the device appeared), so only
// their differences mean anything. Next to them the collector emits
// per-interval values computed from the difference between this sample and
// the previous one divided by the monotonic time between them: the
// _per_second rates, disk_busy_percent and all cpu_*_percent values. Those
// appear from the second sample on, and are left out for a device whose
// counter went backwards (reset or re-created) or that was not in the
// previous sample.
//
// If reading a metric family fails (say /proc/diskstats is missing in a
// container), the collector logs one warning through slog.Default and
// leaves that family out for the rest of the run; it fails only when no
// family can be read at all.
//
// # Options
//
//	include_loopback   bool  keep the loopback interface "lo" (default false)
//	include_all_disks  bool  keep partitions and ram, zram, loop and floppy
//	                         devices (default false: node_exporter's
//	                         default exclusion, so per-disk values do not
//	                         count the same I/O twice)
//
// Any other key is an error.
//
// # Metrics
//
// Names are lowercase snake case with the unit last. Device is "" for a
// host-wide value, cpuN for a CPU (as numbered in /proc/stat), the kernel's
// block device name (sda, nvme0n1, vda, dm-0) or the interface name (eth0).
// load1, load5 and load15 are dimensionless and keep their customary names.
// A test parses the table below and fails if the collector emits a metric
// that it does not list, or if it lists one the collector does not know.
//
//	| metric                      | unit    | device    | meaning                                                                   |
//	|-----------------------------|---------|-----------|---------------------------------------------------------------------------|
//	| cpu_utilization_percent     | percent | "", cpuN  | share of CPU time neither idle nor in iowait (steal counts as busy)       |
//	| cpu_user_percent            | percent | ""        | time in user mode, niced and guest time included                          |
//	| cpu_system_percent          | percent | ""        | time in kernel mode, interrupts excluded                                  |
//	| cpu_iowait_percent          | percent | ""        | idle time with I/O outstanding                                            |
//	| cpu_steal_percent           | percent | ""        | time the hypervisor ran something else while this VM wanted to run        |
//	| load1                       | 1       | ""        | load average over 1 minute (runnable and uninterruptible tasks)           |
//	| load5                       | 1       | ""        | load average over 5 minutes                                               |
//	| load15                      | 1       | ""        | load average over 15 minutes                                              |
//	| memory_used_bytes           | bytes   | ""        | total - free - buffers - cached (gopsutil's definition)                   |
//	| memory_available_bytes      | bytes   | ""        | MemAvailable: allocatable without swapping                                |
//	| memory_cached_bytes         | bytes   | ""        | page cache plus reclaimable slab                                          |
//	| memory_used_percent         | percent | ""        | memory_used_bytes over total memory                                       |
//	| swap_used_bytes             | bytes   | ""        | swap in use                                                               |
//	| disk_read_bytes_total       | bytes   | disk      | bytes read since boot                                                     |
//	| disk_write_bytes_total      | bytes   | disk      | bytes written since boot                                                  |
//	| disk_read_ops_total         | ops     | disk      | reads completed since boot                                                |
//	| disk_write_ops_total        | ops     | disk      | writes completed since boot                                               |
//	| disk_io_time_seconds_total  | seconds | disk      | time the device had I/O in flight, since boot                             |
//	| disk_read_bytes_per_second  | bytes/s | disk      | bytes read per second over the interval                                   |
//	| disk_write_bytes_per_second | bytes/s | disk      | bytes written per second over the interval                                |
//	| disk_read_ops_per_second    | ops/s   | disk      | reads completed per second over the interval                              |
//	| disk_write_ops_per_second   | ops/s   | disk      | writes completed per second over the interval                             |
//	| disk_busy_percent           | percent | disk      | share of the interval with I/O in flight (utilisation, as iostat %util)   |
//	| net_rx_bytes_total          | bytes   | interface | bytes received since boot                                                 |
//	| net_tx_bytes_total          | bytes   | interface | bytes sent since boot                                                     |
//	| net_rx_packets_total        | packets | interface | packets received since boot                                               |
//	| net_tx_packets_total        | packets | interface | packets sent since boot                                                   |
//	| net_rx_errors_total         | errors  | interface | receive errors since boot                                                 |
//	| net_tx_errors_total         | errors  | interface | transmit errors since boot                                                |
//	| net_rx_drops_total          | packets | interface | received packets dropped since boot                                       |
//	| net_tx_drops_total          | packets | interface | outgoing packets dropped since boot                                       |
//	| net_rx_bytes_per_second     | bytes/s | interface | bytes received per second over the interval                               |
//	| net_tx_bytes_per_second     | bytes/s | interface | bytes sent per second over the interval                                   |
//	| net_rx_packets_per_second   | 1/s     | interface | packets received per second over the interval                             |
//	| net_tx_packets_per_second   | 1/s     | interface | packets sent per second over the interval                                 |
//	| context_switches_total      | 1       | ""        | context switches on all CPUs since boot                                   |
//	| context_switches_per_second | 1/s     | ""        | context switches per second over the interval                             |
package host
