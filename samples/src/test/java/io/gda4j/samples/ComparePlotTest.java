package io.gda4j.samples;

import org.junit.jupiter.api.Test;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.io.ByteArrayInputStream;
import java.util.List;

import javax.imageio.ImageIO;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The chart as a reader meets it: byte units on the x axis, the copy engine as a reference line, a caption. */
class ComparePlotTest {
    @Test
    void theXAxisIsLabelledInBytesAtPowersOfTwo() {
        assertEquals("8 B", ComparePlot.sizeLabel(3));
        assertEquals("1 KiB", ComparePlot.sizeLabel(10));
        assertEquals("32 KiB", ComparePlot.sizeLabel(15));
        assertEquals("1 MiB", ComparePlot.sizeLabel(20));
        assertEquals("256 MiB", ComparePlot.sizeLabel(28));
        assertEquals("1 GiB", ComparePlot.sizeLabel(30));
        assertEquals("", ComparePlot.sizeLabel(2.5), "no label between powers of two");
        for (XYChart c : ComparePlot.charts(CompareResultsTest.sample())) {
            for (XYSeries s : c.getSeriesMap().values()) {
                for (double x : s.getXData()) {
                    assertTrue(x >= 3 && x <= 28, "x is log2 of the size: " + x);
                }
            }
        }
    }

    @Test
    void theCopyEngineIsADashedReferenceLineNotATransport() {
        List<XYChart> charts = ComparePlot.charts(CompareResultsTest.sample());
        assertEquals(2, charts.size());
        XYChart bandwidth = charts.get(1);
        assertEquals(List.of("p2p", "proxy", ComparePlot.COPY_ENGINE), List.copyOf(bandwidth.getSeriesMap().keySet()));
        XYSeries ce = bandwidth.getSeriesMap().get(ComparePlot.COPY_ENGINE);
        assertEquals(SeriesMarkers.NONE, ce.getMarker());
        assertEquals(SeriesLines.DASH_DASH, ce.getLineStyle());
        assertTrue(!charts.get(0).getSeriesMap().containsKey(ComparePlot.COPY_ENGINE), "no copy engine in latency");
    }

    /** One size is drawn in the middle of an axis of at least two powers of two, not at an axis of 8E3. */
    @Test
    void aSingleRowGetsAReadableAxis() throws Exception {
        CompareResults one = new CompareResults(List.of("p2p"), new long[] {8192});
        one.rttMicros[0][0] = 5.5;
        one.gbps[0][0] = 2.5;
        one.memcpyPeerGbps[0] = 3.0;
        for (XYChart c : ComparePlot.charts(one)) {
            assertEquals(12.0, c.getStyler().getXAxisMin(), 0.0);
            assertEquals(14.0, c.getStyler().getXAxisMax(), 0.0);
        }
        XYChart latency = ComparePlot.charts(one).get(0);
        assertEquals(1.0, latency.getStyler().getYAxisMin(), 1e-12, "a single round trip gets a decade around it");
        assertEquals(10.0, latency.getStyler().getYAxisMax(), 1e-12);
        XYChart bandwidth = ComparePlot.charts(one).get(1);
        assertEquals(0.0, bandwidth.getStyler().getYAxisMin(), 0.0, "bandwidth from 0");
        assertEquals(SeriesMarkers.CROSS, bandwidth.getSeriesMap().get(ComparePlot.COPY_ENGINE).getMarker(),
                "one point of the reference is no line: it is drawn as a cross");
        var image = ImageIO.read(new ByteArrayInputStream(ComparePlot.render(one, "png")));
        assertEquals(2 * ComparePlot.WIDTH, image.getWidth());
        assertTrue(image.getHeight() > ComparePlot.HEIGHT, "room for the caption");
    }

    @Test
    void theCaptionNamesTheMachineAndTheRun() {
        CompareResults r = CompareFromTest.awkward();
        List<String> caption = ComparePlot.caption(r);
        assertTrue(caption.get(0).contains(r.header.get("host")) && caption.get(0).contains("NVIDIA H200")
                && caption.get(0).contains("gda4j " + Main.version()), caption.toString());
        assertEquals(r.header.get("run"), caption.get(1));
        assertTrue(ComparePlot.caption(CompareResultsTest.sample()).get(0).startsWith("no run header"));
    }
}
