package io.gda4j.verbs;

import java.util.ArrayList;
import java.util.List;

/**
 * The open resources of one {@link RdmaContext}, in order of creation, so that they close in reverse order and a
 * resource never outlives what it depends on. All methods lock the registry: set-up calls are rare and short.
 */
final class ResourceRegistry {
    private final List<VerbsResource> open = new ArrayList<>();

    synchronized void add(VerbsResource resource) {
        open.add(resource);
    }

    /** Closes {@code target} and, before it, every open resource that depends on it (newest first). */
    synchronized void close(VerbsResource target) {
        if (target.closedLocked()) {
            return;
        }
        VerbsException failure = null;
        for (int i = open.size() - 1; i >= 0; i--) {
            VerbsResource resource = open.get(i);
            if (resource != target && resource.dependsOn(target)) {
                failure = closeOne(resource, failure);
            }
        }
        if (failure == null) {
            failure = closeOne(target, null);
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Closes everything, newest first, going on after failures; returns the first failure (others suppressed) or
     * null. Resources that failed to close are forgotten: closing the device releases them in the kernel.
     */
    synchronized VerbsException closeAll() {
        VerbsException failure = null;
        for (int i = open.size() - 1; i >= 0; i--) {
            failure = closeOne(open.get(i), failure);
        }
        for (VerbsResource resource : open) {
            resource.markClosedLocked();
        }
        open.clear();
        return failure;
    }

    synchronized int openCount() {
        return open.size();
    }

    private VerbsException closeOne(VerbsResource resource, VerbsException failure) {
        try {
            resource.destroy(resource.rawHandle());
            resource.markClosedLocked();
            open.remove(resource);
            return failure;
        } catch (VerbsException e) {
            if (failure == null) {
                return e;
            }
            failure.addSuppressed(e);
            return failure;
        }
    }
}
