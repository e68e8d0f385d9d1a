package io.gda4j.world;

import java.util.List;

/**
 * A world's close found kernels still running after it raised every abort flag and waited the device wait timeout
 * and 5 s more: kernels that do not poll the abort flag (a kernel of the caller's), or a hung one. Freeing the
 * world's GPU memory or unloading its modules would wait for them, forever if they never return, so the close left
 * the GPU side as it was and closed the host side only (threads, sockets). The process gets the GPU memory back when
 * it ends.
 */
public final class KernelsStillRunningException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** An array, not a List: it serializes with the exception. */
    private final String[] gpus;

    KernelsStillRunningException(List<String> gpus, long waitedMillis) {
        super("closing the world: kernels still ran on " + String.join(", ", gpus) + " after the abort flags were"
                + " raised and close waited " + waitedMillis + " ms (a kernel that does not poll the abort flag, or a"
                + " hung one); the world's GPU memory, modules and streams were left allocated, since freeing them"
                + " would wait for those kernels: end the process to get them back");
        this.gpus = gpus.toArray(String[]::new);
    }

    /** The GPUs on which kernels still ran, as their names read. */
    public List<String> gpus() {
        return List.of(gpus);
    }
}
