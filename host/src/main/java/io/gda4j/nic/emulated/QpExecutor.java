package io.gda4j.nic.emulated;

/**
 * Carries out one QP's validated work in order: what the wire and the remote NIC do. Every method queues work
 * behind what was queued before (a CUDA stream) and returns without waiting; {@link #publishCqe} must become visible
 * only after everything queued before it has landed, so a CQE never overtakes its data.
 *
 * <p>Addresses are the ones registered with the NIC (GPU device pointers, or mapped host memory), already checked
 * against the registration table: an executor never sees an address outside a registered region, except the ring
 * addresses the engine itself passes for inline payloads and CQEs.
 *
 * <p>Methods throw only when the platform fails (a CUDA error); the engine then fails the QP.
 */
public interface QpExecutor extends AutoCloseable {
    /** Copies {@code bytes} from {@code src} to {@code dst} (WRITE, READ, an inline payload out of the ring). */
    void copy(long dst, long src, long bytes);

    /** Writes {@code bytes} zeros at {@code dst} (a WRITE whose source is the null region, which reads as zeros). */
    void zero(long dst, long bytes);

    /** Stores 8 bytes at {@code dst} (8-byte aligned) in one store: inline 8- and 16-byte writes. */
    void store64(long dst, long value);

    /**
     * An 8-byte atomic at {@code target} (8-byte aligned): {@code ATOMIC_FA} adds {@code swapAdd}, {@code ATOMIC_CS}
     * swaps in {@code swapAdd} if the word equals {@code compare}; the old value is stored at {@code fetchDst}, or
     * dropped when {@code fetchDst} is 0 (the null region). {@code opcode} is the mlx5 opcode.
     *
     * <p>{@code splitNanos} 0: one atomic operation of the memory (atomic with every other writer). Above 0 (strict
     * atomics): as a NIC does it, a read of the word, a pause of {@code splitNanos}, then a write, so another writer's
     * update in between is lost; atomics of this NIC (every executor of one platform) must still be atomic with
     * each other, as a responder NIC's are.
     *
     * <p>{@code lockAddress} (only with a split; 0: none): the responder's atomic lock line, which other processes'
     * NICs take too before their atomics on the same memory ({@link EmulatedNic#serializeAtomics}); the split runs
     * while holding it.
     */
    void atomic(int opcode, long target, long swapAdd, long compare, long fetchDst, long splitNanos, long lockAddress);

    /**
     * Publishes a CQE: an 8-byte store of {@code tailBigEndian} (the CQE's last 8 bytes as a long whose big-endian
     * bytes are the CQE bytes 56..63) at ring offset {@code cqeTailOffset} of the QP's ring memory, after everything
     * queued before it. The engine has written the CQE's body with plain stores before calling this.
     */
    void publishCqe(long cqeTailOffset, long tailBigEndian);

    /** Waits until everything queued has been carried out (used when a QP closes). */
    void drain();

    /** Releases the executor's resources (a stream); idempotent. */
    @Override
    void close();
}
