package io.gda4j.cuda;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

/**
 * Driver settings gda4j picks before the CUDA driver initializes, because they cannot be changed afterwards.
 *
 * <p>{@code CUDA_DEVICE_MAX_CONNECTIONS}: the driver gives each context this many hardware work queues (8 unless
 * set, at most 32) and maps every stream onto one of them; a queue runs in order. gda4j's kernels spin until another
 * stream does something (a peer rank's kernel, a proxy copy and signal, an emulated-NIC stream), and ranks that share
 * a GPU bring two streams each plus the transports' streams. Two such streams on one queue can wait for each other
 * forever (an event record queued behind a spinning kernel holds up a signal the kernel waits for). So when the
 * process environment does not set it, gda4j sets it to 32 (through the C library's {@code setenv}, which the driver
 * reads; Java's own environment copy never changes) before the first driver call. A value the user set is kept.
 */
final class DriverEnvironment {
    static final String MAX_CONNECTIONS_ENV = "CUDA_DEVICE_MAX_CONNECTIONS";
    /** The driver's default and its ceiling. */
    static final int DEFAULT_MAX_CONNECTIONS = 8;
    static final int MAX_MAX_CONNECTIONS = 32;

    private static final boolean LIBC;

    static {
        boolean bound;
        try {
            Native.register(DriverEnvironment.class, NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
            bound = true;
        } catch (LinkageError | RuntimeException e) {
            bound = false;
        }
        LIBC = bound;
    }

    /** What was decided, for {@code gda4j info} and for code that needs the queue count. */
    record MaxConnections(int queues, String source) {
    }

    private static MaxConnections chosen;

    private DriverEnvironment() {
    }

    /** Sets {@code CUDA_DEVICE_MAX_CONNECTIONS} to 32 unless the environment has it; once, before the driver starts. */
    static synchronized MaxConnections applyBeforeDriverStarts() {
        if (chosen == null) {
            String given = System.getenv(MAX_CONNECTIONS_ENV);
            if (given != null && !given.isBlank()) {
                chosen = new MaxConnections(parse(given), MAX_CONNECTIONS_ENV + "=" + given.strip() + " (from the environment)");
            } else if (LIBC && setenv(MAX_CONNECTIONS_ENV, Integer.toString(MAX_MAX_CONNECTIONS), 0) == 0) {
                chosen = new MaxConnections(MAX_MAX_CONNECTIONS, MAX_CONNECTIONS_ENV + "=" + MAX_MAX_CONNECTIONS
                        + " (set by gda4j: unset in the environment)");
            } else {
                chosen = new MaxConnections(DEFAULT_MAX_CONNECTIONS, MAX_CONNECTIONS_ENV + " unset (the driver's "
                        + DEFAULT_MAX_CONNECTIONS + "; gda4j could not set it: no C library binding)");
            }
        }
        return chosen;
    }

    /** The queues the driver makes of {@code value}: 1..32, the default for unset or anything it cannot read. */
    static int parse(String value) {
        if (value == null || value.isBlank()) {
            return DEFAULT_MAX_CONNECTIONS;
        }
        try {
            int v = Integer.parseInt(value.strip());
            return v < 1 ? DEFAULT_MAX_CONNECTIONS : Math.min(v, MAX_MAX_CONNECTIONS);
        } catch (NumberFormatException e) {
            return DEFAULT_MAX_CONNECTIONS;
        }
    }

    private static native int setenv(String name, String value, int overwrite);
}
