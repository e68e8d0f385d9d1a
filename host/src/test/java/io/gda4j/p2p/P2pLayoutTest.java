package io.gda4j.p2p;

import io.gda4j.mlx5.RequiresCompilers;
import io.gda4j.world.AtomicRouting;
import io.gda4j.world.HeaderValues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** p2p's constants in transport/p2p/p2p.cuh, compiled with g++, against the Java side: its handle bit and its code. */
@RequiresCompilers(tools = "g++")
class P2pLayoutTest {
    @Test
    void handleBitAndErrorCodeMatch(@TempDir Path tmp) throws Exception {
        Map<String, Long> header = HeaderValues.of("p2p_layout.cpp", tmp);
        assertEquals(P2pTransport.NO_NATIVE_ATOMICS, header.get("NO_NATIVE_ATOMICS"));
        assertEquals(AtomicRouting.PEER_HANDLE_FLAGS & ~AtomicRouting.PEER_NIC_ATOMICS, P2pTransport.NO_NATIVE_ATOMICS,
                "the flag bit the world leaves to transports");
        assertEquals(Long.valueOf(P2pErrorDecoder.NO_NATIVE_ATOMICS), header.get("CODE.NO_NATIVE_ATOMICS"));
        assertEquals(Map.of(P2pErrorDecoder.NO_NATIVE_ATOMICS, "NO_NATIVE_ATOMICS"), new P2pErrorDecoder().codes());
    }
}
