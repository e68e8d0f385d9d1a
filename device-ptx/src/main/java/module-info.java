/**
 * The toolkit's kernels as PTX resources ({@code io/gda4j/ptx/<name>.ptx}), read by gda4j-host through
 * {@link io.gda4j.ptx.ShippedPtx}. No API of its own: users load a toolkit module by its name through
 * {@code io.gda4j.cuda} and {@code io.gda4j.world}.
 */
@SuppressWarnings("module") // io.gda4j.host requires this module, so it cannot be found when this one is compiled
module io.gda4j.ptx {
    exports io.gda4j.ptx to io.gda4j.host;
}
