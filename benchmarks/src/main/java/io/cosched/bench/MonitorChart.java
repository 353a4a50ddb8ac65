package io.cosched.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Polls {@code /actuator/cosched} of a running app and draws what one scheduler did: queue depth,
 * coroutines by state, busy carriers and requests in flight. Writes a CSV of every sample and a PNG.
 *
 * <pre>MonitorChart &lt;base-url&gt; &lt;scheduler&gt; &lt;seconds&gt; &lt;out.csv&gt; &lt;out.png&gt; [title]</pre>
 */
public final class MonitorChart {

    private static final long PERIOD_MS = 100;

    private MonitorChart() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: MonitorChart <base-url> <scheduler> <seconds> <out.csv> <out.png> [title]");
            System.exit(2);
        }
        String base = args[0];
        String scheduler = args[1];
        double seconds = Double.parseDouble(args[2]);
        Path csv = Path.of(args[3]);
        Path png = Path.of(args[4]);
        String title = args.length > 5 ? args[5] : "cosched scheduler '" + scheduler + "' under a load burst";

        HttpClient client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/actuator/cosched"))
                .timeout(Duration.ofSeconds(5))
                .build();
        ObjectMapper json = new ObjectMapper();
        List<double[]> samples = new ArrayList<>();
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        StringBuilder out =
                new StringBuilder("t_s,queue_depth,ready,running,waiting,sleeping,active_threads,threads,in_flight\n");
        for (long next = start; next < end; next += PERIOD_MS * 1_000_000) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000)); // pacing the poller, not awaiting an outcome
            }
            JsonNode all;
            try {
                all = json.readTree(client.send(request, HttpResponse.BodyHandlers.ofString())
                        .body());
            } catch (IOException e) {
                System.err.println("poll failed: " + e);
                continue;
            }
            JsonNode s = all.path("schedulers").path(scheduler);
            if (s.isMissingNode()) {
                throw new IllegalArgumentException("scheduler: '" + scheduler + "' (expected one of "
                        + all.path("schedulers").propertyNames() + ")");
            }
            double t = (System.nanoTime() - start) / 1e9;
            double[] row = {
                t,
                s.path("queueDepth").asDouble(),
                s.path("ready").asDouble(),
                s.path("running").asDouble(),
                s.path("waiting").asDouble(),
                s.path("sleeping").asDouble(),
                s.path("activeThreads").asDouble(),
                s.path("threads").asDouble(),
                all.path("web").path("inFlight").asDouble()
            };
            samples.add(row);
            for (int i = 0; i < row.length; i++) {
                out.append(i == 0 ? String.format(Locale.ROOT, "%.2f", row[i]) : "," + (long) row[i]);
            }
            out.append('\n');
        }
        Files.createDirectories(csv.toAbsolutePath().getParent());
        Files.writeString(csv, out);
        draw(samples, title, png);
        System.out.println("wrote " + samples.size() + " samples to " + csv + " and " + png);
    }

    /** Two charts, one above the other: coroutines and requests, then carriers. */
    private static void draw(List<double[]> samples, String title, Path png) throws IOException {
        double[] t = column(samples, 0);
        XYChart work = chart(title, "coroutines / requests");
        work.addSeries("requests in flight", t, column(samples, 8)).setMarker(SeriesMarkers.NONE);
        work.addSeries("waiting (parked)", t, column(samples, 4)).setMarker(SeriesMarkers.NONE);
        work.addSeries("ready (queued for a loop)", t, column(samples, 2)).setMarker(SeriesMarkers.NONE);
        work.addSeries("queue depth", t, column(samples, 1)).setMarker(SeriesMarkers.NONE);
        XYChart carriers = chart("carriers", "carriers");
        carriers.addSeries("busy carriers", t, column(samples, 6)).setMarker(SeriesMarkers.NONE);
        carriers.addSeries("threads", t, column(samples, 7)).setMarker(SeriesMarkers.NONE);
        Files.createDirectories(png.toAbsolutePath().getParent());
        String file = png.toString();
        BitmapEncoder.saveBitmap(
                List.of(work, carriers),
                2,
                1,
                file.endsWith(".png") ? file.substring(0, file.length() - 4) : file,
                BitmapEncoder.BitmapFormat.PNG);
    }

    private static XYChart chart(String title, String yTitle) {
        XYChart chart = new XYChartBuilder()
                .width(1000)
                .height(300)
                .title(title)
                .xAxisTitle("seconds")
                .yAxisTitle(yTitle)
                .build();
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNE);
        return chart;
    }

    private static double[] column(List<double[]> samples, int index) {
        double[] c = new double[samples.size()];
        for (int i = 0; i < c.length; i++) {
            c[i] = samples.get(i)[index];
        }
        return c;
    }
}
