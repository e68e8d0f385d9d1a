package io.gda4j.samples;

import io.gda4j.config.Setting;
import io.gda4j.config.SettingException;
import io.gda4j.cuda.CudaException;
import io.gda4j.world.DeviceErrorException;
import org.apache.commons.cli.AmbiguousOptionException;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.DefaultParser;
import org.apache.commons.cli.HelpFormatter;
import org.apache.commons.cli.MissingArgumentException;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;
import org.apache.commons.cli.ParseException;
import org.apache.commons.cli.UnrecognizedOptionException;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code gda4j} command line. Exit codes: 0 success, 1 the run failed (a device error, a CUDA error, a payload that
 * did not arrive as sent, standard output that could not be written), 2 bad input (unknown command or option, an
 * option given twice or abbreviated, a value that does not parse, options that do not go together, a bad
 * {@code GDA4J_*} / {@code gda4j.*} setting, a machine without what the run needs), 3 a run that completed but missed
 * a threshold of {@code --expect}.
 */
public final class Main {
    /** Set to 1 to print stack traces of unexpected failures. */
    public static final String DEBUG_ENV = "GDA4J_DEBUG";
    public static final String DEBUG_PROP_NAME = "gda4j.debug";
    public static final Setting<Boolean> DEBUG = Setting.of("stack traces on failure", DEBUG_PROP_NAME,
            DEBUG_ENV, "0", "1 (print them) or 0", text -> switch (text) {
                case "1" -> true;
                case "0" -> false;
                default -> throw new IllegalArgumentException("not 0 or 1: '" + text + "'");
            }).displayedAs(on -> on ? "1" : "0"); // in the words it is set with

    private final Map<String, Command> commands = new LinkedHashMap<>();

    Main() {
        for (Command c : new Command[] {new InfoCommand(), new LatencyCommand(), new BandwidthCommand(),
            new CompareCommand(), new HostFlagCommand(), new MoeCommand()}) {
            commands.put(c.name(), c);
        }
    }

    public static void main(String[] args) {
        int code = new Main().run(args, System.out, System.err);
        System.exit(code);
    }

    static String version() {
        String v = Main.class.getPackage().getImplementationVersion();
        return v == null ? "0.1.0-SNAPSHOT" : v;
    }

    /**
     * Runs one invocation; a write error on {@code out} (a full disk, a closed pipe) makes it exit 1 whatever the
     * command returned: a PrintStream swallows such errors, and a truncated result must not look like success.
     */
    int run(String[] args, PrintStream out, PrintStream err) {
        int code = dispatch(args, out, err);
        if (out.checkError()) { // flushes, then reports any write that failed since the stream was made
            err.println("gda4j" + (args.length > 0 && commands.containsKey(args[0]) ? " " + args[0] : "")
                    + ": writing to standard output failed (a full disk, a closed pipe or another write error): the"
                    + " output is incomplete");
            return 1;
        }
        return code;
    }

    /** The parser of every command: an option must be written out in full ({@code --it} is not {@code --iters}). */
    static DefaultParser parser() {
        return DefaultParser.builder().setAllowPartialMatching(false).build();
    }

