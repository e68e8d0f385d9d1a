package io.gda4j.samples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The files of {@code gda4j compare}: --plot writes exactly the file named, --from refuses what it cannot read. */
class CompareFilesTest {
    @TempDir
    Path dir;

    private Path csv() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CompareResultsTest.sample().table().print(new PrintStream(out, true, StandardCharsets.UTF_8),
                ResultTable.Format.CSV);
        Path csv = dir.resolve("compare.csv");
        Files.writeString(csv, out.toString(StandardCharsets.UTF_8));
        return csv;
    }

    @Test
    void plotWritesExactlyTheFileNamedInTheFormatItsNameSays() throws Exception {
        byte[][] magic = {{(byte) 0x89, 'P', 'N', 'G'}, {(byte) 0xff, (byte) 0xd8, (byte) 0xff}, {'B', 'M'},
            {(byte) 0xff, (byte) 0xd8, (byte) 0xff}, {(byte) 0x89, 'P', 'N', 'G'}};
        String[] names = {"out.png", "out.jpg", "out.bmp", "OUT.JPEG", "out.v2.PNG"};
        for (int i = 0; i < names.length; i++) {
            Path target = dir.resolve(names[i]);
            CliRun r = CliRun.of("compare", "--from", csv().toString(), "--plot", target.toString());
            assertEquals(0, r.code(), r::toString);
            assertTrue(Files.isRegularFile(target), "no " + target);
            byte[] bytes = Files.readAllBytes(target);
            assertArrayEquals(magic[i], Arrays.copyOf(bytes, magic[i].length), names[i]);
            assertTrue(r.err().contains("chart written to " + target), r.err());
        }
        assertEquals(5, Files.list(dir).filter(f -> f.getFileName().toString().toLowerCase().startsWith("out"))
                .count(), "nothing appended to a name");
    }

    @Test
    void aPlotNameWithoutAnOfferedFormatIsRefusedBeforeAnything() throws Exception {
        for (String name : new String[] {"out.txt", "out.svg", "out.pdf", "out", "out.gif"}) {
            Path target = dir.resolve(name);
            CliRun r = CliRun.of("compare", "--from", csv().toString(), "--plot", target.toString());
            assertEquals(2, r.code(), r::toString);
            assertTrue(r.err().contains("end it in .png, .jpg or .bmp"), r::toString);
            assertFalse(Files.exists(target), "wrote " + target);
            assertEquals("", r.out(), "refused before printing the results");
        }
    }

    @Test
    void plotRefusesToOverwriteTheCsvItReads() throws Exception {
        Path csv = csv();
        Path png = Files.move(csv, dir.resolve("compare.png"));
        byte[] before = Files.readAllBytes(png);
        for (String plot : new String[] {png.toString(), dir.resolve(".").resolve("compare.png").toString()}) {
            CliRun r = CliRun.of("compare", "--from", png.toString(), "--plot", plot);
            assertEquals(2, r.code(), r::toString);
            assertTrue(r.err().contains("is the file --from reads"), r::toString);
        }
        assertArrayEquals(before, Files.readAllBytes(png), "the input was changed");
    }

    @Test
    void plotIntoADirectoryIsRefusedAndWritesNothingBesideIt() throws Exception {
        Path sub = Files.createDirectory(dir.resolve("charts"));
        CliRun r = CliRun.of("compare", "--from", csv().toString(), "--plot", sub.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("is a directory"), r.err());
        assertFalse(Files.exists(dir.resolve("charts.png")), "wrote beside the directory");
    }

    @Test
    void anUnwritablePlotPathIsRefusedBeforeAnyMeasuring() {
        // Without --from the command would measure; the plot path is checked first, so the answer is about it and
        // not about a missing GPU (or, on a GPU machine, not after a sweep).
        CliRun r = CliRun.of("compare", "--plot", dir.resolve("no-such-dir").resolve("x.png").toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("--plot") && r.err().contains("does not exist"), r.err());
        assertFalse(r.err().contains("needs a CUDA GPU"), r.err());
    }

    @Test
    void checkingAPlotPathLeavesNoFileBehind() {
        Path target = dir.resolve("later.png");
        ComparePlot.checkWritable(target, null);
        assertFalse(Files.exists(target));
    }

    @Test
    void fromRefusesAMissingFileADirectoryForeignTextAndNonUtf8() throws Exception {
        Path readme = dir.resolve("README.md");
        Files.writeString(readme, "# Not a CSV\n\nSome text, with commas.\n");
        Path binary = dir.resolve("Results.bin");
        Files.write(binary, new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1, (byte) 0xc3, 0x28, '\n', 'x'});
        Path empty = Files.createFile(dir.resolve("empty.csv"));
        String[][] cases = {
            {dir.resolve("Missing.csv").toString(), "no such file"},
            {dir.toString(), "is a directory"},
            {readme.toString(), "README.md is not the CSV of 'gda4j compare --csv'"},
            {binary.toString(), "Results.bin is not UTF-8 text"},
            {empty.toString(), "holds no compare results"},
        };
        for (String[] c : cases) {
            CliRun r = CliRun.of("compare", "--from", c[0]);
            assertEquals(2, r.code(), () -> c[0] + " -> " + r);
            assertEquals(1, r.err().strip().lines().count(), r::toString);
            assertTrue(r.err().contains(c[1]), () -> c[0] + " -> " + r.err());
            assertFalse(r.err().contains("Exception"), r::toString);
        }
    }

    @Test
    void fromRefusesOptionsItWouldIgnore() throws Exception {
        for (String[] extra : new String[][] {{"--iters", "0"}, {"--transports", "p2p"}, {"--sizes", "8"}}) {
            List<String> args = new java.util.ArrayList<>(List.of("compare", "--from", csv().toString()));
            args.addAll(List.of(extra));
            CliRun r = CliRun.of(args.toArray(String[]::new));
            assertEquals(2, r.code(), r::toString);
            assertTrue(r.err().contains("--from redraws a CSV and measures nothing, so " + extra[0]
                    + " does not apply; with --from: --from, --plot, --csv, --json, --quiet"), r.err());
        }
        assertEquals(0, CliRun.of("compare", "--from", csv().toString(), "--json", "--quiet").code());
    }

    @Test
    void fromNamesTheLineOfABadSizeAndADuplicatedColumn() throws Exception {
        List<String> good = Files.readAllLines(csv());
        String header = good.get(0);
        String row = good.get(1);
        int bytesCol = List.of(header.split(",")).indexOf("bytes");
        assertTrue(bytesCol >= 0, header);
        String last = header.substring(header.lastIndexOf(',') + 1);
        String[][] cases = {
            {header + "\n\n" + withCell(row, bytesCol, "0") + "\n", "line 3: bytes must be a whole number from 1,"
                + " got '0'"},
            {header + "\n" + withCell(row, bytesCol, "-8") + "\n", "line 2: bytes must be a whole number from 1,"
                + " got '-8'"},
            {header + "," + last + "\n" + row + ",p2p\n", "line 1: column '" + last + "' appears twice"},
        };
        for (String[] c : cases) {
            Path bad = dir.resolve("bad.csv");
            Files.writeString(bad, c[0]);
            CliRun r = CliRun.of("compare", "--from", bad.toString());
            assertEquals(2, r.code(), r::toString);
            assertEquals("gda4j compare: --from " + bad + " " + c[1] + ". Run 'gda4j compare --help'."
                    + System.lineSeparator(), r.err());
        }
    }

    @Test
    void aPlotPathTheFileSystemRefusesIsOneLineWithoutAnExceptionName() throws Exception {
        Path proc = Path.of("/proc");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(proc.resolve("self")),
                "no Linux /proc here, whose directory takes no new files");
        CliRun r = CliRun.of("compare", "--from", csv().toString(), "--plot", "/proc/x.png");
        assertEquals(2, r.code(), r::toString);
        assertEquals(1, r.err().strip().lines().count(), r::toString);
        assertTrue(r.err().startsWith("gda4j compare: --plot /proc/x.png cannot be written: "), r.err());
        assertFalse(r.err().contains("Exception"), r.err());
    }

    private static String withCell(String row, int column, String value) {
        String[] cells = row.split(",", -1);
        cells[column] = value;
        return String.join(",", cells);
    }
}
