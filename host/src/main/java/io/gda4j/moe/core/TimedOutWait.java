package io.gda4j.moe.core;

/**
 * A device wait that timed out on one of a MoE buffer's signal words, in the words of the part that owns the word:
 * what the MoeBuffer turns into its MoeTimeoutException.
 *
 * @param message what waited for what, and the values seen and expected
 * @param rank    the rank that waited
 * @param peer    the rank it waited for
 */
public record TimedOutWait(String message, int rank, int peer) {
}
