package io.gda4j.gdrcopy;

import java.nio.file.Path;
import java.util.List;
import java.util.Properties;

/**
 * Where gdrcopy is looked for: the library name(s) and the device node. Every name and default lives here once.
 *
 * <p>The device node setting only changes what {@link Gdrcopy#status()} checks (so tests can point it at a path
 * that does not exist); libgdrapi itself always opens {@value #DEVICE_DEFAULT}.
 *
 * @param libraryCandidates names handed to JNA in order, the first one that loads wins
 * @param deviceNode        the gdrdrv character device
 */
public record GdrcopyConfig(List<String> libraryCandidates, Path deviceNode) {

    /** System property naming the library to load instead of {@value #LIBRARY_DEFAULT}. */
    public static final String LIBRARY_PROP_NAME = "gda4j.gdrcopy.library";
    /** The versioned soname installed by the libgdrapi package (gdrcopy 2.x). */
    public static final String LIBRARY_DEFAULT = "libgdrapi.so.2";
    /** Tried after {@value #LIBRARY_DEFAULT} when the property is unset: a development install without the soname link. */
    public static final String LIBRARY_FALLBACK = "gdrapi";

    /** System property naming the device node to check instead of {@value #DEVICE_DEFAULT}. */
    public static final String DEVICE_PROP_NAME = "gda4j.gdrcopy.device";
    /** The node created by the gdrdrv kernel module; the path libgdrapi's gdr_open() opens. */
    public static final String DEVICE_DEFAULT = "/dev/gdrdrv";

    public GdrcopyConfig {
        if (libraryCandidates.isEmpty()) {
            throw new IllegalArgumentException("at least one library name is needed");
        }
        libraryCandidates = List.copyOf(libraryCandidates);
    }

    /** Resolves the configuration from {@link System#getProperties()}. */
    public static GdrcopyConfig fromSystemProperties() {
        return from(System.getProperties());
    }

    /** Resolves the configuration from {@code properties}; an explicit library name disables the fallback. */
    public static GdrcopyConfig from(Properties properties) {
        String library = properties.getProperty(LIBRARY_PROP_NAME);
        List<String> candidates = library == null || library.isBlank()
                ? List.of(LIBRARY_DEFAULT, LIBRARY_FALLBACK)
                : List.of(library.trim());
        String device = properties.getProperty(DEVICE_PROP_NAME);
        Path deviceNode = Path.of(device == null || device.isBlank() ? DEVICE_DEFAULT : device.trim());
        return new GdrcopyConfig(candidates, deviceNode);
    }

    /** The name used in messages: the first candidate. */
    public String libraryName() {
        return libraryCandidates.get(0);
    }
}
