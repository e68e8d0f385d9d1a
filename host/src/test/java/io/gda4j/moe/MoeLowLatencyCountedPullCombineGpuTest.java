package io.gda4j.moe;

import io.gda4j.moe.ll.LowLatencySizing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Every test of {@link MoeLowLatencyPullCombineGpuTest} under the counted protocol, asked for: pulled and pushed
 * combines in turn against the reference, ranks that disagree on the combine input stopped with the message (the
 * counted combine carries the kind in each expert's flag), and a y that only overlaps a combine input refused.
 */
class MoeLowLatencyCountedPullCombineGpuTest extends MoeLowLatencyPullCombineGpuTest {
    private String protocolWas;

    @BeforeEach
    void askForTheCountedProtocol() {
        protocolWas = TestProperties.set(LowLatencySizing.PROTOCOL_PROP_NAME, "counted");
    }

    @AfterEach
    void restoreTheProtocol() {
        TestProperties.set(LowLatencySizing.PROTOCOL_PROP_NAME, protocolWas);
    }
}
