package io.gda4j.samples;

import java.io.PrintStream;
import java.util.Locale;

/** "[3/12] put_signal warp 4 KiB" lines on stderr, so long sweeps show where they are; silent for one step. */
final class Progress {
    private final PrintStream err;
    private final int total;
    private final boolean quiet;
    private final long startNanos = System.nanoTime();
    private int done;

    Progress(PrintStream err, int total, boolean quiet) {
        this.err = err;
        this.total = total;
        this.quiet = quiet || total <= 1;
    }

    void step(String what) {
        done++;
        if (!quiet) {
            err.printf(Locale.ROOT, "[%d/%d] %s%n", done, total, what);
            err.flush();
        }
    }

    void done() {
        if (!quiet) {
            err.printf(Locale.ROOT, "done: %d cases in %.1f s%n", total, (System.nanoTime() - startNanos) / 1e9);
        }
    }
}
