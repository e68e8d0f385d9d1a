package io.gda4j.nic.topology;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The machine's PCIe tree as far as NIC choice needs it: every PCI function ({@code <root>/bus/pci/devices}, each a
 * link into {@code <root>/devices/pci<domain>:<bus>/<bridge>/.../<function>}), which of them are NVIDIA GPUs, and
 * the RDMA devices ({@code <root>/class/infiniband/<name>/device}) with their ports. Read once from a sysfs root,
 * {@code /sys} on a machine ({@link #ofThisMachine()}), a fake tree in tests. Never throws: what cannot be read is
 * left out, and {@link #problems()} says what.
 */
public final class PciTopology {
    /** Where Linux mounts sysfs. */
    public static final Path SYSFS = Path.of("/sys");

    private static final Pattern BUS_ID = Pattern.compile("(?:[0-9a-f]{4,8}:)?([0-9a-f]{2}):([0-9a-f]{2})\\.([0-7])");
    private static final Pattern HOST_BRIDGE = Pattern.compile("pci[0-9a-f]{4,8}:[0-9a-f]{2}");
    /** mlx5_2 before mlx5_10: the text before the trailing number, then the number. */
    static final Comparator<String> NAME_ORDER = Comparator.comparing(PciTopology::namePrefix)
            .thenComparingLong(PciTopology::nameNumber).thenComparing(Comparator.naturalOrder());

    private final Path root;
    private final Map<String, PciDevice> devices;
    private final List<PciNic> nics;
    private final List<String> problems;

    private PciTopology(Path root, Map<String, PciDevice> devices, List<PciNic> nics, List<String> problems) {
        this.root = root;
        this.devices = devices;
        this.nics = List.copyOf(nics);
        this.problems = List.copyOf(problems);
    }

    /** The tree of this machine, from {@code /sys}. */
    public static PciTopology ofThisMachine() {
        return read(SYSFS);
    }

    /** The tree under {@code sysRoot} (a directory laid out as {@code /sys} is). */
    public static PciTopology read(Path sysRoot) {
        List<String> problems = new ArrayList<>();
        Map<String, PciDevice> devices = new TreeMap<>();
        Path pci = sysRoot.resolve("bus/pci/devices");
        if (Files.isDirectory(pci)) {
            for (Path entry : list(pci, problems)) {
                readDevice(entry, problems).ifPresent(d -> devices.put(d.busId(), d));
            }
        } else {
            problems.add(pci + " is not readable: PCI distances are unknown");
        }
        List<PciNic> nics = new ArrayList<>();
        Path infiniband = sysRoot.resolve("class/infiniband");
        if (Files.isDirectory(infiniband)) {
            for (Path entry : list(infiniband, problems)) {
                String name = entry.getFileName().toString();
                Optional<String> busId = linkedBusId(entry.resolve("device"));
                PciDevice device = busId.map(devices::get).orElse(null);
                if (device == null) {
                    problems.add(name + " is not a PCI function (a software device such as rxe or siw?): left out");
                    continue;
                }
                nics.add(new PciNic(name, device, readPorts(name, entry.resolve("ports"), problems)));
            }
        }
        nics.sort(Comparator.comparing(PciNic::name, NAME_ORDER));
        return new PciTopology(sysRoot, devices, nics, problems);
    }

    /** The sysfs root this was read from. */
    public Path root() {
        return root;
    }

    /** The PCI function {@code busId} names (any case, 4- or 8-digit domain), if sysfs lists it. */
    public Optional<PciDevice> device(String busId) {
        return Optional.ofNullable(devices.get(normalizeBusId(busId)));
    }

    /** Every NVIDIA GPU, by bus id (the order {@code CUDA_DEVICE_ORDER=PCI_BUS_ID} numbers them in). */
    public List<PciDevice> gpus() {
        return devices.values().stream().filter(PciDevice::isNvidiaGpu).toList();
    }

    /** Every RDMA device that is a PCI function, by name (mlx5_2 before mlx5_10). */
    public List<PciNic> nics() {
        return nics;
    }

    /** The RDMA device named {@code name}, if listed. */
    public Optional<PciNic> nic(String name) {
        return nics.stream().filter(n -> n.name().equals(name)).findFirst();
    }

    /** What could not be read and was left out, one sentence each. */
    public List<String> problems() {
        return problems;
    }

    /**
     * {@code busId} as sysfs spells it: lower case with a 4-digit domain ({@code 00000000:1B:00.0}, as CUDA and
     * nvidia-smi write it, becomes {@code 0000:1b:00.0}); a missing domain is domain 0.
     */
    public static String normalizeBusId(String busId) {
        String text = busId.strip().toLowerCase(Locale.ROOT);
        Matcher m = BUS_ID.matcher(text);
        if (!m.matches()) {
            return text;
        }
        int colon = text.indexOf(':');
        String domain = text.indexOf(':', colon + 1) < 0 ? "0000" : text.substring(0, colon);
        domain = domain.length() > 4 ? domain.substring(domain.length() - 4) : domain;
        return domain + ":" + m.group(1) + ":" + m.group(2) + "." + m.group(3);
    }

    private static Optional<PciDevice> readDevice(Path entry, List<String> problems) {
        String busId = normalizeBusId(entry.getFileName().toString());
        Path real;
        try {
            real = entry.toRealPath();
        } catch (IOException e) {
            problems.add(entry + " cannot be resolved: " + e.getMessage());
            return Optional.empty();
        }
        String hostBridge = "";
        List<String> bridges = new ArrayList<>();
        for (Path part : real) {
            String name = part.toString();
            if (HOST_BRIDGE.matcher(name).matches()) {
                hostBridge = name;
                bridges.clear();
            } else if (!hostBridge.isEmpty() && BUS_ID.matcher(name).matches()) {
                bridges.add(normalizeBusId(name));
            }
        }
        if (!bridges.isEmpty() && bridges.get(bridges.size() - 1).equals(busId)) {
            bridges.remove(bridges.size() - 1);
        }
        return Optional.of(new PciDevice(busId, hostBridge, bridges, (int) readNumber(real.resolve("numa_node"), -1),
                (int) readNumber(real.resolve("class"), 0), (int) readNumber(real.resolve("vendor"), 0)));
    }

    private static List<NicPort> readPorts(String device, Path portsDir, List<String> problems) {
        List<NicPort> ports = new ArrayList<>();
        if (!Files.isDirectory(portsDir)) {
            problems.add(device + " lists no ports (" + portsDir + ")");
            return ports;
        }
        for (Path port : list(portsDir, problems)) {
            String name = port.getFileName().toString();
            if (name.matches("[0-9]+")) {
                ports.add(new NicPort(device, Integer.parseInt(name), readText(port.resolve("link_layer")),
                        readText(port.resolve("state"))));
            }
        }
        ports.sort(Comparator.comparingInt(NicPort::number));
        return ports;
    }

    /** The PCI function a {@code device} link of an RDMA device points at. */
    private static Optional<String> linkedBusId(Path deviceLink) {
        try {
            String name = deviceLink.toRealPath().getFileName().toString();
            return BUS_ID.matcher(name).matches() ? Optional.of(normalizeBusId(name)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static List<Path> list(Path dir, List<String> problems) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        } catch (IOException e) {
            problems.add(dir + " cannot be listed: " + e.getMessage());
            return List.of();
        }
    }

    private static String readText(Path file) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII).strip();
        } catch (IOException e) {
            return "";
        }
    }

    /** A decimal or 0x-hex number from a sysfs file; {@code absent} when missing or not a number. */
    private static long readNumber(Path file, long absent) {
        String text = readText(file);
        try {
            return text.startsWith("0x") ? Long.parseLong(text.substring(2), 16) : Long.parseLong(text);
        } catch (NumberFormatException e) {
            return absent;
        }
    }

    private static String namePrefix(String name) {
        int end = name.length();
        while (end > 0 && Character.isDigit(name.charAt(end - 1))) {
            end--;
        }
        return name.substring(0, end);
    }

    private static long nameNumber(String name) {
        String digits = name.substring(namePrefix(name).length());
        return digits.isEmpty() || digits.length() > 18 ? -1 : Long.parseLong(digits);
    }
}
