package io.gda4j.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;

/**
 * The bytes of a CUDA module to load, where they came from, and what they are: PTX text (JIT-compiled by the driver
 * for the GPU at hand) or a cubin (an ELF file built for one GPU architecture, e.g. with {@code nvcc -cubin}).
 * Made from the toolkit's own PTX resources, a file, a class-path resource of the caller's choosing, or bytes; it
 * reads and checks the bytes at once, so a bad file is reported before any GPU work.
 */
public final class ModuleImage {
    /** What the image holds. */
    public enum Kind {
        /** PTX assembly text: kernels and their parameters are read from its {@code .entry} declarations. */
        PTX,
        /** An ELF cubin: loaded as is; kernel names must be known to the caller. */
        CUBIN
    }

    /** The first four bytes of every ELF file, cubins included. */
    private static final byte[] ELF_MAGIC = {0x7f, 'E', 'L', 'F'};

    private final String name;
    private final String origin;
    private final byte[] bytes;
    private final Kind kind;

    private ModuleImage(String name, String origin, byte[] bytes) {
        this.name = name;
        this.origin = origin;
        this.bytes = bytes;
        this.kind = kindOf(bytes, origin);
    }

    /**
     * One of the toolkit's modules, shipped as the class-path resource {@code io/gda4j/ptx/<name>.ptx}.
     *
     * @param name e.g. {@code "ops"} (a trailing ".ptx" is accepted)
     * @throws IllegalArgumentException when no such resource is on the class path
     */
    public static ModuleImage resource(String name) {
        String normalized = PtxModule.normalizeName(name);
        return new ModuleImage(normalized, PtxModule.resourcePath(normalized), PtxModule.readPtx(normalized));
    }

    /**
     * A module file: PTX text or a cubin. Its name (what {@code Rank.kernel} and messages use) is the file name
     * without its extension.
     *
     * @throws IllegalArgumentException when the file is missing, unreadable, empty, or neither PTX nor a cubin
     */
    public static ModuleImage file(Path path) {
        Objects.requireNonNull(path, "path");
        if (!Files.isRegularFile(path)) {
            throw new IllegalArgumentException("module file " + path + " does not exist or is not a regular file");
        }
        try {
            return new ModuleImage(baseName(path.getFileName().toString()), path.toString(), Files.readAllBytes(path));
        } catch (IOException e) {
            throw new IllegalArgumentException("module file " + path + " could not be read: " + e.getMessage(), e);
        }
    }

    /**
     * A module shipped as a class-path resource of your own, e.g. {@code "kernels/ring_allgather.ptx"}, found
     * through {@code loader}. Its name is the resource's file name without its extension. On the module path a class
     * loader finds a named module's resource only in a package that module opens to everyone ({@code opens pkg;}),
     * or outside its packages (e.g. {@code META-INF/}); or read the bytes with your class's
     * {@code getResourceAsStream} and pass them to {@link #bytes}.
     *
     * @throws IllegalArgumentException when the resource is not on the class path or is neither PTX nor a cubin
     */
    public static ModuleImage classPathResource(String resourcePath, ClassLoader loader) {
        Objects.requireNonNull(resourcePath, "resourcePath");
        Objects.requireNonNull(loader, "loader");
        String path = resourcePath.startsWith("/") ? resourcePath.substring(1) : resourcePath;
        InputStream in = loader.getResourceAsStream(path);
        if (in == null) {
            throw new IllegalArgumentException("module resource " + path + " is not on the class path of " + loader);
        }
        try (InputStream stream = in) {
            return new ModuleImage(baseName(path.substring(path.lastIndexOf('/') + 1)), "class-path resource " + path,
                    stream.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("could not read module resource " + path, e);
        }
    }

    /**
     * A module from bytes you hold (PTX text without a trailing NUL, or a cubin), named {@code name}.
     *
     * @throws IllegalArgumentException when the name is empty or the bytes are neither PTX nor a cubin
     */
    public static ModuleImage bytes(String name, byte[] image) {
        Objects.requireNonNull(image, "image");
        return new ModuleImage(PtxModule.normalizeName(name), "bytes named " + name, image.clone());
    }

    /** The module's name, e.g. {@code "ops"} or {@code "ring_allgather"}. */
    public String name() {
        return name;
    }

    /** Where the bytes came from, for messages: a resource path, a file path, or "bytes named X". */
    public String origin() {
        return origin;
    }

    /** PTX or cubin. */
    public Kind kind() {
        return kind;
    }

    /** Whether {@code other} holds the same bytes: two images of one name must not differ within one world. */
    public boolean sameBytes(ModuleImage other) {
        return Arrays.equals(bytes, other.bytes);
    }

    /** A copy of the bytes (PTX text without a trailing NUL, or the cubin). */
    public byte[] bytes() {
        return bytes.clone();
    }

    /** The raw bytes (PTX without a trailing NUL); not a copy, not to be modified. */
    byte[] rawBytes() {
        return bytes;
    }

    @Override
    public String toString() {
        return "module " + name + " (" + kind + ", " + origin + ")";
    }

    private static Kind kindOf(byte[] bytes, String origin) {
        if (bytes.length == 0) {
            throw new IllegalArgumentException("module " + origin + " is empty");
        }
        if (bytes.length >= ELF_MAGIC.length && Arrays.equals(Arrays.copyOf(bytes, ELF_MAGIC.length), ELF_MAGIC)) {
            return Kind.CUBIN;
        }
        String head = new String(bytes, 0, Math.min(bytes.length, 64 * 1024), StandardCharsets.US_ASCII);
        if (head.contains(".version") && head.contains(".target")) {
            return Kind.PTX;
        }
        throw new IllegalArgumentException("module " + origin + " is neither PTX text (no .version/.target"
                + " directives) nor an ELF cubin: build it with nvcc -ptx or nvcc -cubin");
    }

    private static String baseName(String fileName) {
        int dot = fileName.lastIndexOf('.');
        return dot > 0 ? fileName.substring(0, dot) : fileName;
    }
}
