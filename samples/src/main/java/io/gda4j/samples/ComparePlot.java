package io.gda4j.samples;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * Draws {@link CompareResults} as one PNG with two charts side by side: round trip versus size (log-log) and
 * bandwidth versus size (log x), one series per transport, memcpyPeer as the reference line. XChart (AWT, headless).
 */
final class ComparePlot {
    static final int WIDTH = 900;
    static final int HEIGHT = 600;

    private ComparePlot() {
    }

    /**
     * Fails with a {@link UsageException} unless a chart can be written to exactly {@code file}: a Java runtime with
     * AWT, an existing directory, and a file that can be created or overwritten there. Leaves no file behind that
     * was not there before.
     */
    static void checkWritable(Path file) {
        if (ModuleLayer.boot().findModule("java.desktop").isEmpty()) {
            throw new UsageException("--plot: this Java runtime has no java.desktop module (AWT), which drawing the "
                    + "chart needs: run 'gda4j compare --csv > compare.csv' here and 'gda4j compare --from compare.csv "
                    + "--plot " + file + "' with a full JDK");
        }
        if (Files.isDirectory(file)) {
            throw new UsageException("--plot " + file + " is a directory: name the PNG file to write, e.g. "
                    + file.resolve("compare.png"));
        }
        Path dir = file.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new UsageException("--plot " + file + ": directory " + dir + " does not exist");
        }
        try {
            if (Files.exists(file)) {
                // Opening for writing without truncating proves it can be overwritten and changes nothing.
                FileChannel.open(file, StandardOpenOption.WRITE).close();
            } else {
                Files.delete(Files.createFile(file));
            }
        } catch (IOException | SecurityException e) {
            throw new UsageException("--plot " + file + " cannot be written: " + why(e), e);
        }
    }

    /** Why a file cannot be written, in words rather than an exception's class name. */
    static String why(Exception e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "the directory does not take new files there";
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        if (e instanceof SecurityException) {
            return "a security manager refuses it";
        }
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    /** Draws {@code r} into exactly {@code file} (no extension is added). */
    static void write(CompareResults r, Path file) throws IOException {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        checkWritable(file);
        List<XYChart> charts = new ArrayList<>();
        XYChart latency = chart("put_signal ping-pong round trip (median)", "round trip (us)", true);
        XYChart bandwidth = chart("put bandwidth, one direction", "GB/s (10^9 B/s)", false);
        for (int t = 0; t < r.transports.size(); t++) {
            series(latency, r.transports.get(t), r.sizes, r.rttMicros[t]);
            series(bandwidth, r.transports.get(t), r.sizes, r.gbps[t]);
        }
        series(bandwidth, "cuMemcpyPeerAsync", r.sizes, r.memcpyPeerGbps);
        if (!latency.getSeriesMap().isEmpty()) {
            charts.add(latency);
        }
        if (!bandwidth.getSeriesMap().isEmpty()) {
            charts.add(bandwidth);
        }
        if (charts.isEmpty()) {
            throw new UsageException("nothing to plot: the results have no finite values");
        }
        // The OutputStream form: the file-name form appends ".png" to a name that lacks it.
        ByteArrayOutputStream png = new ByteArrayOutputStream();
        BitmapEncoder.saveBitmap(charts, 1, charts.size(), png, BitmapEncoder.BitmapFormat.PNG);
        try {
            Files.write(file, png.toByteArray());
        } catch (IOException e) {
            throw new UsageException("--plot " + file + " cannot be written: " + why(e), e);
        }
    }

    private static XYChart chart(String title, String yTitle, boolean logY) {
        XYChart c = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle("message size (bytes)")
                .yAxisTitle(yTitle).build();
        c.getStyler().setXAxisLogarithmic(true);
        c.getStyler().setYAxisLogarithmic(logY);
        c.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        c.getStyler().setMarkerSize(6);
        return c;
    }

    /** Adds the finite, positive points (log axes cannot show the rest). */
    private static void series(XYChart chart, String name, long[] sizes, double[] ys) {
        List<Double> x = new ArrayList<>();
        List<Double> y = new ArrayList<>();
        for (int i = 0; i < sizes.length; i++) {
            if (Double.isFinite(ys[i]) && ys[i] > 0) {
                x.add((double) sizes[i]);
                y.add(ys[i]);
            }
        }
        if (!x.isEmpty()) {
            chart.addSeries(name, x, y);
        }
    }
}
