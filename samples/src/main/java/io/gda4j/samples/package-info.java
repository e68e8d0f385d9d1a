/**
 * The {@code gda4j} command line ({@link io.gda4j.samples.Main}): its commands ({@code info}, {@code latency},
 * {@code bandwidth}, {@code compare}, {@code hostflag}, {@code moe}), the benchmark rigs they drive, and how they print
 * results. README.md describes each command; {@code gda4j COMMAND --help} its options.
 *
 * <p>Internal: gda4j-samples is an application and exports nothing; run it with {@code ./gda4j}, {@code java -jar
 * samples/target/gda4j.jar}, or on the module path with {@code -m io.gda4j.samples/io.gda4j.samples.Main}.
 */
package io.gda4j.samples;
