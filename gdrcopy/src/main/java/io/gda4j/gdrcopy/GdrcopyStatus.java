package io.gda4j.gdrcopy;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Whether gdrcopy can be used in this process, in one human sentence. Obtained from {@link Gdrcopy#status()},
 * which never throws; callers that find it unavailable use a fallback {@link HostWritableGpuWord} backend.
 */
public final class GdrcopyStatus {

    /** The possible outcomes, checked in this order. */
    public enum State {
        /** libgdrapi could not be loaded (or is older than gdrcopy 2.0). */
        LIBRARY_ABSENT,
        /** libgdrapi loaded but the gdrdrv device node does not exist. */
        DRIVER_ABSENT,
        /** Library and device node are there but gdr_open or the driver version query failed. */
        OPEN_FAILED,
        /** gdr_open works: pin and map can be tried. */
        AVAILABLE
    }

    /** A {@code major.minor} version as gdrcopy reports it. */
    public record Version(int major, int minor) {
        @Override
        public String toString() {
            return major + "." + minor;
        }
    }

    private final State state;
    private final String sentence;
    private final String detail;
    private final Version runtimeVersion;
    private final Version driverVersion;

    private GdrcopyStatus(State state, String sentence, String detail, Version runtimeVersion, Version driverVersion) {
        this.state = state;
        this.sentence = sentence;
        this.detail = detail == null ? "" : detail;
        this.runtimeVersion = runtimeVersion;
        this.driverVersion = driverVersion;
    }

    /**
     * Probes in order: library, device node, gdr_open plus the driver version query. Never throws.
     *
     * @param probe      the native side (a stub in tests)
     * @param deviceNode where gdrdrv's node is expected
     */
    static GdrcopyStatus probe(GdrcopyProbe probe, Path deviceNode) {
        try {
            Optional<String> failure = probe.libraryFailure();
            if (failure.isPresent()) {
                return libraryAbsent(probe.libraryName(), failure.get());
            }
            Version runtime = probe.runtimeVersion();
            if (!Files.exists(deviceNode)) {
                return driverAbsent(runtime, deviceNode);
            }
            Version driver = probe.openAndReadDriverVersion();
            return available(runtime, driver, deviceNode);
        } catch (GdrcopyException e) {
            return openFailed(deviceNode, e.getMessage());
        } catch (RuntimeException | LinkageError e) {
            return openFailed(deviceNode, e.toString());
        }
    }

    static GdrcopyStatus libraryAbsent(String libraryName, String detail) {
        return new GdrcopyStatus(State.LIBRARY_ABSENT, libraryName + " not found: gdrcopy is not installed",
                detail, null, null);
    }

    static GdrcopyStatus driverAbsent(Version runtime, Path deviceNode) {
        return new GdrcopyStatus(State.DRIVER_ABSENT, "libgdrapi is present but " + deviceNode
                + " is missing: load the gdrdrv kernel module", "libgdrapi " + runtime, runtime, null);
    }

    static GdrcopyStatus openFailed(Path deviceNode, String detail) {
        return new GdrcopyStatus(State.OPEN_FAILED, "libgdrapi and " + deviceNode + " are present but gdr_open "
                + "failed: check the node's permissions and that gdrdrv matches libgdrapi", detail, null, null);
    }

    static GdrcopyStatus available(Version runtime, Version driver, Path deviceNode) {
        return new GdrcopyStatus(State.AVAILABLE, "gdrcopy is available: libgdrapi " + runtime + ", gdrdrv "
                + driver + " at " + deviceNode, "", runtime, driver);
    }

    public State state() {
        return state;
    }

    /** Whether pinning and mapping can be tried. */
    public boolean isAvailable() {
        return state == State.AVAILABLE;
    }

    /** One human sentence: what was found and what to do about it. */
    public String sentence() {
        return sentence;
    }

    /** The underlying reason (JNA's loader message, libgdrapi's error), empty when there is none. */
    public String detail() {
        return detail;
    }

    /** libgdrapi's version, when the library loaded. */
    public Optional<Version> runtimeVersion() {
        return Optional.ofNullable(runtimeVersion);
    }

    /** gdrdrv's version, when gdr_open worked. */
    public Optional<Version> driverVersion() {
        return Optional.ofNullable(driverVersion);
    }

    /** {@code "gdrcopy: <sentence>"}, for {@code gda4j info} and logs. */
    public String oneLine() {
        return "gdrcopy: " + sentence;
    }

    /** Prints {@link #oneLine()}. */
    public void printTo(PrintStream out) {
        out.println(oneLine());
    }

    @Override
    public String toString() {
        return oneLine();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GdrcopyStatus other && state == other.state && sentence.equals(other.sentence)
                && detail.equals(other.detail) && Objects.equals(runtimeVersion, other.runtimeVersion)
                && Objects.equals(driverVersion, other.driverVersion);
    }

    @Override
    public int hashCode() {
        return Objects.hash(state, sentence, detail, runtimeVersion, driverVersion);
    }
}
