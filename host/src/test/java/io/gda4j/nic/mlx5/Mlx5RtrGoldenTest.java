package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gda4j.mlx5.GccProgram;
import io.gda4j.mlx5.RequiresCompilers;
import io.gda4j.nic.QpAddress;
import io.gda4j.verbs.QueuePair;
import io.gda4j.verbs.RcConnectOptions;
import io.gda4j.verbs.VerbsConstants;

import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code struct ibv_qp_attr} that INIT to RTR is given towards a published endpoint is byte for byte, with the
 * same attribute mask, what an rdma-core application fills for the same endpoint and choices
 * ({@code rc_rtr_golden.c}, compiled against {@code <infiniband/verbs.h>}): on RoCE (with a GRH) and on InfiniBand.
 */
@RequiresCompilers(tools = "gcc", headers = "infiniband/verbs.h")
class Mlx5RtrGoldenTest {
    @TempDir
    Path buildDir;

    @Test
    void theAttributesAreWhatAnRdmaCoreApplicationFillsForTheSameEndpoint() throws Exception {
        Path program = GccProgram.compile(GccProgram.source("rc_rtr_golden.c"), buildDir,
                List.of("infiniband/verbs.h"), List.of());
        for (Object[] c : new Object[][] {
                {VerbsConstants.IBV_LINK_LAYER_ETHERNET, Mlx5RtrPathTest.ROCE_PEER},
                {VerbsConstants.IBV_LINK_LAYER_INFINIBAND, Mlx5RtrPathTest.IB_PEER}}) {
            QpAddress peer = Mlx5RtrPathTest.travelled((QpAddress) c[1]);
            Mlx5Nic.RtrPath path = Mlx5Nic.rtrPath((int) c[0], Mlx5RtrPathTest.LOCAL, peer);
            RcConnectOptions o = path.options();
            String[] out = GccProgram.run(program, null, Integer.toString(path.peer().qpn()),
                    Integer.toString(path.peer().psn()), Integer.toString(path.peer().lid()),
                    HexFormat.of().formatHex(path.peer().gid().raw()), Integer.toString(o.pathMtu()),
                    Integer.toString(o.portNum()), Integer.toString(o.sgidIndex()), Integer.toString(o.hopLimit()),
                    Integer.toString(o.trafficClass()), Integer.toString(o.serviceLevel()),
                    Integer.toString(o.maxDestRdAtomic()), Integer.toString(o.minRnrTimer())).strip().split("\n");
            assertEquals(QueuePair.RTR_ATTRIBUTE_MASK, Integer.parseInt(out[0].strip()), "the attribute mask");
            assertEquals(out[1].strip(), HexFormat.of().formatHex(Mlx5RtrPathTest.rtrAttributes(path)),
                    peer.describe());
        }
    }
}
