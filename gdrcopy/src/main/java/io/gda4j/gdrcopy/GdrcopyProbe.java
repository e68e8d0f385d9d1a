package io.gda4j.gdrcopy;

import java.util.Optional;

/**
 * What {@link GdrcopyStatus#probe} asks of the native side. A seam: {@link NativeGdrcopyProbe} asks libgdrapi, tests
 * substitute answers so every status can be produced on a machine without gdrcopy.
 */
interface GdrcopyProbe {

    /** The library looked for, for messages. */
    String libraryName();

    /** Why the library cannot be used; empty when it loaded. */
    Optional<String> libraryFailure();

    /** libgdrapi's version; called only when the library loaded. */
    GdrcopyStatus.Version runtimeVersion();

    /** Opens a handle, asks gdrdrv its version and closes the handle again. */
    GdrcopyStatus.Version openAndReadDriverVersion();
}
