package io.gda4j.samples;

import io.gda4j.cuda.Cuda;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** The command line as a user meets it: help, exit codes, one-line errors, never a stack trace. */
class MainTest {
    record Run(int code, String out, String err) {
    }

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new Main().run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void noArgumentsPrintsUsageAndExits2() {
        Run r = run();
        assertEquals(2, r.code());
        assertEquals("", r.out(), "exit 2: the usage goes to stderr");
        assertTrue(r.err().contains("usage: gda4j COMMAND"), r.err());
        assertTrue(r.err().contains("latency"), r.err());
    }

    @ParameterizedTest
    @ValueSource(strings = {"help bogus", "help latency extra", "--help bogus", "--version extra"})
    void helpOfNoCommandAndVersionWithArgumentsExit2(String line) {
        Run r = run(line.split(" "));
        assertEquals(2, r.code(), line + " -> " + r.err());
        assertEquals("", r.out(), line);
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    @Test
    void theOptionParsersRefusalsNameTheOptionAndWhatIsAccepted() {
        Run unknown = run("latency", "--itres", "5");
        assertEquals(2, unknown.code());
        assertTrue(unknown.err().startsWith("gda4j latency: unknown option '--itres' (did you mean --iters?); the"
                + " options are "), unknown.err());
        assertTrue(unknown.err().contains("--sizes") && unknown.err().contains("--transport"), unknown.err());
        Run missing = run("latency", "--iters");
        assertEquals(2, missing.code());
        assertTrue(missing.err().startsWith("gda4j latency: --iters needs a value (N)"), missing.err());
        assertEquals("'--s' is the start of several options (--sizes, --scope): write one out",
                Main.parseMessage(new org.apache.commons.cli.AmbiguousOptionException("--s", List.of("sizes", "scope")),
                        new org.apache.commons.cli.Options()));
        Run ambiguous = run("latency", "--s", "8");
        assertEquals(2, ambiguous.code());
        assertTrue(ambiguous.err().startsWith("gda4j latency: '--s' is the start of several options (--"),
                ambiguous.err());
        assertTrue(ambiguous.err().contains("--sizes"), ambiguous.err());
        for (Run r : List.of(unknown, missing, ambiguous)) {
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertFalse(r.err().contains("Unrecognized") || r.err().contains("Missing argument")
                    || r.err().contains("Ambiguous option"), r.err());
        }
    }

    @Test
    void helpAndVersionExit0() {
        assertEquals(0, run("--help").code());
        Run v = run("--version");
        assertEquals(0, v.code());
        assertTrue(v.out().startsWith("gda4j "), v.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"info", "latency", "bandwidth", "compare"})
    void everyCommandHasHelpThatTeaches(String command) {
        Run r = run(command, "--help");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("gda4j " + command), r.out());
        assertTrue(r.out().contains("examples:"), r.out());
        assertFalse(r.out().contains("p2p vs proxy"), "compare compares every transport: " + r.out());
        Run viaHelp = run("help", command);
        assertEquals(r.out(), viaHelp.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"latency", "bandwidth", "compare", "hostflag", "moe"})
    void theTimeoutsHelpNamesTheSettingItsDefaultComesFrom(String command) {
        String help = run(command, "--help").out().replaceAll("\\s+", " ");
        assertTrue(help.contains("(default GDA4J_WAIT_TIMEOUT_MS / -Dgda4j.waitTimeoutMillis, else 10000)"), help);
    }

