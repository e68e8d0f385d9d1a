package io.gda4j.hostflag;

import io.gda4j.gdrcopy.Gdrcopy;
import io.gda4j.gdrcopy.GdrcopyStatus;
import io.gda4j.gdrcopy.GdrWord;
import io.gda4j.hostflag.HostFlags.Backend;
import io.gda4j.hostflag.HostFlags.Choice;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** Backend names and the AUTO decision, with gdrcopy's availability given as input (no GPU, no gdrcopy needed). */
class HostFlagsTest {

    private static final String ABSENT = "libgdrapi.so.2 not found: gdrcopy is not installed";
    private static final String PRESENT = "gdrcopy is available: libgdrapi 2.5, gdrdrv 2.4 at /dev/gdrdrv";

    @Test
    void namesParseInAnyCaseAndMatchTheWordsBackendNames() {
        assertEquals(Backend.AUTO, Backend.parse("auto"));
        assertEquals(Backend.GDRCOPY, Backend.parse(" GDRCOPY "));
        assertEquals(Backend.STREAM_WRITE, Backend.parse("Stream-Write"));
        assertEquals(Backend.MAPPED_PINNED, Backend.parse("mapped-pinned"));
        assertEquals(GdrWord.BACKEND_NAME, Backend.GDRCOPY.label());
        assertEquals(StreamWriteWord.BACKEND_NAME, Backend.STREAM_WRITE.label());
        assertEquals(MappedPinnedWord.BACKEND_NAME, Backend.MAPPED_PINNED.label());
        assertEquals("auto, gdrcopy, stream-write, mapped-pinned", Backend.choices());
        for (Backend b : Backend.values()) {
            assertEquals(b, Backend.parse(b.toString()), "toString is the label");
        }
    }

    @Test
    void unknownNamesListTheChoices() {
        for (String bad : new String[] {"gdr", "stream_write", "", "   ", null}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Backend.parse(bad));
            assertTrue(e.getMessage().endsWith("choose one of auto, gdrcopy, stream-write, mapped-pinned"),
                    e.getMessage());
        }
        assertEquals("unknown host flag backend 'gdr': choose one of auto, gdrcopy, stream-write, mapped-pinned",
                assertThrows(IllegalArgumentException.class, () -> Backend.parse("gdr")).getMessage());
    }

    @Test
    void autoTakesGdrcopyExactlyWhenItIsAvailable() {
        Choice with = HostFlags.choose(Backend.AUTO, true, PRESENT);
        assertEquals(Backend.GDRCOPY, with.backend());
        assertEquals("host flags: gdrcopy (auto; " + PRESENT + ")", with.describe());

        Choice without = HostFlags.choose(Backend.AUTO, false, ABSENT);
        assertEquals(HostFlags.FALLBACK, without.backend());
        assertEquals(Backend.MAPPED_PINNED, without.backend());
        assertEquals("host flags: mapped-pinned (auto; gdrcopy unavailable: " + ABSENT + ")", without.describe());
    }

    @Test
    void namedFallbacksAreTakenWhateverGdrcopySays() {
        for (boolean gdrcopy : new boolean[] {true, false}) {
            String sentence = gdrcopy ? PRESENT : ABSENT;
            assertEquals(new Choice(Backend.STREAM_WRITE, "requested"),
                    HostFlags.choose(Backend.STREAM_WRITE, gdrcopy, sentence));
            assertEquals(new Choice(Backend.MAPPED_PINNED, "requested"),
                    HostFlags.choose(Backend.MAPPED_PINNED, gdrcopy, sentence));
        }
        assertEquals("host flags: stream-write (requested)",
                HostFlags.choose(Backend.STREAM_WRITE, false, ABSENT).describe());
    }

    @Test
    void forcedGdrcopyIsTakenWhenAvailable() {
        Choice c = HostFlags.choose(Backend.GDRCOPY, true, PRESENT);
        assertEquals(Backend.GDRCOPY, c.backend());
        assertEquals("host flags: gdrcopy (requested; " + PRESENT + ")", c.describe());
    }

    @Test
    void forcedGdrcopyWithoutGdrcopySaysWhyAndHowToFallBack() {
        HostFlagUnavailableException e = assertThrows(HostFlagUnavailableException.class,
                () -> HostFlags.choose(Backend.GDRCOPY, false, ABSENT));
        assertEquals(Backend.GDRCOPY, e.backend());
        assertEquals("host flag backend gdrcopy was requested but cannot be used here: " + ABSENT + "; to fall "
                + "back, request auto (which takes mapped-pinned without gdrcopy), mapped-pinned or stream-write "
                + "instead", e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void aChoiceIsAlwaysConcrete() {
        assertThrows(IllegalArgumentException.class, () -> new Choice(Backend.AUTO, "why"));
        assertThrows(NullPointerException.class, () -> HostFlags.choose(null, true, PRESENT));
        for (Backend b : Backend.values()) {
            if (b != Backend.GDRCOPY) {
                assertTrue(HostFlags.choose(b, false, ABSENT).backend() != Backend.AUTO);
            }
        }
    }

    @Test
    void onThisMachineAutoFallsBackAndSaysWhy() {
        GdrcopyStatus status = Gdrcopy.status();
        assumeFalse(status.isAvailable(), "gdrcopy is usable on this machine: " + status.sentence());
        Choice c = HostFlags.choose(Backend.AUTO);
        assertEquals(HostFlags.FALLBACK, c.backend());
        assertTrue(c.describe().contains(status.sentence()), c.describe());
        HostFlagUnavailableException e = assertThrows(HostFlagUnavailableException.class,
                () -> HostFlags.choose(Backend.GDRCOPY));
        assertTrue(e.getMessage().contains(status.sentence()), e.getMessage());
    }

    @Test
    void forcedGdrcopyFailsBeforeAnyGpuIsTouched() {
        assumeFalse(Gdrcopy.status().isAvailable(), "gdrcopy is usable on this machine");
        // A null context would be a NullPointerException: the gdrcopy check comes first and says what to do.
        assertThrows(HostFlagUnavailableException.class, () -> HostFlags.allocate(null, Backend.GDRCOPY));
    }
}
