/**
 * The gda4j command line ({@code io.gda4j.samples.Main}), its benchmark rigs and NCCL baselines: an application,
 * exporting nothing. Run it on the module path with {@code -m io.gda4j.samples/io.gda4j.samples.Main}.
 */
@SuppressWarnings("requires-automatic") // JNA, Commons CSV, HdrHistogram and XChart ship no module-info
module io.gda4j.samples {
    requires io.gda4j.host;
    requires io.gda4j.proxy;
    requires java.desktop;
    requires com.sun.jna;
    requires org.apache.commons.cli;
    requires org.apache.commons.csv;
    requires HdrHistogram;
    requires org.knowm.xchart;

    // The command line's own kernels are resources of these packages, which ModuleImage.classPathResource reads
    // through a class loader: that finds a named module's resources only in packages open to everyone.
    opens io.gda4j.samples;
    opens io.gda4j.samples.moe;
    // LibNccl.UniqueId is a JNA Structure passed by value: JNA makes and reads it by reflection.
    opens io.gda4j.samples.nccl to com.sun.jna;
}
