package io.gda4j.samples;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * One {@code gda4j} invocation inside the test JVM: the exit code and what it printed.
 *
 * @param code the exit code {@link Main#run} returned
 * @param out  standard output
 * @param err  standard error
 */
record CliRun(int code, String out, String err) {

    static CliRun of(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = new Main().run(args, o, e);
        }
        return new CliRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
}
