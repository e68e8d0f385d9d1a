package io.gda4j.verbs;

/** Run by {@link VerbsStatusTest} in a child JVM whose library properties name libraries that do not exist. */
public final class AbsentLibraryMain {
    private AbsentLibraryMain() {
    }

    public static void main(String[] args) {
        System.out.println("ibverbs available=" + LibIbverbs.isAvailable() + " reason="
                + LibIbverbs.unavailableReason());
        System.out.println("mlx5 available=" + LibMlx5.isAvailable() + " reason=" + LibMlx5.unavailableReason());
        System.out.println("optional: " + LibIbverbs.RegDmabufMr.unavailableReason());
        System.out.println("devices=" + RdmaDevices.list());
        VerbsStatus status = Verbs.status();
        System.out.println("kind=" + status.kind() + " sentence=" + status.sentence());
        try {
            RdmaContext.openFirst().close();
            System.out.println("open: unexpectedly succeeded");
        } catch (VerbsException e) {
            System.out.println("open: " + e.getMessage());
        }
    }
}
