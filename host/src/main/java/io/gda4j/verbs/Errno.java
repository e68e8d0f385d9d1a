package io.gda4j.verbs;

import java.util.Map;

/**
 * Linux errno values (the generic numbering of x86-64 and aarch64) as words, for error messages: verbs calls report
 * failures through errno or a returned errno value, and a number alone helps nobody.
 */
final class Errno {
    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int ENOMEM = 12;
    static final int EACCES = 13;
    static final int EFAULT = 14;
    static final int EBUSY = 16;
    static final int ENODEV = 19;
    static final int EINVAL = 22;
    static final int ENOSYS = 38;
    static final int EOPNOTSUPP = 95;
    static final int ETIMEDOUT = 110;

    private static final Map<Integer, String[]> TEXT = Map.ofEntries(
            Map.entry(EPERM, new String[] {"EPERM", "Operation not permitted"}),
            Map.entry(ENOENT, new String[] {"ENOENT", "No such file or directory"}),
            Map.entry(4, new String[] {"EINTR", "Interrupted system call"}),
            Map.entry(5, new String[] {"EIO", "Input/output error"}),
            Map.entry(6, new String[] {"ENXIO", "No such device or address"}),
            Map.entry(9, new String[] {"EBADF", "Bad file descriptor"}),
            Map.entry(11, new String[] {"EAGAIN", "Resource temporarily unavailable"}),
            Map.entry(ENOMEM, new String[] {"ENOMEM", "Cannot allocate memory"}),
            Map.entry(EACCES, new String[] {"EACCES", "Permission denied"}),
            Map.entry(EFAULT, new String[] {"EFAULT", "Bad address"}),
            Map.entry(EBUSY, new String[] {"EBUSY", "Device or resource busy"}),
            Map.entry(17, new String[] {"EEXIST", "File exists"}),
            Map.entry(ENODEV, new String[] {"ENODEV", "No such device"}),
            Map.entry(EINVAL, new String[] {"EINVAL", "Invalid argument"}),
            Map.entry(24, new String[] {"EMFILE", "Too many open files"}),
            Map.entry(28, new String[] {"ENOSPC", "No space left on device"}),
            Map.entry(34, new String[] {"ERANGE", "Numerical result out of range"}),
            Map.entry(ENOSYS, new String[] {"ENOSYS", "Function not implemented"}),
            Map.entry(61, new String[] {"ENODATA", "No data available"}),
            Map.entry(71, new String[] {"EPROTO", "Protocol error"}),
            Map.entry(75, new String[] {"EOVERFLOW", "Value too large for defined data type"}),
            Map.entry(EOPNOTSUPP, new String[] {"EOPNOTSUPP", "Operation not supported"}),
            Map.entry(99, new String[] {"EADDRNOTAVAIL", "Cannot assign requested address"}),
            Map.entry(101, new String[] {"ENETUNREACH", "Network is unreachable"}),
            Map.entry(ETIMEDOUT, new String[] {"ETIMEDOUT", "Connection timed out"}),
            Map.entry(113, new String[] {"EHOSTUNREACH", "No route to host"}));

    private Errno() {
    }

    /** {@code "EINVAL (22, Invalid argument)"}, or {@code "errno 0"} style text for unnamed values. */
    static String describe(int errno) {
        String[] text = TEXT.get(errno);
        return text == null ? "errno " + errno : text[0] + " (" + errno + ", " + text[1] + ")";
    }
}
