package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.Reader;
import java.io.StringReader;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.ConfigurableApplicationContext;
import org.yaml.snakeyaml.Yaml;

/**
 * docs/k8s/cosched-service.yaml against a running application with its settings: the Deployment's
 * probe paths answer, the autoscaler's metric is one the application exports, and the readiness
 * probe takes the instance out while it sheds and brings it back once calm.
 */
@Timeout(120)
class KubernetesManifestWebTest {

    private static final Path MANIFEST = Path.of("..", "docs", "k8s", "cosched-service.yaml");

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o, String... keys) {
        Object at = o;
        for (String k : keys) {
            at = ((Map<String, Object>) at).get(k);
            assertThat(at).as("manifest key " + k).isNotNull();
        }
        return (Map<String, Object>) at;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o, String key) {
        return (List<Object>) ((Map<String, Object>) o).get(key);
    }

    private static java.time.Duration duration(Properties settings, String name, String otherwise) {
        return org.springframework.boot.convert.DurationStyle.detectAndParse(settings.getProperty(name, otherwise));
    }

    /**
     * A request on a connection of its own, as the kubelet's probes and a Prometheus scrape make them.
     * (Not on one kept-alive connection: Reactor Netty 1.3.7 can stop reading a keep-alive connection
     * whose request arrived before the previous one's operations ended, which health endpoints, answered
     * from boundedElastic, make likely under a tight loop; reactor-netty#4361, fixed by #4347.)
     */
    private static String probe(Http http, String path) throws Exception {
        return http.raw("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    }

    @Test
    void theManifestsProbesAndAutoscalerMetricFitTheApplication() throws Exception {
        List<Map<String, Object>> docs = new ArrayList<>();
        try (Reader r = Files.newBufferedReader(MANIFEST)) {
            for (Object d : new Yaml().loadAll(r)) {
                docs.add(map(d));
            }
        }
        Map<String, Object> configMap = docs.stream()
                .filter(d -> "ConfigMap".equals(d.get("kind")))
                .findFirst()
                .orElseThrow();
        Map<String, Object> deployment = docs.stream()
                .filter(d -> "Deployment".equals(d.get("kind")))
                .findFirst()
                .orElseThrow();
        Map<String, Object> hpa = docs.stream()
                .filter(d -> "HorizontalPodAutoscaler".equals(d.get("kind")))
                .findFirst()
                .orElseThrow();

        Properties settings = new Properties();
        settings.load(new StringReader((String) map(configMap, "data").get("application.properties")));
        List<String> properties = new ArrayList<>();
        settings.forEach((k, v) -> properties.add(k + "=" + v));
        // the pod's grace period covers the whole shutdown: the delay, the server's drain, the schedulers' stop
        long graceSeconds =
                ((Number) map(deployment, "spec", "template", "spec").get("terminationGracePeriodSeconds")).longValue();
        java.time.Duration shutdown = duration(settings, "cosched.shutdown.delay", "0s")
                .plus(duration(settings, "spring.lifecycle.timeout-per-shutdown-phase", "30s"))
                .plus(duration(settings, "cosched.shutdown.timeout", "30s"));
        assertThat(java.time.Duration.ofSeconds(graceSeconds))
                .as("terminationGracePeriodSeconds against the longest shutdown its settings allow")
                .isGreaterThanOrEqualTo(shutdown);
        // the test's scale: two slots to fill, a hold of a second, no delay at the close
        properties.add("cosched.web.max-in-flight=2");
        properties.add("cosched.web.readiness.hold=1s");
        properties.add("cosched.shutdown.delay=0s");

        Map<String, Object> container = map(
                list(map(deployment, "spec", "template", "spec"), "containers").get(0));
        List<String> probePaths = new ArrayList<>();
        for (String probe : List.of("readinessProbe", "livenessProbe", "startupProbe")) {
            probePaths.add((String) map(container, probe, "httpGet").get("path"));
        }
        String metric = (String) map(map(list(map(hpa, "spec"), "metrics").get(0)), "pods", "metric")
                .get("name");

        try (ConfigurableApplicationContext context = WebTestApp.startWith(properties)) {
            Http http = new Http(WebTestApp.port(context));
            for (String path : probePaths) {
                String r = probe(http, path);
                assertThat(r).as(path).startsWith("HTTP/1.1 200 ").contains("\"status\":\"UP\"");
            }
            String prometheus = probe(http, "/actuator/prometheus");
            assertThat(prometheus.lines().filter(l -> l.startsWith(metric + " ") || l.startsWith(metric + "{")))
                    .as("the autoscaler's metric " + metric)
                    .isNotEmpty();

            String readiness = probePaths.get(0);
            // shedding: two requests hold the slots, the rest are answered 503
            WebTestApp.Probe.reset();
            WebTestApp.Probe.holding = new CountDownLatch(2);
            CompletableFuture<HttpResponse<String>> first = http.getAsync("/hold");
            CompletableFuture<HttpResponse<String>> second = http.getAsync("/hold");
            assertThat(WebTestApp.Probe.holding.await(10, TimeUnit.SECONDS)).isTrue();
            Await.until(
                    () -> {
                        http.get("/thread"); // shed
                        return probe(http, readiness).startsWith("HTTP/1.1 503 ");
                    },
                    () -> "readiness stays in while shedding");
            assertThat(probe(http, probePaths.get(1)))
                    .as("liveness is not affected")
                    .startsWith("HTTP/1.1 200 ");

            WebTestApp.Probe.release.countDown();
            first.get(30, TimeUnit.SECONDS);
            second.get(30, TimeUnit.SECONDS);
            Await.until(
                    () -> probe(http, readiness).startsWith("HTTP/1.1 200 "),
                    () -> "readiness does not come back once calm");
        }
    }
}
