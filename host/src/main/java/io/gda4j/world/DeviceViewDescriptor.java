package io.gda4j.world;

import io.gda4j.cuda.ModuleImage;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Byte layout of the per-rank device view a kernel receives, mirrored field for field by {@code struct DeviceView}
 * and {@code struct PeerEntry} in {@code gda4j/layout/view.cuh}. Little-endian (GPU native order). The host writes it
 * once when the world is built; kernels only read it.
 *
 * <pre>
 *  DeviceView (64-byte header, then nranks PeerEntry of 64 bytes each)
 *   0        4        8        12       16                24                32
 *   +--------+--------+--------+--------+-----------------+-----------------+
 *   | magic  |version | rank   | nranks | heap_base       | heap_size_bytes |
 *   +--------+--------+--------+--------+-----------------+-----------------+
 *   32                40                48                56       60       64
 *   +-----------------+-----------------+-----------------+--------+--------+
 *   | abort_flag      | error_record    | timeout_ns      | flags  |reserved|
 *   +-----------------+-----------------+-----------------+--------+--------+
 *
 *  PeerEntry (peers[r] at 64 + 64 * r)
 *   0        4        8                 16                24       28       32               40       44      64
 *   +--------+--------+-----------------+-----------------+--------+--------+----------------+--------+-------+
 *   |transprt| rank   | peer_heap       | handle          | rkey   | lkey   | peer_abort_flag| caps   | resvd |
 *   +--------+--------+-----------------+-----------------+--------+--------+----------------+--------+-------+
 * </pre>
 * {@code transport} is the peer's {@link io.gda4j.transport.Transport#code()}, {@code caps} its
 * {@link io.gda4j.transport.Transport#capabilityBits()} and {@code flags} the union of its peers'
 * {@link io.gda4j.transport.Transport#viewFlag()}, all from the table {@code gda4j/transports.def}.
 */
public final class DeviceViewDescriptor {
    /** "GDA4" read as a little-endian int. */
    public static final int VIEW_MAGIC = 0x34414447;
    public static final int VIEW_VERSION = 5;
    /**
     * What the device headers leave in every module that includes them: an empty kernel
     * {@code gda4j_view_version<VIEW_VERSION>}, whose mangled name ({@code ..gda4j_view_versionILj1EEEvv}) appears among
     * a PTX module's entries and a cubin's symbols. How a module built against other headers is recognised.
     */
    static final Pattern VIEW_VERSION_KERNEL = Pattern.compile("gda4j_view_versionILj(\\d+)E");


    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int RANK_OFFSET = 8;
    public static final int NRANKS_OFFSET = 12;
    public static final int HEAP_BASE_OFFSET = 16;
    public static final int HEAP_SIZE_BYTES_OFFSET = 24;
    public static final int ABORT_FLAG_OFFSET = 32;
    public static final int ERROR_RECORD_OFFSET = 40;
    public static final int TIMEOUT_NS_OFFSET = 48;
    public static final int FLAGS_OFFSET = 56;
    public static final int HEADER_LENGTH = 64;

    public static final int PEER_TRANSPORT_OFFSET = 0;
    public static final int PEER_RANK_OFFSET = 4;
    public static final int PEER_HEAP_OFFSET = 8;
    public static final int PEER_HANDLE_OFFSET = 16;
    public static final int PEER_RKEY_OFFSET = 24;
    public static final int PEER_LKEY_OFFSET = 28;
    public static final int PEER_ABORT_FLAG_OFFSET = 32;
    public static final int PEER_CAPS_OFFSET = 40;
    public static final int PEER_ENTRY_LENGTH = 64;

    private DeviceViewDescriptor() {
    }

    /** Offset of {@code peers[peer]} from the start of the view. */
    public static int peerEntryOffset(int peer) {
        return HEADER_LENGTH + PEER_ENTRY_LENGTH * peer;
    }

    /** Bytes of a view for {@code nranks} ranks. */
    public static int viewLength(int nranks) {
        return HEADER_LENGTH + PEER_ENTRY_LENGTH * nranks;
    }

    /**
     * The view versions {@code image} was built for, from the {@code gda4j_view_version} kernels the headers
     * instantiate; empty for a module that does not include the device headers.
     */
    public static Set<Integer> declaredViewVersions(ModuleImage image) {
        String text = new String(image.bytes(), StandardCharsets.ISO_8859_1);
        Set<Integer> versions = new TreeSet<>();
        Matcher m = VIEW_VERSION_KERNEL.matcher(text);
        while (m.find()) {
            versions.add(Integer.parseInt(m.group(1)));
        }
        return versions;
    }

    /**
     * Refuses a module built against device headers of another view version: its kernels would read this view with
     * another layout. Modules that do not include the headers pass.
     *
     * @throws IllegalArgumentException naming the module, both versions and what to do
     */
    public static void requireBuiltForThisView(ModuleImage image) {
        Set<Integer> versions = new TreeSet<>(declaredViewVersions(image));
        versions.remove(VIEW_VERSION);
        if (!versions.isEmpty()) {
            throw new IllegalArgumentException(image + " was built against the gda4j device headers of view version "
                    + versions.stream().map(String::valueOf).collect(Collectors.joining(", ")) + ", but this gda4j"
                    + " writes view version " + VIEW_VERSION + ": its kernels would misread the device view. Rebuild it"
                    + " with this gda4j's headers (nvcc -I <gda4j>/device-ptx/include ...)");
        }
    }
}
