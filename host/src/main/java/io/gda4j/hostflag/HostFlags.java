package io.gda4j.hostflag;

import io.gda4j.cuda.CudaContext;
import io.gda4j.gdrcopy.Gdrcopy;
import io.gda4j.gdrcopy.GdrcopyStatus;
import io.gda4j.gdrcopy.GdrWord;
import io.gda4j.gdrcopy.HostWritableGpuWord;

import java.util.Locale;
import java.util.Objects;
import java.util.StringJoiner;

/**
 * Where to get a {@link HostWritableGpuWord}: {@code HostWritableGpuWord word = HostFlags.allocate(ctx, backend)}.
 * The kernel polls {@link HostWritableGpuWord#deviceAddress()} with {@code ld.acquire.sys}; the host stores with
 * {@link HostWritableGpuWord#putLongRelease}; the caller closes the word.
 *
 * <p>{@link Backend#AUTO} takes gdrcopy when {@link Gdrcopy#status()} says it is usable, else {@link #FALLBACK},
 * mapped-pinned: its store is a plain CPU store (no driver call, no lock, no allocation: right for a proxy thread's
 * hot path), and a Java thread answering a GPU thread through mapped pinned memory was measured at 2.85 us round
 * trip on H200; NCCL's network proxy likewise keeps its flags in host memory without gdrcopy. Stream-write pays a
 * driver call per store and lands when the GPU's front end reaches it; {@code gda4j hostflag --backend all} measures
 * all three side by side on a given machine, so the choice can be checked there. The configured choice lives in
 * {@code io.gda4j.world.WorldConfig#hostFlag()} (gda4j.hostFlag / GDA4J_HOST_FLAG, default auto).
 */
public final class HostFlags {

    /** Which {@link HostWritableGpuWord} implementation to use. */
    public enum Backend {
        /** gdrcopy where usable, else {@link HostFlags#FALLBACK}. */
        AUTO("auto"),
        /** {@link GdrcopyWord}: a CPU store into BAR1-mapped GPU memory through libgdrapi and gdrdrv. */
        GDRCOPY(GdrWord.BACKEND_NAME),
        /** {@link StreamWriteWord}: {@code cuStreamWriteValue64} into device memory on a stream of its own. */
        STREAM_WRITE(StreamWriteWord.BACKEND_NAME),
        /** {@link MappedPinnedWord}: a word in pinned host memory that the GPU polls over PCIe. */
        MAPPED_PINNED(MappedPinnedWord.BACKEND_NAME);

        private final String label;

        Backend(String label) {
            this.label = label;
        }

        /** The name used in configuration, on the command line and as {@code backendName()}. */
        public String label() {
            return label;
        }

        /**
         * The backend named {@code text} (its {@link #label()}, any case, surrounding blanks ignored).
         *
         * @throws IllegalArgumentException naming the choices when nothing matches
         */
        public static Backend parse(String text) {
            String wanted = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
            for (Backend b : values()) {
                if (b.label.equals(wanted)) {
                    return b;
                }
            }
            throw new IllegalArgumentException("unknown host flag backend '" + (text == null ? "" : text.trim())
                    + "': choose one of " + choices());
        }

        /** {@code "auto, gdrcopy, stream-write, mapped-pinned"}. */
        public static String choices() {
            StringJoiner names = new StringJoiner(", ");
            for (Backend b : values()) {
                names.add(b.label);
            }
            return names.toString();
        }

        @Override
        public String toString() {
            return label;
        }
    }

    /** What {@link Backend#AUTO} uses where gdrcopy is unusable (why: see the class comment). */
    public static final Backend FALLBACK = Backend.MAPPED_PINNED;

    /**
     * A resolved choice: a concrete backend (never AUTO) and why it was taken.
     *
     * @param backend the backend words will be allocated from
     * @param reason  a short clause, e.g. {@code "auto; gdrcopy unavailable: libgdrapi.so.2 not found: ..."}
     */
    public record Choice(Backend backend, String reason) {
        public Choice {
            Objects.requireNonNull(backend, "backend");
            Objects.requireNonNull(reason, "reason");
            if (backend == Backend.AUTO) {
                throw new IllegalArgumentException("a choice names a concrete backend, not auto");
            }
        }

        /** One line for {@code gda4j info} and logs: {@code "host flags: mapped-pinned (auto; gdrcopy ...)"}. */
        public String describe() {
            return "host flags: " + backend.label() + " (" + reason + ")";
        }
    }

    private HostFlags() {
    }

    /**
     * Resolves {@code requested} against this machine ({@link Gdrcopy#status()}, which never throws).
     *
     * @throws HostFlagUnavailableException when gdrcopy is requested by name and cannot be used
     */
    public static Choice choose(Backend requested) {
        GdrcopyStatus status = Gdrcopy.status();
        return choose(requested, status.isAvailable(), status.sentence());
    }

    /**
     * Resolves {@code requested} given what is known about gdrcopy: AUTO takes gdrcopy exactly when it is available,
     * else {@link #FALLBACK}; a named backend is taken as is, except gdrcopy where it is unavailable.
     *
     * @param gdrcopyAvailable {@link GdrcopyStatus#isAvailable()}
     * @param gdrcopySentence  {@link GdrcopyStatus#sentence()}: what was found, for the reason or the exception
     * @throws HostFlagUnavailableException when gdrcopy is requested by name and is unavailable
     */
    public static Choice choose(Backend requested, boolean gdrcopyAvailable, String gdrcopySentence) {
        Objects.requireNonNull(requested, "requested backend");
        switch (requested) {
            case AUTO:
                return gdrcopyAvailable
                        ? new Choice(Backend.GDRCOPY, "auto; " + gdrcopySentence)
                        : new Choice(FALLBACK, "auto; gdrcopy unavailable: " + gdrcopySentence);
            case GDRCOPY:
                if (!gdrcopyAvailable) {
                    throw new HostFlagUnavailableException(Backend.GDRCOPY, "host flag backend gdrcopy was requested "
                            + "but cannot be used here: " + gdrcopySentence + "; to fall back, request " + Backend.AUTO
                            + " (which takes " + FALLBACK + " without gdrcopy), " + Backend.MAPPED_PINNED + " or "
                            + Backend.STREAM_WRITE + " instead");
                }
                return new Choice(Backend.GDRCOPY, "requested; " + gdrcopySentence);
            default:
                return new Choice(requested, "requested");
        }
    }

    /**
     * A new zeroed word from the backend {@code requested} resolves to ({@link #choose(Backend)}), in
     * {@code context}'s GPU. The caller closes it.
     *
     * @throws HostFlagUnavailableException       when gdrcopy is requested by name and cannot be used
     * @throws io.gda4j.gdrcopy.GdrcopyException  when gdrcopy is usable but pinning or mapping fails
     */
    public static HostWritableGpuWord allocate(CudaContext context, Backend requested) {
        return allocate(context, choose(requested));
    }

    /** A new zeroed word of {@code choice}'s backend, in {@code context}'s GPU. The caller closes it. */
    public static HostWritableGpuWord allocate(CudaContext context, Choice choice) {
        Objects.requireNonNull(context, "context");
        switch (choice.backend()) {
            case GDRCOPY:
                return GdrcopyWord.allocate(context);
            case STREAM_WRITE:
                return StreamWriteWord.allocate(context);
            case MAPPED_PINNED:
                return MappedPinnedWord.allocate(context);
            default:
                throw new IllegalStateException("unresolved backend " + choice.backend());
        }
    }
}
