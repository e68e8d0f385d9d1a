package io.gda4j.ibgda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.nic.DoorbellKind;
import io.gda4j.nic.NicChoice;
import io.gda4j.nic.NicConfig;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.RingPlacement;
import io.gda4j.nic.topology.NicPlacement;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.Properties;

/** IBGDA settings, the DeviceQp bytes the host writes, and what the transport says where nothing can run. */
@Timeout(10)
class IbgdaConfigTest {
    @Test
    void defaultsEnvironmentAndPropertiesResolveInThatOrder() {
        IbgdaConfig d = IbgdaConfig.resolve(new Properties(), Map.of());
        assertEquals(NicChoice.AUTO, d.nic());
        assertEquals(IbgdaConfig.Flush.AUTO, d.flush());
        assertEquals(1024, d.sqWqebbs());
        Properties p = new Properties();
        p.setProperty(NicConfig.NIC_PROP_NAME, "emulated");
        IbgdaConfig c = IbgdaConfig.resolve(p, Map.of(NicConfig.NIC_ENV, "mlx5", IbgdaConfig.FLUSH_ENV, "always",
                IbgdaConfig.SQ_DEPTH_ENV, "256"));
        assertEquals(NicChoice.EMULATED, c.nic());
        assertEquals(IbgdaConfig.Flush.ALWAYS, c.flush());
        assertEquals(256, c.sqWqebbs());
        assertEquals(7, IbgdaConfig.SETTINGS.size() + NicConfig.SETTINGS.size(),
                "every component of the record is a setting (placement is two; the NIC choice is NicConfig's)");
    }

    @Test
    void qpsPerPeerIsASettingFromOneToItsLimit() {
        assertEquals(1, IbgdaConfig.resolve(new Properties(), Map.of()).qpsPerPeer(), "one QP per peer by default");
        Properties p = new Properties();
        p.setProperty(IbgdaConfig.QPS_PER_PEER_PROP_NAME, "4");
        assertEquals(4, IbgdaConfig.resolve(p, Map.of(IbgdaConfig.QPS_PER_PEER_ENV, "2")).qpsPerPeer());
        assertEquals(2, IbgdaConfig.resolve(new Properties(), Map.of(IbgdaConfig.QPS_PER_PEER_ENV, "2")).qpsPerPeer());
        for (String bad : new String[] {"0", "33", "many"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IbgdaConfig.resolve(
                    new Properties(), Map.of(IbgdaConfig.QPS_PER_PEER_ENV, bad)));
            assertTrue(e.getMessage().startsWith(IbgdaConfig.QPS_PER_PEER_ENV + "=" + bad + " is not valid: "),
                    e.getMessage());
        }
        assertTrue(IbgdaConfig.SETTINGS.contains(IbgdaConfig.QPS_PER_PEER), "gda4j info prints it");
    }

