package io.gda4j.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.transport.ProxyTagTwin;
import io.gda4j.transport.TransportTag;
import io.gda4j.world.DeviceViewDescriptor;
import io.gda4j.world.ErrorRecord;
import io.gda4j.world.ErrorRecordDescriptor;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.ErrorRecordDescriptor.Op;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The proxy's tag, which this module owns: its traits, and its identity with the twin that host's tests use in its
 * place (host's DeviceViewLayoutTest checks the twin's code against view.cuh's TRANSPORT_PROXY, so the two together
 * check this constant).
 */
class ProxyTagTest {

    @Test
    void theHostTestsTwinIsThisTag() {
        // TransportTag.define returns the registered tag for an identical definition and refuses a different one, so
        // the twin is this very instance exactly when both define the same fields.
        assertSame(ProxyTransport.TAG, ProxyTagTwin.TAG);
    }

    @Test
    void theProviderOwnsItsTagAndItsTraits() {
        ProxyTransport provider = new ProxyTransport();
        assertSame(ProxyTransport.TAG, provider.tag());
        assertEquals(provider.name(), ProxyTransport.TAG.name());
        assertEquals(4, ProxyTransport.TAG.code());
        assertEquals("PROXY", ProxyTransport.TAG.toString());
        assertEquals("the proxy", ProxyTransport.TAG.phrase());
        assertEquals(DeviceViewDescriptor.VIEW_FLAG_PROXY_PEERS, ProxyTransport.TAG.viewFlags());
        assertTrue(ProxyTransport.TAG.has(TransportTag.Trait.GPU_ATOMICS), "the proxy adds with a GPU atomic kernel");
        assertFalse(ProxyTransport.TAG.has(TransportTag.Trait.DIRECT), "kernels cannot store into a proxy peer's heap");
        assertFalse(ProxyTransport.TAG.has(TransportTag.Trait.PUTS_EACH_MESSAGE_FROM_ONE_BLOCK));
        assertSame(ProxyTransport.TAG, TransportTag.ofCode(4));
    }

    @Test
    void withTheProxyOnTheClassPathEveryCodeOfViewCuhHasItsTag() {
        List<TransportTag> known = TransportTag.known();
        assertEquals(List.of(0, 1, 2, 3, 4), known.stream().map(TransportTag::code).toList(), known.toString());
    }

    @Test
    void aCodeIsFoundBeforeItsProviderIsLoaded() throws Exception {
        // A fresh loader over this class path, in which nothing has touched a provider yet: decoding an error record
        // that names the proxy's code must still find the tag, by initializing the providers ServiceLoader lists.
        List<URL> urls = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            urls.add(Path.of(entry).toUri().toURL());
        }
        try (URLClassLoader fresh = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            Class<?> tags = Class.forName(TransportTag.class.getName(), true, fresh);
            assertTrue(tags != TransportTag.class, "the fresh loader must load its own TransportTag");
            Object proxy = tags.getMethod("ofCode", int.class).invoke(null, 4);
            assertEquals("PROXY", proxy.toString());
            assertEquals("the proxy", tags.getMethod("phrase").invoke(proxy));
            Object owner = Class.forName(ProxyTransport.class.getName(), false, fresh).getField("TAG").get(null);
            assertSame(proxy, owner, "the tag found by code is the provider's constant");
        }
    }

    @Test
    void aMixedAtomicsRecordCallsThePathTheProxy() {
        ByteBuffer b = ByteBuffer.allocate(ErrorRecordDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(ErrorRecordDescriptor.CODE_OFFSET, Code.MIXED_ATOMICS.value());
        b.putInt(ErrorRecordDescriptor.RANK_OFFSET, 1);
        b.putInt(ErrorRecordDescriptor.OP_OFFSET, Op.ATOMIC_ADD.value());
        b.putInt(ErrorRecordDescriptor.CMP_OFFSET, ProxyTransport.TAG.code());
        String m = ErrorRecord.decode(b).describe(Duration.ofSeconds(1));
        assertTrue(m.contains("a GPU atomic add over the proxy would not be atomic"), m);
    }
}
