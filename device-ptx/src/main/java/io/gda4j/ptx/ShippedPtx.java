package io.gda4j.ptx;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Optional;

/**
 * The toolkit's kernels as this module ships them: the PTX that {@code regen-ptx.sh} generates from
 * {@code kernels/<name>.cu}, committed as the resources {@code io/gda4j/ptx/<name>.ptx} of this package.
 *
 * <p>Internal: gda4j-host's {@code io.gda4j.cuda.PtxModule} and {@code ModuleImage} read the PTX through this class,
 * and users load a toolkit module by its name there. The resources are read here because on the module path a
 * package's resources are visible to the code of its own module only; on the class path this finds the same files.
 */
public final class ShippedPtx {
    private ShippedPtx() {
    }

    /**
     * The text of {@code <name>.ptx} (no trailing NUL), or empty where this module ships no such file.
     *
     * @param name a module name as the kernels' file names give it, e.g. {@code "ops"}, without ".ptx"
     * @throws UncheckedIOException when the file is there but cannot be read
     */
    public static Optional<byte[]> read(String name) {
        String file = name + ".ptx";
        try (InputStream in = ShippedPtx.class.getResourceAsStream(file)) {
            return in == null ? Optional.empty() : Optional.of(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("could not read the PTX resource " + file + " of gda4j-device-ptx", e);
        }
    }

    /** Whether this module ships {@code <name>.ptx}. */
    public static boolean has(String name) {
        return ShippedPtx.class.getResource(name + ".ptx") != null;
    }
}
