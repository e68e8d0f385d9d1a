package io.gda4j.samples;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaDevice;
import io.gda4j.world.PeerCard;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.World;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What a result was measured on and with: the gda4j version, the command, the date, the machine, the GPUs and their
 * card, the driver and CUDA, the pair and its transport, the NIC, scope, iterations and warm-up. Printed as
 * {@code # key: value} lines above a table and a CSV (where {@code compare --from} reads them back) and as the
 * {@code metadata} object of JSON, so a file kept for later still says what it is.
 */
final class RunHeader {
    /** A key as written: lower case words joined by '_' (a file's other lines are refused by {@code --from}). */
    static final Pattern KEY = Pattern.compile("[a-z][a-z0-9_]{0,39}");
    /** The longest value kept: a header is notes, not data. */
    static final int MAX_VALUE_CHARS = 1000;
    /** The NVIDIA kernel module's version line (Linux). */
    static final Path NVIDIA_VERSION = Path.of("/proc/driver/nvidia/version");

    private final Map<String, String> entries = new LinkedHashMap<>();

    /** An empty header, for results read from a file that had none. */
    RunHeader() {
    }

    /** The entries every run has: version, command, date, host. */
    static RunHeader of(String command) {
        RunHeader h = new RunHeader();
        h.put("gda4j", Main.version());
        h.put("command", command);
        h.put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        h.put("host", PeerCard.localHostName());
        return h;
    }

    /**
     * {@link #of} plus what the world says: the GPUs of the pair and their card, the driver, CUDA, and the pair's
     * transport and NIC as {@link Describe#pair} words them.
     */
    static RunHeader of(String command, World world, int rank, int peer) {
        RunHeader h = of(command);
        h.putWorld(world, rank, peer);
        h.put("pair", Describe.pair(world, rank, peer));
        return h;
    }

    /** The GPUs (this process's), the driver and CUDA; the same for every transport a compare run opens. */
    void putWorld(World world, int rank, int peer) {
        StringBuilder gpus = new StringBuilder();
        for (int r : new int[] {rank, peer}) {
            if (world.localRank(r).isPresent()) {
                CudaDevice d = world.localRank(r).get().device();
                gpus.append(gpus.length() == 0 ? "" : "; ").append("rank ").append(r).append(": GPU ")
                        .append(d.ordinal()).append(' ').append(d.name()).append(" sm_").append(d.computeCapabilityMajor())
                        .append(d.computeCapabilityMinor()).append(' ').append(d.multiprocessorCount()).append(" SMs PCI ")
                        .append(d.pciBusId()).append(' ').append(d.uuid());
            } else if (world instanceof ProcessWorld pw) {
                gpus.append(gpus.length() == 0 ? "" : "; ").append("rank ").append(r).append(": ")
                        .append(pw.cards().get(r).describe());
            }
        }
        put("gpus", gpus.toString());
        put("driver", nvidiaDriver(NVIDIA_VERSION));
        put("cuda", "driver API " + Cuda.driverVersionString() + "; kernels: PTX for sm_90 by CUDA 13.0");
        put("world", world instanceof ProcessWorld ? "one process per rank (" + world.size() + " ranks)"
                : "one process, " + world.size() + " ranks");
    }

    /**
     * The NVIDIA kernel module's version from {@code versionFile} ("580.65.06"), or "unknown" where the file is
     * missing or says no version.
     */
    static String nvidiaDriver(Path versionFile) {
        try {
            String text = Files.readString(versionFile, StandardCharsets.UTF_8);
            java.util.regex.Matcher m = Pattern.compile("Kernel Module(?: for [^ ]+)?\\s+([0-9][0-9.]+)").matcher(text);
            return m.find() ? "NVIDIA " + m.group(1) : "unknown";
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /** Adds or replaces an entry; a value is kept on one line. */
    RunHeader put(String key, Object value) {
        if (!KEY.matcher(key).matches()) {
            throw new IllegalArgumentException("header key '" + key + "' is not lower-case words joined by '_'");
        }
        String v = String.valueOf(value).replaceAll("[\\r\\n]+", " ");
        entries.put(key, v.length() > MAX_VALUE_CHARS ? v.substring(0, MAX_VALUE_CHARS) : v);
        return this;
    }

    String get(String key) {
        return entries.get(key);
    }

    Map<String, String> entries() {
        return Collections.unmodifiableMap(entries);
    }

    boolean isEmpty() {
        return entries.isEmpty();
    }

    /**
     * Reads the {@code key: value} lines of a CSV's header comment (the {@code #} and one space already taken off by
     * the CSV parser).
     *
     * @throws IllegalArgumentException naming the first line that is not {@code key: value}
     */
    static RunHeader parse(String comment) {
        RunHeader h = new RunHeader();
        if (comment == null) {
            return h;
        }
        for (String line : comment.split("\n", -1)) {
            if (line.isBlank()) {
                continue;
            }
            int colon = line.indexOf(": ");
            String key = colon < 0 ? line.strip() : line.substring(0, colon).strip();
            if (colon < 0 || !KEY.matcher(key).matches()) {
                throw new IllegalArgumentException("the comment line '# " + CellText.forTerminal(line)
                        + "' is not a 'key: value' line of gda4j's run header");
            }
            if (h.entries.containsKey(key)) {
                throw new IllegalArgumentException("the run header gives '" + key + "' twice");
            }
            h.put(key, line.substring(colon + 2));
        }
        return h;
    }

    /** The comment lines a CSV or table starts with, values made safe for a terminal. */
    String commentLines() {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, String> e : entries.entrySet()) {
            b.append("# ").append(e.getKey()).append(": ").append(CellText.forTerminal(e.getValue()))
                    .append(System.lineSeparator());
        }
        return b.toString();
    }

    /** One line for a chart's caption: what ran, where and when. */
    String caption() {
        StringBuilder b = new StringBuilder();
        for (String k : new String[] {"host", "gpus", "driver", "date", "gda4j"}) {
            if (entries.containsKey(k)) {
                b.append(b.length() == 0 ? "" : "  |  ").append(k.equals("gda4j") ? "gda4j " : "")
                        .append(entries.get(k));
            }
        }
        return CellText.forTerminal(b.toString());
    }
}
