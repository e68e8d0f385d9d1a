package io.gda4j.ibgda;

import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.nic.CqeErrorRecord;
import io.gda4j.nic.emulated.EmulatedFault;
import io.gda4j.world.DeviceErrorDecoder;
import io.gda4j.world.ErrorRecord;
import io.gda4j.world.WorldConfig;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * Words the device error records of the IBGDA back end ({@code gda4j/transport/ibgda/device_qp.cuh}: an error CQE, a
 * send queue that stayed full, a stalled post, an inline payload too large, a SET over a relaxed-ordering QP). For
 * the last four, offset is the WQE counter and cmp the QP number. Registered in
 * {@code META-INF/services/io.gda4j.world.DeviceErrorDecoder}.
 */
public final class IbgdaErrorDecoder implements DeviceErrorDecoder {
    /** An error CQE ({@link CqeErrorRecord}: the host proxy's verbs handler writes it too). */
    public static final int CQE_ERROR = CqeErrorRecord.CODE;
    /** No free send queue slot in time (expected = completions needed, seen = completed). */
    public static final int SQ_FULL = 11;
    /** Posting or quiet stalled (expected = counter waited for, seen = counter reached). */
    public static final int POST_TIMEOUT = 12;
    /** An inline payload above the QP's max_inline, refused before posting (expected = bytes, seen = max_inline). */
    public static final int INLINE_TOO_LARGE = 13;
    /** A SET signal over a NIC that writes with relaxed ordering: it could overtake its data. */
    public static final int SET_SIGNAL_RELAXED = 14;

    private static final Map<Integer, String> CODES = Map.of(CQE_ERROR, CqeErrorRecord.NAME, SQ_FULL, "SQ_FULL",
            POST_TIMEOUT, "POST_TIMEOUT", INLINE_TOO_LARGE, "INLINE_TOO_LARGE", SET_SIGNAL_RELAXED,
            "SET_SIGNAL_RELAXED");

    @Override
    public Map<Integer, String> codes() {
        return CODES;
    }

    @Override
    public String describe(ErrorRecord r, String where, Duration waitTimeout) {
        switch (r.code()) {
            case CQE_ERROR:
                return where + ": " + describeCqe(r);
            case SQ_FULL:
            case POST_TIMEOUT:
                if (r.elapsedNanos() == 0) {
                    // transport/ibgda/qp.cuh fail_dead: a call on a QP that an earlier post left failed (elapsed is
                    // never 0 else).
                    return String.format(Locale.ROOT,
                            "%s: QP 0x%06x failed earlier: a post %s after reserving its send queue slots and never"
                                    + " published them (reserved %d WQEBBs, published %d, completed %d), so nothing"
                                    + " after them can be posted; every call on this QP fails at once. The first"
                                    + " failure's record says why; close the world and build a new one.",
                            where, r.cmp(), r.code() == SQ_FULL ? "found the send queue full" : "stalled",
                            r.expected(), r.offset(), r.seen());
                }
                return r.code() == SQ_FULL ? String.format(Locale.ROOT,
                        "%s: the send queue of QP 0x%06x stayed full for %.3f s: the WQE at counter %d needs %d WQEBBs"
                                + " completed, but only %d are. The NIC stopped completing work (emulated NIC: its"
                                + " engine thread stopped or the world is closing; real NIC: link down or the peer QP"
                                + " is not connected), or raise the wait timeout (%s or -D%s, now %d ms).",
                        where, r.cmp(), r.elapsedNanos() / 1e9, r.offset(), r.expected(), r.seen(),
                        WorldConfig.WAIT_TIMEOUT_ENV, WorldConfig.WAIT_TIMEOUT_PROP_NAME, waitTimeout.toMillis())
                        : String.format(Locale.ROOT,
                        "%s: posting on QP 0x%06x stalled for %.3f s at counter %d, waiting for %d and seeing %d"
                                + " (an earlier reservation was never published, the doorbell lock was held, or"
                                + " quiet waited for completions that never came). Another thread of the kernel may"
                                + " have failed first; the NIC may have stopped.",
                        where, r.cmp(), r.elapsedNanos() / 1e9, r.offset(), r.expected(), r.seen());
            case SET_SIGNAL_RELAXED:
                return String.format(Locale.ROOT,
                        "%s at heap offset 0x%x: QP 0x%06x writes with relaxed ordering, so a SET signal (an 8-byte"
                                + " WRITE) could arrive before the data it guards; nothing was posted. Signal with"
                                + " SignalOp.ADD (an RDMA atomic, which cannot pass the writes before it), or turn"
                                + " relaxed ordering off (GDA4J_MLX5_RELAXED_ORDERING=false).",
                        where, r.offset(), r.cmp());
            case INLINE_TOO_LARGE:
                return String.format(Locale.ROOT,
                        "%s at heap offset 0x%x: an inline payload of %d bytes exceeds the QP's max_inline of %d"
                                + " bytes; nothing was posted. Create the QPs with a larger inline limit (put_inline"
                                + " needs 16 bytes, a SET signal 8).",
                        where, r.offset(), r.expected(), r.seen());
            default:
                throw new IllegalArgumentException("not an IBGDA error code: " + r.code());
        }
    }

    /**
     * The error CQE ({@link CqeErrorRecord}) as the host's {@link CompletionErrorException} says it, plus the emulated
     * NIC's reason for its own vendor syndromes.
     */
    private static String describeCqe(ErrorRecord r) {
        long seen = r.seen();
        int syndrome = (int) (seen & 0xff);
        int vendor = (int) ((seen >>> 8) & 0xff);
        int cqeOpcode = (int) ((seen >>> 16) & 0xf);
        DecodedCqe cqe = new DecodedCqe(cqeOpcode, 0, r.cmp() & 0xffffff, (int) (r.offset() & 0xffff),
                (int) r.expected(), 0, syndrome, vendor);
        String text = new CompletionErrorException(cqe).getMessage();
        EmulatedFault emulated = EmulatedFault.ofVendorSyndrome(vendor);
        return emulated == null ? text : text + " Emulated NIC: " + emulated.description() + ".";
    }
}
