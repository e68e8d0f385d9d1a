package io.gda4j.gdrcopy;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Runs in a child JVM started by {@link FakeLibgdrapiTest} with {@code -Dgda4j.gdrcopy.library} pointing at the fake
 * libgdrapi; prints {@code key=value} lines the test checks. A child JVM because the binding loads once per JVM.
 */
public final class FakeLibgdrapiScenario {

    static final long ALIGNED = 0x7f00_0001_0000L;
    static final long BAD = 0xbad0000L;

    private FakeLibgdrapiScenario() {
    }

    public static void main(String[] args) {
        Map<String, Object> out = new LinkedHashMap<>();
        Function log = NativeLibrary.getInstance(System.getProperty(GdrcopyConfig.LIBRARY_PROP_NAME))
                .getFunction("fake_gdr_log");
        Function failNextOpen = NativeLibrary.getInstance(System.getProperty(GdrcopyConfig.LIBRARY_PROP_NAME))
                .getFunction("fake_gdr_fail_next_open");

        out.put("loaded", LibGdrapi.isLoaded());
        out.put("infoV2", LibGdrapi.hasGetInfoV2());
        out.put("status", Gdrcopy.status().oneLine());
        out.put("runtime", Gdrcopy.runtimeVersion());

        // one call maps; hot-path stores land in the mapped memory; close unmaps, unpins, closes
        try (GdrMapping mapping = Gdrcopy.map(ALIGNED, 4096)) {
            mapping.putLongRelease(0, 0x1122334455667788L);
            mapping.putLongVolatile(8, 7);
            ByteBuffer view = mapping.buffer();
            out.put("buffer.order", view.order());
            out.put("buffer.capacity", view.capacity());
            out.put("buffer.word0", Long.toHexString(view.getLong(0)));
            out.put("acquire.word8", mapping.getLongAcquire(8));

            ByteBuffer heap = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder()).putLong(5).putLong(6).flip();
            mapping.copyToMapping(16, heap);
            ByteBuffer direct = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(9).flip();
            mapping.copyToMapping(32, direct);
            out.put("copyTo.advanced", heap.remaining() == 0 && direct.remaining() == 0);
            ByteBuffer back = ByteBuffer.allocate(24).order(ByteOrder.nativeOrder());
            mapping.copyFromMapping(16, back);
            back.flip();
            out.put("copyFrom", back.getLong() + "," + back.getLong() + "," + back.getLong());
            ByteBuffer backDirect = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            mapping.copyFromMapping(0, backDirect);
            out.put("copyFrom.direct", Long.toHexString(backDirect.getLong(0)));

            GdrInfo info = mapping.info();
            out.put("info.va", Long.toHexString(info.va()));
            out.put("info.mappedSize", info.mappedSize());
            out.put("info.mappingType", info.mappingType());
            out.put("info.mapped", info.mapped());
            out.put("invalidated", mapping.pinnedBuffer().invalidatedByFree());
        }
        out.put("log.map", log.invokeString(new Object[0], false));

        // an unaligned address inside a pinned page: the view is offset into the mapping
        try (GdrHandle handle = GdrHandle.open()) {
            out.put("driver", handle.driverVersion());
            GdrPinnedBuffer a = handle.pin(ALIGNED + 256, 8);
            GdrMapping am = a.map();
            out.put("offset.hostMinusMappedPage", am.hostAddress() & 0xfff);
            GdrWord word = GdrWord.inside(am, 0);
            word.putLongRelease(99);
            out.put("word.backend", word.backendName());
            out.put("word.deviceAddress", Long.toHexString(word.deviceAddress()));
            out.put("word.get", word.getLongAcquire());
            word.close();
            out.put("word.closedLeavesMappingOpen", !am.isClosed());
            GdrPinnedBuffer b = handle.pin(ALIGNED + 0x20000, 0x10000);
            b.map();
            try {
                b.map();
            } catch (IllegalStateException e) {
                out.put("secondMap", "refused");
            }
            // closing the handle closes everything beneath it, newest first, mapping before pin
        }
        out.put("log.handle", log.invokeString(new Object[0], false));

        try (GdrHandle handle = GdrHandle.open()) {
            handle.pin(BAD, 8);
        } catch (GdrcopyException e) {
            out.put("pinFailure", e.getMessage());
        }
        failNextOpen.invokeVoid(new Object[0]);
        try (GdrHandle handle = GdrHandle.open()) {
            out.put("openFailure", "none: " + handle);
        } catch (GdrcopyException e) {
            out.put("openFailure", e.getMessage());
        }

        // closing twice, and closing the pin underneath an owning mapping
        GdrMapping owning = Gdrcopy.map(ALIGNED, 8);
        owning.pinnedBuffer().close();
        owning.close();
        owning.close();
        try (GdrWord word = GdrWord.map(ALIGNED)) {
            word.putLongRelease(1);
        }
        out.put("log.end", log.invokeString(new Object[0], false));

        out.forEach((k, v) -> System.out.println(k + "=" + v));
    }
}
