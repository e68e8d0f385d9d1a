package io.gda4j.verbs;

import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.util.ArrayList;
import java.util.List;

/** The RDMA devices of this machine. */
public final class RdmaDevices {
    private RdmaDevices() {
    }

    /**
     * The devices libibverbs lists; empty when the library is absent or lists none (see {@link Verbs#status()} for
     * why). Never throws.
     */
    public static List<RdmaDevice> list() {
        if (!LibIbverbs.isAvailable()) {
            return List.of();
        }
        int[] count = new int[1];
        long list = LibIbverbs.ibv_get_device_list(count);
        if (list == 0) {
            return List.of();
        }
        try {
            List<RdmaDevice> devices = new ArrayList<>(count[0]);
            for (int i = 0; i < count[0]; i++) {
                long device = new Pointer(list).getLong((long) i * Native.POINTER_SIZE);
                long guid = NetworkOrder.be64ToHost(LibIbverbs.ibv_get_device_guid(device));
                devices.add(new RdmaDevice(name(device), guid));
            }
            return List.copyOf(devices);
        } finally {
            LibIbverbs.ibv_free_device_list(list);
        }
    }

    static String name(long device) {
        long name = LibIbverbs.ibv_get_device_name(device);
        return name == 0 ? "?" : new Pointer(name).getString(0);
    }
}
