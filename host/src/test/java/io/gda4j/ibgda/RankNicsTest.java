package io.gda4j.ibgda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicCapabilities;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicOptions;
import io.gda4j.nic.NicProvider;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.topology.FakeMachines;
import io.gda4j.nic.topology.NicPlacement;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which NIC each rank of a world opens: its own on mlx5 (by PCIe distance), one per GPU where the provider says so
 * (the strict emulated NIC), else one shared.
 */
@Timeout(10)
class RankNicsTest {
    @TempDir
    Path dir;

    /** A NIC that remembers what it was opened with and how often it was closed. */
    static final class FakeNic implements Nic {
        final NicOptions options;
        int closes;

        FakeNic(NicOptions options) {
            this.options = options;
        }

        @Override
        public String name() {
            return MLX5;
        }

        @Override
        public String description() {
            return options.deviceName() + " port " + options.portNum();
        }

        @Override
        public NicCapabilities capabilities() {
            throw new UnsupportedOperationException();
        }

        @Override
        public NicMemory registerMemory(MemoryRegistration request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public NicMemory nullMemory() {
            throw new UnsupportedOperationException();
        }

        @Override
        public NicQp createQp(QpSpec spec) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
            closes++;
        }
    }

    record FakeProvider(boolean placedByPciDistance, List<FakeNic> opened) implements NicProvider {
        @Override
        public String name() {
            return placedByPciDistance ? Nic.MLX5 : Nic.EMULATED;
        }

        @Override
        public int autoPreference() {
            return 0;
        }

        @Override
        public Optional<String> unavailableReason() {
            return Optional.empty();
        }

        @Override
        public Nic open(NicOptions options) {
            FakeNic nic = new FakeNic(options);
            opened.add(nic);
            return nic;
        }
    }

    static List<RankNics.Member> ranksOf(List<String> gpus) {
        List<RankNics.Member> ranks = new ArrayList<>();
        for (int i = 0; i < gpus.size(); i++) {
            ranks.add(new RankNics.Member(i, i, gpus.size(), gpus.get(i)));
        }
        return ranks;
    }

    @Test
    void eachRankOfTheEightGpuBoxOpensTheNicOnItsSwitch() {
        FakeProvider mlx5 = new FakeProvider(true, new ArrayList<>());
        RankNics nics = new RankNics(mlx5, NicPlacement.defaults(), FakeMachines.eightGpuBox(dir).read());
        List<RankNics.Member> ranks = ranksOf(FakeMachines.EIGHT_GPUS);
        for (RankNics.Member r : ranks) {
            assertEquals(new NicOptions("mlx5_" + r.rank(), 1, 0), ((FakeNic) nics.of(r)).options);
        }
        assertSame(nics.of(ranks.get(3)), nics.of(ranks.get(3)), "opened once");
        assertEquals(8, mlx5.opened().size());
        List<RuntimeException> failures = new ArrayList<>();
        nics.close(failures);
        assertEquals(List.of(), failures);
        assertTrue(mlx5.opened().stream().allMatch(n -> n.closes == 1), "each NIC closed once");
    }

    @Test
    void ranksGivenTheSamePortShareOneOpenNic() {
        FakeProvider mlx5 = new FakeProvider(true, new ArrayList<>());
        RankNics nics = new RankNics(mlx5, NicPlacement.parse("mlx5_0", "PXB"),
                FakeMachines.eightGpuBox(dir).read());
        List<RankNics.Member> ranks = ranksOf(FakeMachines.EIGHT_GPUS.subList(0, 4));
        Nic first = nics.of(ranks.get(0));
        for (RankNics.Member r : ranks) {
            assertSame(first, nics.of(r));
        }
        assertEquals(1, mlx5.opened().size());
        List<RuntimeException> failures = new ArrayList<>();
        nics.close(failures);
        assertEquals(1, mlx5.opened().get(0).closes);
    }

    @Test
    void aDualPortNicIsOpenedOncePerPort() {
        FakeProvider mlx5 = new FakeProvider(true, new ArrayList<>());
        RankNics nics = new RankNics(mlx5, NicPlacement.defaults(), FakeMachines.dualPortNicBox(dir).read());
        List<RankNics.Member> ranks = ranksOf(FakeMachines.TWO_GPUS);
        assertNotSame(nics.of(ranks.get(0)), nics.of(ranks.get(1)));
        assertEquals(List.of(new NicOptions("mlx5_0", 1, 0), new NicOptions("mlx5_0", 2, 0)),
                mlx5.opened().stream().map(n -> n.options).toList());
    }

    @Test
    void aRefusedRankSaysWhyAndOpensNothing() {
        FakeProvider mlx5 = new FakeProvider(true, new ArrayList<>());
        RankNics nics = new RankNics(mlx5, NicPlacement.defaults(), FakeMachines.twoSocketServer(dir).read());
        RankNics.Member rank1 = ranksOf(FakeMachines.TWO_SOCKET_GPUS).get(1);
        String why = nics.unusableReason(rank1).orElseThrow();
        assertTrue(why.contains("PHB apart") && why.contains("GDA4J_NIC_GDR_LEVEL"), why);
        assertThrows(NicException.class, () -> nics.of(rank1));
        assertEquals(List.of(), mlx5.opened());
    }

    @Test
    void theEmulatedNicIsOneForAllRanksWhateverTheTree() {
        FakeProvider emulated = new FakeProvider(false, new ArrayList<>());
        RankNics nics = new RankNics(emulated, NicPlacement.defaults(), null);
        List<RankNics.Member> ranks = ranksOf(List.of("0000:01:00.0", "0000:81:00.0"));
        assertEquals(Optional.empty(), nics.unusableReason(ranks.get(1)));
        assertSame(nics.of(ranks.get(0)), nics.of(ranks.get(1)));
        assertEquals(List.of(NicOptions.defaults()), emulated.opened().stream().map(n -> n.options).toList());
    }

    @Test
    void aProviderWithANicPerGpuOpensOnePerGpuAndRanksOfOneGpuShareIt() {
        FakeProvider fake = new FakeProvider(false, new ArrayList<>());
        NicProvider perGpu = new NicProvider() {
            @Override
            public String name() {
                return fake.name();
            }

            @Override
            public int autoPreference() {
                return 0;
            }

            @Override
            public Optional<String> unavailableReason() {
                return Optional.empty();
            }

            @Override
            public boolean oneNicPerGpu() {
                return true;
            }

            @Override
            public Nic open(NicOptions options) {
                return fake.open(options);
            }
        };
        RankNics nics = new RankNics(perGpu, NicPlacement.defaults(), null);
        List<RankNics.Member> ranks = ranksOf(List.of("0000:01:00.0", "0000:81:00.0", "0000:01:00.0"));
        assertNotSame(nics.of(ranks.get(0)), nics.of(ranks.get(1)), "each GPU its own NIC, with its own keys");
        assertSame(nics.of(ranks.get(0)), nics.of(ranks.get(2)), "ranks sharing a GPU share its NIC");
        assertEquals(2, fake.opened().size());
    }
}
