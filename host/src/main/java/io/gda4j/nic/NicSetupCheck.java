package io.gda4j.nic;

import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.CqeSyndrome;

import com.sun.jna.Pointer;

import java.util.EnumSet;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What a world asks of a NIC, checked when a rank's NIC is set up, so that a missing piece fails there with its
 * reason instead of mid-run as an error CQE a report would blame on memory keys:
 * <ul>
 *   <li>8-byte RDMA atomics ({@link NicCapabilities#atomics()}): ADD signals, {@code atomic_add} and the PCIe flush
 *       are ATOMIC_FA work requests;</li>
 *   <li>a loopback RC connection: the flush and a rank's own ADDs ride a QP connected to itself, which a NIC (or its
 *       port, its GID, a local-loopback policy) may refuse. {@link #probeLoopback} posts one fetch-and-add from the
 *       host on a fresh loopback QP and checks that it completes and adds.</li>
 * </ul>
 */
public final class NicSetupCheck {
    /** How long the loopback probe waits for its completion (RC retries on a refused path take under a second). */
    public static final long PROBE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** Host memory the probe needs: the target word at 0, the fetched value at 8. */
    public static final int PROBE_BYTES = 16;

    private NicSetupCheck() {
    }

    /** Throws {@link NicException} naming {@code who} when {@code nic} has no 8-byte RDMA atomics. */
    public static void requireAtomics(Nic nic, String who) {
        if (!nic.capabilities().atomics()) {
            throw new NicException(who + ": " + nic.description() + " offers no 8-byte RDMA atomics (atomic_cap"
                    + " IBV_ATOMIC_NONE), and ibgda's ADD signals, atomic_add and the PCIe flush are ATOMIC_FA work"
                    + " requests. Check 'ibv_devinfo -v | grep atomic_cap' (a virtual function or a firmware setting"
                    + " can hide them), use a NIC with atomics, or --transport proxy with SET signals only");
        }
    }

    /**
     * Connects a QP of {@code nic} to itself and posts one 8-byte fetch-and-add of 1 from the host on
     * {@code words} (host memory of {@link #PROBE_BYTES}, reachable by the NIC), checking that it completes within
     * {@code timeoutNanos}, adds, and returns the old value. Throws {@link NicException} naming {@code who}, what
     * failed and what to check. Everything it made is closed again.
     */
    public static void probeLoopback(Nic nic, long words, String who, long timeoutNanos) {
        Pointer memory = new Pointer(words);
        memory.setLong(0, 0x5eed);
        memory.setLong(8, 0);
        String what = who + ": a loopback RC connection on " + nic.description();
        try (NicMemory region = nic.registerMemory(new MemoryRegistration(null, words, PROBE_BYTES,
                MemoryKind.HOST_MAPPED, EnumSet.of(NicAccess.LOCAL_WRITE, NicAccess.REMOTE_ATOMIC),
                who + " loopback probe"))) {
            NicQp qp = nic.createLoopbackQp(QpSpec.of(null, 2, who + " loopback probe"));
            try {
                HostPoster poster = qp.hostPoster();
                poster.postFetchAdd(region.address(), region.rkey(), 1, region.address() + 8, region.lkey(),
                        timeoutNanos);
                poster.quiet(timeoutNanos);
            } finally {
                qp.close();
            }
        } catch (CompletionErrorException e) {
            throw new NicException(what + " failed: " + e.getMessage() + " " + hint(e.syndrome()), e);
        } catch (TimeoutException e) {
            throw new NicException(what + " completed nothing in " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                    + " ms: " + e.getMessage() + ". " + hint(CqeSyndrome.TRANSPORT_RETRY_EXC), e);
        } catch (NicException e) {
            throw new NicException(what + " could not be made: " + e.getMessage() + ". The PCIe flush and this"
                    + " rank's own ADDs ride a QP connected to itself", e);
        }
        long target = memory.getLong(0);
        long fetched = memory.getLong(8);
        if (target != 0x5eed + 1 || fetched != 0x5eed) {
            throw new NicException(String.format(Locale.ROOT, "%s completed, but its fetch-and-add left 0x%x (want"
                    + " 0x%x) and fetched 0x%x (want 0x5eed): the NIC's atomics do not work on host memory as"
                    + " RDMA atomics must", what, target, 0x5eed + 1, fetched));
        }
    }

    private static String hint(CqeSyndrome syndrome) {
        String base = "The PCIe flush and this rank's own ADDs ride a QP connected to itself. ";
        if (syndrome == null) {
            return base + "Paste the message into an issue.";
        }
        return base + switch (syndrome) {
            case TRANSPORT_RETRY_EXC, RNR_RETRY_EXC -> "The QP could not reach itself: is the port ACTIVE (and on"
                    + " InfiniBand given a LID by a subnet manager), is the RoCE GID one of this port's"
                    + " (GDA4J_MLX5_GID_INDEX), and does a local-loopback policy of the NIC, its DPU or its eswitch"
                    + " drop traffic to itself? (docs/CONNECTX.md, \"loopback\")";
            case REMOTE_INVAL_REQ, REMOTE_OP -> "The NIC refused the 8-byte atomic: atomics are off for this device"
                    + " or its QPs ('ibv_devinfo -v | grep atomic_cap').";
            default -> "(" + syndrome.meaning() + ")";
        };
    }
}
