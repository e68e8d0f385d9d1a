/**
 * The toolkit's kernels as PTX resources of this package ({@code io/gda4j/ptx/<name>.ptx}, generated from
 * {@code device-ptx/kernels} by {@code regen-ptx.sh}), read through {@link io.gda4j.ptx.ShippedPtx}.
 *
 * <p>Internal: a program loads a toolkit module by its name through {@code io.gda4j.cuda} or {@code io.gda4j.world}.
 */
package io.gda4j.ptx;
