package io.gda4j.nic.topology;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A sysfs tree in a temporary directory, laid out as Linux lays it out: each PCI function a directory under
 * {@code devices/pci<domain>:<bus>/<root port>/<bridge>/.../<function>} with {@code class}, {@code vendor} and
 * {@code numa_node} files, {@code bus/pci/devices/<function>} a relative link to it, and each RDMA device a
 * directory {@code <function>/infiniband/<name>} (with a {@code device} link back up and {@code ports/<n>}) linked
 * from {@code class/infiniband/<name>}. Build a machine by walking down from {@link #hostBridge}.
 */
public final class FakeSysfs {
    public static final int CLASS_BRIDGE = 0x060400;
    public static final int CLASS_3D = 0x030200;
    public static final int CLASS_INFINIBAND = 0x020700;
    public static final int CLASS_ETHERNET = 0x020000;
    public static final int VENDOR_BROADCOM = 0x1000;
    public static final int VENDOR_MELLANOX = 0x15b3;

    private final Path root;

    public FakeSysfs(Path root) {
        this.root = root;
        mkdirs(root.resolve("bus/pci/devices"));
    }

    public Path root() {
        return root;
    }

    public PciTopology read() {
        return PciTopology.read(root);
    }

    /** A root complex, e.g. {@code pci0000:17}, on NUMA node {@code numaNode} (-1: unknown). */
    public Node hostBridge(String name, int numaNode) {
        Path dir = root.resolve("devices").resolve(name);
        mkdirs(dir);
        return new Node(dir, numaNode);
    }

    /** A place in the tree under which functions hang: a host bridge or a bridge. */
    public final class Node {
        private final Path dir;
        private final int numaNode;

        private Node(Path dir, int numaNode) {
            this.dir = dir;
            this.numaNode = numaNode;
        }

        /** A PCI bridge (a root port, or a switch's upstream or downstream port). */
        public Node bridge(String busId) {
            return new Node(function(busId, CLASS_BRIDGE, VENDOR_BROADCOM), numaNode);
        }

        /**
         * A PCIe switch: its upstream port, then one downstream port per entry of {@code downstream}; returns the
         * downstream ports, in order.
         */
        public Node[] pcieSwitch(String upstream, String... downstream) {
            Node up = bridge(upstream);
            Node[] ports = new Node[downstream.length];
            for (int i = 0; i < downstream.length; i++) {
                ports[i] = up.bridge(downstream[i]);
            }
            return ports;
        }

        /** An NVIDIA 3D controller (what a data-centre GPU reports). */
        public FakeSysfs gpu(String busId) {
            function(busId, CLASS_3D, PciDevice.VENDOR_NVIDIA);
            return FakeSysfs.this;
        }

        /** A ConnectX on InfiniBand: RDMA device {@code name} with the given ports, all ACTIVE. */
        public FakeSysfs nic(String busId, String name, int... ports) {
            Path function = function(busId, CLASS_INFINIBAND, VENDOR_MELLANOX);
            Path ib = function.resolve("infiniband").resolve(name);
            mkdirs(ib);
            link(ib.resolve("device"), Path.of("../../../" + busId));
            link(root.resolve("class/infiniband").resolve(name), root.resolve("class/infiniband").relativize(ib));
            for (int port : ports) {
                port(name, port, "InfiniBand", "4: ACTIVE");
            }
            return FakeSysfs.this;
        }

        private Path function(String busId, int classCode, int vendor) {
            Path d = dir.resolve(busId);
            mkdirs(d);
            write(d.resolve("class"), String.format("0x%06x%n", classCode));
            write(d.resolve("vendor"), String.format("0x%04x%n", vendor));
            write(d.resolve("numa_node"), numaNode + "\n");
            Path devices = root.resolve("bus/pci/devices");
            link(devices.resolve(busId), devices.relativize(d));
            return d;
        }
    }

    /** Sets (or adds) port {@code port} of RDMA device {@code name}. */
    public FakeSysfs port(String name, int port, String linkLayer, String state) {
        Path dir = root.resolve("class/infiniband").resolve(name).resolve("ports").resolve(Integer.toString(port));
        mkdirs(dir);
        write(dir.resolve("link_layer"), linkLayer + "\n");
        write(dir.resolve("state"), state + "\n");
        return this;
    }

    private static void mkdirs(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(Path file, String text) {
        try {
            Files.writeString(file, text, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void link(Path link, Path target) {
        try {
            Files.createDirectories(link.getParent());
            Files.createSymbolicLink(link, target);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
