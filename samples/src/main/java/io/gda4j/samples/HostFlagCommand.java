package io.gda4j.samples;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaDevice;
import io.gda4j.cuda.CudaStatus;
import io.gda4j.gdrcopy.Gdrcopy;
import io.gda4j.gdrcopy.GdrcopyException;
import io.gda4j.gdrcopy.HostWritableGpuWord;
import io.gda4j.hostflag.FlagEcho;
import io.gda4j.hostflag.HostFlagUnavailableException;
import io.gda4j.hostflag.HostFlags;
import io.gda4j.world.WorldConfig;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code gda4j hostflag}: host -> GPU -> host flag round trips through each host-flag backend, timed on the host.
 */
final class HostFlagCommand implements Command {
    static final String ALL = "all";
    static final int MAX_ITERS = 10_000_000;
    static final int DEFAULT_ITERS = 10_000;
    static final int DEFAULT_WARMUP = 1_000;

    /** The backends {@code --backend all} measures, in table order. */
    static final List<HostFlags.Backend> ALL_BACKENDS = List.of(HostFlags.Backend.GDRCOPY,
            HostFlags.Backend.STREAM_WRITE, HostFlags.Backend.MAPPED_PINNED);

    /**
     * The parsed command line.
     *
     * @param backends      what to measure, in order (AUTO stays AUTO until it is resolved)
     * @param all           whether {@code all} was asked for: unusable backends then get a row instead of an error
     * @param iters         measured round trips per backend
     * @param warmup        unmeasured round trips first
     * @param gpu           the GPU ordinal
     * @param timeoutMillis how long the kernel waits for one round before giving up
     * @param format        output format
     * @param quiet         no progress lines
     */
    record Settings(List<HostFlags.Backend> backends, boolean all, int iters, int warmup, int gpu, long timeoutMillis,
            ResultTable.Format format, boolean quiet) {
    }

    @Override
    public String name() {
        return "hostflag";
    }

    @Override
    public String summary() {
        return "host -> GPU -> host flag round trip through gdrcopy, stream-write or mapped-pinned";
    }

    @Override
    public String description() {
        return "A Java thread stores round i into a host flag (a HostWritableGpuWord); one GPU thread polls the flag "
                + "with ld.acquire.sys and answers by storing i with st.release.sys into mapped pinned host memory, "
                + "which the Java thread polls with an acquire load. Each round trip is timed on the host with "
                + "System.nanoTime, so it holds the host's store, its way to the GPU, the GPU's answer over PCIe and "
                + "the host's poll. Backends: 'gdrcopy' stores into GPU memory mapped to the CPU by libgdrapi and "
                + "gdrdrv; 'stream-write' enqueues cuStreamWriteValue64 on a stream of its own (a driver call per "
                + "store); 'mapped-pinned' keeps the flag in pinned host memory that the GPU polls across PCIe. "
                + "'auto' measures what HostFlags picks here (gdrcopy where usable, else mapped-pinned; the choice is "
                + "in the note column); 'all' measures every backend, and one that cannot run here gets a row that "
                + "says why. Reported: min, median, p99 and max of the round trip in microseconds; the median is the "
                + "typical cost, p99 and max show hiccups (interrupts, the driver's lock for stream-write). The "
                + "default backend comes from " + WorldConfig.HOST_FLAG_ENV + " / -D" + WorldConfig.HOST_FLAG_PROP_NAME
                + " (else auto).";
    }

    @Override
    public String examples() {
        return "  gda4j hostflag                       the backend auto picks, on GPU 0\n"
                + "  gda4j hostflag --backend all         every backend side by side; one that cannot run says why\n"
                + "  gda4j hostflag --backend gdrcopy     only gdrcopy: exit 2 with the reason where it is missing\n"
                + "  gda4j hostflag --backend stream-write,mapped-pinned --iters 100000 --gpu 1 --csv\n";
    }

    @Override
    public Options options() {
        Options o = new Options();
        o.addOption(Option.builder().longOpt("backend").hasArg().argName("LIST")
                .desc("auto, gdrcopy, stream-write, mapped-pinned, comma-separated, or all (default: "
                        + WorldConfig.HOST_FLAG_ENV + " or auto)").build());
        o.addOption(Option.builder().longOpt("iters").hasArg().argName("N")
                .desc("measured round trips per backend (default " + DEFAULT_ITERS + ")").build());
        o.addOption(Option.builder().longOpt("warmup").hasArg().argName("N")
                .desc("unmeasured round trips first (default " + DEFAULT_WARMUP + ")").build());
        o.addOption(Option.builder().longOpt("gpu").hasArg().argName("G").desc("the GPU to use (default 0)").build());
        o.addOption(Option.builder().longOpt("timeout-ms").hasArg().argName("MS")
                .desc("how long the kernel waits for one round before it gives up and the run fails with a message "
                        + "(default " + WorldConfig.WAIT_TIMEOUT_ENV + " / -D" + WorldConfig.WAIT_TIMEOUT_PROP_NAME
                        + ", else " + WorldConfig.WAIT_TIMEOUT_DEFAULT + ")").build());
        o.addOption(Option.builder().longOpt("csv").desc("print CSV instead of a table").build());
        o.addOption(Option.builder().longOpt("json").desc("print JSON instead of a table").build());
        o.addOption(Option.builder().longOpt("quiet").desc("no progress lines on stderr").build());
        return o;
    }

