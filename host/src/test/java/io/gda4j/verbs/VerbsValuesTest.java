package io.gda4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The small value types and message helpers of the verbs package. */
class VerbsValuesTest {
    @Test
    void maskNamesFollowTheConstants() {
        assertEquals("STATE", QueuePair.maskNames(VerbsConstants.IBV_QP_STATE));
        assertEquals("ACCESS_FLAGS", QueuePair.maskNames(VerbsConstants.IBV_QP_ACCESS_FLAGS));
        assertEquals("PKEY_INDEX", QueuePair.maskNames(VerbsConstants.IBV_QP_PKEY_INDEX));
        assertEquals("PORT", QueuePair.maskNames(VerbsConstants.IBV_QP_PORT));
        assertEquals("AV", QueuePair.maskNames(VerbsConstants.IBV_QP_AV));
        assertEquals("PATH_MTU", QueuePair.maskNames(VerbsConstants.IBV_QP_PATH_MTU));
        assertEquals("TIMEOUT", QueuePair.maskNames(VerbsConstants.IBV_QP_TIMEOUT));
        assertEquals("RETRY_CNT", QueuePair.maskNames(VerbsConstants.IBV_QP_RETRY_CNT));
        assertEquals("RNR_RETRY", QueuePair.maskNames(VerbsConstants.IBV_QP_RNR_RETRY));
        assertEquals("RQ_PSN", QueuePair.maskNames(VerbsConstants.IBV_QP_RQ_PSN));
        assertEquals("MAX_QP_RD_ATOMIC", QueuePair.maskNames(VerbsConstants.IBV_QP_MAX_QP_RD_ATOMIC));
        assertEquals("MIN_RNR_TIMER", QueuePair.maskNames(VerbsConstants.IBV_QP_MIN_RNR_TIMER));
        assertEquals("SQ_PSN", QueuePair.maskNames(VerbsConstants.IBV_QP_SQ_PSN));
        assertEquals("MAX_DEST_RD_ATOMIC", QueuePair.maskNames(VerbsConstants.IBV_QP_MAX_DEST_RD_ATOMIC));
        assertEquals("DEST_QPN", QueuePair.maskNames(VerbsConstants.IBV_QP_DEST_QPN));
        assertEquals("STATE|PKEY_INDEX|PORT", QueuePair.maskNames(VerbsConstants.IBV_QP_STATE
                | VerbsConstants.IBV_QP_PKEY_INDEX | VerbsConstants.IBV_QP_PORT));
    }

    @Test
    void gidPrintsLikeIbvDevinfo() {
        byte[] raw = new byte[16];
        raw[0] = (byte) 0xfe;
        raw[1] = (byte) 0x80;
        raw[15] = 1;
        Gid gid = Gid.of(raw);
        assertEquals("fe80:0000:0000:0000:0000:0000:0000:0001", gid.toString());
        assertEquals(0xfe80000000000000L, gid.subnetPrefix());
        assertEquals(1L, gid.interfaceId());
        assertTrue(Gid.zero().isZero());
        assertEquals(gid, Gid.of(gid.raw()));
        assertThrows(IllegalArgumentException.class, () -> Gid.of(new byte[4]));
    }

    @Test
    void peerFieldsAreRangeChecked() {
        assertThrows(IllegalArgumentException.class, () -> new RcPeer(0x1000000, 0, null, 0));
        assertThrows(IllegalArgumentException.class, () -> new RcPeer(1, 0, null, 0x1000000));
        assertTrue(new RcPeer(1, 2, null, 3).gid().isZero());
    }

    @Test
    void namesAndSizes() {
        assertEquals(256, VerbsConstants.mtuBytes(VerbsConstants.IBV_MTU_256));
        assertEquals(4096, VerbsConstants.mtuBytes(VerbsConstants.IBV_MTU_4096));
        assertEquals("RTS", VerbsConstants.qpStateName(VerbsConstants.IBV_QPS_RTS));
        assertEquals("ACTIVE", VerbsConstants.portStateName(VerbsConstants.IBV_PORT_ACTIVE));
        assertEquals("Ethernet", VerbsConstants.linkLayerName(VerbsConstants.IBV_LINK_LAYER_ETHERNET));
        assertEquals("EINVAL (22, Invalid argument)", Errno.describe(Errno.EINVAL));
        assertEquals("errno 4242", Errno.describe(4242));
        assertEquals("0002:c903:0000:1234", new RdmaDevice("mlx5_0", 0x0002c90300001234L).nodeGuidText());
        VerbsException e = VerbsException.failed("ibv_reg_mr(x)", Errno.ENOMEM, "Raise ulimit -l.");
        assertEquals("ibv_reg_mr(x) failed: ENOMEM (12, Cannot allocate memory). Raise ulimit -l.", e.getMessage());
        assertEquals(Errno.ENOMEM, e.errno());
    }
}
