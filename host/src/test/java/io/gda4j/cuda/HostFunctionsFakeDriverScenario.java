package io.gda4j.cuda;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The child JVM of {@link HostFunctionsFakeDriverTest}: {@link HostFunctions} against fake_libcuda.c (found by
 * {@code jna.library.path}), printing what it saw as {@code key=value} lines.
 */
public final class HostFunctionsFakeDriverScenario {
    /** The fake's stream that runs a host function at once; the one that records it as a capture would. */
    static final long EAGER = 1;
    static final long CAPTURED = 2;

    /** The fake's replay of the host function recorded last (a graph launch). */
    static final class Fake {
        static {
            Native.register(Fake.class, NativeLibrary.getInstance(LibCuda.LIBRARY_NAME));
        }

        static native int fake_replay();
    }

    private HostFunctionsFakeDriverScenario() {
    }

    public static void main(String[] args) {
        System.out.println("unavailable=" + LibCuda.unavailableReason());
        AtomicInteger eager = new AtomicInteger();
        AtomicInteger captured = new AtomicInteger();
        String[] thread = new String[1];
        HostFunctions f = new HostFunctions("the scenario");
        f.queue(EAGER, false, () -> {
            eager.incrementAndGet();
            thread[0] = Thread.currentThread().getName();
        }, "eager");
        System.out.println("eager.ran=" + eager.get());
        System.out.println("thread=" + thread[0]);
        Fake.fake_replay();
        System.out.println("eager.afterReplay=" + eager.get());
        f.queue(CAPTURED, true, captured::incrementAndGet, "captured");
        System.out.println("captured.queued=" + captured.get() + "," + f.capturedCount());
        Fake.fake_replay();
        Fake.fake_replay();
        System.out.println("captured.replayed=" + captured.get());
        f.queue(CAPTURED, true, () -> {
            throw new IllegalStateException("the work failed");
        }, "failing");
        System.out.println("failing.replay=" + Fake.fake_replay());
        System.out.println("failure=" + f.failure().getMessage());
        f.queue(CAPTURED, true, captured::incrementAndGet, "captured last");
        f.close();
        Fake.fake_replay();
        System.out.println("closed.kept=" + f.capturedCount() + "," + captured.get());
        try {
            f.launch(null, captured::incrementAndGet);
            System.out.println("closed.launch=accepted");
        } catch (IllegalStateException e) {
            System.out.println("closed.launch=" + e.getMessage());
        }
    }
}
