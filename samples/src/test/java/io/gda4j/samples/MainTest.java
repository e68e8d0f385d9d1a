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
        assertTrue(ambiguous.err().startsWith("gda4j latency: unknown option '--s': options are written out in full,"
                + " e.g. --scopes or --sizes"), ambiguous.err());
        for (Run r : List.of(unknown, missing, ambiguous)) {
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertFalse(r.err().contains("Unrecognized") || r.err().contains("Missing argument")
                    || r.err().contains("Ambiguous option"), r.err());
        }
    }

    /** "First wins" would run '--iters 5 --iters abc' with 5: a repeat is refused, naming both values. */
    @ParameterizedTest
    @ValueSource(strings = {"latency --iters 5 --iters abc", "latency --csv --csv", "compare --what latency --what both",
        "bandwidth --sizes 4k --sizes=8k", "moe --check --check", "info --json --json", "hostflag --iters 1 --iters 2"})
    void anOptionGivenTwiceIsRefused(String line) {
        Run r = run(line.split(" "));
        assertEquals(2, r.code(), line + " -> " + r.err());
        assertTrue(r.err().contains(" is given twice") && r.err().contains(": give it once"), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    @Test
    void aRepeatNamesBothValues() {
        assertTrue(run("latency", "--iters", "5", "--iters", "abc").err().contains("--iters is given twice ('5' and"
                + " 'abc')"));
    }

    /** A prefix is not an option: '--it' would change meaning the day an option '--itemize' is added. */
    @ParameterizedTest
    @ValueSource(strings = {"latency --it 5", "latency --iter 5", "compare --plo x.png", "bandwidth --rep 3",
        "info --js", "moe --pow2"})
    void anAbbreviatedOptionIsRefused(String line) {
        Run r = run(line.split(" "));
        assertEquals(2, r.code(), line + " -> " + r.err());
        assertTrue(r.err().contains("options are written out in full, e.g. --"), r.err());
        assertFalse(r.err().contains("needs a CUDA GPU"), r.err());
    }

    /** Options that cannot go together are refused before any GPU work: the answer is about them, not the GPU. */
    @ParameterizedTest
    @ValueSource(strings = {
        "latency --transport p2p --mode fifo|--mode fifo measures the proxy's trigger FIFO, but --transport is p2p",
        "latency --transport ibgda --mode fifo,signal|but --transport is ibgda",
        "latency --transport proxy --mode put_inline|put_inline needs direct stores",
        "latency --mode signal --sizes 8|--sizes applies to put_signal, which --mode leaves out",
        "latency --mode signal,put_inline --scopes warp|--scopes applies to put_signal",
        "latency --mode signal --check|--check applies to put_signal",
        "latency --scopes thread,warp --block-threads 128|--block-threads sets the block scope's threads",
        "latency --check --no-check|choose one of --check and --no-check",
        "latency --expect median<=3|no column 'median' (did you mean median_us?)",
        "latency --expect median_us=3|is not COLUMN<=VALUE or COLUMN>=VALUE",
        "latency --expect median_us<=fast|'fast' is not a decimal number",
        "latency --expect median_us<=0x1p3|'0x1p3' is not a decimal number",
        "latency --sizes 8:1m,16|gives 16 B twice",
        "bandwidth --expect bidir_GBps>=100|only --bidir measures",
        "bandwidth --sizes 4k:64k,8k|gives 8 KiB twice",
        "compare --what latency --reps 5|--reps applies to the bandwidth sweep, which --what latency leaves out",
        "compare --what bandwidth --iters 5|--iters applies to the latency sweep",
        "compare --what bandwidth --scope warp|--scope applies to the latency sweep",
        "compare --scope warp --block-threads 64|--block-threads sets the block scope's threads, but --scope is warp",
        "compare --what all|--what takes latency, bandwidth or both, got 'all'",
        "compare --transports p2p --expect proxy_rtt_us<=3|no column 'proxy_rtt_us'",
        "moe --pow2-scales|--pow2-scales applies to --mode low-latency",
        "moe --mode high-throughput --pow2-scales|--pow2-scales applies to --mode low-latency",
    })
    void optionsThatDoNotGoTogetherAreRefusedBeforeAnyGpuWork(String lineAndMessage) {
        String[] parts = lineAndMessage.split("\\|");
        Run r = run(parts[0].split(" "));
        assertEquals(2, r.code(), parts[0] + " -> " + r.err());
        assertTrue(r.err().contains(parts[1]), parts[0] + " -> " + r.err());
        assertFalse(r.err().contains("needs a CUDA GPU"), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    /** What --help promises is accepted: --what both gets past the option checks to the GPU the run needs. */
    @Test
    void compareWhatBothIsAccepted() {
        assumeFalse(Cuda.status().available(), "a GPU is present: the run would start instead");
        for (String what : new String[] {"both", "latency", "bandwidth", "BOTH"}) {
            Run r = run("compare", "--what", what, "--transports", "p2p");
            assertEquals(2, r.code(), r.err());
            assertTrue(r.err().contains("needs a CUDA GPU"), what + " -> " + r.err());
        }
        assertTrue(run("compare", "--help").out().contains("latency, bandwidth or both (default both)"));
    }

    /** A full disk or a closed pipe must not look like success: a write error on stdout is exit 1. */
    @Test
    void aWriteErrorOnStandardOutputExits1() {
        java.io.OutputStream full = new java.io.OutputStream() {
            @Override
            public void write(int b) throws java.io.IOException {
                throw new java.io.IOException("No space left on device");
            }
        };
        for (String[] args : new String[][] {{"info"}, {"info", "--json"}, {"--help"}, {"--version"},
            {"latency", "--help"}}) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code = new Main().run(args, new PrintStream(full, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
            String e = err.toString(StandardCharsets.UTF_8);
            assertEquals(1, code, String.join(" ", args) + " -> " + e);
            assertTrue(e.contains("writing to standard output failed"), e);
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
