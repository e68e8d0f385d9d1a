package io.gda4j.verbs;

import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.nio.ByteBuffer;
import java.util.List;

/** A protection domain ({@code struct ibv_pd *}): memory regions and queue pairs are made in one. */
public final class ProtectionDomain extends VerbsResource {
    private final RdmaContext context;

    ProtectionDomain(RdmaContext context, long handle) {
        super(context.registry(), handle, List.of());
        this.context = context;
    }

    public RdmaContext context() {
        return context;
    }

    /**
     * Registers host (or host-mapped) memory, as verbs.h's {@code ibv_reg_mr} does: the plain symbol, or
     * {@code ibv_reg_mr_iova2} when {@code access} has an optional flag such as
     * {@link VerbsConstants#IBV_ACCESS_RELAXED_ORDERING}.
     *
     * @param access {@code IBV_ACCESS_*} flags; remote access needs {@code IBV_ACCESS_LOCAL_WRITE} too
     */
    public MemoryRegion registerHostMemory(long address, long lengthBytes, int access) {
        requireOpen();
        if ((access & VerbsConstants.IBV_ACCESS_OPTIONAL_RANGE) != 0 && !LibIbverbs.RegMrIova2.isAvailable()) {
            throw new VerbsException("optional access flags need ibv_reg_mr_iova2: "
                    + LibIbverbs.RegMrIova2.unavailableReason(), Errno.EOPNOTSUPP);
        }
        long mr = LibIbverbs.regMr(handle(), address, lengthBytes, access);
        if (mr == 0) {
            int errno = Native.getLastError();
            throw VerbsException.failed(String.format("ibv_reg_mr(%s, addr 0x%x, %d bytes, access 0x%x)", this,
                    address, lengthBytes, access), errno, regMrHint(errno));
        }
        return new MemoryRegion(this, mr, MemoryRegion.Kind.HOST);
    }

    /** Registers the memory of a direct buffer from its position to its limit. */
    public MemoryRegion registerHostMemory(ByteBuffer direct, int access) {
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("only direct buffers have a fixed address to register");
        }
        long address = Pointer.nativeValue(Native.getDirectBufferPointer(direct)) + direct.position();
        return registerHostMemory(address, direct.remaining(), access);
    }

    /**
     * {@code ibv_reg_dmabuf_mr}: registers memory exported as a dma-buf, the way GPU memory is registered without
     * nvidia-peermem ({@code cuMemGetHandleForAddressRange(..., CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, ...)}).
     *
     * @param fd          the dma-buf file descriptor
     * @param offset      byte offset of the region within the dma-buf
     * @param lengthBytes bytes to register
     * @param iova        the address the region gets in WQEs (usually the GPU virtual address)
     * @param access      {@code IBV_ACCESS_*} flags
     */
    public MemoryRegion registerDmabuf(int fd, long offset, long lengthBytes, long iova, int access) {
        requireOpen();
        if (!LibIbverbs.RegDmabufMr.isAvailable()) {
            throw new VerbsException("ibv_reg_dmabuf_mr is not available: "
                    + LibIbverbs.RegDmabufMr.unavailableReason(), Errno.EOPNOTSUPP);
        }
        long mr = LibIbverbs.RegDmabufMr.ibv_reg_dmabuf_mr(handle(), offset, lengthBytes, iova, fd, access);
        if (mr == 0) {
            int errno = Native.getLastError();
            throw VerbsException.failed(String.format("ibv_reg_dmabuf_mr(%s, fd %d, offset 0x%x, %d bytes, iova"
                    + " 0x%x, access 0x%x)", this, fd, offset, lengthBytes, iova, access), errno,
                    errno == Errno.EOPNOTSUPP || errno == Errno.EINVAL
                            ? "The kernel or NIC driver may lack dma-buf support (Linux 5.12+, MLNX_OFED 5.5+/inbox"
                            + " mlx5), or the range is not page aligned."
                            : regMrHint(errno));
        }
        return new MemoryRegion(this, mr, MemoryRegion.Kind.DMABUF);
    }

    /**
     * verbs.h's inline {@code ibv_alloc_null_mr}: an MR whose lkey discards writes and reads zeros. Used as the
     * local buffer of the PCIe-flush atomic, whose fetched value nobody needs.
     */
    public MemoryRegion allocateNullMemoryRegion() {
        requireOpen();
        String unsupported = LibIbverbs.nullMrUnsupportedReason(context.handle());
        if (unsupported != null) {
            throw new VerbsException("ibv_alloc_null_mr(" + this + ") is not available: " + unsupported,
                    Errno.EOPNOTSUPP);
        }
        long mr = LibIbverbs.allocNullMr(handle());
        if (mr == 0) {
            throw VerbsException.failed("ibv_alloc_null_mr(" + this + ")", Native.getLastError(),
                    "mlx5 supports null MRs on ConnectX-5 and later.");
        }
        return new MemoryRegion(this, mr, MemoryRegion.Kind.NULL);
    }

    /**
     * {@code ibv_create_qp} of a reliable-connected QP with its own send and receive CQs (they may be the same),
     * unsignaled by default ({@code sq_sig_all = 0}: a WQE asks for its CQE with
     * {@code WqeDescriptor.FM_CE_SE_CQ_UPDATE}). {@link QueuePair#capabilities()} says what the provider granted.
     */
    public QueuePair createQueuePair(CompletionQueue sendCq, CompletionQueue recvCq,
                                     QueuePairCapabilities requested) {
        requireOpen();
        if (sendCq.context() != context || recvCq.context() != context) {
            throw new IllegalArgumentException("the CQs belong to another RDMA context");
        }
        return QueuePair.create(this, sendCq, recvCq, requested);
    }

    @Override
    public String toString() {
        return String.format("PD 0x%x on %s", rawHandle(), context.deviceName());
    }

    @Override
    void destroy(long nativeHandle) {
        int rc = LibIbverbs.ibv_dealloc_pd(nativeHandle);
        if (rc != 0) {
            throw VerbsException.failed("ibv_dealloc_pd(" + this + ")", VerbsException.errnoOf(rc),
                    "A PD cannot go while MRs, QPs or other objects made outside gda4j still use it.");
        }
    }

    private static String regMrHint(int errno) {
        return switch (errno) {
            case Errno.ENOMEM -> "Usually the locked-memory limit: raise ulimit -l (memlock) or give the process"
                    + " CAP_IPC_LOCK.";
            case Errno.EFAULT -> "The address range is not mapped in this process.";
            case Errno.EINVAL -> "Check the access flags: remote write or atomic access needs local write too.";
            case Errno.EPERM, Errno.EACCES -> "This user may not pin the memory (or open the device).";
            default -> "";
        };
    }
}
