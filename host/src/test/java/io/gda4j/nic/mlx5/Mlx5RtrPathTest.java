package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Memory;

import io.gda4j.nic.QpAddress;
import io.gda4j.nic.RcEndpoints;
import io.gda4j.verbs.Gid;
import io.gda4j.verbs.IbvAhAttrDescriptor;
import io.gda4j.verbs.IbvGlobalRouteDescriptor;
import io.gda4j.verbs.IbvQpAttrDescriptor;
import io.gda4j.verbs.QueuePair;
import io.gda4j.verbs.RcConnectOptions;
import io.gda4j.verbs.VerbsConstants;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * From the peer's published bytes to {@code ibv_modify_qp(INIT -> RTR)}, without a NIC: an endpoint that went round
 * the all-gather ({@link RcEndpoints}) becomes, through {@link Mlx5Nic#rtrPath} and
 * {@link QueuePair#writeRtrAttributes}, a {@code struct ibv_qp_attr} holding exactly the peer's QPN, PSN, LID and GID
 * bytes, with the smaller of the two path MTUs ({@link Mlx5RtrGoldenTest} compares the whole struct with
 * rdma-core's).
 */
class Mlx5RtrPathTest {
    static final byte[] PEER_GID = HexFormat.of().parseHex("00000000000000000000ffff0a000b07");
    static final QpAddress ROCE_PEER = new QpAddress("mlx5_7", 1, VerbsConstants.IBV_LINK_LAYER_ETHERNET, 0xc0ffee,
            0x5a5a5a, 0, Gid.of(PEER_GID), VerbsConstants.IBV_MTU_1024);
    static final QpAddress IB_PEER = new QpAddress("mlx5_2", 1, VerbsConstants.IBV_LINK_LAYER_INFINIBAND, 0x000abc,
            0x000001, 0x4d, null, VerbsConstants.IBV_MTU_4096);
    /** What this side's Mlx5Nic chooses: port 2, GID index 3, path MTU 4096, depths 16. */
    static final RcConnectOptions LOCAL = RcConnectOptions.defaults().withPort(2).withSgidIndex(3)
            .withPathMtu(VerbsConstants.IBV_MTU_4096).withRdAtomic(16);

    /** The endpoint as this process reads it from the peer's offer. */
    static QpAddress travelled(QpAddress peer) {
        return RcEndpoints.decode("rank 1", new RcEndpoints(Map.of(0, peer)).encode()).forRank(0).orElseThrow();
    }

    static byte[] rtrAttributes(Mlx5Nic.RtrPath path) {
        try (Memory attr = new Memory(IbvQpAttrDescriptor.SIZE)) {
            attr.clear();
            attr.setInt(IbvQpAttrDescriptor.QP_STATE_OFFSET, VerbsConstants.IBV_QPS_RTR); // as QueuePair.modify does
            QueuePair.writeRtrAttributes(attr, path.peer(), path.options());
            return attr.getByteArray(0, IbvQpAttrDescriptor.SIZE);
        }
    }

    @Test
    void aRocePeersQpnPsnAndGidReachIbvQpAttrByteForByte() {
        Mlx5Nic.RtrPath path = Mlx5Nic.rtrPath(VerbsConstants.IBV_LINK_LAYER_ETHERNET, LOCAL, travelled(ROCE_PEER));
        ByteBuffer attr = ByteBuffer.wrap(rtrAttributes(path)).order(ByteOrder.nativeOrder());
        assertEquals(0xc0ffee, attr.getInt(IbvQpAttrDescriptor.DEST_QP_NUM_OFFSET), "dest_qp_num");
        assertEquals(0x5a5a5a, attr.getInt(IbvQpAttrDescriptor.RQ_PSN_OFFSET), "rq_psn: the PSN the peer starts with");
        assertEquals(VerbsConstants.IBV_MTU_1024, attr.getInt(IbvQpAttrDescriptor.PATH_MTU_OFFSET),
                "the peer's 1024 is below this side's 4096");
        assertEquals(1, attr.get(IbvQpAttrDescriptor.ah(IbvAhAttrDescriptor.IS_GLOBAL_OFFSET)), "RoCE: a GRH");
        byte[] dgid = new byte[16];
        attr.get(IbvQpAttrDescriptor.ahGrh(IbvGlobalRouteDescriptor.DGID_OFFSET), dgid);
        assertArrayEquals(PEER_GID, dgid, "dgid: the peer's GID bytes, in network order");
        assertEquals(3, attr.get(IbvQpAttrDescriptor.ahGrh(IbvGlobalRouteDescriptor.SGID_INDEX_OFFSET)),
                "this side's GID index, not the peer's");
        assertEquals(2, attr.get(IbvQpAttrDescriptor.ah(IbvAhAttrDescriptor.PORT_NUM_OFFSET)), "this side's port");
        assertEquals(0, attr.getShort(IbvQpAttrDescriptor.ah(IbvAhAttrDescriptor.DLID_OFFSET)));
        assertEquals(16, attr.get(IbvQpAttrDescriptor.MAX_DEST_RD_ATOMIC_OFFSET));
    }

    @Test
    void anInfinibandPeerIsReachedByLidWithoutAGrh() {
        Mlx5Nic.RtrPath path = Mlx5Nic.rtrPath(VerbsConstants.IBV_LINK_LAYER_INFINIBAND,
                LOCAL.withPathMtu(VerbsConstants.IBV_MTU_2048), travelled(IB_PEER));
        ByteBuffer attr = ByteBuffer.wrap(rtrAttributes(path)).order(ByteOrder.nativeOrder());
        assertEquals(0xabc, attr.getInt(IbvQpAttrDescriptor.DEST_QP_NUM_OFFSET));
        assertEquals(1, attr.getInt(IbvQpAttrDescriptor.RQ_PSN_OFFSET));
        assertEquals(0x4d, attr.getShort(IbvQpAttrDescriptor.ah(IbvAhAttrDescriptor.DLID_OFFSET)), "dlid");
        assertEquals(0, attr.get(IbvQpAttrDescriptor.ah(IbvAhAttrDescriptor.IS_GLOBAL_OFFSET)));
        byte[] dgid = new byte[16];
        attr.get(IbvQpAttrDescriptor.ahGrh(IbvGlobalRouteDescriptor.DGID_OFFSET), dgid);
        assertArrayEquals(new byte[16], dgid);
        assertEquals(VerbsConstants.IBV_MTU_2048, attr.getInt(IbvQpAttrDescriptor.PATH_MTU_OFFSET),
                "this side's 2048 is below the peer's 4096");
        // A peer that states no MTU (the emulated NIC's address) leaves this side's.
        QpAddress unstated = new QpAddress("x", 1, VerbsConstants.IBV_LINK_LAYER_INFINIBAND, 1, 1, 5, null, 0);
        assertEquals(VerbsConstants.IBV_MTU_4096, Mlx5Nic.rtrPath(VerbsConstants.IBV_LINK_LAYER_INFINIBAND, LOCAL,
                unstated).options().pathMtu());
    }

    @Test
    void anEndpointThisPortCannotReachIsRefusedWithWhatToDo() {
        IllegalArgumentException fabric = assertThrows(IllegalArgumentException.class, () -> Mlx5Nic.rtrPath(
                VerbsConstants.IBV_LINK_LAYER_INFINIBAND, LOCAL, ROCE_PEER));
        assertTrue(fabric.getMessage().contains("the peer's port is Ethernet and this one InfiniBand")
                && fabric.getMessage().contains("GDA4J_NIC_DEVICE"), fabric.getMessage());
        QpAddress noGid = new QpAddress("m", 1, VerbsConstants.IBV_LINK_LAYER_ETHERNET, 1, 1, 0, null, 3);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Mlx5Nic.rtrPath(
                VerbsConstants.IBV_LINK_LAYER_ETHERNET, LOCAL, noGid)).getMessage().contains("has no GID"));
        QpAddress noLid = new QpAddress("m", 1, VerbsConstants.IBV_LINK_LAYER_INFINIBAND, 1, 1, 0, null, 3);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Mlx5Nic.rtrPath(
                VerbsConstants.IBV_LINK_LAYER_INFINIBAND, LOCAL, noLid)).getMessage().contains("subnet manager"));
    }
}