    private int dispatch(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            printUsage(err); // exit 2: usage goes with the error, to stderr
            return 2;
        }
        if (args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help")) {
            if (args.length == 1) {
                printUsage(out);
                return 0;
            }
            if (args.length == 2 && commands.containsKey(args[1])) {
                printHelp(commands.get(args[1]), out);
                return 0;
            }
            err.println(args.length == 2 ? "gda4j help: unknown command '" + args[1] + "'. Commands: "
                    + String.join(", ", commands.keySet()) + "."
                    : "gda4j help: takes one command, got " + (args.length - 1) + " arguments.");
            return 2;
        }
        if (args[0].equals("--version")) {
            if (args.length > 1) {
                err.println("gda4j --version: takes no arguments, got '" + args[1] + "'.");
                return 2;
            }
            out.println("gda4j " + version());
            return 0;
        }
        Command c = commands.get(args[0]);
        if (c == null) {
            err.println("gda4j: unknown command '" + args[0] + "'. Commands: " + String.join(", ", commands.keySet())
                    + ". Run 'gda4j --help'.");
            return 2;
        }
        String[] rest = new String[args.length - 1];
        System.arraycopy(args, 1, rest, 0, rest.length);
        for (String a : rest) {
            if (a.equals("--help") || a.equals("-h")) {
                printHelp(c, out);
                return 0;
            }
        }
        try {
            CommandLine cmd = parser().parse(c.options(), rest);
            if (!cmd.getArgList().isEmpty()) {
                throw new UsageException("unexpected argument '" + cmd.getArgList().get(0) + "'");
            }
            OptionValues.refuseRepeats(cmd);
            // A misspelt setting would otherwise change nothing silently; info lists these too.
            for (Configuration.Unknown u : Configuration.unknown(System.getenv(), System.getProperties())) {
                err.println("gda4j: warning: " + u.message());
            }
            if (!(c instanceof InfoCommand)) {
                // Every setting, not only the ones this run reads: a typo is reported now, not on the run that needs it.
                // info is exempt: it shows every setting and marks the bad ones.
                Configuration.check(System::getProperty, System::getenv);
            }
            return c.run(cmd, out, err);
        } catch (SettingException e) {
            String m = sentence(e.getMessage());
            // Once: a setting's own message may already point to info (GDA4J_TRANSPORT's does).
            err.println("gda4j " + c.name() + ": " + m + (m.contains("gda4j info") ? "." : " ('gda4j info' lists every"
                    + " setting)."));
            return 2;
        } catch (ParseException e) {
            err.println("gda4j " + c.name() + ": " + parseMessage(e, c.options()) + ". Run 'gda4j " + c.name()
                    + " --help'.");
            return 2;
        } catch (UsageException e) {
            err.println("gda4j " + c.name() + ": " + sentence(e.getMessage()) + ". Run 'gda4j " + c.name() + " --help'.");
            return 2;
        } catch (PayloadCheck.MismatchException e) {
            err.println("gda4j " + c.name() + ": " + e.getMessage());
            return 1;
        } catch (DeviceErrorException e) {
            err.println("gda4j " + c.name() + ": the GPU reported an error: " + e.getMessage());
            debug(e, err);
            return 1;
        } catch (CudaException e) {
            err.println("gda4j " + c.name() + ": CUDA error: " + e.getMessage());
            debug(e, err);
            return 1;
        } catch (Exception e) {
            err.println("gda4j " + c.name() + ": failed: " + e + " (set " + DEBUG_ENV + "=1 for the stack trace)");
            debug(e, err);
            return 1;
        }
    }

    /**
     * Commons CLI's refusal in the voice of the other messages: the option as written, and what is accepted (the
     * option's value, or the command's option names).
     */
    static String parseMessage(ParseException e, Options options) {
        // Before Unrecognized...: Commons CLI makes an ambiguous option a kind of unrecognized one.
        if (e instanceof AmbiguousOptionException a) {
            List<String> matches = new ArrayList<>();
            for (String m : a.getMatchingOptions()) {
                matches.add("--" + m);
            }
            return "'" + a.getOption() + "' is the start of several options (" + String.join(", ", matches)
                    + "): write one out";
        }
        if (e instanceof UnrecognizedOptionException u) {
            String given = u.getOption();
            String name = given.replaceFirst("^-+", "").replaceFirst("=.*$", "");
            List<String> names = new ArrayList<>();
            for (Option o : options.getOptions()) {
                names.add(optionNames(o));
            }
            Collections.sort(names);
            List<String> extensions = new ArrayList<>();
            for (String n : names) {
                if (!name.isEmpty() && n.startsWith("--" + name)) {
                    extensions.add(n);
                }
            }
            if (!extensions.isEmpty()) {
                // Partial names are refused: a later option sharing the prefix would silently change their meaning.
                return "unknown option '" + given + "': options are written out in full, e.g. " + String.join(" or ",
                        extensions);
            }
            String nearest = NearestName.of("--" + name, names);
            return "unknown option '" + given + "'" + (nearest == null ? "" : " (did you mean " + nearest + "?)")
                    + "; the options are " + String.join(", ", names);
        }
        if (e instanceof MissingArgumentException m) {
            Option o = m.getOption();
            return optionNames(o) + " needs a value (" + o.getArgName() + ")"
                    + (o.getDescription() == null ? "" : ": " + sentence(o.getDescription()));
        }
        return sentence(e.getMessage());
    }

    /** A message as it was written (the case of what it quotes kept), without a final full stop. */
    private static String sentence(String s) {
        if (s == null || s.isBlank()) {
            return "bad input";
        }
        String t = s.strip();
        return t.endsWith(".") ? t.substring(0, t.length() - 1) : t;
    }

    private static void debug(Exception e, PrintStream err) {
        boolean on;
        try {
            on = DEBUG.resolve();
        } catch (SettingException bad) {
            on = false; // checked before the run; a value set since then does not hide the failure being reported
        }
        if (on) {
            e.printStackTrace(err);
        }
    }

    private void printUsage(PrintStream out) {
        out.println("gda4j " + version() + ": GPU-initiated communication (IBGDA, proxy, NVLink P2P) from Java");
        out.println();
        out.println("usage: gda4j COMMAND [OPTIONS]      gda4j COMMAND --help for the options of one command");
        out.println();
        out.println("commands:");
        for (Command c : commands.values()) {
            out.printf(Locale.ROOT, "  %-10s %s%n", c.name(), c.summary());
        }
        out.println();
        out.println("Start with 'gda4j info' to see what this machine offers.");
    }

    private static void printHelp(Command c, PrintStream out) {
        HelpFormatter f = HelpFormatter.builder().setShowSince(false).get();
        PrintWriter pw = new PrintWriter(out);
        f.printHelp(pw, 100, "gda4j " + c.name() + " [OPTIONS]", "\n" + c.summary() + ".\n\n" + c.description() + "\n\n",
                c.options(), 2, 3, "\nexamples:\n" + c.examples(), false);
        pw.flush();
    }

    static String optionNames(Option o) {
        return o.getLongOpt() != null ? "--" + o.getLongOpt() : "-" + o.getOpt();
    }
}
