package io.gda4j.nic.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** GDA4J_NIC_DEVICE and GDA4J_NIC_GDR_LEVEL as users type them. */
@Timeout(10)
class NicPlacementTest {
    @Test
    void defaultsChooseByDistanceWithinPxb() {
        NicPlacement d = NicPlacement.defaults();
        assertEquals(List.of(), d.devices());
        assertEquals(PathType.PXB, d.gdrLevel());
        assertEquals("auto (closest to each GPU)", d.devicesText());
    }

    @Test
    void parsesACommaListWithOptionalPorts() {
        NicPlacement p = NicPlacement.parse(" mlx5_0, mlx5_3:2 ,mlx5_1", "sys");
        assertEquals(List.of(new NicPlacement.NamedPort("mlx5_0", NicPlacement.NamedPort.FIRST_ACTIVE_PORT),
                new NicPlacement.NamedPort("mlx5_3", 2), new NicPlacement.NamedPort("mlx5_1", 0)), p.devices());
        assertEquals(PathType.SYS, p.gdrLevel());
        assertEquals("mlx5_0,mlx5_3:2,mlx5_1", p.devicesText());
    }

    @Test
    void refusesNonsenseNamingTheSetting() {
        for (String bad : List.of("mlx5_0,", ",mlx5_0", "mlx5_0:x", "mlx5_0:0", ":1")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> NicPlacement.parse(bad, "PXB"), bad);
            assertTrue(e.getMessage().startsWith("GDA4J_NIC_DEVICE/gda4j.nic.device must be an RDMA device"),
                    e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NicPlacement.parse("", "LOC"));
        assertEquals("GDA4J_NIC_GDR_LEVEL/gda4j.nic.gdrLevel must be one of PIX, PXB, PHB, NODE, SYS (nearest first,"
                + " as nvidia-smi topo -m prints them), not 'LOC'", e.getMessage());
    }

    @Test
    void describeNamesBothSettings() {
        String text = NicPlacement.parse("mlx5_0", "PHB").describe();
        assertTrue(text.contains("nic device  mlx5_0  (GDA4J_NIC_DEVICE / -Dgda4j.nic.device"), text);
        assertTrue(text.contains("gdr level   PHB  (GDA4J_NIC_GDR_LEVEL / -Dgda4j.nic.gdrLevel"), text);
    }

    @Test
    void levelsAreOrderedNearestFirst() {
        assertTrue(PathType.PIX.within(PathType.PXB));
        assertTrue(PathType.PXB.within(PathType.PXB));
        assertTrue(!PathType.PHB.within(PathType.PXB));
        assertTrue(PathType.NODE.within(PathType.SYS));
    }
}
