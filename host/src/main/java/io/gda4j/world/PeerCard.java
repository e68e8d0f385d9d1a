package io.gda4j.world;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Objects;

/**
 * One process's entry in a multi-process world (layout: {@link PeerCardDescriptor}).
 *
 * @param rank       the process's rank
 * @param worldSize  the world size it was started with (every card must agree)
 * @param pid        its process id, for messages
 * @param heapBytes  its symmetric heap's size (every card must agree)
 * @param hostId     which host it runs on: equal ids mean the same machine (see {@link #hostId(String, String)})
 * @param heapHandle its heap's CUDA IPC handle, or null when it exported none
 * @param gpuUuid    its GPU's UUID ("GPU-..."), the same in every process whatever CUDA_VISIBLE_DEVICES says
 * @param gpuPciBusId its GPU's PCI address, for messages
 * @param hostName   its host name, for messages
 */
public record PeerCard(int rank, int worldSize, long pid, long heapBytes, byte[] hostId, byte[] heapHandle,
                       String gpuUuid, String gpuPciBusId, String hostName) {

    public PeerCard {
        Objects.requireNonNull(hostId, "hostId");
        Objects.requireNonNull(gpuUuid, "gpuUuid");
        Objects.requireNonNull(gpuPciBusId, "gpuPciBusId");
        Objects.requireNonNull(hostName, "hostName");
        if (hostId.length != PeerCardDescriptor.HOST_ID_BYTES) {
            throw new IllegalArgumentException("a host id has " + PeerCardDescriptor.HOST_ID_BYTES + " bytes, not "
                    + hostId.length);
        }
        if (heapHandle != null && heapHandle.length != PeerCardDescriptor.HEAP_HANDLE_BYTES) {
            throw new IllegalArgumentException("a heap handle has " + PeerCardDescriptor.HEAP_HANDLE_BYTES
                    + " bytes, not " + heapHandle.length);
        }
        hostId = hostId.clone();
        heapHandle = heapHandle == null ? null : heapHandle.clone();
    }

    @Override
    public byte[] hostId() {
        return hostId.clone();
    }

    @Override
    public byte[] heapHandle() {
        return heapHandle == null ? null : heapHandle.clone();
    }

    /** Whether {@code other} runs on this card's host. */
    public boolean sameHost(PeerCard other) {
        return Arrays.equals(hostId, other.hostId);
    }

    /**
     * Whether {@code other} drives this card's GPU (two processes may share one). A GPU's UUID names it uniquely
     * across machines, so this holds also between processes of one machine that count as hosts of their own
     * ({@link WorldConfig#HOST_NAME_ENV}), whose kernels share the GPU's SMs all the same.
     */
    public boolean sameGpu(PeerCard other) {
        return gpuUuid.equals(other.gpuUuid);
    }

    /** "rank 1 (pid 4242 on node7, GPU 0000:19:00.0)", for messages. */
    public String describe() {
        return "rank " + rank + " (pid " + pid + " on " + hostName + ", GPU " + gpuPciBusId + ")";
    }

    public byte[] encode() {
        byte[] uuid = string(gpuUuid, "GPU UUID");
        byte[] bus = string(gpuPciBusId, "GPU PCI bus id");
        byte[] host = string(hostName, "host name");
        ByteBuffer b = ByteBuffer.allocate(PeerCardDescriptor.STRINGS_OFFSET + 6 + uuid.length + bus.length
                + host.length);
        b.putInt(PeerCardDescriptor.MAGIC).putShort(PeerCardDescriptor.VERSION)
                .putShort(heapHandle == null ? 0 : PeerCardDescriptor.FLAG_HEAP_EXPORTED)
                .putInt(rank).putInt(worldSize).putLong(pid).putLong(heapBytes).put(hostId)
                .put(heapHandle == null ? new byte[PeerCardDescriptor.HEAP_HANDLE_BYTES] : heapHandle);
        for (byte[] s : new byte[][] {uuid, bus, host}) {
            b.putShort((short) s.length).put(s);
        }
        return b.array();
    }

    /**
     * Reads a card that rank {@code from} published.
     *
     * @throws WorldSetupException naming {@code from} when the bytes are not a card of this version
     */
    public static PeerCard decode(int from, byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        try {
            int magic = b.getInt();
            short version = b.getShort();
            if (magic != PeerCardDescriptor.MAGIC || version != PeerCardDescriptor.VERSION) {
                throw new WorldSetupException(String.format("rank %d published no gda4j peer card of version %d"
                        + " (magic 0x%08x, version %d): every process of a job must run the same gda4j version",
                        from, PeerCardDescriptor.VERSION, magic, version));
            }
            short flags = b.getShort();
            int rank = b.getInt();
            int worldSize = b.getInt();
            long pid = b.getLong();
            long heapBytes = b.getLong();
            byte[] hostId = new byte[PeerCardDescriptor.HOST_ID_BYTES];
            b.get(hostId);
            byte[] handle = new byte[PeerCardDescriptor.HEAP_HANDLE_BYTES];
            b.get(handle);
            String uuid = readString(b);
            String bus = readString(b);
            String host = readString(b);
            if (b.hasRemaining()) {
                throw new WorldSetupException("rank " + from + "'s peer card has " + b.remaining()
                        + " bytes after its last field");
            }
            boolean exported = (flags & PeerCardDescriptor.FLAG_HEAP_EXPORTED) != 0;
            return new PeerCard(rank, worldSize, pid, heapBytes, hostId, exported ? handle : null, uuid, bus, host);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new WorldSetupException("rank " + from + "'s peer card of " + bytes.length + " bytes is cut short or"
                    + " malformed (" + e + ")", e);
        }
    }

    private static byte[] string(String s, String what) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > PeerCardDescriptor.MAX_STRING_BYTES) {
            throw new IllegalArgumentException(what + " of " + bytes.length + " bytes: at most "
                    + PeerCardDescriptor.MAX_STRING_BYTES);
        }
        return bytes;
    }

    private static String readString(ByteBuffer b) {
        int length = Short.toUnsignedInt(b.getShort());
        if (length > PeerCardDescriptor.MAX_STRING_BYTES) {
            throw new IllegalArgumentException("a string of " + length + " bytes");
        }
        byte[] bytes = new byte[length];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * This machine's host id: the first 16 bytes of SHA-256 over the host name and the kernel's boot id. The boot id
     * tells apart two machines (or containers on two machines) that share a host name; the host name tells apart
     * containers of one machine, which share the boot id but may not share IPC (NCCL's host hash does the same).
     */
    public static byte[] localHostId() {
        return hostId(localHostName(), bootId());
    }

    /**
     * The host id of a process that counts as host {@code name} ({@link WorldConfig#HOST_NAME_ENV}); this machine's
     * ({@link #localHostId()}) for an empty name.
     */
    public static byte[] hostIdOf(String name) {
        return name.isEmpty() ? localHostId() : hostId(name, "named by " + WorldConfig.HOST_NAME_ENV);
    }

    static byte[] hostId(String hostName, String bootId) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(hostName.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(bootId.getBytes(StandardCharsets.UTF_8));
            return Arrays.copyOf(sha.digest(), PeerCardDescriptor.HOST_ID_BYTES);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** The host name ({@code HOSTNAME} where the JVM cannot resolve its own), for ids and messages. */
    public static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            String env = System.getenv("HOSTNAME");
            return env == null ? "localhost" : env;
        }
    }

    private static String bootId() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
        } catch (IOException | RuntimeException e) {
            return ""; // not Linux: the host name alone decides
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PeerCard c && rank == c.rank && worldSize == c.worldSize && pid == c.pid
                && heapBytes == c.heapBytes && Arrays.equals(hostId, c.hostId)
                && Arrays.equals(heapHandle, c.heapHandle)
                && gpuUuid.equals(c.gpuUuid) && gpuPciBusId.equals(c.gpuPciBusId) && hostName.equals(c.hostName);
    }

    @Override
    public int hashCode() {
        return Objects.hash(rank, pid, Arrays.hashCode(hostId), gpuUuid);
    }

    @Override
    public String toString() {
        return "PeerCard[" + describe() + ", heap " + heapBytes + " bytes" + (heapHandle == null ? ", not exported"
                : "") + "]";
    }
}
