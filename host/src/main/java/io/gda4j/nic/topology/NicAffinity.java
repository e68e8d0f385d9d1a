package io.gda4j.nic.topology;

import io.gda4j.nic.NicException;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Gives each local rank's GPU its NIC port, the way NCCL's topology search does: the port whose device is closest
 * on the PCIe tree ({@link PathType}: behind the same PCIe switch first, then the same root complex, then the same
 * NUMA node); among equally close ports, GPUs take turns, so the GPUs behind one switch spread over that switch's
 * NICs (and a dual-port NIC's second port is used only after every equally close NIC's first). The turn is the
 * GPU's position, by bus id, among every GPU of the machine that shares those closest ports: each process of a
 * multi-process job computes the same answer for the same GPU without asking the others.
 *
 * <p>A GPU whose closest NIC is farther than {@link NicPlacement#gdrLevel()} is refused with a message that names
 * the two settings that can change that ({@link NicPlacement}); so is a named device that is too far away.
 */
public final class NicAffinity {
    private final PciTopology topology;
    private final NicPlacement placement;

    public NicAffinity(PciTopology topology, NicPlacement placement) {
        this.topology = topology;
        this.placement = placement;
    }

    public PciTopology topology() {
        return topology;
    }

    public NicPlacement placement() {
        return placement;
    }

    /**
     * The port for local rank {@code localRank} (of {@code localRanks} this process drives), whose GPU has PCI
     * address {@code gpuBusId}.
     *
     * @throws NicException when the named devices do not fit the ranks, a named device or port does not exist, no
     *                      port is active, or the port is farther from the GPU than the GDR level allows
     */
    public NicAssignment choose(int localRank, int localRanks, String gpuBusId) {
        String gpuId = PciTopology.normalizeBusId(gpuBusId);
        Optional<PciDevice> gpu = topology.device(gpuId);
        List<NicPlacement.NamedPort> named = placement.devices();
        if (!named.isEmpty()) {
            if (named.size() != 1 && named.size() != localRanks) {
                throw new NicException(String.format(Locale.ROOT, "%s names %d devices (%s) but this process drives"
                                + " %d local rank%s: name one device for every rank, or one per local rank in"
                                + " local-rank order", NicPlacement.NIC_DEVICE_ENV, named.size(),
                        placement.devicesText(), localRanks, localRanks == 1 ? "" : "s"));
            }
            return named(named.get(named.size() == 1 ? 0 : localRank), localRank, gpuId, gpu);
        }
        if (topology.nics().isEmpty()) {
            return new NicAssignment(gpuId, null, null, "sysfs lists no RDMA device under "
                    + topology.root().resolve("class/infiniband") + ": the first one libibverbs lists");
        }
        List<NicPort> active = topology.nics().stream().flatMap(n -> n.ports().stream()).filter(NicPort::active)
                .toList();
        if (active.isEmpty()) {
            throw new NicException("no RDMA port is ACTIVE (" + topology.nics().stream()
                    .flatMap(n -> n.ports().stream()).map(p -> p.label() + ": " + (p.state().isEmpty() ? "no state"
                            : p.state())).collect(Collectors.joining(", ")) + "): check the links (ibstat, ip link)"
                    + " and, on InfiniBand, that a subnet manager runs");
        }
        if (gpu.isEmpty()) {
            return new NicAssignment(gpuId, active.get(0), null, "GPU " + gpuId + " is not under "
                    + topology.root().resolve("bus/pci/devices") + ", so distances are unknown: the first active"
                    + " port");
        }
        PathType best = active.stream().map(p -> distance(gpu.get(), p)).min(Comparator.naturalOrder()).orElseThrow();
        List<NicPort> closest = closestPorts(gpu.get(), active);
        if (!best.within(placement.gdrLevel())) {
            throw tooFar(localRank, gpuId, closest.get(0), best, true);
        }
        List<String> sharing = topology.gpus().stream().filter(g -> closestPorts(g, active).equals(closest))
                .map(PciDevice::busId).toList();
        int turn = Math.max(0, sharing.indexOf(gpuId));
        NicPort port = closest.get(turn % closest.size());
        String why = "closest to GPU " + gpuId + ": " + best + " (" + best.meaning() + ")";
        if (closest.size() > 1) {
            why += String.format(Locale.ROOT, "; round-robin over %d equally close ports among the %d GPU(s) that"
                    + " share them (this one is #%d by bus id)", closest.size(), sharing.size(), turn + 1);
        }
        return new NicAssignment(gpuId, port, best, why);
    }

    private NicAssignment named(NicPlacement.NamedPort named, int localRank, String gpuId, Optional<PciDevice> gpu) {
        String source = "named by " + NicPlacement.NIC_DEVICE_ENV;
        Optional<PciNic> nic = topology.nic(named.device());
        if (nic.isEmpty()) {
            if (topology.nics().isEmpty()) {
                int port = named.port() == NicPlacement.NamedPort.FIRST_ACTIVE_PORT ? 1 : named.port();
                return new NicAssignment(gpuId, new NicPort(named.device(), port, "", ""), null, source
                        + "; sysfs lists no RDMA device, so its distance is unknown");
            }
            throw new NicException(String.format("%s names %s for local rank %d, which is not an RDMA device here:"
                            + " %s lists %s (ibv_devices shows the same)", NicPlacement.NIC_DEVICE_ENV, named.device(),
                    localRank, topology.root().resolve("class/infiniband"), topology.nics().stream().map(PciNic::name)
                            .collect(Collectors.joining(", "))));
        }
        NicPort port = pickPort(nic.get(), named, localRank);
        if (gpu.isEmpty()) {
            return new NicAssignment(gpuId, port, null, source + "; GPU " + gpuId + " is not in sysfs, so its"
                    + " distance is unknown");
        }
        PathType path = distance(gpu.get(), port);
        if (!path.within(placement.gdrLevel())) {
            throw tooFar(localRank, gpuId, port, path, false);
        }
        return new NicAssignment(gpuId, port, path, source + "; " + path + " from GPU " + gpuId + " ("
                + path.meaning() + ")");
    }

    private static NicPort pickPort(PciNic nic, NicPlacement.NamedPort named, int localRank) {
        if (named.port() == NicPlacement.NamedPort.FIRST_ACTIVE_PORT) {
            return nic.ports().stream().filter(NicPort::active).findFirst()
                    .orElse(nic.ports().isEmpty() ? new NicPort(nic.name(), 1, "", "") : nic.ports().get(0));
        }
        return nic.ports().stream().filter(p -> p.number() == named.port()).findFirst().orElseThrow(
                () -> new NicException(String.format("%s names %s for local rank %d, but %s has port%s %s",
                        NicPlacement.NIC_DEVICE_ENV, named, localRank, nic.name(), nic.ports().size() == 1 ? "" : "s",
                        nic.ports().stream().map(p -> Integer.toString(p.number()))
                                .collect(Collectors.joining(", ")))));
    }

    /**
     * The ports nearest {@code gpu}, in the order GPUs take turns on them: every device's first port (devices by
     * name), then every device's second port, so NICs are spread before ports.
     */
    private List<NicPort> closestPorts(PciDevice gpu, List<NicPort> ports) {
        PathType best = ports.stream().map(p -> distance(gpu, p)).min(Comparator.naturalOrder()).orElseThrow();
        List<NicPort> closest = new ArrayList<>();
        for (NicPort p : ports) {
            if (distance(gpu, p) == best) {
                closest.add(p);
            }
        }
        closest.sort(Comparator.comparingInt(this::indexInDevice).thenComparing(NicPort::device,
                PciTopology.NAME_ORDER));
        return closest;
    }

    private int indexInDevice(NicPort port) {
        return topology.nic(port.device()).map(n -> n.ports().indexOf(port)).orElse(0);
    }

    private PathType distance(PciDevice gpu, NicPort port) {
        return gpu.pathTo(topology.nic(port.device()).orElseThrow().device());
    }

    private NicException tooFar(int localRank, String gpuId, NicPort port, PathType path, boolean closest) {
        PathType level = placement.gdrLevel();
        return new NicException(String.format(Locale.ROOT, "GPU %s (local rank %d) and %s are %s apart (%s), farther"
                        + " than %s=%s (%s) allows: GPUDirect RDMA over that path is refused by the platform or"
                        + " slow.%s Name a NIC behind the GPU's PCIe switch with %s (-D%s; one for all local ranks or"
                        + " one per local rank, comma-separated; 'gda4j info' prints the GPU x NIC matrix), or accept"
                        + " the path with %s=%s (-D%s=%s)", gpuId, localRank, port.label(), path, path.meaning(),
                NicPlacement.GDR_LEVEL_ENV, level, level.meaning(), closest ? " It is the closest RDMA port to this"
                        + " GPU." : "", NicPlacement.NIC_DEVICE_ENV, NicPlacement.NIC_DEVICE_PROP_NAME,
                NicPlacement.GDR_LEVEL_ENV, path, NicPlacement.GDR_LEVEL_PROP_NAME, path));
    }

    /**
     * The GPU x NIC distance matrix ({@code nvidia-smi topo -m}'s words), the devices, the legend and each GPU's
     * choice (GPU i as local rank i of all of them, as a one-JVM world over these GPUs would do), for
     * {@code gda4j info}. One line when there is no RDMA device.
     */
    public List<String> report(List<String> gpuBusIds) {
        List<String> lines = new ArrayList<>();
        List<PciNic> nics = topology.nics();
        if (nics.isEmpty()) {
            lines.add("no RDMA NIC: sysfs lists none under " + topology.root().resolve("class/infiniband"));
            return lines;
        }
        StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "%-8s", ""));
        for (int n = 0; n < nics.size(); n++) {
            head.append(String.format(Locale.ROOT, "%6s", "NIC" + n));
        }
        lines.add(head.toString().stripTrailing());
        for (int g = 0; g < gpuBusIds.size(); g++) {
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-8s", "GPU" + g));
            Optional<PciDevice> gpu = topology.device(gpuBusIds.get(g));
            for (PciNic nic : nics) {
                row.append(String.format(Locale.ROOT, "%6s", gpu.map(d -> d.pathTo(nic.device()).name())
                        .orElse("?")));
            }
            lines.add(row.toString());
        }
        lines.add("");
        for (int g = 0; g < gpuBusIds.size(); g++) {
            Optional<PciDevice> gpu = topology.device(gpuBusIds.get(g));
            lines.add(String.format(Locale.ROOT, "GPU%-4d %s%s", g, PciTopology.normalizeBusId(gpuBusIds.get(g)),
                    gpu.map(d -> "  NUMA " + d.numaNode()).orElse("  not in sysfs: distances unknown ('?')")));
        }
        for (int n = 0; n < nics.size(); n++) {
            PciNic nic = nics.get(n);
            lines.add(String.format(Locale.ROOT, "NIC%-4d %s  %s  NUMA %d  %s", n, nic.device().busId(), nic.name(),
                    nic.device().numaNode(), nic.ports().isEmpty() ? "no ports" : nic.ports().stream()
                            .map(p -> "port " + p.number() + " " + (p.linkLayer().isEmpty() ? "?" : p.linkLayer())
                                    + (p.state().isEmpty() ? "" : " " + p.state().replaceFirst("^[0-9]+: ", "")))
                            .collect(Collectors.joining(", "))));
        }
        lines.add("");
        PathType.legend().lines().forEach(lines::add);
        lines.add("");
        for (int g = 0; g < gpuBusIds.size(); g++) {
            String choice;
            try {
                NicAssignment a = choose(g, gpuBusIds.size(), gpuBusIds.get(g));
                choice = a.label() + ": " + a.reason();
            } catch (NicException e) {
                choice = "refused: " + e.getMessage();
            }
            lines.add("GPU" + g + " -> " + choice);
        }
        return lines;
    }
}
