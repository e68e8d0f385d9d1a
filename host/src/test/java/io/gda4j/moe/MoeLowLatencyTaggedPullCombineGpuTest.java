package io.gda4j.moe;

import io.gda4j.moe.ll.LowLatencySizing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Every test of {@link MoeLowLatencyPullCombineGpuTest} under the tagged protocol: pulled and pushed combines in turn
 * against the reference, ranks that disagree on the combine input stopped with the message (the tagged combine
 * carries the kind in its one flag per rank), and a y that only overlaps a combine input refused.
 */
class MoeLowLatencyTaggedPullCombineGpuTest extends MoeLowLatencyPullCombineGpuTest {
    private String protocolWas;

    @BeforeEach
    void askForTheTaggedProtocol() {
        protocolWas = TestProperties.set(LowLatencySizing.PROTOCOL_PROP_NAME, "tagged");
    }

    @AfterEach
    void restoreTheProtocol() {
        TestProperties.set(LowLatencySizing.PROTOCOL_PROP_NAME, protocolWas);
    }
}
