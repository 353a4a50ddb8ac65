package io.cosched.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.web.WebTestApp;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.ConfigurableApplicationContext;

/** Start-ups that need a JVM with other flags than the test JVM's. */
@Timeout(180)
class ForkedJvmTest {

    @Test
    void withoutTheAddOpensFlagTheAppRunsInFallbackModeAndSaysSo() throws Exception {
        Result run = fork(List.of("--enable-native-access=ALL-UNNAMED"), "serve");
        assertThat(run.exitCode()).as(run.output()).isZero();
        assertThat(run.output())
                .contains("mode=FALLBACK")
                .contains("handler=VirtualThread[")
                .contains("Start the JVM with --add-opens java.base/java.lang=ALL-UNNAMED");
        String handlerLine = run.output()
                .lines()
                .filter(l -> l.startsWith("handler="))
                .findFirst()
                .orElseThrow();
        assertThat(handlerLine)
                .as("on the JDK's scheduler, not a cosched loop")
                .contains("@ForkJoinPool")
                .doesNotContain("@test-io-");
    }

    @Test
    void requiringCarrierModeWithoutTheFlagFailsWithWhatToDo() throws Exception {
        Result run = fork(List.of("--enable-native-access=ALL-UNNAMED"), "serve", "--cosched.carrier.require=true");
        assertThat(run.exitCode()).isNotZero();
        assertThat(run.output())
                .contains("APPLICATION FAILED TO START")
                .contains("cosched.carrier.require is true, but coroutines cannot run on cosched's carriers")
                .contains("Start the JVM with --add-opens java.base/java.lang=ALL-UNNAMED")
                .contains("or set cosched.carrier.require=false");
    }

    @Test
    void epollOnAMachineWithoutItFailsWithWhatToDo() throws Exception {
        Result run = fork(
                List.of(
                        "-Dio.netty.transport.noNative=true",
                        "--enable-native-access=ALL-UNNAMED",
                        "--add-opens",
                        "java.base/java.lang=ALL-UNNAMED"),
                "serve",
                "--cosched.io.transport=epoll");
        assertThat(run.exitCode()).isNotZero();
        assertThat(run.output())
                .contains("APPLICATION FAILED TO START")
                .contains("cosched.io.transport is epoll, but that transport is unavailable here")
                .contains("Set cosched.io.transport=auto");
    }

    /** The forked program: starts the web test app, calls one coroutine handler, prints what it saw. */
    public static final class Program {
        public static void main(String[] args) throws Exception {
            List<String> properties = new ArrayList<>();
            for (int i = 1; i < args.length; i++) {
                properties.add(args[i].substring(2));
            }
            try (ConfigurableApplicationContext context = WebTestApp.startWith(properties)) {
                int port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port", "-1"));
                HttpResponse<String> r = HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/thread"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                System.out.println("handler=" + r.body());
                System.out.println(
                        "mode=" + context.getBean(IOManager.class).stats().mode());
            }
        }
    }

    record Result(int exitCode, String output) {}

    private static Result fork(List<String> jvmArgs, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path")
                + File.pathSeparator
                + System.getProperty("surefire.test.class.path", ""));
        cmd.add(Program.class.getName());
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile("cosched-fork", ".log");
        try {
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            if (!p.waitFor(150, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(
                        "forked JVM did not finish:\n" + Files.readString(out, StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
