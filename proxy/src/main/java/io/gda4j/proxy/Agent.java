package io.gda4j.proxy;

/**
 * A unit of polling work run in a loop by an {@link AgentRunner} (the Agrona pattern): {@link #doWork()} does what
 * there is to do now and returns how much that was, and the runner's {@link IdleStrategy} decides what to do when it
 * was nothing. {@code doWork} must not allocate or block.
 */
public interface Agent {
    /** Does the work available now; returns a count of work items done (0 = idle). */
    int doWork();

    /** A short name for threads and messages, e.g. "gda4j-proxy-0". */
    String roleName();

    /** Called on the agent's thread when the runner stops it normally (not after a failure). */
    default void onClose() {
    }
}
