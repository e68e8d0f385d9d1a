package io.gda4j.samples;

import io.gda4j.world.ByteSize;

import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
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
import java.util.Locale;
import java.util.Map;

import javax.imageio.ImageIO;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Draws {@link CompareResults} as one image: round trip versus size (log-log) and bandwidth versus size (log x), one
 * series per transport, the copy engine (cuMemcpyPeerAsync) as a dashed reference line, the x axis in bytes (B, KiB,
 * MiB), and a caption saying which machine and run the figures come from. The format is the one the file name says
 * (PNG, JPEG or BMP); XChart (AWT, headless) draws it.
 */
final class ComparePlot {
    static final int WIDTH = 900;
    static final int HEIGHT = 600;
    static final int CAPTION_LINE_PX = 18;
    /** The legend name of the reference line; no transport may be named so ({@link CompareResults#RESERVED_NAMES}). */
    static final String COPY_ENGINE = "copy engine (cuMemcpyPeerAsync)";
    /** The formats the extension may name, as ImageIO calls them; vector formats are not shipped (no PDF/SVG). */
    static final Map<String, String> FORMATS = Map.of("png", "png", "jpg", "jpeg", "jpeg", "jpeg", "bmp", "bmp");

    private ComparePlot() {
    }

    /** The ImageIO format {@code file}'s extension names; a {@link UsageException} where it names none offered. */
    static String formatOf(Path file) {
        String name = file.getFileName() == null ? "" : file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        String ext = dot < 0 ? "" : name.substring(dot + 1).toLowerCase(Locale.ROOT);
        String format = FORMATS.get(ext);
        if (format == null) {
            throw new UsageException("--plot " + file + ": " + (ext.isEmpty() ? "the name has no extension"
                    : "." + CellText.forTerminal(ext) + " is not a format offered") + "; end it in .png, .jpg or .bmp"
                    + " (vector formats are not shipped: draw a PNG, or plot the --csv with a tool of your own)");
        }
        return format;
    }

