package io.gda4j.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.config.SettingException;
import io.gda4j.proxy.ProxyConfig.Handler;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.Test;

/** The proxy handler choice and the verbs handler's credit settings: defaults, per-peer resolution, bad values. */
class ProxyHandlerSettingTest {
    @Test
    void autoIsTheCopyEngineWithinAHostAndVerbsAcrossHosts() {
        assertEquals(Handler.COPY, Handler.AUTO.forPeer(true));
        assertEquals(Handler.VERBS, Handler.AUTO.forPeer(false));
        assertEquals(Handler.VERBS, Handler.VERBS.forPeer(true), "forced: verbs even on one host");
        assertEquals(Handler.COPY, Handler.COPY.forPeer(false), "forced: the copy engine, even where it cannot reach");
    }

    @Test
    void defaultsAndOverrides() {
        ProxyConfig defaults = ProxyConfig.resolve(new Properties(), Map.of());
        assertEquals(Handler.AUTO, defaults.handler());
        assertEquals(256, defaults.credits());
        assertEquals(Duration.ofSeconds(10), defaults.creditTimeout());

        Properties props = new Properties();
        props.setProperty(ProxyConfig.HANDLER_PROP_NAME, "copy");
        ProxyConfig c = ProxyConfig.resolve(props, Map.of(ProxyConfig.HANDLER_ENV, "verbs",
                ProxyConfig.CREDITS_ENV, "16", ProxyConfig.CREDIT_TIMEOUT_ENV, "250"));
        assertEquals(Handler.COPY, c.handler(), "a property beats the environment");
        assertEquals(16, c.credits());
        assertEquals(Duration.ofMillis(250), c.creditTimeout());
        assertEquals(Handler.VERBS, c.withHandler(Handler.VERBS).handler());
        assertEquals(16, c.withThreads(2).credits(), "withers keep the verbs settings");
        assertTrue(ProxyConfig.SETTINGS.contains(ProxyConfig.HANDLER), "gda4j info prints the handler choice");
    }

    @Test
    void badValuesNameTheirVariable() {
        SettingException e = assertThrows(SettingException.class,
                () -> ProxyConfig.resolve(new Properties(), Map.of(ProxyConfig.HANDLER_ENV, "rdma")));
        assertTrue(e.getMessage().contains(ProxyConfig.HANDLER_ENV), e.getMessage());
        assertTrue(e.getMessage().contains("auto") && e.getMessage().contains("verbs"), e.getMessage());
        SettingException zero = assertThrows(SettingException.class,
                () -> ProxyConfig.resolve(new Properties(), Map.of(ProxyConfig.CREDITS_ENV, "0")));
        assertTrue(zero.getMessage().contains(ProxyConfig.CREDITS_ENV), zero.getMessage());
    }
}
