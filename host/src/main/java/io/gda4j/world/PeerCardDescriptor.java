package io.gda4j.world;

import io.gda4j.cuda.IpcMemory;

/**
 * What each process of a multi-process world publishes on the bootstrap's all-gather, once, before any transport is
 * connected: who it is, where it runs, and how its heap can be mapped. All integers big-endian (the bootstrap's
 * order); strings UTF-8 with a 16-bit length.
 *
 * <pre>
 *  0        4         6         8       12          16        24          32
 *  +--------+---------+---------+-------+-----------+---------+-----------+
 *  | magic  | version | flags   | rank  | worldSize | pid     | heapBytes |
 *  +--------+---------+---------+-------+-----------+---------+-----------+
 *  32                 48                              112
 *  +------------------+-------------------------------+
 *  | host id (16)     | heap IPC handle (64)          |   host id: see PeerCard#hostId; handle: cuIpcGetMemHandle
 *  +------------------+-------------------------------+
 *  112
 *  +---------------------+-------------------------+-------------------------+
 *  | GPU UUID (len, utf8)| GPU PCI bus id (len, ..)| host name (len, utf8)   |   each at most MAX_STRING_BYTES
 *  +---------------------+-------------------------+-------------------------+
 * </pre>
 */
public final class PeerCardDescriptor {
    /** "GDPC": a card of another program (or version) is refused before its fields are trusted. */
    public static final int MAGIC = 0x47445043;
    public static final short VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int FLAGS_OFFSET = 6;
    public static final int RANK_OFFSET = 8;
    public static final int WORLD_SIZE_OFFSET = 12;
    public static final int PID_OFFSET = 16;
    public static final int HEAP_BYTES_OFFSET = 24;
    public static final int HOST_ID_OFFSET = 32;
    public static final int HOST_ID_BYTES = 16;
    public static final int HEAP_HANDLE_OFFSET = 48;
    public static final int HEAP_HANDLE_BYTES = IpcMemory.HANDLE_BYTES;
    public static final int STRINGS_OFFSET = HEAP_HANDLE_OFFSET + HEAP_HANDLE_BYTES;
    public static final int MAX_STRING_BYTES = 255;
    /** The longest card: the fixed part and three strings at their limit. */
    public static final int MAX_LENGTH = STRINGS_OFFSET + 3 * (2 + MAX_STRING_BYTES);

    /** {@code flags} bit: the heap handle is valid (the process exported its heap for CUDA IPC). */
    public static final short FLAG_HEAP_EXPORTED = 1;

    private PeerCardDescriptor() {
    }
}
