package io.gda4j.samples.nccl;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Structure;

import io.gda4j.config.Setting;

import java.io.File;
import java.util.ArrayList;
import java.util.List;

/**
 * JNA direct mapping of the struct-free part of NCCL ({@code libnccl.so.2}): communicators and {@code cudaStream_t}
 * are {@code long} handles, {@code size_t} counts are {@code long}s (LP64 only), results are {@code ncclResult_t}
 * ints (0 = ncclSuccess). Only what an all-to-all-v needs: version, {@code ncclCommInitAll} (every rank in one
 * process), {@code ncclGetUniqueId} and {@code ncclCommInitRank} (one rank per process), group start/end, send/recv,
 * destroy, error strings. The one struct is the unique id, which {@code ncclCommInitRank} takes by value
 * ({@link UniqueId}).
 *
 * <p>Where the library comes from: {@value #LIBRARY_PROP_NAME}, else {@value #LIBRARY_ENV}, else the first of
 * {@code libnccl.so.2} on the loader's path and the {@code nvidia/nccl/lib} folder of the Python environments pip
 * installs the {@code nvidia-nccl-cu12} wheel into ({@code $VIRTUAL_ENV}, {@code $CONDA_PREFIX}, the user's and the
 * system's site-packages). Loading never throws: when it is missing {@link #isAvailable()} is false and
 * {@link #unavailableReason()} says why.
 */
public final class LibNccl {
    public static final String LIBRARY_PROP_NAME = NcclSettings.LIBRARY_PROP_NAME;
    public static final String LIBRARY_ENV = NcclSettings.LIBRARY_ENV;
    public static final String LIBRARY_DEFAULT = NcclSettings.LIBRARY_DEFAULT;

    public static final Setting<String> LIBRARY_SETTING = NcclSettings.LIBRARY;

    /** {@code ncclResult_t ncclSuccess}. */
    public static final int NCCL_SUCCESS = 0;
    /** {@code ncclDataType_t ncclUint8}: counts are bytes. */
    public static final int NCCL_UINT8 = 1;
    /** {@code ncclInt32}. */
    public static final int NCCL_INT32 = 2;
    /** {@code NCCL_UNIQUE_ID_BYTES}: an {@code ncclUniqueId} is this many opaque bytes ({@code char internal[128]}). */
    public static final int UNIQUE_ID_BYTES = 128;

    private static final String LIBRARY_NAME = LIBRARY_SETTING.resolve();
    private static final String LOADED_FROM;
    private static final String UNAVAILABLE_REASON;

    static {
        String loaded = null;
        List<String> tried = new ArrayList<>();
        String firstFailure = null;
        for (String candidate : candidates(LIBRARY_NAME, System.getenv(), System.getProperty("user.home", ""))) {
            try {
                NativeLibrary library = NativeLibrary.getInstance(candidate);
                Native.register(LibNccl.class, library);
                loaded = candidate;
                break;
            } catch (LinkageError | RuntimeException e) {
                tried.add(candidate);
                if (firstFailure == null) {
                    firstFailure = firstLine(e);
                }
            }
        }
        LOADED_FROM = loaded;
        UNAVAILABLE_REASON = loaded != null ? null : "NCCL not found (tried " + String.join(", ", tried) + ": "
                + firstFailure + "); set " + LIBRARY_ENV + " to the path of libnccl.so.2";
    }

    private LibNccl() {
    }

