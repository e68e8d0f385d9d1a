/**
 * Host flags: 8-byte words the host writes and a running kernel polls (a proxy's semaphore, a FIFO tail, a stop
 * flag), behind the one interface {@link io.gda4j.gdrcopy.HostWritableGpuWord}.
 *
 * <p>{@link io.gda4j.hostflag.HostFlags#allocate} hands out a word of one of three backends:
 * {@link io.gda4j.hostflag.GdrcopyWord} (gdrcopy: a CPU store into GPU memory, where libgdrapi and gdrdrv exist),
 * {@link io.gda4j.hostflag.StreamWriteWord} ({@code cuStreamWriteValue64}: works everywhere, a driver call per store)
 * and {@link io.gda4j.hostflag.MappedPinnedWord} (a word in pinned host memory the GPU polls over PCIe). AUTO picks
 * gdrcopy where it is usable and mapped-pinned elsewhere; {@link io.gda4j.hostflag.FlagEcho} measures a round trip
 * through any of them ({@code gda4j hostflag}).
 */
package io.gda4j.hostflag;
