package io.gda4j.proxy;

import io.gda4j.nic.Nic;
import io.gda4j.nic.emulated.EmulatedNic;

/** For {@code io.gda4j.NativeBindingsTest} only: a transport downcasting a NIC, which its rule refuses. */
public final class LayeringFixtureCastsNic {
    private LayeringFixtureCastsNic() {
    }

    static boolean isEmulated(Nic nic) {
        return nic instanceof EmulatedNic;
    }
}
