package io.gda4j.samples;

import io.gda4j.gdrcopy.Gdrcopy;
import io.gda4j.hostflag.HostFlags;
import io.gda4j.world.WorldConfig;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code gda4j info} works on any machine, GPU or not, and says how host flags will be written. */
class InfoCommandTest {

    @Test
    void exitsZeroAndShowsGdrcopyAndTheHostFlagChoice() {
        CliRun run = CliRun.of("info");
        assertEquals(0, run.code(), run::toString);
        String out = run.out();
        String nl = System.lineSeparator();
        assertTrue(out.contains(nl + "gdrcopy" + nl + "  " + Gdrcopy.status().oneLine() + nl), out);
        assertTrue(out.contains("  " + HostFlags.choose(HostFlags.Backend.AUTO).describe() + nl), out);
        assertTrue(out.contains("host flag ") && out.contains(WorldConfig.HOST_FLAG_ENV), out);
    }
}
