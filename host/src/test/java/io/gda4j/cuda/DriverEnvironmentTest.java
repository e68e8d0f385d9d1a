package io.gda4j.cuda;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** CUDA_DEVICE_MAX_CONNECTIONS: the user's value is kept; otherwise gda4j asks the driver for its 32 queues. */
class DriverEnvironmentTest {
    @Test
    void valuesAreReadAsTheDriverReadsThem() {
        assertEquals(32, DriverEnvironment.parse("32"));
        assertEquals(16, DriverEnvironment.parse(" 16 "));
        assertEquals(32, DriverEnvironment.parse("128"));
        assertEquals(8, DriverEnvironment.parse("0"));
        assertEquals(8, DriverEnvironment.parse("many"));
    }

    @Test
    void unsetMeansThirtyTwoSetByGda4jAndASetValueIsKept() {
        String given = System.getenv(DriverEnvironment.MAX_CONNECTIONS_ENV);
        DriverEnvironment.MaxConnections chosen = DriverEnvironment.applyBeforeDriverStarts();
        if (given == null || given.isBlank()) {
            assertEquals(32, chosen.queues(), chosen.source());
            assertTrue(chosen.source().contains("set by gda4j"), chosen.source());
        } else {
            assertEquals(DriverEnvironment.parse(given), chosen.queues());
            assertTrue(chosen.source().contains("from the environment"), chosen.source());
        }
        assertEquals(chosen.queues(), Cuda.deviceMaxConnections());
    }
}