    /**
     * Where to look, in order: {@code configured} alone when it is not the default name, else the default name and
     * {@code libnccl.so.2} in each Python environment's {@code site-packages/nvidia/nccl/lib} that exists.
     */
    static List<String> candidates(String configured, java.util.Map<String, String> env, String home) {
        List<String> list = new ArrayList<>();
        list.add(configured);
        if (!LIBRARY_DEFAULT.equals(configured)) {
            return list;
        }
        List<File> prefixes = new ArrayList<>();
        for (String var : new String[] {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
            String v = env.get(var);
            if (v != null && !v.isBlank()) {
                prefixes.add(new File(v, "lib"));
            }
        }
        if (!home.isEmpty()) {
            prefixes.add(new File(home, ".local/lib"));
        }
        prefixes.add(new File("/usr/local/lib"));
        prefixes.add(new File("/usr/lib"));
        for (File lib : prefixes) {
            File[] pythons = lib.listFiles((dir, name) -> name.startsWith("python3"));
            if (pythons == null) {
                continue;
            }
            java.util.Arrays.sort(pythons);
            for (File py : pythons) {
                for (String packages : new String[] {"site-packages", "dist-packages"}) {
                    File so = new File(py, packages + "/nvidia/nccl/lib/" + LIBRARY_DEFAULT);
                    if (so.isFile()) {
                        list.add(so.getPath());
                    }
                }
            }
        }
        return list;
    }

    private static String firstLine(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /** The configured name ({@link #LIBRARY_PROP_NAME}, else {@link #LIBRARY_ENV}, else the default). */
    public static String libraryName() {
        return LIBRARY_NAME;
    }

    /** The name or path that loaded, or null. */
    public static String loadedFrom() {
        return LOADED_FROM;
    }

    /** Whether the library loaded and every function below was found. */
    public static boolean isAvailable() {
        return UNAVAILABLE_REASON == null;
    }

    /** Why NCCL cannot be used ("NCCL not found ..."), or null when it can. */
    public static String unavailableReason() {
        return UNAVAILABLE_REASON;
    }

    /** {@code ncclGetVersion(int *version)}: e.g. 22105 for 2.21.5. */
    public static native int ncclGetVersion(int[] version);

    /** {@code ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)}: one communicator per device. */
    public static native int ncclCommInitAll(long[] comms, int ndev, int[] devlist);

    /** {@code ncclGetUniqueId(ncclUniqueId *uniqueId)}: fills {@code uniqueId}, {@link #UNIQUE_ID_BYTES} bytes. */
    public static native int ncclGetUniqueId(byte[] uniqueId);

    /**
     * {@code ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)}: this process's
     * communicator among {@code nranks}, on the CUDA device current on the calling thread; returns once every rank
     * has called it with the same id.
     */
    public static native int ncclCommInitRank(long[] comm, int nranks, UniqueId commId, int rank);

    public static native int ncclGroupStart();

    public static native int ncclGroupEnd();

    /** {@code ncclSend(const void *sendbuff, size_t count, ncclDataType_t, int peer, ncclComm_t, cudaStream_t)}. */
    public static native int ncclSend(long sendbuff, long count, int datatype, int peer, long comm, long stream);

    /** {@code ncclRecv(void *recvbuff, size_t count, ncclDataType_t, int peer, ncclComm_t, cudaStream_t)}. */
    public static native int ncclRecv(long recvbuff, long count, int datatype, int peer, long comm, long stream);

    /**
     * {@code ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t, ncclComm_t,
     * cudaStream_t)}: every rank's {@code sendcount} elements, in rank order, into every rank's {@code recvbuff}.
     */
    public static native int ncclAllGather(long sendbuff, long recvbuff, long sendcount, int datatype, long comm,
                                           long stream);

    public static native int ncclCommDestroy(long comm);

    /** {@code const char *ncclGetErrorString(ncclResult_t)}: a static string. */
    public static native String ncclGetErrorString(int result);

    /**
     * {@code ncclUniqueId} by value: {@code typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId}.
     * Public, with a public field and constructor, because JNA builds the by-value argument by reflection.
     */
    @Structure.FieldOrder("internal")
    public static final class UniqueId extends Structure implements Structure.ByValue {
        public byte[] internal = new byte[UNIQUE_ID_BYTES];

        public UniqueId() {
        }

        /** The id {@code ncclGetUniqueId} wrote into {@code bytes} ({@link #UNIQUE_ID_BYTES} of them). */
        public UniqueId(byte[] bytes) {
            if (bytes.length != UNIQUE_ID_BYTES) {
                throw new IllegalArgumentException("an ncclUniqueId has " + UNIQUE_ID_BYTES + " bytes, not "
                        + bytes.length);
            }
            System.arraycopy(bytes, 0, internal, 0, UNIQUE_ID_BYTES);
        }
    }
}
