package io.gda4j.verbs;

/** Checks shared by the classes that call into libmlx5. */
final class Mlx5Support {
    static final String NOT_MLX5_HINT = "mlx5dv_init_obj works only on objects of an mlx5 device (ConnectX).";

    private Mlx5Support() {
    }

    static void requireAvailable(String what) {
        if (!LibMlx5.isAvailable()) {
            throw new VerbsException("cannot get " + what + ": " + LibMlx5.libraryName() + " is not usable ("
                    + LibMlx5.unavailableReason() + ")", Errno.ENOSYS);
        }
    }
}
