package io.gda4j.samples;

import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

import java.io.PrintStream;

/** One subcommand of {@code gda4j}. */
interface Command {
    String name();

    /** One line for the command list. */
    String summary();

    /** Paragraph shown by {@code gda4j NAME --help} below the usage line: what it measures and how to read it. */
    String description();

    /** Example invocations for --help. */
    String examples();

    Options options();

    /** Runs with parsed options; returns the exit code. Throws {@link UsageException} for bad input. */
    int run(CommandLine cmd, PrintStream out, PrintStream err) throws Exception;
}
