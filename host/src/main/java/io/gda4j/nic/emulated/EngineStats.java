package io.gda4j.nic.emulated;

/**
 * Counters of the emulated NIC's engine since the NIC was opened; subtract two snapshots for a run.
 *
 * @param wqes       WQEs taken off send queues (executed, failed or flushed)
 * @param bytes      payload bytes queued for copying (WRITE, inline, READ) and atomics (8 each)
 * @param errors     WQEs that failed (one per QP that went to the error state, plus CQ overruns)
 * @param flushed    WQEs completed with WR_FLUSH
 * @param busyNanos  engine-thread time spent handling WQEs (decode, checks, queuing the CUDA work)
 * @param passes     polling passes over all QPs
 */
public record EngineStats(long wqes, long bytes, long errors, long flushed, long busyNanos, long passes) {
    /** The counters accumulated between {@code earlier} and this snapshot. */
    public EngineStats since(EngineStats earlier) {
        return new EngineStats(wqes - earlier.wqes, bytes - earlier.bytes, errors - earlier.errors,
                flushed - earlier.flushed, busyNanos - earlier.busyNanos, passes - earlier.passes);
    }

    /** Engine-thread nanoseconds per WQE (the emulated NIC's per-WQE overhead), or NaN without WQEs. */
    public double nanosPerWqe() {
        return wqes == 0 ? Double.NaN : (double) busyNanos / wqes;
    }

    /** WQEs per second of engine busy time: the rate the engine could sustain if it never waited. */
    public double wqesPerBusySecond() {
        return busyNanos == 0 ? Double.NaN : wqes * 1e9 / busyNanos;
    }
}
