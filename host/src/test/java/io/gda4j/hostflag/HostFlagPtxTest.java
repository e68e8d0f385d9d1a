package io.gda4j.hostflag;

import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.PtxModule;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The committed hostflag PTX declares the kernels the host launches, with the parameters the host passes (checked
 * without a GPU; on a GPU, Kernel.launch checks the same again).
 */
class HostFlagPtxTest {

    /** The parameter types of {@code kernel} in the committed PTX, e.g. {@code [u64, u32]}. */
    static List<String> parameterTypes(String kernel) {
        String ptx = new String(PtxModule.readPtx(FlagEcho.MODULE), StandardCharsets.US_ASCII);
        Matcher entry = Pattern.compile("\\.entry\\s+" + Pattern.quote(kernel) + "\\s*\\(([^)]*)\\)").matcher(ptx);
        assertTrue(entry.find(), FlagEcho.MODULE + ".ptx has no kernel " + kernel + ": run device-ptx/regen-ptx.sh");
        List<String> types = new ArrayList<>();
        Matcher type = Pattern.compile("\\.param\\s+\\.([bsuf]\\d+)").matcher(entry.group(1));
        while (type.find()) {
            types.add(type.group(1));
        }
        return types;
    }

    @Test
    void echoKernelTakesWhatFlagEchoPasses() {
        KernelArgs args = FlagEcho.echoArguments(0x7000_0000_0000L, DevicePointer.of(0x7100_0000_0000L), 1, 10, 1000);
        assertEquals(List.of("u64", "u64", "u64", "u64", "u64", "u64", "u64"), parameterTypes(FlagEcho.ECHO_KERNEL));
        assertEquals(7, args.count());
        assertEquals("[addr 0x700000000000, ptr 0x710000000000, u64 1, u64 10, u64 1000, ptr 0x710000000010, "
                + "ptr 0x710000000008]", args.toString(), "flag, echo, first, count, timeout, seen, status");
    }

    @Test
    void observeKernelTakesWhatTheGpuTestPasses() {
        assertEquals(List.of("u64", "u64", "u64", "u64", "u32", "u64", "u64", "u64", "u64", "u64"),
                parameterTypes(FlagEcho.OBSERVE_KERNEL));
        assertEquals(10, HostFlagGpuTest.observeArguments(1, 0, 5, DevicePointer.of(64), 5, 0, 1000,
                DevicePointer.of(128)).count());
    }

    @Test
    void replyBlockWordsAreDistinctAndInside() {
        assertTrue(FlagEcho.ECHO_OFFSET != FlagEcho.STATUS_OFFSET && FlagEcho.STATUS_OFFSET != FlagEcho.SEEN_OFFSET);
        assertTrue(FlagEcho.SEEN_OFFSET + Long.BYTES <= FlagEcho.REPLY_BYTES);
        assertTrue(FlagEcho.STATUS_RUNNING != FlagEcho.STATUS_OK);
        assertEquals("timed out: the flag stayed at 3 while round 4 was awaited, so the host's store did not reach "
                + "the GPU in time", FlagEcho.describeStatus(FlagEcho.STATUS_TIMEOUT, 3, 4));
    }
}
