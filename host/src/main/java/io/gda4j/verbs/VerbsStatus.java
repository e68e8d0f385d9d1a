package io.gda4j.verbs;

import java.util.List;

/**
 * The result of {@link Verbs#status()}: which of three situations this machine is in, with a sentence for people.
 *
 * @param kind          library absent, library present without devices, or devices found
 * @param ibverbsLibrary the libibverbs name that was probed
 * @param mlx5Library   the libmlx5 name that was probed
 * @param mlx5Available whether libmlx5 loads (needed to drive an mlx5 NIC from the GPU)
 * @param deviceNames   the RDMA devices, e.g. {@code mlx5_0}; empty unless {@link Kind#DEVICES_FOUND}
 * @param detail        what the probe saw, for the sentence
 */
public record VerbsStatus(Kind kind, String ibverbsLibrary, String mlx5Library, boolean mlx5Available,
                          List<String> deviceNames, String detail) {

    /** The three situations {@code gda4j info} distinguishes. */
    public enum Kind {
        /** libibverbs could not be loaded. */
        LIBRARY_ABSENT,
        /** libibverbs loaded, but it lists no RDMA device. */
        NO_DEVICE,
        /** libibverbs lists at least one RDMA device. */
        DEVICES_FOUND
    }

    public VerbsStatus {
        deviceNames = List.copyOf(deviceNames);
    }

    static VerbsStatus libraryAbsent(String ibverbsLibrary, String mlx5Library, String detail) {
        return new VerbsStatus(Kind.LIBRARY_ABSENT, ibverbsLibrary, mlx5Library, false, List.of(), detail);
    }

    static VerbsStatus noDevice(String ibverbsLibrary, String mlx5Library, boolean mlx5Available, String detail) {
        return new VerbsStatus(Kind.NO_DEVICE, ibverbsLibrary, mlx5Library, mlx5Available, List.of(), detail);
    }

    static VerbsStatus devicesFound(String ibverbsLibrary, String mlx5Library, boolean mlx5Available,
                                    List<String> names) {
        return new VerbsStatus(Kind.DEVICES_FOUND, ibverbsLibrary, mlx5Library, mlx5Available, names,
                names.size() + " found");
    }

    public int deviceCount() {
        return deviceNames.size();
    }

    /** One line for {@code gda4j info}. */
    public String sentence() {
        return switch (kind) {
            case LIBRARY_ABSENT -> "RDMA verbs: " + ibverbsLibrary + " was not found (" + detail + "); install"
                    + " rdma-core (libibverbs1, ibverbs-providers) to use a real NIC. IBGDA can use only the"
                    + " emulated NIC.";
            case NO_DEVICE -> "RDMA verbs: " + ibverbsLibrary + " is present" + (mlx5Available
                    ? " (and " + mlx5Library + ")" : " (" + mlx5Library + " is not)") + ", but no RDMA device was"
                    + " found: " + detail + ". IBGDA can use only the emulated NIC.";
            case DEVICES_FOUND -> "RDMA verbs: " + deviceCount() + (deviceCount() == 1 ? " RDMA device" :
                    " RDMA devices") + " found: " + String.join(", ", deviceNames) + " (" + ibverbsLibrary
                    + (mlx5Available ? ", " + mlx5Library + ")." : "; " + mlx5Library + " is missing, so the GPU"
                    + " cannot drive an mlx5 NIC directly).");
        };
    }
}