    /** Checks every option; needs no GPU. */
    static Settings parse(CommandLine cmd) {
        WorldConfig config;
        try {
            config = WorldConfig.resolve();
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e);
        }
        String text = cmd.getOptionValue("backend", config.hostFlag().label());
        List<HostFlags.Backend> backends = new ArrayList<>();
        boolean all = false;
        for (String part : OptionValues.list("backend", text, false)) {
            String name = part.toLowerCase(Locale.ROOT);
            List<HostFlags.Backend> named;
            if (name.equals(ALL)) {
                all = true;
                named = ALL_BACKENDS;
            } else {
                try {
                    named = List.of(HostFlags.Backend.parse(name));
                } catch (IllegalArgumentException e) {
                    throw new UsageException("unknown host flag backend '" + part.trim() + "': choose one of "
                            + HostFlags.Backend.choices() + ", " + ALL + " (or a comma-separated list)", e);
                }
            }
            for (HostFlags.Backend b : named) {
                if (backends.contains(b)) {
                    // the list rule: all already names every backend, so all,gdrcopy names gdrcopy twice
                    throw new UsageException("--backend '" + text + "' names " + b.label() + " twice"
                            + (all ? " (" + ALL + " includes every backend)" : ""));
                }
                backends.add(b);
            }
        }
        int iters = OptionValues.integer(cmd, "iters", DEFAULT_ITERS, 1, MAX_ITERS);
        int warmup = OptionValues.integer(cmd, "warmup", DEFAULT_WARMUP, 0, MAX_ITERS);
        int gpu = OptionValues.integer(cmd, "gpu", 0, 0, Integer.MAX_VALUE);
        long timeoutMillis = WorldOptions.timeoutMillis(cmd, config);
        if (cmd.hasOption("csv") && cmd.hasOption("json")) {
            throw new UsageException("choose one of --csv and --json");
        }
        ResultTable.Format format = cmd.hasOption("csv") ? ResultTable.Format.CSV
                : cmd.hasOption("json") ? ResultTable.Format.JSON : ResultTable.Format.TABLE;
        return new Settings(List.copyOf(backends), all, iters, warmup, gpu, timeoutMillis, format,
                cmd.hasOption("quiet"));
    }

    /** One row to produce: a resolved choice to measure, or the reason the backend cannot run here. */
    private record Row(HostFlags.Backend requested, HostFlags.Choice choice, String unavailable) {
    }

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) {
        Settings s = parse(cmd);
        List<Row> rows = new ArrayList<>();
        for (HostFlags.Backend b : s.backends()) {
            try {
                rows.add(new Row(b, HostFlags.choose(b), null));
            } catch (HostFlagUnavailableException e) {
                if (!s.all()) {
                    throw new UsageException(e.getMessage() + " (--backend)", e);
                }
                rows.add(new Row(b, null, "unavailable: " + Gdrcopy.status().sentence()));
            }
        }
        CudaStatus cuda = Cuda.status();
        if (!cuda.available()) {
            throw new UsageException("this command needs a CUDA GPU: " + cuda.reason()
                    + " (gda4j info shows what is missing)");
        }
        if (s.gpu() >= Cuda.deviceCount()) {
            throw new UsageException("--gpu " + s.gpu() + " does not exist: this machine has " + Cuda.deviceCount()
                    + " GPU(s); check CUDA_VISIBLE_DEVICES");
        }
        ResultTable table = new ResultTable("hostflag: host -> GPU -> host flag round trip, microseconds",
                List.of("backend", "iters", "min_us", "median_us", "p99_us", "max_us", "note"));
        int measured = (int) rows.stream().filter(r -> r.choice() != null).count();
        Progress progress = new Progress(err, measured, s.quiet());
        CudaDevice device = Cuda.device(s.gpu());
        try (CudaContext context = device.primaryContext()) {
            for (Row r : rows) {
                if (r.choice() == null) {
                    table.add(r.requested().label(), "-", "-", "-", "-", "-", r.unavailable());
                    continue;
                }
                String backend = r.choice().backend().label();
                progress.step(backend);
                String note = r.requested() == HostFlags.Backend.AUTO ? r.choice().reason() : "";
                LatencyStats st;
                try {
                    st = measure(context, r.choice(), s);
                } catch (GdrcopyException e) {
                    if (!s.all()) {
                        throw e;
                    }
                    table.add(backend, "-", "-", "-", "-", "-", "failed: " + e.getMessage());
                    continue;
                }
                table.add(backend, s.iters(), st.minNanos() / 1e3, st.medianNanos() / 1e3, st.p99Nanos() / 1e3,
                        st.maxNanos() / 1e3, note);
            }
            progress.done();
        }
        table.note(String.format(Locale.ROOT, "GPU %d (%s); round trip = Java thread stores round i into the flag, "
                + "one GPU thread sees it (ld.acquire.sys) and answers in mapped pinned memory (st.release.sys), the "
                + "Java thread sees the answer; timed on the host with System.nanoTime", device.ordinal(),
                device.name()));
        table.print(out, s.format());
        return 0;
    }

    private static LatencyStats measure(CudaContext context, HostFlags.Choice choice, Settings s) {
        long timeoutNanos = s.timeoutMillis() * 1_000_000L;
        try (HostWritableGpuWord flag = HostFlags.allocate(context, choice);
             FlagEcho echo = FlagEcho.start(context, flag, (long) s.warmup() + s.iters(), timeoutNanos)) {
            for (int i = 0; i < s.warmup(); i++) {
                echo.roundTripNanos();
            }
            long[] nanos = new long[s.iters()];
            for (int i = 0; i < nanos.length; i++) {
                nanos[i] = echo.roundTripNanos();
            }
            echo.finish();
            return LatencyStats.of(nanos, nanos.length);
        }
    }
}
