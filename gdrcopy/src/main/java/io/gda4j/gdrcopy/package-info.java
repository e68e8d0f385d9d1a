/**
 * gdrcopy: CPU-mapped GPU memory through libgdrapi and the gdrdrv kernel module, so the host can store a flag or a
 * signal into device memory in well under a microsecond, with no CUDA call.
 *
 * <p>Layers: {@code LibGdrapi} (package-private) is the JNA direct mapping; {@link io.gda4j.gdrcopy.GdrHandle},
 * {@link io.gda4j.gdrcopy.GdrPinnedBuffer} and {@link io.gda4j.gdrcopy.GdrMapping} own one native object each
 * and close in reverse order of creation; {@link io.gda4j.gdrcopy.Gdrcopy#map} does all three at once.
 * {@link io.gda4j.gdrcopy.HostWritableGpuWord} is the backend-neutral word the proxy signals through;
 * {@link io.gda4j.gdrcopy.GdrWord} is its gdrcopy backend, and fallbacks live in other modules.
 *
 * <p>Where libgdrapi or /dev/gdrdrv is missing, {@link io.gda4j.gdrcopy.Gdrcopy#status()} says so in one sentence
 * and nothing throws until a caller tries to open a handle anyway.
 */
package io.gda4j.gdrcopy;
