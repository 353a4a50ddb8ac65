package io.cosched.spring.boot.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The layout docs/architecture.md describes, kept by a test: the JDBC engine never touches Spring, the auto-configuration module holds wiring only, and the main code's packages refer
 * to each other without cycles (apart from core's, listed here, which the work on core's boundary
 * removes; the test fails when it goes, so that the list shrinks with the code).
 */
@Timeout(60)
class ArchitectureTest {

    /** The main code, module by module, read from the source tree next to this module. */
    private static final List<String> MODULES = List.of("core", "jdbc", "http-client", "redis", "webflux", "autoconfigure");

    /** Engines and adapters the auto-configuration wires but never is. */
    private static final List<String> NOT_WIRING = List.of(
            "io.netty.channel.ChannelHandler",
            "javax.sql.DataSource",
            "java.sql.Connection",
            "org.reactivestreams.Subscriber",
            "reactor.netty.resources.LoopResources",
            "org.springframework.http.client.ClientHttpRequestFactory",
            "org.springframework.data.redis.connection.RedisConnectionFactory",
            "io.lettuce.core.resource.EventLoopGroupProvider",
            "org.springframework.web.reactive.HandlerAdapter",
            "org.springframework.web.server.session.WebSessionStore");

    /** Package cycles in the main code today, each written as its packages in order. */
    private static final Set<String> KNOWN_CYCLES = Set.of("io.cosched, io.cosched.internal, io.cosched.net");

    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern COSCHED_TYPE = Pattern.compile("\\b(io\\.cosched(?:\\.[a-z]\\w*)*)\\.[A-Z]");

    /** core's own ArchitectureTest checks its compiled classes the same way. */
    @Test
    void theJdbcEngineNeverTouchesSpringOrReactor() {
        sources("jdbc").forEach((file, text) -> assertThat(text)
                .as("%s: cosched-jdbc is plain JDBC, HikariCP and cosched's runtime", file)
                .doesNotContain("org.springframework")
                .doesNotContain("reactor.core")
                .doesNotContain("reactor.netty"));
    }

    @Test
    void theHttpClientEngineNeverTouchesSpringOrReactor() {
        Map<Path, String> engine = new TreeMap<>();
        sources("http-client").forEach((file, text) -> {
            if (file.startsWith(Path.of("io", "cosched", "http", "client"))) {
                engine.put(file, text);
            }
        });
        assertThat(engine).as("the engine's sources were read").isNotEmpty();
        engine.forEach((file, text) -> assertThat(text)
                .as("%s: the loop HTTP client is Netty and cosched's runtime; Spring's adapter lives apart", file)
                .doesNotContain("org.springframework")
                .doesNotContain("reactor.core")
                .doesNotContain("reactor.netty"));
    }

    @Test
    void theRedisEngineNeverTouchesSpringOrReactor() {
        Map<Path, String> engine = new TreeMap<>();
        sources("redis").forEach((file, text) -> {
            if (file.startsWith(Path.of("io", "cosched", "redis"))) {
                engine.put(file, text);
            }
        });
        assertThat(engine).as("the engine's sources were read").isNotEmpty();
        engine.forEach((file, text) -> assertThat(text)
                .as("%s: the loops for Lettuce are Lettuce, Netty and cosched's runtime; Spring Data's factory lives apart", file)
                .doesNotContain("org.springframework")
                .doesNotContain("reactor.core")
                .doesNotContain("reactor.netty"));
    }