    @Test
    void unknownCommandIsOneLineExit2() {
        Run r = run("frobnicate");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("unknown command 'frobnicate'"), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    @Test
    void theProxyTransportIsListedAndConfigured() {
        Run help = run("latency", "--help");
        assertTrue(help.out().contains("proxy"), help.out());
        Run info = run("info");
        assertTrue(info.out().contains("GDA4J_PROXY_FIFO_DEPTH"), info.out());
        assertTrue(info.out().contains("proxy "), info.out());
    }

    @Test
    void infoWorksWithOrWithoutAGpu() {
        Run r = run("info");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("CUDA"), r.out());
        assertTrue(r.out().contains("Transports"), r.out());
        assertTrue(r.out().contains("GDA4J_HEAP_SIZE"), r.out());
        if (!Cuda.status().available()) {
            assertTrue(r.out().contains(Cuda.status().reason()), r.out());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "latency --transport nope",
        "latency --sizes 8,abc",
        "latency --sizes 1m:8",
        "latency --sizes 2g",
        "latency --mode shout",
        "latency --scopes galaxy",
        "latency --iters 0",
        "latency --iters many",
        "latency --block-threads 33",
        "latency --gpus 0",
        "latency --gpus 0,x",
        "latency --gpus 0,1 --peer 2",
        "latency --rank -1",
        "latency --rank 1 --peer 1",
        "latency --csv --json",
        "latency --timeout-ms 0",
        "latency --bogus",
        "latency extra-argument",
        "bandwidth --sizes 8",
        "bandwidth --threads 100",
        "bandwidth --reps 0",
        "bandwidth --chunk 10",
        "bandwidth --transport nope",
        "bandwidth --nic infiniband",
        "latency --nic",
        "compare --transports p2p,nope",
        "compare --what speed",
        "compare --scope galaxy",
        "compare --reps 0",
        "compare --sizes 4g",
        "compare --from /nonexistent/compare.csv",
        "compare --plot /nonexistent-dir/x.png",
        "compare --transport proxy",
        "latency --mode fifo,shout",
        "latency --sizes 8,,16",
        "latency --sizes 8,8",
        "latency --mode signal,,signal",
        "latency --mode signal,signal",
        "latency --scopes warp,",
        "latency --iters -1",
        "latency --warmup -1",
        "latency --gpus 0,,1",
        "latency --timeout-ms 3000000000",
        "bandwidth --blocks 0",
        "bandwidth --blocks -1",
        "bandwidth --iters 0",
        "bandwidth --iters -1",
        "compare --transports p2p,p2p",
        "compare --transports p2p,,proxy",
        "compare --what latency,latency",
        "compare --iters 0",
        "compare --plot /",
        "compare --from /",
        "hostflag --backend auto,,auto",
        "hostflag --iters 0",
        "hostflag --gpu -1",
        "hostflag --backend all,gdrcopy",
        "moe --tokens 128,128",
        "moe --tokens 1:99999999",
        "moe --tokens 99999999",
        "moe --tokens 1:2:4",
        "moe --topk 8 --experts 3",
        "moe --hidden 100",
        "latency --iters",
        "latency --s 8",
    })
    void badInputIsOneLineAndExit2(String line) {
        Run r = run(line.split(" "));
        assertEquals(2, r.code(), line + " -> " + r.err());
        assertFalse(r.err().contains("\tat "), "stack trace for " + line + ":\n" + r.err());
        assertEquals(1, r.err().strip().lines().count(), line + " -> " + r.err());
        assertTrue(r.err().contains("--help"), r.err());
    }

    @Test
    void messagesKeepTheCaseOfWhatTheyQuote() {
        Run r = run("latency", "--gpus", "A,b");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("GPU list 'A,b'"), r.err());
        Run t = run("latency", "--transport", "NoPe");
        assertTrue(t.err().contains("'NoPe'"), t.err());
        Run o = run("latency", "--Bogus");
        assertTrue(o.err().contains("gda4j latency: unknown option '--Bogus'"), o.err());
    }

    @Test
    void aCountIsAtLeastOneEverywhere() {
        for (String[] line : new String[][] {{"latency", "--iters", "0"}, {"bandwidth", "--iters", "0"},
            {"bandwidth", "--blocks", "0"}, {"compare", "--iters", "0"}, {"hostflag", "--iters", "0"}}) {
            Run r = run(line);
            assertEquals(2, r.code(), String.join(" ", line) + " -> " + r.err());
            assertTrue(r.err().contains("--" + line[1].substring(2) + " accepts a whole number from 1 to "), r.err());
        }
    }

    @Test
    void aTimeoutBeyondTheSettingsRangeNamesTheOptionGiven() {
        Run r = run("latency", "--timeout-ms", "3000000000");
        assertTrue(r.err().contains("--timeout-ms accepts a whole number from 1 to 86400000, got '3000000000'"), r.err());
    }

    @Test
    void validInputWithoutAGpuSaysWhyItCannotRun() {
        assumeFalse(Cuda.status().available(), "a GPU is present: the run would start instead");
        Run r = run("latency", "--mode", "signal");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("needs a CUDA GPU"), r.err());
        assertTrue(r.err().contains(Cuda.status().reason()), r.err());
    }
}
