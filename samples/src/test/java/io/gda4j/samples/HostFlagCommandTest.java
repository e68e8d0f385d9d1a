package io.gda4j.samples;

import io.gda4j.cuda.Cuda;
import io.gda4j.gdrcopy.Gdrcopy;
import io.gda4j.hostflag.HostFlags.Backend;
import io.gda4j.world.WorldConfig;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.DefaultParser;
import org.apache.commons.cli.ParseException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code gda4j hostflag} on the command line: help, option parsing and every usage error, without a GPU. */
class HostFlagCommandTest {

    private static HostFlagCommand.Settings parse(String... args) throws ParseException {
        CommandLine cmd = new DefaultParser().parse(new HostFlagCommand().options(), args);
        return HostFlagCommand.parse(cmd);
    }

    @Test
    void isInTheCommandList() {
        CliRun run = CliRun.of("--help");
        assertEquals(0, run.code(), run::toString);
        assertTrue(run.out().contains("  hostflag   host -> GPU -> host flag round trip"), run::toString);
    }

    @Test
    void helpTeachesWhatItMeasuresAndHow() {
        for (CliRun run : new CliRun[] {CliRun.of("hostflag", "--help"), CliRun.of("help", "hostflag")}) {
            assertEquals(0, run.code(), run::toString);
            String help = run.out();
            for (String expected : new String[] {"usage: gda4j hostflag [OPTIONS]", "System.nanoTime",
                    "ld.acquire.sys", "--backend <LIST>", "--iters <N>", "--warmup <N>", "--gpu <G>", "--csv",
                    "--json", "examples:", "gda4j hostflag --backend all", WorldConfig.HOST_FLAG_ENV}) {
                assertTrue(help.contains(expected), () -> "help lacks '" + expected + "':\n" + help);
            }
            assertEquals("", run.err());
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--backend nope                | unknown host flag backend 'nope': choose one of auto, gdrcopy, "
                    + "stream-write, mapped-pinned, all (or a comma-separated list)",
            "--backend stream-write,       | --backend 'stream-write,' has an empty element: separate the values with "
                    + "single commas, e.g. --backend a,b",
            "--backend auto,AUTO           | --backend 'auto,AUTO' names AUTO twice",
            "--iters 0                     | --iters accepts a whole number from 1 to 10000000, got '0'",
            "--iters 10000001              | --iters accepts a whole number from 1 to 10000000, got '10000001'",
            "--iters x                     | --iters accepts a whole number from 1 to 10000000, got 'x'",
            "--warmup -1                   | --warmup accepts a whole number from 0 to 10000000, got '-1'",
            "--gpu -1                      | --gpu accepts a whole number from 0 to 2147483647, got '-1'",
            "--timeout-ms 0                | --timeout-ms accepts a whole number from 1 to 86400000, got '0'",
            "--csv --json                  | choose one of --csv and --json",
            "--bogus                       | unknown option '--bogus'; the options are --backend,"
                    + " --csv, --gpu, --iters, --json, --quiet, --timeout-ms, --warmup",
            "--backend all,gdrcopy         | --backend 'all,gdrcopy' names gdrcopy twice (all includes every backend)",
            "extra                         | unexpected argument 'extra'"})
    void badInputIsOneLineAndExitTwo(String args, String message) {
        String[] argv = ("hostflag " + args.trim()).split(" +");
        CliRun run = CliRun.of(argv);
        assertEquals(2, run.code(), run::toString);
        assertEquals("", run.out(), run::toString);
        assertEquals("gda4j hostflag: " + message.trim() + ". Run 'gda4j hostflag --help'." + System.lineSeparator(),
                run.err());
    }

    @Test
    void defaults() throws ParseException {
        assumeTrue(System.getenv(WorldConfig.HOST_FLAG_ENV) == null
                && System.getenv(WorldConfig.WAIT_TIMEOUT_ENV) == null, "the environment sets the defaults");
        HostFlagCommand.Settings s = parse();
        assertEquals(List.of(Backend.AUTO), s.backends());
        assertFalse(s.all());
        assertEquals(HostFlagCommand.DEFAULT_ITERS, s.iters());
        assertEquals(HostFlagCommand.DEFAULT_WARMUP, s.warmup());
        assertEquals(0, s.gpu());
        assertEquals(10_000, s.timeoutMillis());
        assertEquals(ResultTable.Format.TABLE, s.format());
        assertFalse(s.quiet());
    }

    @Test
    void backendListsAndAll() throws ParseException {
        HostFlagCommand.Settings all = parse("--backend", "all");
        assertTrue(all.all());
        assertEquals(List.of(Backend.GDRCOPY, Backend.STREAM_WRITE, Backend.MAPPED_PINNED), all.backends());
        assertEquals(List.of(Backend.MAPPED_PINNED, Backend.STREAM_WRITE),
                parse("--backend", "MAPPED-PINNED, stream-write").backends(), "in order");
        // The list rule: all names every backend, so a backend beside it is named twice.
        assertEquals("--backend 'stream-write,all' names stream-write twice (all includes every backend)",
                assertThrows(UsageException.class, () -> parse("--backend", "stream-write,all")).getMessage());
        HostFlagCommand.Settings s = parse("--backend", "gdrcopy", "--iters", "5", "--warmup", "0", "--gpu", "3",
                "--timeout-ms", "250", "--json", "--quiet");
        assertEquals(List.of(Backend.GDRCOPY), s.backends());
        assertEquals(5, s.iters());
        assertEquals(0, s.warmup());
        assertEquals(3, s.gpu());
        assertEquals(250, s.timeoutMillis());
        assertEquals(ResultTable.Format.JSON, s.format());
        assertTrue(s.quiet());
    }

    @Test
    void forcedGdrcopyWithoutGdrcopySaysWhyAndHowToFallBack() {
        assumeFalse(Gdrcopy.status().isAvailable(), "gdrcopy is usable here");
        CliRun run = CliRun.of("hostflag", "--backend", "gdrcopy");
        assertEquals(2, run.code(), run::toString);
        assertTrue(run.err().contains(Gdrcopy.status().sentence()), run::toString);
        assertTrue(run.err().contains("request auto (which takes mapped-pinned without gdrcopy)"), run::toString);
        assertEquals(1, run.err().lines().count(), run::toString);
    }

    @Test
    void withoutAGpuItExitsTwoAndSaysWhy() {
        assumeFalse(Cuda.status().available(), "this machine has a GPU");
        CliRun run = CliRun.of("hostflag", "--backend", "all", "--iters", "10", "--quiet");
        assertEquals(2, run.code(), run::toString);
        assertTrue(run.err().startsWith("gda4j hostflag: this command needs a CUDA GPU: " + Cuda.status().reason()),
                run::toString);
        assertEquals("", run.out());
    }
}