    @Test
    void theAutoConfigurationHoldsWiringOnly() throws Exception {
        Path classes = Path.of(CoschedAutoConfiguration.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(classes).as("the auto-configuration's compiled classes").isDirectory();
        List<String> found = new ArrayList<>();
        List<String> checked = new ArrayList<>();
        List<Class<?>> forbidden = new ArrayList<>();
        for (String name : NOT_WIRING) {
            forbidden.add(Class.forName(name, false, getClass().getClassLoader()));
        }
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String name = classes.relativize(file).toString().replace('/', '.').replaceAll("\\.class$", "");
                if (name.endsWith("package-info")) {
                    continue;
                }
                Class<?> type = Class.forName(name, false, getClass().getClassLoader());
                checked.add(name);
                for (Class<?> f : forbidden) {
                    if (f.isAssignableFrom(type)) {
                        found.add(name + " is a " + f.getName());
                    }
                }
            }
        }
        assertThat(checked).as("the auto-configuration's classes were read").contains(CoschedAutoConfiguration.class.getName(),
                "io.cosched.spring.boot.autoconfigure.jdbc.CoschedJdbcAutoConfiguration");
        assertThat(found).as("engines belong in core, jdbc, http-client, redis or webflux; autoconfigure only wires them")
                .isEmpty();
    }

    @Test
    void theMainCodesPackagesFormNoCyclesButTheKnownOnes() {
        Map<String, Set<String>> uses = packageUses(MODULES);
        assertThat(uses).as("packages read").containsKeys("io.cosched", "io.cosched.jdbc",
                "io.cosched.http.client", "io.cosched.spring.http.client", "io.cosched.spring.web.server",
                "io.cosched.spring.web.netty", "io.cosched.spring.web.session", "io.cosched.spring.web.shedding",
                "io.cosched.redis", "io.cosched.spring.data.redis",
                "io.cosched.spring.boot.autoconfigure");
        assertThat(cycles(uses)).containsExactlyInAnyOrderElementsOf(KNOWN_CYCLES);
    }

    /**
     * webflux's packages, one concern each, depend one way: the API on nothing of the integration, the request
     * path on the API, shedding on the request path; Reactor Netty's resources and the session store on core alone.
     */
    @Test
    void theWebfluxPackagesDependOneWay() {
        Map<String, Set<String>> allowed = Map.of(
                "io.cosched.spring.web", Set.of(),
                "io.cosched.spring.web.server", Set.of("io.cosched.spring.web"),
                "io.cosched.spring.web.shedding", Set.of("io.cosched.spring.web", "io.cosched.spring.web.server"),
                "io.cosched.spring.web.netty", Set.of(),
                "io.cosched.spring.web.session", Set.of());
        Map<String, Set<String>> uses = packageUses(List.of("webflux"));
        assertThat(uses).containsOnlyKeys(allowed.keySet());
        uses.forEach((pkg, targets) -> assertThat(targets.stream().filter(t -> t.startsWith("io.cosched.spring.")))
                .as("what %s uses of the Spring integration", pkg).isSubsetOf(allowed.get(pkg)));
    }

    /** For each package of the main code of {@code modules}: the other cosched packages its sources name. */
    private static Map<String, Set<String>> packageUses(List<String> modules) {
        Map<String, Set<String>> uses = new TreeMap<>();
        for (String module : modules) {
            sources(module).forEach((file, text) -> {
                Matcher p = PACKAGE.matcher(text);
                assertThat(p.find()).as("%s has a package declaration", file).isTrue();
                String pkg = p.group(1);
                Set<String> targets = uses.computeIfAbsent(pkg, k -> new TreeSet<>());
                Matcher m = COSCHED_TYPE.matcher(text);
                while (m.find()) {
                    if (!m.group(1).equals(pkg)) {
                        targets.add(m.group(1));
                    }
                }
            });
        }
        return uses;
    }

    @Test
    void theCycleFinderSeesACycleAndNothingElse() {
        Map<String, Set<String>> uses = Map.of(
                "a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a", "d"), "d", Set.of(), "e", Set.of("d"));
        assertThat(cycles(uses)).containsExactly("a, b, c");
        assertThat(cycles(Map.of("a", Set.of("b"), "b", Set.of()))).isEmpty();
    }

    /** The strongly connected groups of more than one package (Tarjan's algorithm), each sorted and joined. */
    private static Set<String> cycles(Map<String, Set<String>> uses) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        List<String> stack = new ArrayList<>();
        Set<String> result = new TreeSet<>();
        for (String v : new TreeSet<>(uses.keySet())) {
            if (!index.containsKey(v)) {
                connect(v, uses, index, low, stack, result);
            }
        }
        return result;
    }

    private static void connect(String v, Map<String, Set<String>> uses, Map<String, Integer> index,
            Map<String, Integer> low, List<String> stack, Set<String> result) {
        index.put(v, index.size());
        low.put(v, index.get(v));
        stack.add(v);
        for (String w : uses.getOrDefault(v, Set.of())) {
            if (!index.containsKey(w)) {
                connect(w, uses, index, low, stack, result);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (stack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> group = new TreeSet<>();
            String w;
            do {
                w = stack.remove(stack.size() - 1);
                group.add(w);
            } while (!w.equals(v));
            if (group.size() > 1) {
                result.add(String.join(", ", group));
            }
        }
    }

    /** The main Java sources of {@code module}, by path, read from the checkout this module sits in. */
    private static Map<Path, String> sources(String module) {
        Path root = Path.of(module.equals("autoconfigure") ? "." : "../" + module, "src/main/java").toAbsolutePath().normalize();
        assertThat(root).as("the sources of module %s (the test runs in autoconfigure/)", module).isDirectory();
        Map<Path, String> texts = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            // module-info.java declares a module, not a package: the package graph skips it
            files.filter(f -> f.toString().endsWith(".java") && !f.endsWith("module-info.java")).forEach(f -> {
                try {
                    texts.put(root.relativize(f), Files.readString(f));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertThat(texts).as("Java sources in %s", root).isNotEmpty();
        return texts;
    }
}
