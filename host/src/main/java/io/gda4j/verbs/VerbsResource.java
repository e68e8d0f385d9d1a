package io.gda4j.verbs;

import java.util.List;

/**
 * A native verbs object owned by Java: a handle, what it depends on, and an idempotent {@link #close()}.
 *
 * <p>Closing goes through the context's {@link ResourceRegistry}: whatever still depends on this resource (an MR on
 * a PD, a QP on a CQ) is closed first, newest first; closing the {@link RdmaContext} closes everything in reverse
 * order of creation. A resource whose destroy call fails stays open and the call throws.
 */
public abstract class VerbsResource implements AutoCloseable {
    private final ResourceRegistry registry;
    private final long handle;
    private final List<VerbsResource> dependencies;
    private boolean closed;

    VerbsResource(ResourceRegistry registry, long handle, List<VerbsResource> dependencies) {
        this.registry = registry;
        this.handle = handle;
        this.dependencies = List.copyOf(dependencies);
        registry.add(this);
    }

    /** The native pointer ({@code struct ibv_pd *} etc.); throws once closed. */
    public final long handle() {
        requireOpen();
        return handle;
    }

    public final boolean isClosed() {
        synchronized (registry) {
            return closed;
        }
    }

    /** Destroys the native object, after closing whatever depends on it. Does nothing the second time. */
    @Override
    public final void close() {
        registry.close(this);
    }

    /** "PD 0x7f..", "QP 0x000123": names the resource in messages. */
    @Override
    public abstract String toString();

    /** Calls the native destroy function; throws {@link VerbsException} when it fails. */
    abstract void destroy(long nativeHandle);

    final void requireOpen() {
        if (isClosed()) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    final long rawHandle() {
        return handle;
    }

    final boolean closedLocked() {
        return closed;
    }

    final void markClosedLocked() {
        closed = true;
    }

    /** Whether this resource needs {@code other} to stay alive, directly or through its own dependencies. */
    final boolean dependsOn(VerbsResource other) {
        for (VerbsResource dependency : dependencies) {
            if (dependency == other || dependency.dependsOn(other)) {
                return true;
            }
        }
        return false;
    }
}
