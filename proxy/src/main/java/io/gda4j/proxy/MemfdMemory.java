package io.gda4j.proxy;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * {@link CrossProcessMemory} in host memory: an anonymous memory file ({@code memfd_create}) mapped shared, which
 * another process of this host maps through {@code /proc/<pid>/fd/<fd>}. Nothing is left behind when a process dies:
 * the file lives while a descriptor or a mapping holds it, and has no name in any directory.
 *
 * <p>The handle is {@code "<path> <name>"}: the memfd's name carries a random token, and a peer maps the path only
 * while it still links to a memfd of that name, so a descriptor number that the exporter closed and reused for
 * another file is never mistaken for the memory.
 *
 * <p>Sizes are rounded up to whole 4 KiB pages, so that CUDA can register a mapping page by page
 * ({@link CudaCrossProcessMemory}). A closed region's mapping is dropped, not unmapped: Java unmaps a mapped buffer
 * once it is unreachable, so no address handed out can outlive its memory while someone still holds the buffer.
 */
public final class MemfdMemory implements CrossProcessMemory {
    static final int PAGE_BYTES = 4096;
    private static final SecureRandom TOKENS = new SecureRandom();

    @Override
    public Exported export(int bytes, String label) {
        int mapped = pages(bytes);
        Throwable unavailable = LibC.unavailable();
        if (unavailable != null) {
            throw new ProxyException("sharing " + label + " with other processes needs the C library's memfd_create "
                    + "(Linux): " + unavailable);
        }
        // Shown in /proc/<pid>/maps; short, so the handle stays far below the offer's limit.
        String readable = label.replaceAll("[^A-Za-z0-9]+", "-");
        String name = "gda4j-" + Long.toHexString(TOKENS.nextLong() & Long.MAX_VALUE) + "-"
                + readable.substring(0, Math.min(readable.length(), 64));
        int fd;
        try {
            fd = LibC.memfd_create(name, LibC.MFD_CLOEXEC);
        } catch (LastErrorException e) {
            throw new ProxyException("memfd_create for " + label + " failed: " + e.getMessage(), e);
        }
        try {
            String handle = "/proc/" + ProcessHandle.current().pid() + "/fd/" + fd + " " + name;
            MappedByteBuffer buffer = map(Path.of("/proc/self/fd/" + fd), mapped, true, label);
            return new Exported() {
                private boolean closed;

                @Override
                public long address() {
                    return addressOf(buffer);
                }

                @Override
                public ByteBuffer buffer() {
                    return buffer.duplicate().clear();
                }

                @Override
                public byte[] handle() {
                    return handle.getBytes(StandardCharsets.UTF_8);
                }

                @Override
                public synchronized void close() {
                    if (!closed) {
                        closed = true;
                        closeFd(fd);
                    }
                }

                @Override
                public String toString() {
                    return label + " (" + mapped + " bytes at " + handle + ")";
                }
            };
        } catch (RuntimeException e) {
            closeFd(fd);
            throw e;
        }
    }

    @Override
    public Opened open(byte[] handle, int bytes, String label) {
        String text = new String(handle, StandardCharsets.UTF_8);
        int space = text.indexOf(' ');
        if (!text.startsWith("/proc/") || space < 0) {
            throw new ProxyException(label + " was published as '" + text + "', not as a memory file of a process of "
                    + "this host: every process of a job must run the same gda4j version");
        }
        Path path = Path.of(text.substring(0, space));
        String name = text.substring(space + 1);
        String target;
        try {
            target = Files.readSymbolicLink(path).toString();
        } catch (IOException | UnsupportedOperationException e) {
            throw new ProxyException("cannot map " + label + " at " + path + " (" + e + "): has its process ended or"
                    + " closed it, or does it run as another user?", e);
        }
        if (!target.equals("/memfd:" + name) && !target.equals("/memfd:" + name + " (deleted)")) {
            throw new ProxyException("cannot map " + label + ": " + path + " is " + target + " now, not the memory"
                    + " file " + name + " its process published (it closed it: has it ended or closed its world?)");
        }
        MappedByteBuffer buffer = map(path, pages(bytes), false, label);
        long address = addressOf(buffer);
        return new Opened() {
            // Holds the mapping: it lives while this object is reachable.
            private final MappedByteBuffer mapping = buffer;

            @Override
            public long address() {
                return address;
            }

            @Override
            public void close() {
                // Dropping the last reference unmaps it; see the class comment.
            }

            @Override
            public String toString() {
                return label + " mapped at 0x" + Long.toHexString(address) + " (" + mapping.capacity() + " bytes)";
            }
        };
    }

    static int pages(int bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("shared memory of " + bytes + " bytes");
        }
        return (int) Math.min(Integer.MAX_VALUE & -PAGE_BYTES, ((long) bytes + PAGE_BYTES - 1) & -PAGE_BYTES);
    }

    /** Maps {@code bytes} of the file; {@code grow}: the exporter sizes the new file, a peer finds it sized. */
    private static MappedByteBuffer map(Path file, int bytes, boolean grow, String label) {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (!grow && channel.size() < bytes) {
                throw new ProxyException(label + " at " + file + " has " + channel.size() + " bytes, not the "
                        + bytes + " its offer promised");
            }
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes); // a new memfd grows to the size, zeroed
        } catch (IOException e) {
            throw new ProxyException("cannot map " + label + " at " + file + " (" + e + "): has its process ended or"
                    + " closed it, or does it run as another user?", e);
        }
    }

    private static long addressOf(ByteBuffer buffer) {
        return Pointer.nativeValue(Native.getDirectBufferPointer(buffer));
    }

    private static void closeFd(int fd) {
        try {
            LibC.close(fd);
        } catch (LastErrorException e) {
            // Only EBADF or EINTR can come back for a descriptor this class made; there is nothing left to free.
        }
    }
}
