package io.gda4j.samples.nccl;

/** An NCCL call that returned something other than ncclSuccess, with NCCL's own words for it. */
public final class NcclException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int result;

    public NcclException(int result, String call) {
        super(call + " failed: ncclResult_t " + result + " (" + describe(result) + ")");
        this.result = result;
    }

    /** The {@code ncclResult_t}. */
    public int result() {
        return result;
    }

    static String describe(int result) {
        try {
            return LibNccl.ncclGetErrorString(result);
        } catch (LinkageError e) {
            return "no error string: " + LibNccl.unavailableReason();
        }
    }

    /** Throws unless {@code result} is ncclSuccess. */
    static void check(int result, String call) {
        if (result != LibNccl.NCCL_SUCCESS) {
            throw new NcclException(result, call);
        }
    }

    /**
     * Runs {@code calls} between {@code ncclGroupStart} and {@code ncclGroupEnd}; the group is closed even when a call
     * in it failed, and the first failure is thrown.
     */
    static void inGroup(Runnable calls) {
        check(LibNccl.ncclGroupStart(), "ncclGroupStart");
        NcclException failure = null;
        try {
            calls.run();
        } catch (NcclException e) {
            failure = e;
        } finally {
            int end = LibNccl.ncclGroupEnd();
            if (failure == null && end != LibNccl.NCCL_SUCCESS) {
                failure = new NcclException(end, "ncclGroupEnd");
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
