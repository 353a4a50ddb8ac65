package io.cosched;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.example.ModulePathProgram;
import java.io.File;
import java.lang.module.ModuleDescriptor;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * core's module descriptor exports the API and hides the implementation; on the module path the
 * runtime works, in carrier mode with {@code --add-opens java.base/java.lang=io.cosched}.
 */
@Timeout(120)
class ModulePathTest {

    @Test
    void theDescriptorExportsTheApiPackagesAndNothingElse() throws Exception {
        ModuleDescriptor d = ModuleDescriptor.read(
                java.nio.file.Files.newInputStream(classesDir().resolve("module-info.class")));
        assertThat(d.name()).isEqualTo("io.cosched");
        assertThat(d.exports())
                .extracting(ModuleDescriptor.Exports::source)
                .containsExactlyInAnyOrder("io.cosched", "io.cosched.net", "io.cosched.netty");
    }

    @Test
    void onTheModulePathTheApiRunsInCarrierModeAndTheImplementationIsHidden() throws Exception {
        List<String> modulePath = new ArrayList<>();
        modulePath.add(classesDir().toString());
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = Path.of(entry).getFileName().toString();
            // Netty's modules, without the native epoll jars (one per platform, the same module twice): NIO then
            if (name.startsWith("netty-")
                    && name.endsWith(".jar")
                    && !name.startsWith("netty-transport-native-epoll")) {
                modulePath.add(entry);
            }
        }
        Path testClasses = Path.of(ModulePathProgram.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        TestSupport.Forked run = TestSupport.fork(
                ModulePathProgram.class,
                List.of(
                        "--module-path",
                        String.join(File.pathSeparator, modulePath),
                        "--add-modules",
                        "io.cosched",
                        "--add-opens",
                        "java.base/java.lang=io.cosched",
                        "--enable-native-access=ALL-UNNAMED"),
                testClasses.toString(),
                Duration.ofSeconds(90));
        assertThat(run.exitCode()).as(run.output()).isZero();
        assertThat(run.output())
                .as(run.output())
                .contains("module=io.cosched exports=[io.cosched, io.cosched.net, io.cosched.netty]")
                .contains("carrierMode=true")
                .contains("ran=true")
                .contains("internal=hidden");
    }

    private static Path classesDir() throws URISyntaxException {
        return Path.of(IOManager.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
    }
}
