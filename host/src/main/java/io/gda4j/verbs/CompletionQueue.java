package io.gda4j.verbs;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import java.util.List;

/** A completion queue ({@code struct ibv_cq *}), polled directly through its mlx5 buffers. */
public final class CompletionQueue extends VerbsResource {
    private final RdmaContext context;
    private final int capacity;

    CompletionQueue(RdmaContext context, long handle) {
        super(context.registry(), handle, List.of());
        this.context = context;
        this.capacity = new Pointer(handle).getInt(IbvCqDescriptor.CQE_OFFSET);
    }

    public RdmaContext context() {
        return context;
    }

    /** {@code ibv_cq.cqe}: the entries the provider granted (at least what was asked). */
    public int capacity() {
        return capacity;
    }

    /**
     * {@code mlx5dv_init_obj(MLX5DV_OBJ_CQ)}: the CQE ring and doorbell record. From then on direct verbs owns the
     * consumer index: whoever polls the ring must also update the doorbell record.
     */
    public Mlx5CqBuffers mlx5Buffers() {
        requireOpen();
        Mlx5Support.requireAvailable("the CQ's mlx5 buffers");
        try (Memory obj = new Memory(Mlx5dvObjDescriptor.SIZE); Memory out = new Memory(Mlx5dvCqDescriptor.SIZE)) {
            obj.clear();
            out.clear();
            obj.setLong(Mlx5dvObjDescriptor.CQ_IN_OFFSET, handle());
            obj.setLong(Mlx5dvObjDescriptor.CQ_OUT_OFFSET, Pointer.nativeValue(out));
            int rc = LibMlx5.mlx5dv_init_obj(Pointer.nativeValue(obj), Mlx5dvObjDescriptor.OBJ_CQ);
            if (rc != 0) {
                throw VerbsException.failed("mlx5dv_init_obj(" + this + ", MLX5DV_OBJ_CQ)", VerbsException.errnoOf(rc),
                        Mlx5Support.NOT_MLX5_HINT);
            }
            return Mlx5CqBuffers.read(out);
        }
    }

    @Override
    public String toString() {
        return String.format("CQ 0x%x (%d entries) on %s", rawHandle(), capacity, context.deviceName());
    }

    @Override
    void destroy(long nativeHandle) {
        int rc = LibIbverbs.ibv_destroy_cq(nativeHandle);
        if (rc != 0) {
            throw VerbsException.failed("ibv_destroy_cq(" + this + ")", VerbsException.errnoOf(rc),
                    "A CQ cannot go while a QP made outside gda4j still uses it.");
        }
    }
}