    @Test
    void ringPlacementIsASettingHostByDefault() {
        assertEquals(RingPlacement.HOST, IbgdaConfig.resolve(new Properties(), Map.of()).rings());
        assertEquals(RingPlacement.GPU, IbgdaConfig.resolve(new Properties(), Map.of(IbgdaConfig.RINGS_ENV, "GPU"))
                .rings());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IbgdaConfig.resolve(
                new Properties(), Map.of(IbgdaConfig.RINGS_ENV, "nic")));
        assertTrue(e.getMessage().startsWith(IbgdaConfig.RINGS_ENV + "=nic is not valid: ")
                && e.getMessage().contains("must be host"), e.getMessage());
        assertEquals("gpu", IbgdaConfig.RINGS.display(RingPlacement.GPU));
        assertTrue(IbgdaConfig.SETTINGS.contains(IbgdaConfig.RINGS), "gda4j info prints it");
    }

    @Test
    void nicPlacementSettingsResolveWithTheOthers() {
        IbgdaConfig d = IbgdaConfig.resolve(new Properties(), Map.of());
        assertEquals(NicPlacement.defaults(), d.placement());
        Properties p = new Properties();
        p.setProperty(NicPlacement.GDR_LEVEL_PROP_NAME, "sys");
        IbgdaConfig c = IbgdaConfig.resolve(p, Map.of(NicPlacement.GDR_LEVEL_ENV, "PHB",
                NicPlacement.NIC_DEVICE_ENV, "mlx5_0,mlx5_1:2"));
        assertEquals(NicPlacement.parse("mlx5_0,mlx5_1:2", "SYS"), c.placement());
        assertEquals("mlx5_0,mlx5_1:2", IbgdaConfig.NIC_DEVICE.display(IbgdaConfig.NIC_DEVICE.resolve(p,
                Map.of(NicPlacement.NIC_DEVICE_ENV, "mlx5_0,mlx5_1:2"))));
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> IbgdaConfig.resolve(new Properties(), Map.of(NicPlacement.GDR_LEVEL_ENV, "far")));
        assertTrue(bad.getMessage().startsWith(NicPlacement.GDR_LEVEL_ENV + "=far is not valid: "), bad.getMessage());
        IllegalArgumentException device = assertThrows(IllegalArgumentException.class,
                () -> IbgdaConfig.resolve(new Properties(), Map.of(NicPlacement.NIC_DEVICE_ENV, "mlx5_0,")));
        assertTrue(device.getMessage().startsWith(NicPlacement.NIC_DEVICE_ENV + "=mlx5_0, is not valid: "),
                device.getMessage());
    }

    @Test
    void badSettingsSayWhatIsAllowed() {
        IllegalArgumentException depth = assertThrows(IllegalArgumentException.class,
                () -> IbgdaConfig.resolve(new Properties(), Map.of(IbgdaConfig.SQ_DEPTH_ENV, "1000")));
        assertTrue(depth.getMessage().contains("power of two"), depth.getMessage());
        IllegalArgumentException flush = assertThrows(IllegalArgumentException.class,
                () -> IbgdaConfig.resolve(new Properties(), Map.of(IbgdaConfig.FLUSH_ENV, "sometimes")));
        assertTrue(flush.getMessage().contains("always or never"), flush.getMessage());
        assertTrue(flush.getMessage().startsWith(IbgdaConfig.FLUSH_ENV + "=sometimes is not valid: "), flush.getMessage());
        assertTrue(depth.getMessage().startsWith(IbgdaConfig.SQ_DEPTH_ENV + "=1000 is not valid: "), depth.getMessage());
    }

    @Test
    void deviceQpRefusesAnInlineLimitBelowTheSlot() {
        QpRings rings = new QpRings(0x123456, 0x10000, 64, 0x20000, 0x20040, DoorbellKind.MEMORY, 0x30000, 128,
                0x20080, 12);
        DeviceQp.Addressing a = new DeviceQp.Addressing(0x7000_0000L, 0x7100_0000L, 1 << 20, 0x1111, 0x2222,
                0x9000, 0x9100, 0x3333, 0x5500, 0x4444, true, false, 1);
        ByteBuffer b = ByteBuffer.allocate(DeviceQpDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DeviceQp.encode(b, rings, a, 0));
        assertTrue(e.getMessage().contains("inline payloads of 12 bytes") && e.getMessage().contains("needs 16"),
                e.getMessage());
        DeviceQp.encode(b, rings, DeviceQp.Addressing.none(1), 0); // the flush QP posts no inline WRITE
    }

    @Test
    void relaxedOrderingMarksTheDeviceQpSoSetSignalsAreRefused() {
        QpRings rings = new QpRings(0x123456, 0x10000, 64, 0x20000, 0x20040, DoorbellKind.MMIO, 0x30000, 128,
                0x20080, 256);
        DeviceQp.Addressing a = new DeviceQp.Addressing(0x7000_0000L, 0x7100_0000L, 1 << 20, 0x1111, 0x2222,
                0x9000, 0x9100, 0x3333, 0x5500, 0x4444, false, true, 1);
        ByteBuffer b = ByteBuffer.allocate(DeviceQpDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        DeviceQp.encode(b, rings, a, 0);
        assertEquals(DeviceQpDescriptor.FLAG_RELAXED_ORDERING, b.getInt(DeviceQpDescriptor.FLAGS_OFFSET));
    }

    @Test
    void deviceQpBytesFollowTheDescriptor() {
        QpRings rings = new QpRings(0x123456, 0x10000, 64, 0x20000, 0x20040, DoorbellKind.MEMORY, 0x30000, 128,
                0x20080, 256);
        DeviceQp.Addressing a = new DeviceQp.Addressing(0x7000_0000L, 0x7100_0000L, 1 << 20, 0x1111, 0x2222,
                0x9000, 0x9100, 0x3333, 0x5500, 0x4444, true, false, 1);
        ByteBuffer b = ByteBuffer.allocate(DeviceQpDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        DeviceQp.encode(b, rings, a, 0xabc00);
        assertEquals(0x10000, b.getLong(DeviceQpDescriptor.SQ_BUF_OFFSET));
        assertEquals(0x20000, b.getLong(DeviceQpDescriptor.DBREC_OFFSET));
        assertEquals(0x20040, b.getLong(DeviceQpDescriptor.DOORBELL_OFFSET));
        assertEquals(0x30000, b.getLong(DeviceQpDescriptor.CQ_BUF_OFFSET));
        assertEquals(0x20080, b.getLong(DeviceQpDescriptor.CQ_DBREC_OFFSET));
        assertEquals(0xabc00, b.getLong(DeviceQpDescriptor.WQE_SIZES_OFFSET));
        assertEquals(64, b.getInt(DeviceQpDescriptor.SQ_WQEBBS_OFFSET));
        assertEquals(128, b.getInt(DeviceQpDescriptor.CQE_COUNT_OFFSET));
        assertEquals(0x123456, b.getInt(DeviceQpDescriptor.QPN_OFFSET));
        assertEquals(DeviceQpDescriptor.FLAG_FLUSH_ON_QUIET,
                b.getInt(DeviceQpDescriptor.FLAGS_OFFSET));
        assertEquals(0x7000_0000L, b.getLong(DeviceQpDescriptor.LOCAL_BASE_OFFSET));
        assertEquals(0x7100_0000L, b.getLong(DeviceQpDescriptor.REMOTE_BASE_OFFSET));
        assertEquals(1 << 20, b.getLong(DeviceQpDescriptor.HEAP_SIZE_BYTES_OFFSET));
        assertEquals(0x1111, b.getInt(DeviceQpDescriptor.LKEY_OFFSET));
        assertEquals(0x2222, b.getInt(DeviceQpDescriptor.RKEY_OFFSET));
        assertEquals(0x9000, b.getLong(DeviceQpDescriptor.FLUSH_QP_OFFSET));
        assertEquals(0x9100, b.getLong(DeviceQpDescriptor.FLUSH_FLAG_OFFSET));
        assertEquals(0x3333, b.getInt(DeviceQpDescriptor.FLUSH_RKEY_OFFSET));
        assertEquals(0x4444, b.getInt(DeviceQpDescriptor.DISCARD_LKEY_OFFSET));
        assertEquals(0x5500, b.getLong(DeviceQpDescriptor.DISCARD_ADDR_OFFSET));
        assertEquals(256, b.getInt(DeviceQpDescriptor.MAX_INLINE_OFFSET));
        assertEquals(1, b.getInt(DeviceQpDescriptor.PEER_OFFSET));
        assertEquals(0, b.getLong(DeviceQpDescriptor.RESV_HEAD_OFFSET), "counters start at zero");
        assertEquals(0, b.getLong(DeviceQpDescriptor.CONS_HEAD_OFFSET));
    }

    @Test
    void withoutCudaTheTransportSaysWhyNoNicOpens() {
        if (Cuda.status().available()) {
            return; // the machine can run it; the GPU tests cover that case
        }
        String why = io.gda4j.nic.NicConfig.selection(io.gda4j.config.Settings.ofProcess()).reason();
        assertTrue(why.contains("CUDA") || why.contains("no NIC"), why);
        assertTrue(new IbgdaTransport().unavailableReason(null, null).isPresent());
    }
}