    /**
     * Fails with a {@link UsageException} unless a chart can be written to exactly {@code file}: a Java runtime with
     * AWT, a format its extension names, not the file {@code input} (the CSV being read, or null), not an existing
     * file other than a regular one (opening a FIFO would wait for a reader), an existing directory, and a file that
     * can be created or overwritten there. Leaves no file behind that was not there before.
     */
    static void checkWritable(Path file, Path input) {
        if (ModuleLayer.boot().findModule("java.desktop").isEmpty()) {
            throw new UsageException("--plot: this Java runtime has no java.desktop module (AWT), which drawing the "
                    + "chart needs: run 'gda4j compare --csv > compare.csv' here and 'gda4j compare --from compare.csv "
                    + "--plot " + file + "' with a full JDK");
        }
        if (Files.isDirectory(file)) {
            throw new UsageException("--plot " + file + " is a directory: name the image file to write, e.g. "
                    + file.resolve("compare.png"));
        }
        formatOf(file);
        if (input != null && sameFile(file, input)) {
            throw new UsageException("--plot " + file + " is the file --from reads: name another file for the chart,"
                    + " e.g. " + file.resolveSibling("compare.png"));
        }
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            throw new UsageException("--plot " + file + " exists and is not a regular file (a pipe, a device or a"
                    + " socket): name a file to write");
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

    private static boolean sameFile(Path a, Path b) {
        try {
            if (Files.exists(a) && Files.exists(b)) {
                return Files.isSameFile(a, b);
            }
        } catch (IOException e) {
            // compared by name below
        }
        return a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize());
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

    /** Draws {@code r} into exactly {@code file} (no extension is added), in the format its extension names. */
    static void write(CompareResults r, Path file, Path input) throws IOException {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        checkWritable(file, input);
        String format = formatOf(file);
        byte[] image = render(r, format);
        try {
            Files.write(file, image);
        } catch (IOException e) {
            throw new UsageException("--plot " + file + " cannot be written: " + why(e), e);
        }
    }

    /** The image's bytes in {@code format} (an ImageIO name). */
    static byte[] render(CompareResults r, String format) throws IOException {
        List<XYChart> charts = charts(r);
        List<String> caption = caption(r);
        return imageBytes(compose(charts, caption), format);
    }

    /** The charts the image holds: round trip (where measured), then bandwidth with the copy engine's line. */
    static List<XYChart> charts(CompareResults r) {
        List<XYChart> charts = new ArrayList<>();
        XYChart latency = chart("put_signal ping-pong round trip (median)", "round trip (us)", true, r.sizes);
        XYChart bandwidth = chart("put bandwidth, one direction", "GB/s (10^9 B/s)", false, r.sizes);
        for (int t = 0; t < r.transports.size(); t++) {
            series(latency, r.transports.get(t), r.sizes, r.rttMicros[t]);
            series(bandwidth, r.transports.get(t), r.sizes, r.gbps[t]);
        }
        XYSeries ce = series(bandwidth, COPY_ENGINE, r.sizes, r.memcpyPeerGbps);
        if (ce != null) {
            // A reference, not a transport: a dashed line without markers (a cross where one point is no line).
            ce.setMarker(ce.getXData().length > 1 ? SeriesMarkers.NONE : SeriesMarkers.CROSS);
            ce.setMarkerColor(Color.DARK_GRAY);
            ce.setLineStyle(SeriesLines.DASH_DASH);
            ce.setLineColor(Color.DARK_GRAY);
        }
        for (XYChart c : List.of(latency, bandwidth)) {
            if (!c.getSeriesMap().isEmpty()) {
                fitY(c, c == latency);
                charts.add(c);
            }
        }
        if (charts.isEmpty()) {
            throw new UsageException("nothing to plot: the results have no finite values");
        }
        return charts;
    }

    /** The lines under the charts: the machine and the run, from the run header. */
    static List<String> caption(CompareResults r) {
        List<String> caption = new ArrayList<>();
        caption.add(r.header.isEmpty() ? "no run header: the CSV was written without one" : r.header.caption());
        if (r.header.get("run") != null) {
            caption.add(CellText.forTerminal(r.header.get("run")));
        }
        return caption;
    }

    private static BufferedImage compose(List<XYChart> charts, List<String> caption) {
        BufferedImage out = new BufferedImage(WIDTH * charts.size(), HEIGHT + CAPTION_LINE_PX * caption.size() + 12,
                BufferedImage.TYPE_INT_RGB); // no alpha: JPEG and BMP take none
        Graphics2D g = out.createGraphics();
        try {
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, out.getWidth(), out.getHeight());
            for (int i = 0; i < charts.size(); i++) {
                g.drawImage(BitmapEncoder.getBufferedImage(charts.get(i)), WIDTH * i, 0, null);
            }
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.DARK_GRAY);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
            for (int i = 0; i < caption.size(); i++) {
                g.drawString(caption.get(i), 10, HEIGHT + CAPTION_LINE_PX * (i + 1));
            }
        } finally {
            g.dispose();
        }
        return out;
    }

    private static byte[] imageBytes(BufferedImage out, String format) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        if (!ImageIO.write(out, format, bytes)) {
            throw new UsageException("this Java runtime writes no " + format + " images: name a .png file");
        }
        return bytes.toByteArray();
    }

    /**
     * A chart whose x axis is log2 of the size, labelled in bytes at whole powers of two (8 B, 1 KiB, 1 MiB), and
     * spanning at least two of them, so that a single size is drawn in the middle of a readable axis.
     */
    private static XYChart chart(String title, String yTitle, boolean logY, long[] sizes) {
        XYChart c = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle("message size")
                .yAxisTitle(yTitle).build();
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (long s : sizes) {
            lo = Math.min(lo, log2(s));
            hi = Math.max(hi, log2(s));
        }
        lo = Math.floor(lo);
        hi = Math.ceil(hi);
        if (hi - lo < 2) {
            lo -= 1;
            hi += 1;
        }
        c.getStyler().setXAxisMin(lo).setXAxisMax(hi);
        c.getStyler().setYAxisLogarithmic(logY);
        c.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        c.getStyler().setMarkerSize(6);
        c.setCustomXAxisTickLabelsFormatter(ComparePlot::sizeLabel);
        return c;
    }

    /** The x axis' label at {@code log2Bytes}: a byte size at a whole power of two, nothing between them. */
    static String sizeLabel(double log2Bytes) {
        long p = Math.round(log2Bytes);
        return Math.abs(log2Bytes - p) < 1e-9 && p >= 0 && p < 63 ? ByteSize.format(1L << p) : "";
    }

    static double log2(long bytes) {
        return Math.log(bytes) / Math.log(2);
    }

    /**
     * A y range a reader can read: the round trip's log axis from the decade below its least value to the decade
     * above its largest (XChart labels decades only, so a range inside one decade would have no label), bandwidth
     * from 0.
     */
    private static void fitY(XYChart c, boolean log) {
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (XYSeries s : c.getSeriesMap().values()) {
            for (double y : s.getYData()) {
                lo = Math.min(lo, y);
                hi = Math.max(hi, y);
            }
        }
        if (log) {
            double top = Math.pow(10, Math.ceil(Math.log10(hi)));
            c.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(lo)))).setYAxisMax(top > hi ? top : top * 10);
        } else {
            c.getStyler().setYAxisMin(0.0).setYAxisMax(hi * 1.1);
        }
    }

    /** Adds the finite, positive points (log axes cannot show the rest); null where there is none. */
    private static XYSeries series(XYChart chart, String name, long[] sizes, double[] ys) {
        List<Double> x = new ArrayList<>();
        List<Double> y = new ArrayList<>();
        for (int i = 0; i < sizes.length; i++) {
            if (Double.isFinite(ys[i]) && ys[i] > 0) {
                x.add(log2(sizes[i]));
                y.add(ys[i]);
            }
        }
        return x.isEmpty() ? null : chart.addSeries(name, x, y);
    }
}
